/* SPDX-License-Identifier: BSD-3-Clause */
/* Moving an SA between crypto workers without losing or reordering a packet,
 * and without two writers of its runtime state (DESIGN invariant 1).
 *
 * The runtime state (sequence number, replay window, counters) is in shared
 * memory; the keys are private to each worker. esgw-ctld moves SA s from
 * worker A to worker B in three pushes, in this order:
 *   1. B gets s with keys. The slot's owner is A, so B holds s in standby:
 *      packets of s that reach B are parked here, in order (bounded; an
 *      overflow is dropped as handover_overflow).
 *   2. A gets s marked leaving: it keeps s until step 3's marker.
 *   3. The router gets the new placement. Between two bursts it flushes what
 *      it queued for A, enqueues a HANDOVER marker for s into A's ring, and
 *      sends later packets of s to B (router/handover.c).
 * A's ring is FIFO, so when A dequeues the marker it has dequeued every
 * packet of s the router sent it; once those are encrypted or decrypted and
 * on their next ring, A stores owner = B (release order: every write of A to
 * the slot is visible first), wipes its keys and never touches the slot
 * again. B sees owner == B (acquire order) at the top of its loop, waits
 * until rxtx and the router have dequeued A's output up to where A's rings
 * stood at the hand-over (each worker has its own output rings), then
 * processes what it parked, then the ring: the order holds end to end.
 *
 * Failures: if A dies, ctld sends B the SA with adopt (take the slot now); A's
 * packets in flight are the crash's loss. If the marker never comes (the
 * router restarted), ctld takes s away from A first, then gives B adopt.
 * ctld moves one SA at a time and waits for A to forget s before the next
 * move, so a marker never meets a second move of the same SA. */
#include <stdlib.h>

#include <rte_branch_prediction.h>

#include "log.h"
#include "worker.h"

void handover_park(struct crypto_worker *w, struct rte_mbuf *m)
{
	const struct esgw_meta *meta = esgw_meta(m);
	struct sa_parking *p = w->parking[meta->sa_slot];
	uint32_t room = meta->kind == ESGW_PKT_HANDOVER ? HANDOVER_PARK_MAX + 1 : HANDOVER_PARK_MAX;

	if (p->count >= room) {
		/* Not the SA's counter: the slot is not ours to write yet. */
		esgw_drop(m, w->drops, ESGW_DROP_HANDOVER_OVERFLOW);
		return;
	}
	p->pkts[p->count++] = m;
}

void handover_release(struct crypto_worker *w, struct rte_mbuf *m)
{
	const struct esgw_meta *meta = esgw_meta(m);
	uint32_t slot = meta->sa_slot, to = meta->handover_to;
	struct esp_sa *sa = slot < w->dp.max_sas ? w->sa[slot] : NULL;
	struct esgw_sa_runtime *rt;

	rte_pktmbuf_free(m);
	/* A marker of an SA we do not hold was queued for an instance of this
	 * worker that died: its SA was given to the new owner directly. */
	if (sa == NULL || to >= w->dp.max_workers || to == w->id)
		return;
	rt = sa->rt;
	rt->handovers++;
	rt->handover_from = w->id;
	rt->handover_wtx_pos = w->ring_wtx->prod.tail;
	rt->handover_dec_pos = w->ring_dec->prod.tail;
	__atomic_store_n(&rt->owner, to, __ATOMIC_RELEASE);
	/* From here on the slot is B's: forget the SA and wipe its keys. */
	esp_sa_free(sa);
	crypto_worker_sa_built_free(w, slot);
	w->sa[slot] = NULL;
	w->sa_id[slot] = 0;
	esgw_doorbell_ring(&esgw_shm_worker(w->dp.shared, to)->db);
	ESGW_INFO("SA slot %u handed over to worker %u", slot, to);
}

/* Has the consumer of r taken everything up to pos (ring positions wrap)? */
static int consumed_up_to(const struct rte_ring *r, uint32_t pos)
{
	return (int32_t)(__atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE) - pos) >= 0;
}

