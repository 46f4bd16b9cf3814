/* SPDX-License-Identifier: BSD-3-Clause */
/* Cross-process doorbells on hugepage memory: a shared (non-private) futex so
 * an idle dataplane process sleeps instead of spinning and wakes as soon as a
 * producer enqueues. A consumer that must wake for file descriptors of its own
 * too (rxtx: its ports) sleeps in ppoll() instead, and its producers write
 * into a FIFO where they would wake the futex (esgw_doorbell.fifo). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_eal.h>

#include "log.h"
#include "shm.h"

/* This process's descriptor of the instance's doorbell FIFO: -1 not opened
 * yet, -2 could not be. Opened read-write, by producers too: a FIFO with a
 * reader never raises SIGPIPE, whether or not its consumer is alive. */
static int bell_fifo_fd = -1;

static void bell_fifo_path(char *path, size_t len)
{
	snprintf(path, len, "%s/%s", rte_eal_get_runtime_dir(), ESGW_BELL_FIFO);
}

static int bell_fifo_open(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* Producer side: the FIFO, opened at the first ring. */
static int bell_fifo(void)
{
	int fd = __atomic_load_n(&bell_fifo_fd, __ATOMIC_ACQUIRE), expected = -1;
	char path[PATH_MAX];

	if (fd != -1)
		return fd;
	bell_fifo_path(path, sizeof(path));
	fd = bell_fifo_open(path);
	if (fd < 0)
		ESGW_WARN("doorbell FIFO %s: %s: rxtx wakes only on its timer", path,
			  strerror(errno));
	if (!__atomic_compare_exchange_n(&bell_fifo_fd, &expected, fd < 0 ? -2 : fd, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (fd >= 0)
			close(fd); /* another thread of ours was first */
		return expected;
	}
	return fd < 0 ? -2 : fd;
}

/* After the barrier: wake the consumer if it announced a sleep. */
static void wake_if_sleeping(struct esgw_doorbell *db)
{
	static const char one = 1;

	if (db->sleeping) {
		__atomic_fetch_add(&db->seq, 1, __ATOMIC_SEQ_CST);
		if (db->fifo) {
			int fd = bell_fifo();

			static bool warned;

			/* EAGAIN: the FIFO is full of wake-ups already. Said
			 * once: this is the data path. */
			if (fd >= 0 && write(fd, &one, 1) < 0 && errno != EAGAIN && !warned) {
				warned = true;
				ESGW_WARN("doorbell FIFO: %s: rxtx wakes only on its timer",
					  strerror(errno));
			}
			return;
		}
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

int esgw_doorbell_fifo_create(void)
{
	char path[PATH_MAX];
	char drain[256];
	int fd;

	bell_fifo_path(path, sizeof(path));
	fd = bell_fifo_open(path);
	if (fd < 0) { /* none yet, or not a FIFO: make it */
		unlink(path);
		if (mkfifo(path, 0600) < 0 || (fd = bell_fifo_open(path)) < 0) {
			ESGW_WARN("doorbell FIFO %s: %s", path, strerror(errno));
			return -1;
		}
	}
	while (read(fd, drain, sizeof(drain)) > 0) /* a predecessor's wake-ups */
		;
	__atomic_store_n(&bell_fifo_fd, fd, __ATOMIC_RELEASE);
	return fd;
}

int esgw_doorbell_wait(struct esgw_doorbell *db, unsigned int timeout_us,
		       int (*has_work)(void *arg), void *arg, struct pollfd *pfd, unsigned int n)
{
	struct timespec ts = {.tv_sec = timeout_us / 1000000,
			      .tv_nsec = (long)(timeout_us % 1000000) * 1000};
	uint32_t seq = db->seq;
	char drain[256];
	int slept = 0;

	for (unsigned int i = 0; i < n; i++)
		pfd[i].revents = 0;
	db->cpu = sched_getcpu();
	db->sleeping = 1;
	rte_smp_mb(); /* sleeping is visible before we look at the rings */
	if (has_work == NULL || !has_work(arg)) {
		if (n != 0)
			ppoll(pfd, n, &ts, NULL);
		else
			syscall(SYS_futex, &db->seq, FUTEX_WAIT, seq, &ts, NULL, 0);
		slept = 1;
	}
	db->sleeping = 0;
	if (n != 0 && pfd[0].revents != 0) /* the FIFO woke us: empty it */
		while (read(pfd[0].fd, drain, sizeof(drain)) == (ssize_t)sizeof(drain))
			;
	return slept;
}
