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
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	uint8_t *icmp = ip + ihl;
	uint32_t src = read_be32(ip + 12), dst = read_be32(ip + 16);
	const struct fib_route *to = fib_lookup(&r->tables->fib, dst);

	if (rte_pktmbuf_pkt_len(m) < ihl + ICMP_HEADER_LEN ||
	    rte_pktmbuf_data_len(m) < ihl + ICMP_HEADER_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	/* Other ICMP to one of our addresses (echo replies, unreachables,
	 * "fragmentation needed") is for the host's stack: its ping, its TCP. */
	if (icmp[0] != ICMP_ECHO_REQUEST && to != NULL && to->kind == FIB_LOCAL) {
		punt_to_host(r, m);
		return;
	}
	/* Only echo, only to one of our addresses: answering a broadcast ping
	 * or a martian source would make the gateway an amplifier. */
	if (icmp[0] != ICMP_ECHO_REQUEST || to == NULL || to->kind != FIB_LOCAL ||
	    ipv4_is_martian_source(src)) {
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
	icmp[0] = ICMP_ECHO_REPLY;
	write_be16(icmp + 2, checksum_adjust(read_be16(icmp + 2), ICMP_ECHO_REQUEST << 8 | icmp[1],
					     ICMP_ECHO_REPLY << 8 | icmp[1]));
	write_be32(ip + 12, dst);
	write_be32(ip + 16, src);
	ip[8] = ICMP_REPLY_TTL;
	write_be16(ip + 10, 0);
	write_be16(ip + 10, checksum_inet(ip, ihl));
	r->ctr.icmp_echo_replies++;
	router_output_ip(r, m);
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
	const uint8_t *ip = rte_pktmbuf_mtod(orig, const uint8_t *);
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	uint32_t to = read_be32(ip + 12), from;
	size_t quote = ihl + ICMP_QUOTE_EXTRA;
	struct rte_mbuf *m;
	uint8_t *out;

	/* RFC 1812 4.3.2.7: no error about a non-first fragment, an ICMP error,
	 * or to a source that is not a unicast host. */
	if ((read_be16(ip + 6) & 0x1fff) != 0 || ipv4_is_martian_source(to))
		return;
	if (quote > rte_pktmbuf_pkt_len(orig))
		quote = rte_pktmbuf_pkt_len(orig);
	if (quote > rte_pktmbuf_data_len(orig))
		quote = rte_pktmbuf_data_len(orig);
	if (ip[9] == IPPROTO_ICMP_NUM && icmp_is_error(ip + ihl, quote > ihl ? quote - ihl : 0))
		return;
	from = router_source_address(r->tables, to);
	if (from == 0 || !icmp_rate_allows(r))
		return;
	m = rte_pktmbuf_alloc(r->dp.pool);
	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	out = (uint8_t *)rte_pktmbuf_append(m, IPV4_MIN_HEADER_LEN + ICMP_HEADER_LEN + quote);
	if (out == NULL) { /* a quote of at most 68 bytes always fits; be safe anyway */
		rte_pktmbuf_free(m);
		return;
	}
	ipv4_write_header(out, IPV4_MIN_HEADER_LEN + ICMP_HEADER_LEN + quote, ICMP_REPLY_TTL,
			  IPPROTO_ICMP_NUM, from, to);
	out += IPV4_MIN_HEADER_LEN;
	memset(out, 0, ICMP_HEADER_LEN);
	out[0] = type;
	out[1] = code;
	write_be32(out + 4, rest); /* e.g. the next-hop MTU (RFC 1191) */
	memcpy(out + ICMP_HEADER_LEN, ip, quote);
	write_be16(out + 2, checksum_inet(out, ICMP_HEADER_LEN + quote));
	r->ctr.icmp_errors_sent++;
	router_output_ip(r, m);
}