static struct rte_ring *peer_ring(struct rte_ring **cache, const char *fmt, uint32_t worker)
{
	char name[RTE_RING_NAMESIZE];

	if (cache[worker] == NULL) {
		snprintf(name, sizeof(name), fmt, worker);
		cache[worker] = rte_ring_lookup(name);
	}
	return cache[worker];
}

/* Ours once the old owner handed it over AND its earlier output for the SA
 * has left its rings: our output goes into other rings, and must not pass it. */
static int owned(struct crypto_worker *w, uint32_t slot)
{
	const struct esgw_sa_runtime *rt = &w->dp.shared->sa[slot];
	uint32_t from;
	struct rte_ring *wtx, *dec;

	if (__atomic_load_n(&rt->owner, __ATOMIC_ACQUIRE) != w->id)
		return 0;
	from = rt->handover_from;
	if (from >= ESGW_MAX_WORKERS || from == w->id)
		return 1;
	wtx = peer_ring(w->peer_wtx, ESGW_RING_WORKER_TX_FMT, from);
	dec = peer_ring(w->peer_dec, ESGW_RING_DECRYPTED_FMT, from);
	return (wtx == NULL || consumed_up_to(wtx, rt->handover_wtx_pos)) &&
	       (dec == NULL || consumed_up_to(dec, rt->handover_dec_pos));
}

/* A standby SA is ours or about to be: keep the loop awake (no sleep) until
 * handover_poll takes it, which is as soon as the old owner's output drained. */
int handover_ready(struct crypto_worker *w)
{
	if (likely(w->nb_standby == 0))
		return 0;
	for (uint32_t i = 0; i < w->nb_standby; i++)
		if (__atomic_load_n(&w->dp.shared->sa[w->standby[i]].owner, __ATOMIC_ACQUIRE) ==
		    w->id)
			return 1;
	return 0;
}

/* The slot leaves standby: its place in the list to the last one. */
static void standby_remove(struct crypto_worker *w, uint32_t slot)
{
	uint32_t at = w->parking[slot]->standby_index, last = w->standby[--w->nb_standby];

	w->standby[at] = last;
	w->parking[last]->standby_index = at;
	w->parking[slot] = NULL;
}

void handover_poll(struct crypto_worker *w)
{
	for (uint32_t i = 0; i < w->nb_standby;) {
		uint32_t slot = w->standby[i];
		struct sa_parking *p = w->parking[slot];

		if (!owned(w, slot)) {
			i++;
			continue;
		}
		/* Active from here: crypto_worker_process now handles its packets
		 * instead of parking them, the parked ones first. The last of the
		 * list takes place i, looked at next. */
		standby_remove(w, slot);
		crypto_worker_seq_limit_apply(w, slot);
		ESGW_INFO("SA slot %u taken over with %u packets parked", slot, p->count);
		for (uint32_t i = 0; i < p->count; i += ESGW_BURST) {
			uint32_t n = p->count - i < ESGW_BURST ? p->count - i : ESGW_BURST;

			crypto_worker_process(w, p->pkts + i, n);
		}
		free(p);
	}
}

int handover_standby(struct crypto_worker *w, uint32_t slot)
{
	if (w->parking[slot] != NULL)
		return 0;
	w->parking[slot] = calloc(1, sizeof(*w->parking[slot]));
	if (w->parking[slot] == NULL)
		return -1;
	w->parking[slot]->standby_index = w->nb_standby;
	w->standby[w->nb_standby++] = slot;
	return 0;
}

void handover_forget(struct crypto_worker *w, uint32_t slot, enum esgw_drop reason)
{
	struct sa_parking *p = w->parking[slot];

	if (p == NULL)
		return;
	for (uint32_t i = 0; i < p->count; i++) {
		if (esgw_meta(p->pkts[i])->kind == ESGW_PKT_HANDOVER)
			rte_pktmbuf_free(p->pkts[i]); /* a marker is not a packet */
		else
			esgw_drop(p->pkts[i], w->drops, reason);
	}
	standby_remove(w, slot);
	free(p);
}
