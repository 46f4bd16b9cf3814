/* SPDX-License-Identifier: BSD-3-Clause */
/* The IPv4 path: Ethernet demultiplexing (IPv6 goes to ipv6.c), header
 * validation, local delivery (ICMP, ESP), TTL, FIB lookup and output to a port
 * (with ARP) or a tunnel. */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "headers.h"
#include "router.h"

/* fib_lookup through the one-entry per-burst cache (router.h). */
static inline const struct fib_route *fib_lookup_cached(struct router *r, uint32_t dst)
{
	if (likely(r->fib_cache_valid && r->fib_cache_dst == dst))
		return r->fib_cache_rt;
	r->fib_cache_rt = fib_lookup(&r->tables->fib, dst);
	r->fib_cache_dst = dst;
	r->fib_cache_valid = 1;
	return r->fib_cache_rt;
}

static void deliver_local(struct router *r, struct rte_mbuf *m)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);

	if (ipv4_is_fragment(ip)) { /* fragmented ESP (or echo): reassembly.c */
		m = reassembly_input(r, m);
		if (m == NULL)
			return; /* held until complete, or dropped */
		ip = rte_pktmbuf_mtod(m, const uint8_t *);
	}
	switch (ip[9]) {
	case IPPROTO_ICMP_NUM:
		icmp_input_local(r, m);
		break;
	case IPPROTO_ESP_NUM:
		esp_input_local(r, m, esgw_meta(m)->in_port);
		break;
	case IPPROTO_UDP_NUM: /* ESP in UDP, NAT keepalives, IKE (natt.c) */
		udp_input_local(r, m, esgw_meta(m)->in_port);
		break;
	default: /* TCP (SSH to the gateway) and the rest: the host's stack */
		punt_to_host(r, m);
		break;
	}
}

static void send_to_port(struct router *r, struct rte_mbuf *m, uint16_t port_id, uint32_t nexthop)
{
	const struct router_port *port = &r->tables->ports[port_id];
	struct rte_ether_addr mac;
	struct rte_ether_hdr *eth;

	if (rte_pktmbuf_pkt_len(m) > port->mtu) {
		/* DF: ICMP "fragmentation needed"; else fragments (frag.c). */
		ipv4_output_too_big(r, m, port->mtu);
		return;
	}
	if (!arp_resolve(r, port_id, nexthop, m, &mac))
		return; /* held until the reply, or dropped */
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, ETHER_HEADER_LEN);
	if (eth == NULL) {
		router_drop(r, m, ESGW_DROP_MALFORMED); /* no headroom left: not our mbuf layout */
		return;
	}
	eth->dst_addr = mac;
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	router_send_tx(r, port_id, m);
}

static void send_by_route(struct router *r, struct rte_mbuf *m, const struct fib_route *rt,
			  uint32_t dst)
{
	/* Policies override the route (spd.c): protected or dropped here. */
	if (rt->kind != FIB_LOCAL && spd_output(r, m))
		return;
	switch (rt->kind) {
	case FIB_CONNECTED:
		send_to_port(r, m, rt->port, dst);
		break;
	case FIB_VIA:
		send_to_port(r, m, rt->port, rt->gateway);
		break;
	case FIB_TUNNEL:
		/* Checks the inner MTU of the tunnel first (frag.c). */
		tunnel_output(r, m, &r->tables->tunnels[rt->tunnel]);
		break;
	default: /* FIB_LOCAL: the gateway does not send to itself */
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		break;
	}
}

