/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's IPv6 path (ipv6.c), neighbor discovery (nd.c), ICMPv6
 * (icmp6.c), MTU handling and fragmentation (frag.c) and IPv4 and IPv6
 * reassembly of fragments addressed to the gateway (reassembly.c). Included
 * by router.h. */
#ifndef ESGW_ROUTER_IPV6_H
#define ESGW_ROUTER_IPV6_H

#include <stdint.h>

#define IPV6_HEADER_LEN 40
#define IPPROTO_IPV6_FRAGMENT 44
#define IPPROTO_ICMPV6_NUM 58
#define ICMP6_DEST_UNREACHABLE 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ND_NEIGHBOR_SOLICIT 135
#define ND_NEIGHBOR_ADVERT 136
#define IPV6_MIN_MTU 1280

struct router;
struct router_tables;
struct router_tunnel;

/* ipv6.c */
/* Allocate the reassembly table once. 0, or -1. */
int router_ipv6_init(struct router *r);
/* An IPv6 packet without L2 (from a port, l2_multicast as in forward.c, or
 * decrypted): validate, deliver locally or forward with hop limit decremented. */
void ipv6_input(struct router *r, struct rte_mbuf *m, int l2_multicast);
/* Route and send an IPv6 packet (no L2) whose hop limit is final. Consumes m. */
void ipv6_output(struct router *r, struct rte_mbuf *m);
/* Whether addr is one of port's IPv6 addresses. */
int ipv6_is_port_address(const struct router_port *port, const uint8_t addr[16]);
/* The gateway address to use as source toward dst; 0 if it has none. */
int router_source_address6(const struct router_tables *t, const uint8_t dst[16], uint8_t src[16]);
/* ESP that arrived in UDP over IPv6 to local port udp_port (natt.c has taken
 * the UDP header out): to the worker of the SA encapsulated on that port. */
void esp6_input_udp(struct router *r, struct rte_mbuf *m, uint16_t udp_port);
/* A packet into a tunnel with an IPv6 outer header: ND for the outer next
 * hop, then to the outbound SA's worker. */
void esp6_output_tunnel(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t);

/* nd.c */
/* MAC of nexthop on port: 1 with mac filled, or 0 after holding m (a
 * solicitation is sent) or dropping it (ARP_UNRESOLVED). Held packets go
 * through router_output_ip again once the advertisement arrives. */
int nd_resolve(struct router *r, uint16_t port, const uint8_t nexthop[16], struct rte_mbuf *m,
	       struct rte_ether_addr *mac);
/* A neighbor solicitation or advertisement to us (m: IPv6 packet, icmp at
 * offset IPV6_HEADER_LEN, checksum verified). Consumes m. */
void nd_input(struct router *r, struct rte_mbuf *m, uint16_t in_port);
/* A solicitation for target out of port (neighbor.c resolving). */
void nd_send_solicit(struct router *r, uint16_t port_id, const uint8_t target[16]);

/* icmp.c */
/* ICMP errors and ICMPv6 errors share one budget per second. */
int icmp_rate_allows(struct router *r);
/* icmp_send_error with the second word of the ICMP header set to rest
 * (type 3 code 4: the next-hop MTU in its low 16 bits, RFC 1191). */
void icmp_send_error_rest(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
			  uint32_t rest);

/* icmp6.c */
/* ICMPv6 to a gateway address or to ff02::1 / a solicited-node group. */
void icmp6_input_local(struct router *r, struct rte_mbuf *m, int to_multicast);
/* An ICMPv6 error about orig (not consumed; RFC 4443 2.4 rules; rate
 * limited with the ICMP errors). param: MTU or pointer, else 0. */
void icmp6_send_error(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t param);
/* The ICMPv6 checksum (RFC 4443 2.3) of the message at icmp (len bytes)
 * in the IPv6 packet ip. */
uint16_t icmp6_checksum(const uint8_t *ip, const uint8_t *icmp, uint32_t len);

/* frag.c */
/* Send into tunnel t after checking the inner MTU: too big IPv6 gets
 * ICMPv6 packet too big, IPv4 with DF fragmentation needed, IPv4 without DF
 * is fragmented before encryption. Consumes m. */
void tunnel_output(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t);
/* The largest inner packet t carries without exceeding its port's MTU. */
uint32_t tunnel_inner_mtu(const struct router *r, const struct router_tunnel *t);
/* An IPv4 packet over mtu: DF -> ICMP fragmentation needed (RFC 1191) and a
 * TOO_BIG drop; else fragments that go through router_output_ip. Consumes m. */
void ipv4_output_too_big(struct router *r, struct rte_mbuf *m, uint32_t mtu);
/* Fill the ESP overhead fields of t from the algorithm of its outbound SA. */
void tunnel_set_overhead(struct router_tunnel *t, unsigned int algorithm);

/* reassembly.c */
struct reassembly_table *reassembly_table_alloc(void);
/* Free the table and the fragments it holds (at exit). */
void reassembly_table_free(struct router *r);
/* An IPv4 fragment to a gateway address: returns the whole datagram (one
 * contiguous mbuf) when this fragment completed it, else NULL (held, or
 * dropped with a reason). Consumes m either way. */
struct rte_mbuf *reassembly_input(struct router *r, struct rte_mbuf *m);
/* The same for an IPv6 packet to a gateway address whose fixed header is
 * followed by a fragment header (RFC 8200 4.5): the whole datagram comes out
 * without the fragment header. */
struct rte_mbuf *reassembly6_input(struct router *r, struct rte_mbuf *m);
/* Drop datagrams older than the reassembly timeout. */
void reassembly_timer(struct router *r, uint64_t now);
/* Fragments held (mbufs), for the router's stats. */
unsigned int reassembly_mbufs_held(const struct router *r);

#endif
