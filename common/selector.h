/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic selectors of security policies (RFC 4301 4.4.1): source and
 * destination prefix, protocol and port ranges, matched against the flow of
 * an IPv4 packet. Pure C with no DPDK, so the router, esgw-ctld, esgwctl and
 * the unit tests share one definition of what "matches" means. */
#ifndef ESGW_SELECTOR_H
#define ESGW_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ESGW_PROTO_ANY 0 /* a selector protocol of 0 matches every protocol */

/* What a policy selects. Addresses in host byte order; a port range lo..hi
 * of 0..65535 matches any port, including packets that have no ports. */
struct esgw_selector {
	uint32_t src, src_mask;
	uint32_t dst, dst_mask;
	uint8_t proto;
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
};

/* The fields of one packet that selectors look at. has_ports is false for
 * protocols without ports and for non-first fragments (RFC 4301 4.4.1.1:
 * their ports are OPAQUE), which then only match selectors with any-port
 * ranges. */
struct esgw_flow {
	uint32_t src, dst;
	uint8_t proto;
	bool has_ports;
	uint16_t sport, dport;
};

/* The flow of an IPv4 packet (len contiguous bytes from its header). Returns
 * 0, or -1 if the header is truncated or not IPv4. A first fragment or whole
 * packet too short to hold its ports is -1 too: it cannot be classified. */
int esgw_flow_from_ipv4(const uint8_t *ip, size_t len, struct esgw_flow *flow);

/* Whether flow matches sel as written (an outbound packet of the policy). */
bool esgw_selector_match(const struct esgw_selector *sel, const struct esgw_flow *flow);
/* Whether flow matches sel with source and destination swapped: the inbound
 * traffic of the same policy, as it arrives from the peer (RFC 4301 5.2). */
bool esgw_selector_match_reverse(const struct esgw_selector *sel, const struct esgw_flow *flow);

/* "tcp", "udp", "icmp", "any" or a number 0..255. Returns 0 or -1. */
int esgw_parse_protocol(const char *s, uint8_t *proto);
/* The name of a protocol number ("tcp", "17" for others written in buf). */
const char *esgw_protocol_name(uint8_t proto, char *buf, size_t len);
/* "80" or "1024-65535" (lo <= hi). Returns 0 or -1. */
int esgw_parse_port_range(const char *s, uint16_t *lo, uint16_t *hi);
/* Whether a protocol has ports a selector can match (TCP, UDP, SCTP). */
bool esgw_protocol_has_ports(uint8_t proto);

#endif
