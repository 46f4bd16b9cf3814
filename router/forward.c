/* SPDX-License-Identifier: BSD-3-Clause */
/* Forwarding, both IP families on one path: what arrives on the router's
 * input rings (frames from the ports, decrypted packets from the workers),
 * Ethernet demultiplexing, header validation and the source checks, then
 * local delivery (local.c) or the TTL or hop limit, the route, and output
 * to a port (with ARP or ND) or into a tunnel (tunnel.c). Where the families
 * differ (header checks, broadcast and multicast, policies, which are IPv4
 * only) the code says is_ip6. */
#include <string.h>

#include "headers.h"
#include "router.h"

/* Out of a port to the next hop nexthop (a neighbour address: IPv4 in its
 * first four bytes): the port's MTU, the neighbour's MAC, the Ethernet
 * header, the port's TX batch. */
static void send_to_port(struct router *r, struct rte_mbuf *m, int is_ip6, uint16_t port_id,
			 const uint8_t nexthop[16])
{
	const struct router_port *port = &r->tables->ports[port_id];
	struct rte_ether_addr mac;
	struct rte_ether_hdr *eth;

	if (rte_pktmbuf_pkt_len(m) > port->mtu) {
		if (is_ip6) {
			/* IPv6 routers never fragment (RFC 8200 5). */
			icmp6_send_error(r, m, ICMP6_PACKET_TOO_BIG, 0, port->mtu);
			router_drop(r, m, ESGW_DROP_TOO_BIG);
		} else {
			/* DF: ICMP "fragmentation needed"; else fragments (frag.c). */
			frag_ipv4(r, m, port->mtu);
		}
		return;
	}
	if (!neighbor_resolve(r, is_ip6 ? 6 : 4, port_id, nexthop, m, &mac))
		return; /* held until the reply, or dropped */
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN);
	if (eth == NULL) {
		router_drop(r, m, ESGW_DROP_MALFORMED); /* no headroom left: not our mbuf layout */
		return;
	}
	eth->dst_addr = mac;
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(is_ip6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	/* A decrypted packet: its worker may send the next ones of these
	 * addresses out of this port itself (egress.c). */
	if (!is_ip6 && r->egress_from != 0)
		egress_note(r, m, port_id, &mac);
	router_send_tx(r, port_id, m);
}

/* Where a route of either family sends m (no L2, TTL final): the kind, port
 * and tunnel of the route, and nexthop, the neighbour address of a port
 * route's next hop (its gateway, or on a connected subnet the destination). */
static inline void send_by_route(struct router *r, struct rte_mbuf *m, int is_ip6, uint8_t kind,
				 uint16_t port, uint32_t tunnel, const uint8_t nexthop[16])
{
	/* Policies (IPv4) override the route (spd.c): protected or dropped here. */
	if (!is_ip6 && kind != FIB_LOCAL && spd_output(r, m))
		return;
	switch (kind) {
	case FIB_CONNECTED:
	case FIB_VIA:
		send_to_port(r, m, is_ip6, port, nexthop);
		break;
	case FIB_TUNNEL:
		/* Checks the inner MTU of the tunnel first (tunnel.c). */
		tunnel_output(r, m, &r->tables->tunnels[tunnel]);
		break;
	default: /* FIB_LOCAL: the gateway does not send to itself */
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		break;
	}
}

static void send_by_route4(struct router *r, struct rte_mbuf *m, const struct fib_route *rt,
			   uint32_t dst)
{
	uint8_t nexthop[16];

	neighbor_addr4(rt->kind == FIB_VIA ? rt->gateway : dst, nexthop);
	send_by_route(r, m, 0, rt->kind, rt->port, rt->tunnel, nexthop);
}

static void send_by_route6(struct router *r, struct rte_mbuf *m, const struct fib6_route *rt,
			   const uint8_t dst[16])
{
	send_by_route(r, m, 1, rt->kind, rt->port, rt->tunnel,
		      rt->kind == FIB_VIA ? rt->gateway : dst);
}

void forward_output(struct router *r, struct rte_mbuf *m)
{
	if (packet_ip_version(rte_pktmbuf_mtod(m, const void *)) == 6) {
		const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);
		const struct fib6_route *rt = fib6_lookup(&r->tables->fib6, ip->dst_addr);

		if (rt == NULL)
			router_drop(r, m, ESGW_DROP_NO_ROUTE);
		else
			send_by_route6(r, m, rt, ip->dst_addr);
	} else {
		const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
		uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
		const struct fib_route *rt = fib_lookup(&r->tables->fib, dst);

		if (rt == NULL)
			router_drop(r, m, ESGW_DROP_NO_ROUTE);
		else
			send_by_route4(r, m, rt, dst);
	}
}

