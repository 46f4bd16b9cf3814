/* SPDX-License-Identifier: BSD-3-Clause */
/* ICMPv6 the gateway speaks itself (RFC 4443): echo replies for its own
 * addresses, neighbor discovery handed to nd.c, and the errors a router owes
 * (time exceeded, no route, packet too big), rate limited with the ICMP ones
 * and sent from the gateway's address toward their destination. Other ICMPv6
 * to its addresses goes to the host's stack (punt.c). */
#include <string.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define ICMP6_REPLY_HOP_LIMIT 64
#define ICMP6_ERROR_MAX (IPV6_MIN_MTU - IPV6_HDR_LEN) /* RFC 4443 2.4 (c) */

uint16_t icmp6_checksum(const struct rte_ipv6_hdr *ip, const void *icmp, uint32_t len)
{
	struct rte_icmp_hdr *hdr = (struct rte_icmp_hdr *)icmp;
	rte_be16_t saved = hdr->icmp_cksum;
	uint16_t sum;

	/* Summed as 0 whether it is being verified or computed. */
	hdr->icmp_cksum = 0;
	sum = checksum_ipv6(ip->src_addr, ip->dst_addr, IPPROTO_ICMPV6, icmp, len);
	hdr->icmp_cksum = saved;
	return sum;
}

void icmp6_input_local(struct router *r, struct rte_mbuf *m, int to_multicast)
{
	struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	uint32_t len = rte_pktmbuf_pkt_len(m) - IPV6_HDR_LEN;
	uint8_t tmp[16];

	if (rte_pktmbuf_data_len(m) != rte_pktmbuf_pkt_len(m) || len < ICMP_HDR_LEN ||
	    icmp6_checksum(ip, icmp, len) != rte_be_to_cpu_16(icmp->icmp_cksum)) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	switch (icmp->icmp_type) {
	case ND_NEIGHBOR_SOLICIT:
	case ND_NEIGHBOR_ADVERT:
		if (esgw_meta(m)->kind != ESGW_PKT_RX) { /* through a tunnel: not on-link */
			router_drop(r, m, ESGW_DROP_UNSUPPORTED_PROTOCOL);
			return;
		}
		nd_input(r, m, esgw_meta(m)->in_port);
		return;
	case ICMP6_ECHO_REQUEST:
		if (to_multicast || ip->src_addr[0] == 0xff)
			break; /* no amplification through multicast pings */
		/* Reply in place: the pseudo-header sum does not change when the
		 * addresses swap, so only the type changes the checksum. */
		icmp->icmp_type = ICMP6_ECHO_REPLY;
		icmp->icmp_cksum =
			rte_cpu_to_be_16(checksum_adjust(rte_be_to_cpu_16(icmp->icmp_cksum),
							 ICMP6_ECHO_REQUEST << 8 | icmp->icmp_code,
							 ICMP6_ECHO_REPLY << 8 | icmp->icmp_code));
		memcpy(tmp, ip->src_addr, 16);
		memcpy(ip->src_addr, ip->dst_addr, 16);
		memcpy(ip->dst_addr, tmp, 16);
		ip->hop_limits = ICMP6_REPLY_HOP_LIMIT;
		r->ctr.icmp6_echo_replies++;
		forward_output(r, m);
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

/* The port's address on toward's subnet, else its first; 0 if it has none. */
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

/* The gateway address to send an error toward dst from; 0 if it has none. */
static int source_address(const struct router_tables *t, const uint8_t dst[16], uint8_t src[16])
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

/* RFC 4443 2.4 (e): never to a multicast or unspecified source, never about
 * an ICMPv6 error (types below 128); to a multicast destination, only packet
 * too big (it serves path MTU discovery). quote: the bytes of ip at hand. */
static int error_allowed(const struct rte_ipv6_hdr *ip, uint32_t quote, uint8_t type)
{
	static const uint8_t unspecified[16];

	if (ip->src_addr[0] == 0xff || memcmp(ip->src_addr, unspecified, 16) == 0)
		return 0;
	if (ip->proto == IPPROTO_ICMPV6 &&
	    (quote < IPV6_HDR_LEN + 1 || ((const struct rte_icmp_hdr *)(ip + 1))->icmp_type < 128))
		return 0;
	return ip->dst_addr[0] != 0xff || type == ICMP6_PACKET_TOO_BIG;
}

void icmp6_send_error(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t param)
{
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(orig, const struct rte_ipv6_hdr *);
	uint32_t quote = rte_pktmbuf_data_len(orig);
	struct rte_ipv6_hdr *out;
	struct rte_icmp_hdr *icmp;
	struct rte_mbuf *m;
	uint8_t src[16];

	if (!error_allowed(ip, quote, type) || !source_address(r->tables, ip->src_addr, src) ||
	    !icmp_rate_allows(r))
		return;
	if (quote > ICMP6_ERROR_MAX - ICMP_HDR_LEN)
		quote = ICMP6_ERROR_MAX - ICMP_HDR_LEN;
	m = router_mbuf_alloc(r);
	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	out = (struct rte_ipv6_hdr *)rte_pktmbuf_append(
		m, (uint16_t)(IPV6_HDR_LEN + ICMP_HDR_LEN + quote));
	if (out == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(out, 0, IPV6_HDR_LEN + ICMP_HDR_LEN);
	out->vtc_flow = rte_cpu_to_be_32(6u << 28);
	out->payload_len = rte_cpu_to_be_16((uint16_t)(ICMP_HDR_LEN + quote));
	out->proto = IPPROTO_ICMPV6;
	out->hop_limits = ICMP6_REPLY_HOP_LIMIT;
	memcpy(out->src_addr, src, 16);
	memcpy(out->dst_addr, ip->src_addr, 16);
	icmp = (struct rte_icmp_hdr *)(out + 1);
	icmp->icmp_type = type;
	icmp->icmp_code = code;
	/* The second word: the MTU (packet too big) or the pointer. */
	icmp->icmp_ident = rte_cpu_to_be_16((uint16_t)(param >> 16));
	icmp->icmp_seq_nb = rte_cpu_to_be_16((uint16_t)param);
	memcpy(icmp + 1, ip, quote);
	icmp->icmp_cksum = rte_cpu_to_be_16(icmp6_checksum(out, icmp, ICMP_HDR_LEN + quote));
	r->ctr.icmp6_errors_sent++;
	forward_output(r, m);
}