void router_output_ip(struct router *r, struct rte_mbuf *m)
{
	uint32_t dst;
	const struct fib_route *rt;

	if (rte_pktmbuf_mtod(m, const uint8_t *)[0] >> 4 == 6) { /* held by ND or ARP */
		ipv6_output(r, m);
		return;
	}
	dst = read_be32(rte_pktmbuf_mtod(m, const uint8_t *) + 16);
	rt = fib_lookup_cached(r, dst);

	if (rt == NULL) {
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	send_by_route(r, m, rt, dst);
}

/* Limited, multicast, or the broadcast address of a connected subnet: the
 * gateway is one of many receivers and never forwards it. */
static int is_broadcast_for(const struct fib_route *rt, uint32_t dst)
{
	if (ipv4_is_multicast_or_broadcast(dst))
		return 1;
	return rt != NULL && rt->kind == FIB_CONNECTED && rt->len < 31 &&
	       (dst | (rt->len ? 0xffffffffu << (32 - rt->len) : 0)) == 0xffffffffu;
}

/* What source_check needs of an IPv4 packet from src to a destination
 * whose route is rt. */
static struct source_route source_route4(struct router *r, uint32_t src,
					 const struct fib_route *rt, int local)
{
	const struct fib_route *back = fib_lookup(&r->tables->fib, src);

	return (struct source_route){
		.src_tunnel = back != NULL && back->kind == FIB_TUNNEL ? (int32_t)back->tunnel : -1,
		.dst_tunnel = rt != NULL && rt->kind == FIB_TUNNEL ? (int32_t)rt->tunnel : -1,
		.martian = ipv4_is_martian_source(src) ||
			   (back != NULL && back->kind == FIB_LOCAL) || is_broadcast_for(back, src),
		.local = (uint8_t)local,
	};
}

/* l2_multicast: the frame came to a broadcast or multicast MAC address, so
 * it may be delivered locally but never forwarded (RFC 1812 5.3.4). */
static void input_ip(struct router *r, struct rte_mbuf *m, int l2_multicast)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);
	const struct fib_route *rt;
	enum esgw_drop reason;
	uint16_t total_len;
	struct source_route sr;
	uint32_t dst;
	int local;

	if (ipv4_check(ip, rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), &total_len, &reason) <
	    0) {
		router_drop(r, m, reason);
		return;
	}
	if (rte_pktmbuf_pkt_len(m) > total_len) /* Ethernet padding: not ours to encrypt */
		rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - total_len);
	dst = read_be32(ip + 16);
	rt = fib_lookup_cached(r, dst);
	local = (rt != NULL && rt->kind == FIB_LOCAL) || is_broadcast_for(rt, dst);
	sr = source_route4(r, read_be32(ip + 12), rt, local);
	if (source_check(r, m, &sr) < 0)
		return;
	if (local) {
		deliver_local(r, m);
		return;
	}
	if (l2_multicast) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	if (rt == NULL) {
		icmp_send_error(r, m, ICMP_DEST_UNREACHABLE, 0 /* net unreachable */);
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	if (ip[8] <= 1) {
		icmp_send_error(r, m, ICMP_TIME_EXCEEDED, 0 /* TTL exceeded in transit */);
		router_drop(r, m, ESGW_DROP_TTL_EXPIRED);
		return;
	}
	ipv4_decrement_ttl(ip);
	send_by_route(r, m, rt, dst);
}

void router_input_ip(struct router *r, struct rte_mbuf *m)
{
	/* Decrypted: it must be traffic its SA's policies allow (spd.c). */
	if (spd_inbound_check(r, m) < 0)
		return;
	if (rte_pktmbuf_data_len(m) >= 1 && rte_pktmbuf_mtod(m, const uint8_t *)[0] >> 4 == 6) {
		ipv6_input(r, m, 0); /* decrypted IPv6 (next header 41) */
		return;
	}
	input_ip(r, m, 0);
}

static int frame_for_us(const struct rte_ether_hdr *eth, const struct router_port *port)
{
	return rte_is_multicast_ether_addr(&eth->dst_addr) ||
	       rte_is_same_ether_addr(&eth->dst_addr, &port->mac);
}

void router_input(struct router *r, struct rte_mbuf *m)
{
	const struct esgw_meta *meta = esgw_meta(m);

	switch (meta->kind) {
	case ESGW_PKT_RX:
		r->ctr.rx_packets++;
		router_input_frame(r, m, meta->in_port);
		break;
	case ESGW_PKT_DECRYPTED:
		r->ctr.from_crypto++;
		router_input_ip(r, m);
		break;
	default:
		router_drop(r, m, ESGW_DROP_MALFORMED);
		break;
	}
}

