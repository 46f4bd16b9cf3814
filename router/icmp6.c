/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMPv6 the gateway speaks itself (RFC 4443): echo replies for its own
 * addresses, neighbor discovery handed to nd.c, and the errors a router owes
 * (time exceeded, no route, packet too big), rate limited with the ICMP ones.
 * Other ICMPv6 to its addresses goes to the host's stack (punt.c). */
#include <string.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define ICMP6_REPLY_HOP_LIMIT 64
#define ICMP6_ERROR_MAX (IPV6_MIN_MTU - IPV6_HEADER_LEN) /* RFC 4443 2.4 (c) */

uint16_t icmp6_checksum(const uint8_t *ip, const uint8_t *icmp, uint32_t len)
{
	uint8_t saved[2];
	uint8_t *cks = (uint8_t *)icmp + 2;
	uint16_t sum;

	/* Summed as 0 whether it is being verified or computed. */
	memcpy(saved, cks, 2);
	cks[0] = cks[1] = 0;
	sum = checksum_ipv6(ip + 8, ip + 24, IPPROTO_ICMPV6_NUM, icmp, len);
	memcpy(cks, saved, 2);
	return sum;
}

void icmp6_input_local(struct router *r, struct rte_mbuf *m, int to_multicast)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *icmp = ip + IPV6_HEADER_LEN;
	uint32_t len = rte_pktmbuf_pkt_len(m) - IPV6_HEADER_LEN;
	uint8_t tmp[16];

	if (rte_pktmbuf_data_len(m) != rte_pktmbuf_pkt_len(m) || len < 8 ||
	    icmp6_checksum(ip, icmp, len) != read_be16(icmp + 2)) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	switch (icmp[0]) {
	case ND_NEIGHBOR_SOLICIT:
	case ND_NEIGHBOR_ADVERT:
		if (esgw_meta(m)->kind != ESGW_PKT_RX) { /* through a tunnel: not on-link */
			router_drop(r, m, ESGW_DROP_UNSUPPORTED_PROTOCOL);
			return;
		}
		nd_input(r, m, esgw_meta(m)->in_port);
		return;
	case ICMP6_ECHO_REQUEST:
		if (to_multicast || ip[8] == 0xff)
			break; /* no amplification through multicast pings */
		/* Reply in place: the pseudo-header sum does not change when the
		 * addresses swap, so only the type changes the checksum. */
		icmp[0] = ICMP6_ECHO_REPLY;
		write_be16(icmp + 2,
			   checksum_adjust(read_be16(icmp + 2), ICMP6_ECHO_REQUEST << 8 | icmp[1],
					   ICMP6_ECHO_REPLY << 8 | icmp[1]));
		memcpy(tmp, ip + 8, 16);
		memcpy(ip + 8, ip + 24, 16);
		memcpy(ip + 24, tmp, 16);
		ip[7] = ICMP6_REPLY_HOP_LIMIT;
		r->ctr.icmp6_echo_replies++;
		ipv6_output(r, m);
		return;
	default:
		/* Other ICMPv6 to one of our addresses (echo replies, packet too
		 * big, unreachables) is for the host's stack: its ping, its TCP. */
		if (!to_multicast) {
			punt_to_host(r, m);
			return;
		}
		break;
	}
	router_drop(r, m, ESGW_DROP_UNSUPPORTED_PROTOCOL);
}

void icmp6_send_error(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t param)
{
	const uint8_t *ip = rte_pktmbuf_mtod(orig, const uint8_t *);
	static const uint8_t unspecified[16];
	uint32_t quote = rte_pktmbuf_data_len(orig);
	uint8_t src[16], *out;
	struct rte_mbuf *m;

	/* RFC 4443 2.4 (e): never to a multicast or unspecified source, never
	 * about an ICMPv6 error (types below 128). */
	if (ip[8] == 0xff || memcmp(ip + 8, unspecified, 16) == 0)
		return;
	if (ip[6] == IPPROTO_ICMPV6_NUM &&
	    (quote < IPV6_HEADER_LEN + 1 || ip[IPV6_HEADER_LEN] < 128))
		return;
	if (ip[24] == 0xff && type != ICMP6_PACKET_TOO_BIG)
		return;
	if (!router_source_address6(r->tables, ip + 8, src) || !icmp_rate_allows(r))
		return;
	if (quote > ICMP6_ERROR_MAX - 8)
		quote = ICMP6_ERROR_MAX - 8;
	m = rte_pktmbuf_alloc(r->dp.pool);
	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	out = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(IPV6_HEADER_LEN + 8 + quote));
	if (out == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(out, 0, IPV6_HEADER_LEN + 8);
	out[0] = 0x60;
	write_be16(out + 4, (uint16_t)(8 + quote));
	out[6] = IPPROTO_ICMPV6_NUM;
	out[7] = ICMP6_REPLY_HOP_LIMIT;
	memcpy(out + 8, src, 16);
	memcpy(out + 24, ip + 8, 16);
	out[IPV6_HEADER_LEN] = type;
	out[IPV6_HEADER_LEN + 1] = code;
	write_be32(out + IPV6_HEADER_LEN + 4, param);
	memcpy(out + IPV6_HEADER_LEN + 8, ip, quote);
	write_be16(out + IPV6_HEADER_LEN + 2,
		   icmp6_checksum(out, out + IPV6_HEADER_LEN, 8 + quote));
	r->ctr.icmp6_errors_sent++;
	ipv6_output(r, m);
}

static int port_source(const struct router_port *port, const uint8_t toward[16], uint8_t src[16])
{
	for (uint32_t i = 0; i < port->nb_addrs6; i++) {
		if (esgw_prefix6_match(port->addrs6[i].addr, toward, port->addrs6[i].len)) {
			memcpy(src, port->addrs6[i].addr, 16);
			return 1;
		}
	}
	if (port->nb_addrs6 == 0)
		return 0;
	memcpy(src, port->addrs6[0].addr, 16);
	return 1;
}

int router_source_address6(const struct router_tables *t, const uint8_t dst[16], uint8_t src[16])
{
	const struct fib6_route *rt = fib6_lookup(&t->fib6, dst);

	if (rt != NULL) {
		switch (rt->kind) {
		case FIB_LOCAL:
			memcpy(src, dst, 16);
			return 1;
		case FIB_TUNNEL:
			if (t->tunnels[rt->tunnel].outer_ipv6) {
				memcpy(src, t->tunnels[rt->tunnel].local6, 16);
				return 1;
			}
			break; /* an IPv4 tunnel: any IPv6 address of ours */
		default:
			if (port_source(&t->ports[rt->port],
					rt->kind == FIB_VIA ? rt->gateway : dst, src))
				return 1;
			break;
		}
	}
	for (uint16_t p = 0; p < ESGW_MAX_PORTS; p++)
		if (t->ports[p].present && t->ports[p].nb_addrs6 > 0) {
			memcpy(src, t->ports[p].addrs6[0].addr, 16);
			return 1;
		}
	return 0;
}
