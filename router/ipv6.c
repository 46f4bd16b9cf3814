/* SPDX-License-Identifier: BSD-3-Clause */
/* The IPv6 path: header validation, local delivery (ICMPv6 and ND, ESP, ESP
 * in UDP), hop limit, FIB lookup and output to a port (with ND) or a tunnel.
 * Its tables are built by config_ipv6.c. */
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

int router_ipv6_init(struct router *r)
{
	if (r->reasm == NULL)
		r->reasm = reassembly_table_alloc();
	return r->reasm != NULL ? 0 : -1;
}

int ipv6_is_port_address(const struct router_port *port, const uint8_t addr[16])
{
	for (uint32_t i = 0; i < port->nb_addrs6; i++)
		if (memcmp(port->addrs6[i].addr, addr, 16) == 0)
			return 1;
	return 0;
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

/* A worker that the configuration does not run, or whose ring never appeared. */
static int worker_missing(const struct router *r, uint32_t worker)
{
	return r->crypto_ring[worker] == NULL ||
	       (r->tables->workers != 0 && worker >= r->tables->workers);
}

/* udp_port: the local UDP port the ESP arrived on (RFC 3948), 0 for plain
 * ESP. An SA takes only the encapsulation it was configured with. */
static void esp6_input(struct router *r, struct rte_mbuf *m, uint16_t udp_port)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct router_sa_in *sa;
	struct esgw_meta *meta;
	uint32_t spi;

	if (esp_parse_spi(ip + IPV6_HEADER_LEN, rte_pktmbuf_data_len(m) - IPV6_HEADER_LEN, &spi) <
	    0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	sa = router_sa_in_lookup(r->tables, spi);
	/* One peer per SA: ESP from another source is not worth decrypting. */
	if (sa == NULL || !sa->remote_ipv6 || memcmp(sa->remote6, ip + 8, 16) != 0 ||
	    sa->udp_port != udp_port) {
		router_drop(r, m, ESGW_DROP_NO_SA);
		return;
	}
	if (worker_missing(r, sa->worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_DECRYPT;
	meta->sa_slot = sa->slot;
	router_send_crypto(r, sa->worker, m);
}

void esp6_input_udp(struct router *r, struct rte_mbuf *m, uint16_t udp_port)
{
	esp6_input(r, m, udp_port);
}

void esp6_output_tunnel(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t)
{
	struct rte_ether_addr mac;
	struct esgw_meta *meta;

	if (worker_missing(r, t->worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	if (!t->outer_resolved) {
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	if (!nd_resolve(r, t->outer_port, t->outer_nexthop6, m, &mac))
		return; /* held: comes back through router_output_ip when resolved */
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_ENCRYPT;
	meta->sa_slot = t->sa_out_slot;
	meta->out_port = t->outer_port;
	meta->dst_mac = mac;
	meta->src_mac = r->tables->ports[t->outer_port].mac;
	router_send_crypto(r, t->worker, m);
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
			esp6_input(r, m, 0);
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
