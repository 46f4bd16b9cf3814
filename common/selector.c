/* SPDX-License-Identifier: BSD-3-Clause */
/* Matching and parsing of policy traffic selectors. */
#include "selector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"

#define IPV4_MIN_HEADER 20
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_SCTP 132

bool esgw_protocol_has_ports(uint8_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP;
}

int esgw_flow_from_ipv4(const uint8_t *ip, size_t len, struct esgw_flow *flow)
{
	size_t ihl;

	if (len < IPV4_MIN_HEADER || (ip[0] >> 4) != 4)
		return -1;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < IPV4_MIN_HEADER || ihl > len)
		return -1;
	flow->src = read_be32(ip + 12);
	flow->dst = read_be32(ip + 16);
	flow->proto = ip[9];
	flow->has_ports = false;
	flow->sport = flow->dport = 0;
	/* Only an unfragmented packet or a first fragment carries the ports. */
	if (!esgw_protocol_has_ports(flow->proto) || (read_be16(ip + 6) & 0x1fff) != 0)
		return 0;
	if (len < ihl + 4)
		return -1;
	flow->has_ports = true;
	flow->sport = read_be16(ip + ihl);
	flow->dport = read_be16(ip + ihl + 2);
	return 0;
}

static bool port_in(uint16_t lo, uint16_t hi, bool has_ports, uint16_t port)
{
	if (lo == 0 && hi == 65535)
		return true; /* any: also packets without ports */
	return has_ports && port >= lo && port <= hi;
}

static bool match(const struct esgw_selector *sel, uint32_t src, uint32_t dst, uint16_t sport,
		  uint16_t dport, const struct esgw_flow *flow)
{
	return ((src ^ sel->src) & sel->src_mask) == 0 && ((dst ^ sel->dst) & sel->dst_mask) == 0 &&
	       (sel->proto == ESGW_PROTO_ANY || sel->proto == flow->proto) &&
	       port_in(sel->sport_lo, sel->sport_hi, flow->has_ports, sport) &&
	       port_in(sel->dport_lo, sel->dport_hi, flow->has_ports, dport);
}

bool esgw_selector_match(const struct esgw_selector *sel, const struct esgw_flow *flow)
{
	return match(sel, flow->src, flow->dst, flow->sport, flow->dport, flow);
}

bool esgw_selector_match_reverse(const struct esgw_selector *sel, const struct esgw_flow *flow)
{
	return match(sel, flow->dst, flow->src, flow->dport, flow->sport, flow);
}

static const struct {
	const char *name;
	uint8_t proto;
} protocol_names[] = {
	{"any", ESGW_PROTO_ANY}, {"icmp", PROTO_ICMP}, {"tcp", PROTO_TCP},
	{"udp", PROTO_UDP},      {"sctp", PROTO_SCTP},
};

static int parse_number(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *v > max)
		return -1;
	return 0;
}

int esgw_parse_protocol(const char *s, uint8_t *proto)
{
	unsigned long v;

	for (size_t i = 0; i < sizeof(protocol_names) / sizeof(protocol_names[0]); i++) {
		if (s != NULL && strcmp(s, protocol_names[i].name) == 0) {
			*proto = protocol_names[i].proto;
			return 0;
		}
	}
	if (parse_number(s, 255, &v) < 0)
		return -1;
	*proto = (uint8_t)v;
	return 0;
}

const char *esgw_protocol_name(uint8_t proto, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(protocol_names) / sizeof(protocol_names[0]); i++)
		if (protocol_names[i].proto == proto)
			return protocol_names[i].name;
	snprintf(buf, len, "%u", proto);
	return buf;
}

int esgw_parse_port_range(const char *s, uint16_t *lo, uint16_t *hi)
{
	char first[8];
	const char *dash;
	unsigned long a, b;
	size_t n;

	if (s == NULL)
		return -1;
	dash = strchr(s, '-');
	if (dash == NULL) {
		if (parse_number(s, 65535, &a) < 0)
			return -1;
		*lo = *hi = (uint16_t)a;
		return 0;
	}
	n = (size_t)(dash - s);
	if (n == 0 || n >= sizeof(first))
		return -1;
	memcpy(first, s, n);
	first[n] = '\0';
	if (parse_number(first, 65535, &a) < 0 || parse_number(dash + 1, 65535, &b) < 0 || a > b)
		return -1;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}