void router_input_frame(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t type;

	if (in_port >= ESGW_MAX_PORTS || !r->tables->ports[in_port].present) {
		/* A port rxtx runs but no configuration names (yet). */
		router_drop(r, m, ESGW_DROP_NO_INTERFACE);
		return;
	}
	if (rte_pktmbuf_data_len(m) < ETHER_HEADER_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (!frame_for_us(eth, &r->tables->ports[in_port])) {
		/* Promiscuous capture sees other hosts' unicast: never route it. */
		router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_ARP) {
		arp_input(r, m, in_port);
	} else if (type == RTE_ETHER_TYPE_IPV4) {
		int l2_multicast = rte_is_multicast_ether_addr(&eth->dst_addr);

		rte_pktmbuf_adj(m, ETHER_HEADER_LEN);
		input_ip(r, m, l2_multicast);
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		int l2_multicast = rte_is_multicast_ether_addr(&eth->dst_addr);

		rte_pktmbuf_adj(m, ETHER_HEADER_LEN); /* the L2 header stays readable before data */
		ipv6_input(r, m, l2_multicast);
	} else {
		router_drop(r, m, ESGW_DROP_NOT_IP);
	}
}

static void send_to_port6(struct router *r, struct rte_mbuf *m, uint16_t port_id,
			  const uint8_t nexthop[16])
{
	const struct router_port *port = &r->tables->ports[port_id];
	struct rte_ether_addr mac;
	struct rte_ether_hdr *eth;

	if (rte_pktmbuf_pkt_len(m) > port->mtu) {
		/* IPv6 routers never fragment (RFC 8200 5). */
		icmp6_send_error(r, m, ICMP6_PACKET_TOO_BIG, 0, port->mtu);
		router_drop(r, m, ESGW_DROP_TOO_BIG);
		return;
	}
	if (!nd_resolve(r, port_id, nexthop, m, &mac))
		return;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, ETHER_HEADER_LEN);
	if (eth == NULL) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	eth->dst_addr = mac;
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	router_send_tx(r, port_id, m);
}

static void send_by_route6(struct router *r, struct rte_mbuf *m, const struct fib6_route *rt,
			   const uint8_t dst[16])
{
	switch (rt->kind) {
	case FIB_CONNECTED:
		send_to_port6(r, m, rt->port, dst);
		break;
	case FIB_VIA:
		send_to_port6(r, m, rt->port, rt->gateway);
		break;
	case FIB_TUNNEL:
		tunnel_output(r, m, &r->tables->tunnels[rt->tunnel]);
		break;
	default:
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		break;
	}
}

void ipv6_output(struct router *r, struct rte_mbuf *m)
{
	uint8_t dst[16];
	const struct fib6_route *rt;

	memcpy(dst, rte_pktmbuf_mtod(m, const uint8_t *) + 24, 16);
	rt = fib6_lookup(&r->tables->fib6, dst);
	if (rt == NULL) {
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	send_by_route6(r, m, rt, dst);
}

static void deliver_local6(struct router *r, struct rte_mbuf *m, int to_multicast)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);

	if (ip[6] == IPPROTO_IPV6_FRAGMENT && !to_multicast) {
		/* Fragmented ESP (or anything else to us): reassembly.c. */
		m = reassembly6_input(r, m);
		if (m == NULL)
			return; /* held until complete, or dropped */
		ip = rte_pktmbuf_mtod(m, const uint8_t *);
	}
	switch (ip[6]) {
	case IPPROTO_ICMPV6_NUM:
		icmp6_input_local(r, m, to_multicast);
		break;
	case IPPROTO_ESP_NUM:
		if (to_multicast)
			router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		else
			esp6_input_udp(r, m, 0);
		break;
	case IPPROTO_UDP_NUM: /* ESP in UDP, NAT keepalives, IKE (natt.c) */
		if (to_multicast)
			router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		else
			udp6_input_local(r, m);
		break;
	default:                  /* TCP (SSH to the gateway) and the rest: the host's stack */
		if (to_multicast) /* the host must not answer a link's multicast for us */
			router_drop(r, m, ESGW_DROP_UNSUPPORTED_PROTOCOL);
		else
			punt_to_host(r, m);
		break;
	}
}