/* What every packet to forward passes, either family: not from a link's
 * broadcast or multicast (RFC 1812 5.3.4), a route (routed), a hop left
 * (hops: its TTL or hop limit). 0, or -1 with m dropped and the ICMP or
 * ICMPv6 error it is owed sent. */
static int forward_check(struct router *r, struct rte_mbuf *m, int is_ip6, int l2_multicast,
			 int routed, uint8_t hops)
{
	if (l2_multicast) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return -1;
	}
	if (!routed) {
		if (is_ip6)
			icmp6_send_error(r, m, ICMP6_DEST_UNREACHABLE, 0 /* no route */, 0);
		else
			icmp_send_error(r, m, ICMP_DEST_UNREACHABLE, 0 /* net unreachable */);
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return -1;
	}
	if (hops <= 1) {
		if (is_ip6)
			icmp6_send_error(r, m, ICMP6_TIME_EXCEEDED, 0 /* hop limit exceeded */, 0);
		else
			icmp_send_error(r, m, ICMP_TIME_EXCEEDED, 0 /* TTL exceeded in transit */);
		router_drop(r, m, ESGW_DROP_TTL_EXPIRED);
		return -1;
	}
	return 0;
}

/* Limited, multicast, or the broadcast address of a connected subnet: the
 * gateway is one of many receivers and never forwards it. */
static int is_broadcast_for(const struct fib_route *rt, uint32_t dst)
{
	if (headers_ipv4_multicast_or_broadcast(dst))
		return 1;
	return rt != NULL && rt->kind == FIB_CONNECTED && rt->len < 31 &&
	       (dst | (rt->len ? 0xffffffffu << (32 - rt->len) : 0)) == 0xffffffffu;
}

/* What source_check needs of an IPv4 packet from src to a destination
 * whose route is rt, written into *sr field by field: built as a value and
 * copied, the flags' narrow stores were read back by one wider load, which
 * waits for them to reach the cache (a failed store-to-load forward): 37 %
 * of input_ipv4's samples at 64 B in a profile of the chain's gw2. */
static void source_route4(struct router *r, uint32_t src, const struct fib_route *rt, int local,
			  struct source_route *sr)
{
	const struct fib_route *back = fib_lookup(&r->tables->fib, src);

	sr->src_tunnel = back != NULL && back->kind == FIB_TUNNEL ? (int32_t)back->tunnel : -1;
	sr->dst_tunnel = rt != NULL && rt->kind == FIB_TUNNEL ? (int32_t)rt->tunnel : -1;
	sr->martian = headers_ipv4_martian_source(src) ||
		      (back != NULL && back->kind == FIB_LOCAL) || is_broadcast_for(back, src);
	sr->local = (uint8_t)local;
	sr->ipv6 = 0;
}

/* l2_multicast: the frame came to a broadcast or multicast MAC address, so
 * it may be delivered locally but never forwarded (RFC 1812 5.3.4). */
static void input_ipv4(struct router *r, struct rte_mbuf *m, int l2_multicast)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	const struct fib_route *rt;
	enum esgw_drop reason;
	uint16_t total_len;
	struct source_route sr;
	uint32_t dst;
	int local;

	if (headers_ipv4_check(ip, rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), &total_len,
			       &reason) < 0) {
		router_drop(r, m, reason);
		return;
	}
	if (rte_pktmbuf_pkt_len(m) > total_len) /* Ethernet padding: not ours to encrypt */
		rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - total_len);
	dst = rte_be_to_cpu_32(ip->dst_addr);
	rt = fib_lookup(&r->tables->fib, dst);
	local = (rt != NULL && rt->kind == FIB_LOCAL) || is_broadcast_for(rt, dst);
	source_route4(r, rte_be_to_cpu_32(ip->src_addr), rt, local, &sr);
	if (source_check(r, m, &sr) < 0)
		return;
	if (local) {
		local_input(r, m, 0, 0);
		return;
	}
	if (forward_check(r, m, 0, l2_multicast, rt != NULL, ip->time_to_live) < 0)
		return;
	headers_ipv4_decrement_ttl(ip);
	send_by_route4(r, m, rt, dst);
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
 * rt (NULL for multicast), into *sr field by field (source_route4 says
 * why). The unspecified source is martian except toward multicast
 * (duplicate address detection, RFC 4862 5.4). */
static void source_route6(struct router *r, const struct rte_ipv6_hdr *ip,
			  const struct fib6_route *rt, struct source_route *sr)
{
	static const uint8_t unspecified[16], loopback[16] = {[15] = 1};
	const uint8_t *src = ip->src_addr;
	const struct fib6_route *back = fib6_lookup(&r->tables->fib6, src);
	int to_multicast = ip->dst_addr[0] == 0xff;

	sr->src_tunnel = back != NULL && back->kind == FIB_TUNNEL ? (int32_t)back->tunnel : -1;
	sr->dst_tunnel = rt != NULL && rt->kind == FIB_TUNNEL ? (int32_t)rt->tunnel : -1;
	sr->martian = src[0] == 0xff || memcmp(src, loopback, 16) == 0 ||
		      (!to_multicast && memcmp(src, unspecified, 16) == 0) ||
		      (back != NULL && back->kind == FIB_LOCAL);
	sr->local = (uint8_t)(to_multicast || (rt != NULL && rt->kind == FIB_LOCAL));
	sr->ipv6 = 1;
}

