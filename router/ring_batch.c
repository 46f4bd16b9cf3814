/* SPDX-License-Identifier: BSD-3-Clause */
/* Output batching: packets are grouped per destination ring and enqueued with
 * one burst per ring, and each consumer's doorbell is rung once per burst. */
#include "router.h"

/* Enqueue a batch; what the ring refuses is dropped as RING_FULL. Returns
 * the number enqueued. */
static uint32_t batch_enqueue(struct router *r, struct ring_batch *b, struct rte_ring *ring,
			      struct esgw_doorbell *db)
{
	uint64_t bytes;
	uint32_t sent;

	if (b->n == 0)
		return 0;
	/* Sizes before the enqueue: after it the consumer owns the mbufs. */
	bytes = esgw_burst_bytes(b->pkts, b->n);
	sent = ring ? rte_ring_enqueue_burst(ring, (void **)b->pkts, b->n, NULL) : 0;
	r->dp.cycles.tx_packets += sent;
	r->dp.cycles.tx_bytes += bytes - esgw_burst_bytes(b->pkts + sent, b->n - sent);
	for (uint32_t i = sent; i < b->n; i++)
		router_drop(r, b->pkts[i], ESGW_DROP_RING_FULL);
	if (sent)
		esgw_dp_wake(&r->dp, db);
	b->n = 0;
	return sent;
}

static void flush_tx(struct router *r, uint16_t port)
{
	r->ctr.tx_packets += batch_enqueue(r, &r->tx[port], r->tables->ports[port].tx_ring,
					   &r->dp.shared->db_rxtx);
}

static void flush_crypto(struct router *r, uint32_t worker)
{
	r->ctr.to_crypto += batch_enqueue(r, &r->crypto[worker], r->crypto_ring[worker],
					  &esgw_shm_worker(r->dp.shared, worker)->db);
}

void router_send_tx(struct router *r, uint16_t port, struct rte_mbuf *frame)
{
	struct esgw_meta *meta = esgw_meta(frame);

	/* Only a worker's decrypted packet carries an order for rxtx (shm.h);
	 * in any other frame the field is whatever the mbuf last held. */
	if (meta->kind != ESGW_PKT_DECRYPTED)
		meta->order_worker = 0;
	meta->kind = ESGW_PKT_TX;
	meta->out_port = port;
	if (r->tx[port].n == ROUTER_BATCH)
		flush_tx(r, port);
	r->tx[port].pkts[r->tx[port].n++] = frame;
}

/* A worker is listed in crypto_queued while its batch holds packets: a full
 * batch is flushed and at once holds this packet again. */
void router_send_crypto(struct router *r, uint32_t worker, struct rte_mbuf *m)
{
	struct ring_batch *b = &r->crypto[worker];

	if (b->n == ROUTER_BATCH)
		flush_crypto(r, worker);
	else if (b->n == 0)
		r->crypto_queued[r->nb_crypto_queued++] = (uint16_t)worker;
	b->pkts[b->n++] = m;
}

void router_flush(struct router *r)
{
	for (uint16_t p = 0; p < ESGW_MAX_PORTS; p++)
		flush_tx(r, p);
	for (uint32_t i = 0; i < r->nb_crypto_queued; i++)
		flush_crypto(r, r->crypto_queued[i]);
	r->nb_crypto_queued = 0;
	if (unlikely(r->nb_handovers != 0))
		router_handover_retry(r);
}
