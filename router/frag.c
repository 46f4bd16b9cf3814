/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 over the MTU of its way out (a port, or a tunnel's inner MTU): with
 * DF, ICMP "fragmentation needed" with the MTU it may use (RFC 1191);
 * without DF, fragments made here, before encryption (RFC 4301 appendix B
 * "inner" fragmentation): every fragment is a whole ESP packet, so the peer
 * decrypts each alone and the end host reassembles, and no gateway has to
 * reassemble ESP for the traffic we send. */
#include <string.h>

#include "headers.h"
#include "router.h"

#define FRAGMENTS_MAX 64

/* One fragment: the header of m (length, flags, offset, checksum changed)
 * and len bytes of its payload from pos. NULL if the pool is empty. */
static struct rte_mbuf *make_fragment(struct router *r, struct rte_mbuf *m, uint32_t ihl,
				      uint32_t pos, uint32_t len, int more)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	uint16_t flags = rte_be_to_cpu_16(ip->fragment_offset);
	uint32_t offset = (flags & RTE_IPV4_HDR_OFFSET_MASK) * 8u + pos;
	struct rte_mbuf *f = rte_pktmbuf_alloc(r->dp.pool);
	struct rte_ipv4_hdr *out;
	const void *src;
	uint8_t *payload;

	if (f == NULL)
		return NULL;
	out = (struct rte_ipv4_hdr *)rte_pktmbuf_append(f, (uint16_t)(ihl + len));
	if (out == NULL) {
		rte_pktmbuf_free(f);
		return NULL;
	}
	/* All options are copied into every fragment: simpler than sorting
	 * them by their copy bit, and harmless for the options in use. */
	memcpy(out, ip, ihl);
	/* rte_pktmbuf_read copies only from segmented mbufs; else it points. */
	payload = (uint8_t *)out + ihl;
	src = rte_pktmbuf_read(m, ihl + pos, len, payload);
	if (src != payload)
		memcpy(payload, src, len);
	out->total_length = rte_cpu_to_be_16((uint16_t)(ihl + len));
	out->fragment_offset = rte_cpu_to_be_16(
		(uint16_t)((flags & ~RTE_IPV4_HDR_OFFSET_MASK & ~RTE_IPV4_HDR_MF_FLAG) |
			   (more || (flags & RTE_IPV4_HDR_MF_FLAG) ? RTE_IPV4_HDR_MF_FLAG : 0) |
			   (offset / 8)));
	out->hdr_checksum = 0;
	out->hdr_checksum = rte_cpu_to_be_16(checksum_inet(out, ihl));
	*esgw_meta(f) = *esgw_meta(m);
	return f;
}

void frag_ipv4(struct router *r, struct rte_mbuf *m, uint32_t mtu)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	uint32_t ihl = rte_ipv4_hdr_len(ip), payload, chunk, nb;
	struct rte_mbuf *frags[FRAGMENTS_MAX];

	if (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_DF_FLAG) {
		icmp_send_error_rest(r, m, ICMP_DEST_UNREACHABLE, 4 /* fragmentation needed */,
				     mtu > 0xffff ? 0xffff : mtu);
		router_drop(r, m, ESGW_DROP_TOO_BIG);
		return;
	}
	payload = rte_pktmbuf_pkt_len(m) - ihl;
	chunk = mtu > ihl ? (mtu - ihl) / 8 * 8 : 0; /* offsets count 8-byte units */
	nb = chunk ? (payload + chunk - 1) / chunk : 0;
	if (chunk == 0 || nb > FRAGMENTS_MAX) {
		router_drop(r, m, ESGW_DROP_TOO_BIG);
		return;
	}
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t pos = i * chunk, len = payload - pos < chunk ? payload - pos : chunk;

		frags[i] = make_fragment(r, m, ihl, pos, len, i + 1 < nb);
		if (frags[i] == NULL) {
			while (i > 0)
				rte_pktmbuf_free(frags[--i]);
			router_drop(r, m, ESGW_DROP_NO_MBUF);
			return;
		}
	}
	rte_pktmbuf_free(m); /* consumed: its fragments go on */
	for (uint32_t i = 0; i < nb; i++) {
		r->ctr.fragments_sent++;
		forward_output(r, frags[i]);
	}
}