/* ff02::1 (all nodes) or the solicited-node group ff02::1:ffXX:XXXX of one
 * of the port's addresses (RFC 4291 2.7.1): where ND reaches us. */
static int multicast_for_us(const struct router_port *port, const uint8_t dst[16])
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	static const uint8_t solicited[13] = {0xff, 2, [11] = 1, [12] = 0xff};

	if (memcmp(dst, all_nodes, 16) == 0)
		return 1;
	if (memcmp(dst, solicited, 13) != 0)
		return 0;
	for (uint32_t i = 0; i < port->nb_addrs6; i++)
		if (memcmp(port->addrs6[i].addr + 13, dst + 13, 3) == 0)
			return 1;
	return 0;
}

/* What source_check needs of IPv6 packet ip, whose destination's route is
 * rt (NULL for multicast). The unspecified source is martian except toward
 * multicast (duplicate address detection, RFC 4862 5.4). */
static struct source_route source_route6(struct router *r, const uint8_t *ip,
					 const struct fib6_route *rt)
{
	static const uint8_t unspecified[16], loopback[16] = {[15] = 1};
	const uint8_t *src = ip + 8;
	const struct fib6_route *back = fib6_lookup(&r->tables->fib6, src);
	int to_multicast = ip[24] == 0xff;

	return (struct source_route){
		.src_tunnel = back != NULL && back->kind == FIB_TUNNEL ? (int32_t)back->tunnel : -1,
		.dst_tunnel = rt != NULL && rt->kind == FIB_TUNNEL ? (int32_t)rt->tunnel : -1,
		.martian = src[0] == 0xff || memcmp(src, loopback, 16) == 0 ||
			   (!to_multicast && memcmp(src, unspecified, 16) == 0) ||
			   (back != NULL && back->kind == FIB_LOCAL),
		.local = (uint8_t)(to_multicast || (rt != NULL && rt->kind == FIB_LOCAL)),
		.ipv6 = 1,
	};
}

void ipv6_input(struct router *r, struct rte_mbuf *m, int l2_multicast)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);
	const struct fib6_route *rt;
	struct source_route sr;
	uint32_t total;
	uint16_t in_port = esgw_meta(m)->in_port;

	if (rte_pktmbuf_data_len(m) < IPV6_HEADER_LEN || (ip[0] >> 4) != 6) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	total = IPV6_HEADER_LEN + read_be16(ip + 4);
	if (total > rte_pktmbuf_pkt_len(m)) { /* jumbograms (length 0) included */
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (rte_pktmbuf_pkt_len(m) > total) /* Ethernet padding */
		rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - total);
	rt = ip[24] == 0xff ? NULL : fib6_lookup(&r->tables->fib6, ip + 24);
	sr = source_route6(r, ip, rt);
	if (source_check(r, m, &sr) < 0)
		return;
	if (ip[24] == 0xff) { /* multicast: only ND and echo groups of ours */
		if (esgw_meta(m)->kind == ESGW_PKT_RX && in_port < ESGW_MAX_PORTS &&
		    multicast_for_us(&r->tables->ports[in_port], ip + 24))
			deliver_local6(r, m, 1);
		else
			router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	if (rt != NULL && rt->kind == FIB_LOCAL) {
		deliver_local6(r, m, 0);
		return;
	}
	if (l2_multicast) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	/* Link-local and unspecified sources are never forwarded (RFC 4291 2.5.6). */
	if ((ip[8] == 0xfe && (ip[9] & 0xc0) == 0x80) || ip[8] == 0xff) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	if (rt == NULL) {
		icmp6_send_error(r, m, ICMP6_DEST_UNREACHABLE, 0 /* no route */, 0);
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	if (ip[7] <= 1) {
		icmp6_send_error(r, m, ICMP6_TIME_EXCEEDED, 0 /* hop limit exceeded */, 0);
		router_drop(r, m, ESGW_DROP_TTL_EXPIRED);
		return;
	}
	ip[7]--; /* no header checksum in IPv6 */
	send_by_route6(r, m, rt, ip + 24);
}
