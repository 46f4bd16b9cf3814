/* SPDX-License-Identifier: BSD-3-Clause */
/* Ahead of forward_input in a burst, the table entries a packet will read,
 * so that with thousands of tunnels (every packet another route, tunnel and
 * SA) their cache misses overlap instead of following one another: first
 * the lookups (the FIB entries of its destination and source, the SPI
 * table's of ESP, the SA's tunnel number of a decrypted packet), then, a
 * few packets later when those have arrived, what they lead to (the tunnel
 * a route enters, the tunnel of the SA). Only hints: a packet is read as
 * far as its first segment holds and nothing is trusted or written. */
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

void prefetch_lookups(const struct router *r, struct rte_mbuf *m)
{
	const struct router_tables *t = r->tables;
	const struct esgw_meta *meta = esgw_meta(m);
	const struct rte_ipv4_hdr *ip;
	const uint8_t *spi;
	uint32_t avail;

	if (t == NULL || (ip = ipv4_of(m, &avail)) == NULL)
		return;
	fib_prefetch(&t->fib, rte_be_to_cpu_32(ip->dst_addr));
	fib_prefetch(&t->fib, rte_be_to_cpu_32(ip->src_addr));
	if (meta->kind == ESGW_PKT_DECRYPTED) {
		if (meta->sa_slot < t->max_sas)
			rte_prefetch0(&t->sa_tunnel[meta->sa_slot]);
	} else if (t->sa_in != NULL && (spi = spi_of(ip, avail)) != NULL) {
		const struct router_sa_in *e = &t->sa_in[probe_hash(read_be32(spi)) & t->sa_in_mask];

		rte_prefetch0(e);
	}
}

static void prefetch_tunnel(const struct router_tables *t, uint32_t index)
{
	if (index < t->nb_tunnels) /* the fast path's fields: one line */
		rte_prefetch0(&t->tunnels[index]);
}

void prefetch_targets(struct router *r, struct rte_mbuf *m)
{
	const struct router_tables *t = r->tables;
	const struct esgw_meta *meta = esgw_meta(m);
	const struct rte_ipv4_hdr *ip;
	const struct fib_route *rt;
	uint32_t avail;

	if (t == NULL || (ip = ipv4_of(m, &avail)) == NULL)
		return;
	rt = fib_lookup(&t->fib, rte_be_to_cpu_32(ip->dst_addr));
	if (rt != NULL && rt->kind == FIB_TUNNEL)
		prefetch_tunnel(t, rt->tunnel);
	if (meta->kind == ESGW_PKT_DECRYPTED && meta->sa_slot < t->max_sas &&
	    t->sa_tunnel[meta->sa_slot] != 0)
		prefetch_tunnel(t, t->sa_tunnel[meta->sa_slot] - 1);
}
