/* SPDX-License-Identifier: BSD-3-Clause */
/* Decrypted packets that need no router: the router writes down, per
 * inbound SA and pair of inner IPv4 addresses, where it sent the last one
 * (port, MAC addresses, MTU) into the shared table the SA's worker reads
 * (common/shm.h struct esgw_egress), and the worker sends the next ones of
 * that pair straight to rxtx (crypto-worker/egress.c), which saves each of
 * them a second pass through the router and two ring hand-offs.
 *
 * Written down only what depends on the addresses and the SA alone, and
 * only when nothing else could decide: no policy is configured (the SPD
 * table is empty: policies match ports and protocols too), the packet
 * passed the inbound checks (source_check: the reverse path into the SA's
 * tunnel, not martian), is not for the gateway, was routed out of a port
 * (not into a tunnel, not to a broadcast) and its next hop was resolved.
 * The worker checks the rest per packet (header, TTL, the port's MTU).
 *
 * Everything the router decides from may change: a push of the
 * configuration, a neighbour whose address changes or that goes, the
 * router's own restart. Each of those bumps the epoch (egress_invalidate),
 * which invalidates every entry at once; the next packet of each pair
 * comes through the router again and writes its entry anew. A neighbour is
 * written down only until it is due to be confirmed (its refresh time), so
 * the router sees traffic to confirm it with.
 *
 * Entries are written once the round's packets are on their rings
 * (egress_publish after router_flush), with how far the router had taken
 * the worker's ring and filled the port's ring: the worker sends a pair
 * direct only when those cover every packet of the SA it sent through the
 * router, so no packet overtakes one sent before it. */
#include <string.h>

#include "router.h"

void egress_invalidate(struct router *r)
{
	struct esgw_shared *s = r->dp.shared;
	uint32_t epoch;

	r->nb_egress_notes = 0;
	if (s == NULL)
		return;
	epoch = __atomic_load_n(&s->egress_epoch, __ATOMIC_RELAXED) + 1;
	if (epoch == 0)
		epoch = 1; /* 0 is "never filled" */
	__atomic_store_n(&s->egress_epoch, epoch, __ATOMIC_RELEASE);
	r->ctr.egress_invalidations++;
}

void egress_note(struct router *r, struct rte_mbuf *m, uint16_t port, const struct rte_ether_addr *mac)
{
	const struct esgw_meta *meta = esgw_meta(m);
	const struct rte_ipv4_hdr *ip =
		(const struct rte_ipv4_hdr *)(rte_pktmbuf_mtod(m, const uint8_t *) + RTE_ETHER_HDR_LEN);
	struct egress_note *n;

	if (r->egress_from == 0 || meta->kind != ESGW_PKT_DECRYPTED || r->tables->spd != NULL ||
	    meta->sa_slot >= r->dp.max_sas || r->neigh_fresh_until <= r->now ||
	    r->tables->ports[port].tx_ring == NULL)
		return;
	if (r->nb_egress_notes == ROUTER_EGRESS_NOTES)
		return; /* a later packet of the pair notes it again */
	n = &r->egress_notes[r->nb_egress_notes++];
	n->slot = meta->sa_slot;
	n->src = ip->src_addr;
	n->dst = ip->dst_addr;
	n->port = port;
	n->worker = (uint16_t)(r->egress_from - 1);
	n->mac = *mac;
	n->fresh_until = r->neigh_fresh_until;
}

/* Entry e as the router would write it from note n now. */
static void entry_fill(const struct router *r, const struct egress_note *n, uint32_t epoch,
		       struct esgw_egress *e)
{
	const struct router_port *port = &r->tables->ports[n->port];

	memset(e, 0, sizeof(*e));
	e->epoch = epoch;
	e->src = n->src;
	e->dst = n->dst;
	/* After router_flush: we are the only consumer of the one and the
	 * only producer of the other, so their tails are where we stand. */
	e->dec_pos = __atomic_load_n(&r->decrypted_ring[n->worker]->cons.tail, __ATOMIC_RELAXED);
	e->tx_pos = __atomic_load_n(&port->tx_ring->prod.tail, __ATOMIC_RELAXED);
	e->fresh_until = n->fresh_until;
	e->worker = n->worker;
	e->port = n->port;
	e->mtu = (uint16_t)(port->mtu < UINT16_MAX ? port->mtu : UINT16_MAX);
	e->dst_mac = n->mac;
	e->src_mac = port->mac;
}

void egress_publish(struct router *r)
{
	struct esgw_shared *s = r->dp.shared;
	uint32_t epoch = __atomic_load_n(&s->egress_epoch, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < r->nb_egress_notes; i++) {
		const struct egress_note *n = &r->egress_notes[i];
		struct esgw_egress *e = esgw_egress(s, n->slot, n->src, n->dst), want;
		uint32_t seq;

		entry_fill(r, n, epoch, &want);
		want.seq = e->seq;
		if (memcmp(&want, e, sizeof(want)) == 0)
			continue; /* unchanged: leave the line in the worker's cache */
		/* Sequence lock: odd while the fields change, then even again
		 * but never 0, which a worker's egress_routed() uses for "no
		 * entry checked" (a wrap after 2^31 writes skips it). */
		seq = e->seq + 1;
		__atomic_store_n(&e->seq, seq, __ATOMIC_RELAXED);
		rte_smp_wmb();
		memcpy((uint8_t *)e + sizeof(e->seq), (const uint8_t *)&want + sizeof(want.seq),
		       sizeof(want) - sizeof(want.seq));
		__atomic_store_n(&e->seq, seq + 1 != 0 ? seq + 1 : 2, __ATOMIC_RELEASE);
		r->ctr.egress_entries_written++;
	}
	r->nb_egress_notes = 0;
}
