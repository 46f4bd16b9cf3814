/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's part of moving an SA between crypto workers: when a new
 * configuration places an SA on another worker, a HANDOVER marker goes into
 * the old worker's ring behind every packet of that SA sent there, before any
 * packet of it goes to the new worker. The old worker passes ownership of the
 * SA's runtime state on when the marker reaches it (crypto-worker/handover.c),
 * so the SA's packets are processed in the order the router saw them. */
#include <string.h>

#include "log.h"
#include "router.h"
#include "spd.h"

#define NO_WORKER 0xff

/* Worker of every SA slot the tables use, NO_WORKER for the others. */
static void slot_workers(const struct router_tables *t, uint8_t workers[ESGW_MAX_SA])
{
	memset(workers, NO_WORKER, ESGW_MAX_SA);
	if (t == NULL)
		return;
	for (uint32_t i = 0; i < t->nb_tunnels; i++)
		workers[t->tunnels[i].sa_out_slot] = (uint8_t)t->tunnels[i].worker;
	for (uint32_t i = 0; t->sa_in != NULL && i <= t->sa_in_mask; i++)
		if (t->sa_in[i].used)
			workers[t->sa_in[i].slot] = (uint8_t)t->sa_in[i].worker;
	for (uint32_t i = 0; t->spd != NULL && i < t->spd->nb_policies; i++) /* policies' SAs */
		if (t->spd->policies[i].usable)
			workers[t->spd->policies[i].sa_slot] = (uint8_t)t->spd->policies[i].worker;
}

/* Enqueue one marker; 0, or -1 if the ring or the pool refused (retry later:
 * the old ring gets no more packets of the SA meanwhile, so a late marker is
 * still behind all of them). */
static int marker_send(struct router *r, const struct router_handover *h)
{
	struct rte_ring *ring = r->crypto_ring[h->from];
	struct rte_mbuf *m;
	struct esgw_meta *meta;

	if (ring == NULL)
		return 0; /* no ring, no packets in it: nothing to mark */
	m = rte_pktmbuf_alloc(r->dp.pool);
	if (m == NULL)
		return -1;
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_HANDOVER;
	meta->sa_slot = h->slot;
	meta->handover_to = h->to;
	if (rte_ring_enqueue(ring, m) != 0) {
		rte_pktmbuf_free(m);
		return -1;
	}
	esgw_doorbell_ring(&esgw_shm_worker(r->dp.shared, h->from)->db);
	return 0;
}

void router_handover_retry(struct router *r)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < r->nb_handovers; i++)
		if (marker_send(r, &r->handovers[i]) < 0)
			r->handovers[kept++] = r->handovers[i];
	r->nb_handovers = kept;
}

void router_handover_begin(struct router *r, const struct router_tables *old,
			   const struct router_tables *new)
{
	static uint8_t before[ESGW_MAX_SA], after[ESGW_MAX_SA];

	slot_workers(old, before);
	slot_workers(new, after);
	for (uint32_t slot = 0; slot < ESGW_MAX_SA; slot++) {
		if (before[slot] == NO_WORKER || after[slot] == NO_WORKER ||
		    before[slot] == after[slot])
			continue;
		if (r->nb_handovers == ESGW_MAX_SA) {
			ESGW_ERR("hand-over of slot %u: too many markers waiting", slot);
			continue;
		}
		r->handovers[r->nb_handovers++] = (struct router_handover){
			.slot = slot, .from = before[slot], .to = after[slot]};
		ESGW_INFO("SA slot %u: worker %u -> %u", slot, before[slot], after[slot]);
	}
	router_handover_retry(r);
}
