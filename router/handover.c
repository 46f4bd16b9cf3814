/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's part of moving an SA between crypto workers: when a new
 * configuration places an SA on another worker, a HANDOVER marker goes into
 * the old worker's ring behind every packet of that SA sent there, before any
 * packet of it goes to the new worker. The old worker passes ownership of the
 * SA's runtime state on when the marker reaches it (crypto-worker/handover.c),
 * so the SA's packets are processed in the order the router saw them. */
#include "log.h"
#include "router.h"
#include "slot_table.h"
#include "spd.h"

/* Worker + 1 of each SA slot in the old and the new tables while a push is
 * compared (router_handover_begin), 0 (none) between pushes; dp.max_sas. */
static uint8_t *before, *after;

int router_handover_init(struct router *r)
{
	before = esgw_slot_table_alloc(r->dp.max_sas, sizeof(*before));
	after = esgw_slot_table_alloc(r->dp.max_sas, sizeof(*after));
	r->handovers = esgw_slot_table_alloc(r->dp.max_sas, sizeof(*r->handovers));
	return before == NULL || after == NULL || r->handovers == NULL ? -1 : 0;
}

typedef void slot_fn(struct router *r, uint32_t slot, uint8_t worker);

/* fn for every SA slot the tables use, with its worker (a slot may come more
 * than once): the SAs held, not every slot. */
static void each_slot(struct router *r, const struct router_tables *t, slot_fn *fn)
{
	if (t == NULL)
		return;
	for (uint32_t i = 0; i < t->nb_tunnels; i++)
		fn(r, t->tunnels[i].sa_out_slot, (uint8_t)t->tunnels[i].worker);
	for (uint32_t i = 0; t->sa_in != NULL && i <= t->sa_in_mask; i++)
		if (t->sa_in[i].used)
			fn(r, t->sa_in[i].slot, (uint8_t)t->sa_in[i].worker);
	for (uint32_t i = 0; t->spd != NULL && i < t->spd->nb_policies; i++) /* policies' SAs */
		if (t->spd->policies[i].usable)
			fn(r, t->spd->policies[i].sa_slot, (uint8_t)t->spd->policies[i].worker);
}

static void set_before(struct router *r, uint32_t slot, uint8_t worker)
{
	(void)r;
	before[slot] = (uint8_t)(worker + 1);
}

static void set_after(struct router *r, uint32_t slot, uint8_t worker)
{
	(void)r;
	after[slot] = (uint8_t)(worker + 1);
}

static void clear_after(struct router *r, uint32_t slot, uint8_t worker)
{
	(void)r;
	(void)worker;
	after[slot] = 0;
}

/* A marker for the SA in slot, from worker from to worker to, queued. */
static void queue(struct router *r, uint32_t slot, uint32_t from, uint32_t to)
{
	if (r->nb_handovers == r->dp.max_sas) {
		ESGW_ERR("hand-over of slot %u: too many markers waiting", slot);
		return;
	}
	r->handovers[r->nb_handovers++] =
		(struct router_handover){.slot = slot, .from = (uint16_t)from, .to = (uint16_t)to};
	ESGW_INFO("SA slot %u: worker %u -> %u", slot, from, to);
}

/* A slot of the old tables: queue a marker if the new ones place it on
 * another worker; once per slot (before[] is cleared as it is seen). */
static void compare(struct router *r, uint32_t slot, uint8_t worker)
{
	uint32_t from = before[slot] - 1u, to = after[slot] - 1u;

	(void)worker;
	if (before[slot] == 0)
		return;
	if (after[slot] != 0 && from != to)
		queue(r, slot, from, to);
	before[slot] = 0;
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
	each_slot(r, old, set_before);
	each_slot(r, new, set_after);
	each_slot(r, old, compare);
	each_slot(r, new, clear_after);
	router_handover_retry(r);
}

void router_handover_moved(struct router *r, uint32_t slot, uint32_t from, uint32_t to)
{
	queue(r, slot, from, to);
	router_handover_retry(r);
}
