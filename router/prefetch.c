/* SPDX-License-Identifier: BSD-3-Clause */
/* Ahead of forward_input in a burst, the table entries a packet will read,
 * so that with thousands of tunnels (every packet another route, tunnel and
 * SA) their cache misses overlap instead of following one another. Three
 * steps, each a few packets after the one before, when what it reads has
 * arrived: the lookups (the FIB index entries of its destination and
 * source, the SPI table's of ESP, the SA's tunnel number of a decrypted
 * packet), the routes' slots those entries name, then what the routes and
 * the SA lead to (the tunnel). The packet is parsed once, by the first
 * step, into its struct router_ahead (parsed three times, the parsing cost
 * ~19 cycles a packet at 10,000 tunnels). Only hints: a packet is read as
 * far as its first segment holds and nothing is trusted or written; the
 * tables do not change within a burst. */
#include "headers.h"
#include "router.h"

/* The IPv4 header of m (an RX frame or a decrypted packet), or NULL. */
static const struct rte_ipv4_hdr *ipv4_of(struct rte_mbuf *m, uint32_t *avail)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), off = 0;

	if (esgw_meta(m)->kind == ESGW_PKT_RX) {
		if (len < RTE_ETHER_HDR_LEN ||
		    read_be16(p + 2 * RTE_ETHER_ADDR_LEN) != RTE_ETHER_TYPE_IPV4)
			return NULL;
		off = RTE_ETHER_HDR_LEN;
	}
	if (len < off + sizeof(struct rte_ipv4_hdr) || packet_ip_version(p + off) != 4)
		return NULL;
	*avail = len - off;
	return (const struct rte_ipv4_hdr *)(p + off);
}

/* Where the SPI of ESP (or of ESP in UDP) in ip would be, or NULL. */
static const uint8_t *spi_of(const struct rte_ipv4_hdr *ip, uint32_t avail)
{
	uint32_t hlen = (ip->version_ihl & 0xf) * 4u;

	if (ip->next_proto_id == IPPROTO_UDP)
		hlen += 8;
	else if (ip->next_proto_id != IPPROTO_ESP)
		return NULL;
	return avail >= hlen + 4 ? (const uint8_t *)ip + hlen : NULL;
}

void prefetch_lookups(const struct router *r, struct rte_mbuf *m, struct router_ahead *a)
{
	const struct router_tables *t = r->tables;
	const struct esgw_meta *meta = esgw_meta(m);
	const struct rte_ipv4_hdr *ip;
	const uint8_t *spi;
	uint32_t avail;

	a->ipv4 = 0;
	a->dst_slot = 0;
	a->sa_slot = UINT32_MAX;
	if (t == NULL || (ip = ipv4_of(m, &avail)) == NULL)
		return;
	a->ipv4 = 1;
	a->dst = rte_be_to_cpu_32(ip->dst_addr);
	a->src = rte_be_to_cpu_32(ip->src_addr);
	fib_prefetch(&t->fib, a->dst);
	fib_prefetch(&t->fib, a->src);
	if (meta->kind == ESGW_PKT_DECRYPTED) {
		if (meta->sa_slot < t->max_sas) {
			a->sa_slot = meta->sa_slot;
			rte_prefetch0(&t->sa_tunnel[meta->sa_slot]);
		}
	} else if (t->sa_in != NULL && (spi = spi_of(ip, avail)) != NULL) {
		const struct router_sa_in *e =
			&t->sa_in[probe_hash(read_be32(spi)) & t->sa_in_mask];

		rte_prefetch0(e);
	}
}

/* rte_prefetch0 (inline assembly), not __builtin_prefetch: GCC dropped the
 * whole index lookup behind that one as dead code. */
void prefetch_routes(const struct router *r, struct router_ahead *a)
{
	const struct fib *fib;
	uint32_t s;

	if (!a->ipv4) /* also when there are no tables */
		return;
	fib = &r->tables->fib;
	a->dst_slot = lpm24_lookup(&fib->lpm, a->dst);
	if (a->dst_slot != 0)
		rte_prefetch0(&fib->slots[a->dst_slot - 1]);
	s = lpm24_lookup(&fib->lpm, a->src);
	if (s != 0)
		rte_prefetch0(&fib->slots[s - 1]);
}

static void prefetch_tunnel(const struct router_tables *t, uint32_t index)
{
	if (index < t->nb_tunnels) /* the fast path's fields: one line */
		rte_prefetch0(&t->tunnels[index]);
}

void prefetch_targets(const struct router *r, const struct router_ahead *a)
{
	const struct router_tables *t = r->tables;
	const struct fib_route *rt;

	if (!a->ipv4)
		return;
	rt = a->dst_slot != 0 ? &t->fib.slots[a->dst_slot - 1] : fib_lookup_short(&t->fib, a->dst);
	if (rt != NULL && rt->kind == FIB_TUNNEL)
		prefetch_tunnel(t, rt->tunnel);
	if (a->sa_slot != UINT32_MAX && t->sa_tunnel[a->sa_slot] != 0)
		prefetch_tunnel(t, t->sa_tunnel[a->sa_slot] - 1);
}
