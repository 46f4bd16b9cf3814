/* SPDX-License-Identifier: BSD-3-Clause */
/* Decrypted packets straight to rxtx: when the router has written down
 * where packets of this SA between these inner IPv4 addresses go
 * (router/egress.c, common/shm.h struct esgw_egress), the worker checks
 * what the router would check of each packet itself (an option-less IPv4
 * header of the packet's length with a good checksum, a TTL above 1, the
 * port's MTU), takes one off the TTL, puts the Ethernet header on and
 * sends the frame to rxtx on its own ring, as it does encrypted ones. Any
 * other packet goes to the router, which decides everything again.
 *
 * Order: a packet of the SA sent through the router before must not be
 * overtaken by one sent direct after it, nor the other way round.
 * - Through the router, then direct: the worker remembers where its
 *   decrypted ring stood after the SA's last routed packet (slow_pos), and
 *   goes direct only with an entry written after the router took the ring
 *   that far (dec_pos) and once rxtx has taken the port's ring as far as
 *   the router had filled it then (tx_pos): the routed packets are out.
 * - Direct, then through the router: the routed packet carries where our
 *   ring to rxtx stood (esgw_meta.order_pos), and rxtx sends it only once
 *   it has taken that ring that far (rxtx/loop.c). */
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "byteorder.h"
#include "checksum.h"
#include "worker.h"

/* rxtx's TX ring of port, looked up once: it exists from rxtx's start. */
static struct rte_ring *port_ring(struct crypto_worker *w, uint16_t port)
{
	char name[RTE_RING_NAMESIZE];

	if (w->port_tx[port] == NULL) {
		snprintf(name, sizeof(name), ESGW_RING_TX_FMT, port);
		w->port_tx[port] = rte_ring_lookup(name);
	}
	return w->port_tx[port];
}

/* Whether the routed packets of the SA in slot are all out, so that entry
 * seq (its copy c, in way) may be used; remembered until the next routed one. */
static bool order_kept(struct crypto_worker *w, uint32_t slot, uint32_t way, uint32_t seq,
		       const struct esgw_egress *c)
{
	struct worker_egress *st = &w->egress[slot];
	struct rte_ring *tx;

	if (st->ok_seq[way] == seq)
		return true;
	if (!st->known) { /* nothing routed that we know of: what the ring holds */
		st->slow_pos = w->ring_dec->prod.tail;
		st->known = 1;
	}
	if ((int32_t)(c->dec_pos - st->slow_pos) < 0)
		return false; /* the router has not taken them all */
	tx = port_ring(w, c->port);
	if (tx == NULL || (int32_t)(__atomic_load_n(&tx->cons.tail, __ATOMIC_ACQUIRE) - c->tx_pos) < 0)
		return false; /* rxtx has not sent them all */
	st->ok_seq[way] = seq;
	return true;
}

bool egress_direct(struct crypto_worker *w, struct rte_mbuf *m, uint32_t slot, uint32_t epoch,
		   uint64_t now)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t len = rte_pktmbuf_data_len(m);
	struct esgw_egress *e, c;
	struct rte_ether_hdr *eth;
	struct esgw_meta *meta;
	uint32_t src, dst, seq, way;

	if (epoch == 0 || len < 20 || ip[0] != 0x45 || read_be16(ip + 2) != len || ip[8] <= 1 ||
	    slot >= w->dp.max_sas || checksum_inet(ip, 20) != 0)
		return false;
	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	way = esgw_egress_way(src, dst);
	e = esgw_egress_at(w->dp.shared, slot, way);
	/* The router's sequence lock: the fields between two equal even reads
	 * of seq. Field by field, not a struct copy: a narrow load of what a
	 * 16-byte copy just stored waits for the store (a failed
	 * store-to-load forward: 17 % of this function's samples). */
	seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return false;
	c.epoch = e->epoch;
	c.src = e->src;
	c.dst = e->dst;
	c.worker = e->worker;
	c.fresh_until = e->fresh_until;
	c.mtu = e->mtu;
	c.port = e->port;
	c.dec_pos = e->dec_pos;
	c.tx_pos = e->tx_pos;
	c.dst_mac = e->dst_mac;
	c.src_mac = e->src_mac;
	rte_smp_rmb();
	if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq)
		return false;
	if (c.epoch != epoch || c.src != src || c.dst != dst || c.worker != w->id ||
	    now >= c.fresh_until || len > c.mtu || c.port >= ESGW_MAX_PORTS ||
	    !order_kept(w, slot, way, seq, &c))
		return false;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN);
	if (eth == NULL)
		return false;
	checksum_ipv4_ttl_decrement(ip);
	eth->dst_addr = c.dst_mac;
	eth->src_addr = c.src_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_TX;
	meta->out_port = c.port;
	return true;
}

void egress_routed(struct crypto_worker *w, uint32_t slot, uint32_t pos)
{
	struct worker_egress *st;

	if (slot >= w->dp.max_sas)
		return;
	st = &w->egress[slot];
	st->slow_pos = pos;
	st->known = 1;
	for (uint32_t i = 0; i < ESGW_EGRESS_WAYS; i++)
		st->ok_seq[i] = 0; /* no written entry has seq 0 (egress_publish) */
}
