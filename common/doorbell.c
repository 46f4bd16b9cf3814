/* SPDX-License-Identifier: BSD-3-Clause */
/* Cross-process doorbells on hugepage memory: a shared (non-private) futex so
 * an idle dataplane process sleeps instead of spinning and wakes as soon as a
 * producer enqueues. */
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_atomic.h>

#include "shm.h"

/* After the barrier: wake the consumer if it announced a sleep. */
static void wake_if_sleeping(struct esgw_doorbell *db)
{
	if (db->sleeping) {
		__atomic_fetch_add(&db->seq, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &db->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
}

void esgw_doorbell_ring(struct esgw_doorbell *db)
{
	rte_smp_mb(); /* the enqueue is visible before we read sleeping */
	wake_if_sleeping(db);
}

void esgw_doorbells_ring(struct esgw_bells *b)
{
	if (b->n == 0)
		return;
	rte_smp_mb(); /* every enqueue of the round is visible before we read sleeping */
	for (unsigned int i = 0; i < b->n; i++)
		wake_if_sleeping(b->db[i]);
	b->n = 0;
	b->held_since = 0;
}

void esgw_doorbells_round(struct esgw_bells *b, unsigned int n, uint64_t now)
{
	unsigned int kept = 0;
	int cpu = -1, hold;

	if (b->n == 0)
		return;
	if (b->held_since == 0) {
		b->held_since = now;
		b->held_packets = 0;
	}
	b->held_packets += n;
	/* Only while we have work: a round that found none ends the hold at
	 * once rather than after the idle spins, so a light flow's packets do
	 * not wait for them at every hop. Signed: a round's start (now) may
	 * precede a hold begun inside it. */
	hold = n != 0 && b->hold_cycles != 0 && b->held_packets < ESGW_HOLD_PACKETS &&
	       (int64_t)(now - b->held_since) < (int64_t)b->hold_cycles;
	rte_smp_mb(); /* every enqueue of the round is visible before we read sleeping */
	for (unsigned int i = 0; i < b->n; i++) {
		struct esgw_doorbell *db = b->db[i];

		if (!db->sleeping)
			continue; /* awake: it looks at its rings before it sleeps */
		if (hold) {
			if (cpu < 0)
				cpu = sched_getcpu();
			if (db->cpu == cpu) {
				b->db[kept++] = db;
				continue;
			}
		}
		wake_if_sleeping(db);
	}
	b->n = kept;
	if (kept == 0)
		b->held_since = 0;
}

int esgw_doorbell_wait(struct esgw_doorbell *db, unsigned int timeout_us,
		       int (*has_work)(void *arg), void *arg)
{
	int slept = 0;

	struct timespec ts = {.tv_sec = timeout_us / 1000000,
			      .tv_nsec = (long)(timeout_us % 1000000) * 1000};
	uint32_t seq = db->seq;

	db->cpu = sched_getcpu();
	db->sleeping = 1;
	rte_smp_mb(); /* sleeping is visible before we look at the rings */
	if (has_work == NULL || !has_work(arg)) {
		syscall(SYS_futex, &db->seq, FUTEX_WAIT, seq, &ts, NULL, 0);
		slept = 1;
	}
	db->sleeping = 0;
	return slept;
}