static void input_ipv6(struct router *r, struct rte_mbuf *m, int l2_multicast)
{
	struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);
	const struct fib6_route *rt;
	struct source_route sr;
	uint32_t total;
	uint16_t in_port = esgw_meta(m)->in_port;
	int to_multicast;

	if (rte_pktmbuf_data_len(m) < IPV6_HDR_LEN || packet_ip_version(ip) != 6) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	total = IPV6_HDR_LEN + rte_be_to_cpu_16(ip->payload_len);
	if (total > rte_pktmbuf_pkt_len(m)) { /* jumbograms (length 0) included */
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (rte_pktmbuf_pkt_len(m) > total) /* Ethernet padding */
		rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - total);
	to_multicast = ip->dst_addr[0] == 0xff;
	rt = to_multicast ? NULL : fib6_lookup(&r->tables->fib6, ip->dst_addr);
	source_route6(r, ip, rt, &sr);
	if (source_check(r, m, &sr) < 0)
		return;
	if (to_multicast) { /* only ND and echo groups of ours */
		if (esgw_meta(m)->kind == ESGW_PKT_RX && in_port < ESGW_MAX_PORTS &&
		    multicast_for_us(&r->tables->ports[in_port], ip->dst_addr))
			local_input(r, m, 1, 1);
		else
			router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	if (rt != NULL && rt->kind == FIB_LOCAL) {
		local_input(r, m, 1, 0);
		return;
	}
	/* Link-local and multicast sources are never forwarded (RFC 4291 2.5.6). */
	if ((ip->src_addr[0] == 0xfe && (ip->src_addr[1] & 0xc0) == 0x80) ||
	    ip->src_addr[0] == 0xff) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US);
		return;
	}
	if (forward_check(r, m, 1, l2_multicast, rt != NULL, ip->hop_limits) < 0)
		return;
	ip->hop_limits--; /* no header checksum in IPv6 */
	send_by_route6(r, m, rt, ip->dst_addr);
}

/* A decrypted packet: IPv4 (next header 4) or IPv6 (41). */
static void input_decrypted(struct router *r, struct rte_mbuf *m)
{
	/* It must be traffic its SA's policies allow (spd.c). */
	if (spd_inbound_check(r, m) < 0)
		return;
	if (rte_pktmbuf_data_len(m) >= 1 && packet_ip_version(rte_pktmbuf_mtod(m, void *)) == 6)
		input_ipv6(r, m, 0);
	else
		input_ipv4(r, m, 0);
}

static int frame_for_us(const struct rte_ether_hdr *eth, const struct router_port *port)
{
	return rte_is_multicast_ether_addr(&eth->dst_addr) ||
	       rte_is_same_ether_addr(&eth->dst_addr, &port->mac);
}

/* An Ethernet frame from port in_port (kind RX). */
static void input_frame(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	int l2_multicast;
	uint16_t type;

	if (in_port >= ESGW_MAX_PORTS || !r->tables->ports[in_port].present) {
		/* A port rxtx runs but no configuration names (yet). */
		router_drop(r, m, ESGW_DROP_NO_INTERFACE);
		return;
	}
	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN) {
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
		return;
	}
	if (type != RTE_ETHER_TYPE_IPV4 && type != RTE_ETHER_TYPE_IPV6) {
		router_drop(r, m, ESGW_DROP_NOT_IP);
		return;
	}
	l2_multicast = rte_is_multicast_ether_addr(&eth->dst_addr);
	rte_pktmbuf_adj(m, RTE_ETHER_HDR_LEN); /* the L2 header stays readable before data */
	if (type == RTE_ETHER_TYPE_IPV6)
		input_ipv6(r, m, l2_multicast);
	else
		input_ipv4(r, m, l2_multicast);
}

void forward_input(struct router *r, struct rte_mbuf *m)
{
	const struct esgw_meta *meta = esgw_meta(m);

	switch (meta->kind) {
	case ESGW_PKT_RX:
		r->ctr.rx_packets++;
		input_frame(r, m, meta->in_port);
		break;
	case ESGW_PKT_DECRYPTED:
		r->ctr.from_crypto++;
		input_decrypted(r, m);
		break;
	default:
		router_drop(r, m, ESGW_DROP_MALFORMED);
		break;
	}
}
