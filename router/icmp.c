/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMP the gateway speaks itself: echo replies for its own addresses and the
 * errors a router owes (time exceeded, net unreachable), rate limited. */
#include <string.h>

#include "headers.h"
#include "router.h"

#define ICMP_ERRORS_PER_SECOND 100 /* a flood of expiring packets must not become one */
#define ICMP_REPLY_TTL 64
#define ICMP_QUOTE_EXTRA 8 /* RFC 792: the IP header plus 64 bits of data */

void icmp_input_local(struct router *r, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	size_t ihl = rte_ipv4_hdr_len(ip);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)((uint8_t *)ip + ihl);
	uint32_t src = rte_be_to_cpu_32(ip->src_addr), dst = rte_be_to_cpu_32(ip->dst_addr);
	const struct fib_route *to = fib_lookup(&r->tables->fib, dst);

	if (rte_pktmbuf_pkt_len(m) < ihl + ICMP_HDR_LEN ||
	    rte_pktmbuf_data_len(m) < ihl + ICMP_HDR_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	/* Other ICMP to one of our addresses (echo replies, unreachables,
	 * "fragmentation needed") is for the host's stack: its ping, its TCP. */
	if (icmp->icmp_type != ICMP_ECHO_REQUEST && to != NULL && to->kind == FIB_LOCAL) {
		punt_to_host(r, m);
		return;
	}
	/* Only echo, only to one of our addresses: answering a broadcast ping
	 * or a martian source would make the gateway an amplifier. */
	if (icmp->icmp_type != ICMP_ECHO_REQUEST || to == NULL || to->kind != FIB_LOCAL ||
	    headers_ipv4_martian_source(src)) {
		router_drop(r, m, ESGW_DROP_UNSUPPORTED_PROTOCOL);
		return;
	}
	/* The reply echoes the request's data: only a request whose checksum
	 * covers exactly what arrived is answered (RFC 792). */
	if (rte_pktmbuf_data_len(m) != rte_pktmbuf_pkt_len(m) ||
	    checksum_inet(icmp, rte_pktmbuf_pkt_len(m) - ihl) != 0) {
		router_drop(r, m, ESGW_DROP_BAD_ICMP_CHECKSUM);
		return;
	}
	/* Reply in place: only type and addresses change, so the ICMP checksum
	 * is adjusted rather than recomputed over the whole payload. */
	icmp->icmp_type = ICMP_ECHO_REPLY;
	icmp->icmp_cksum = rte_cpu_to_be_16(checksum_adjust(
		rte_be_to_cpu_16(icmp->icmp_cksum), ICMP_ECHO_REQUEST << 8 | icmp->icmp_code,
		ICMP_ECHO_REPLY << 8 | icmp->icmp_code));
	ip->src_addr = rte_cpu_to_be_32(dst);
	ip->dst_addr = rte_cpu_to_be_32(src);
	ip->time_to_live = ICMP_REPLY_TTL;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_cpu_to_be_16(checksum_inet(ip, ihl));
	r->ctr.icmp_echo_replies++;
	forward_output(r, m);
}

int icmp_rate_allows(struct router *r)
{
	if (r->now - r->icmp_window >= r->hz) {
		r->icmp_window = r->now;
		r->icmp_budget = ICMP_ERRORS_PER_SECOND;
	}
	if (r->icmp_budget == 0)
		return 0;
	r->icmp_budget--;
	return 1;
}

void icmp_send_error(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code)
{
	icmp_send_error_rest(r, orig, type, code, 0);
}

void icmp_send_error_rest(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
			  uint32_t rest)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(orig, const struct rte_ipv4_hdr *);
	size_t ihl = rte_ipv4_hdr_len(ip);
	uint32_t to = rte_be_to_cpu_32(ip->src_addr), from;
	size_t quote = ihl + ICMP_QUOTE_EXTRA;
	struct rte_icmp_hdr *icmp;
	struct rte_ipv4_hdr *out;
	struct rte_mbuf *m;

	/* RFC 1812 4.3.2.7: no error about a non-first fragment, an ICMP error,
	 * or to a source that is not a unicast host. */
	if ((rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) != 0 ||
	    headers_ipv4_martian_source(to))
		return;
	if (quote > rte_pktmbuf_pkt_len(orig))
		quote = rte_pktmbuf_pkt_len(orig);
	if (quote > rte_pktmbuf_data_len(orig))
		quote = rte_pktmbuf_data_len(orig);
	if (ip->next_proto_id == IPPROTO_ICMP &&
	    headers_icmp_is_error((const struct rte_icmp_hdr *)((const uint8_t *)ip + ihl),
				  quote > ihl ? quote - ihl : 0))
		return;
	from = router_source_address(r->tables, to);
	if (from == 0 || !icmp_rate_allows(r))
		return;
	m = router_mbuf_alloc(r);
	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	out = (struct rte_ipv4_hdr *)rte_pktmbuf_append(m, IPV4_HDR_LEN + ICMP_HDR_LEN + quote);
	if (out == NULL) { /* a quote of at most 68 bytes always fits; be safe anyway */
		rte_pktmbuf_free(m);
		return;
	}
	headers_ipv4_write(out, IPV4_HDR_LEN + ICMP_HDR_LEN + quote, ICMP_REPLY_TTL, IPPROTO_ICMP,
			   from, to);
	icmp = (struct rte_icmp_hdr *)(out + 1);
	memset(icmp, 0, ICMP_HDR_LEN);
	icmp->icmp_type = type;
	icmp->icmp_code = code;
	/* The second word (echo's identifier and sequence number), e.g. the
	 * next-hop MTU in its low half (RFC 1191). */
	icmp->icmp_ident = rte_cpu_to_be_16((uint16_t)(rest >> 16));
	icmp->icmp_seq_nb = rte_cpu_to_be_16((uint16_t)rest);
	memcpy(icmp + 1, ip, quote);
	icmp->icmp_cksum = rte_cpu_to_be_16(checksum_inet(icmp, ICMP_HDR_LEN + quote));
	r->ctr.icmp_errors_sent++;
	forward_output(r, m);
}
