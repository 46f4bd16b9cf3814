/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of policy selector matching (both directions), flow extraction
 * from IPv4 headers (ports, fragments, truncation) and the protocol and port
 * range parsers. */
#include <string.h>

#include "check.h"
#include "selector.h"

#define ANY_PORTS 0, 65535
#define NET(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define MASK24 0xffffff00u
#define MASK32 0xffffffffu

/* A 24-byte IPv4 header + 4 bytes of ports. */
static size_t make_packet(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto, uint16_t frag_word,
			  uint16_t sport, uint16_t dport)
{
	memset(p, 0, 28);
	p[0] = 0x45;
	p[6] = frag_word >> 8;
	p[7] = frag_word & 0xff;
	p[9] = proto;
	for (int i = 0; i < 4; i++) {
		p[12 + i] = (uint8_t)(src >> (24 - 8 * i));
		p[16 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	p[20] = sport >> 8;
	p[21] = sport & 0xff;
	p[22] = dport >> 8;
	p[23] = dport & 0xff;
	return 28;
}

int main(void)
{
	static const struct esgw_selector lan_to_lan = {
		NET(192, 168, 1, 0), MASK24, NET(192, 168, 2, 0), MASK24, 0, ANY_PORTS, ANY_PORTS};
	static const struct esgw_selector tcp_only = {
		NET(192, 168, 1, 0), MASK24, NET(192, 168, 2, 0), MASK24, 6, ANY_PORTS, ANY_PORTS};
	static const struct esgw_selector web = {0, 0, 0, 0, 6, ANY_PORTS, 80, 443};
	static const struct esgw_selector host_dns = {
		NET(10, 0, 0, 1), MASK32, 0, 0, 17, 1024, 65535, 53, 53};
	static const struct {
		const struct esgw_selector *sel;
		uint32_t src, dst;
		uint8_t proto;
		uint16_t frag, sport, dport;
		bool out, in; /* match as written, and with directions swapped */
	} cases[] = {
		{&lan_to_lan, NET(192, 168, 1, 1), NET(192, 168, 2, 1), 1, 0, 0, 0, true, false},
		{&lan_to_lan, NET(192, 168, 2, 1), NET(192, 168, 1, 1), 17, 0, 5, 6, false, true},
		{&lan_to_lan, NET(192, 168, 1, 1), NET(192, 168, 3, 1), 6, 0, 5, 6, false, false},
		{&tcp_only, NET(192, 168, 1, 9), NET(192, 168, 2, 9), 6, 0, 1, 2, true, false},
		{&tcp_only, NET(192, 168, 1, 9), NET(192, 168, 2, 9), 17, 0, 1, 2, false, false},
		{&tcp_only, NET(192, 168, 2, 9), NET(192, 168, 1, 9), 6, 0x4000, 1, 2, false, true},
		{&web, NET(1, 2, 3, 4), NET(5, 6, 7, 8), 6, 0, 40000, 80, true, false},
		{&web, NET(1, 2, 3, 4), NET(5, 6, 7, 8), 6, 0, 40000, 443, true, false},
		{&web, NET(1, 2, 3, 4), NET(5, 6, 7, 8), 6, 0, 40000, 444, false, false},
		{&web, NET(1, 2, 3, 4), NET(5, 6, 7, 8), 6, 0, 443, 40000, false, true},
		/* A non-first fragment has no ports: only any-port selectors match. */
		{&web, NET(1, 2, 3, 4), NET(5, 6, 7, 8), 6, 0x0010, 40000, 80, false, false},
		{&tcp_only, NET(192, 168, 1, 9), NET(192, 168, 2, 9), 6, 0x2010, 1, 2, true, false},
		/* A first fragment (MF, offset 0) carries them. */
		{&web, NET(1, 2, 3, 4), NET(5, 6, 7, 8), 6, 0x2000, 40000, 80, true, false},
		{&host_dns, NET(10, 0, 0, 1), NET(9, 9, 9, 9), 17, 0, 1024, 53, true, false},
		{&host_dns, NET(10, 0, 0, 1), NET(9, 9, 9, 9), 17, 0, 1023, 53, false, false},
		{&host_dns, NET(10, 0, 0, 2), NET(9, 9, 9, 9), 17, 0, 2000, 53, false, false},
		{&host_dns, NET(9, 9, 9, 9), NET(10, 0, 0, 1), 17, 0, 53, 2000, false, true},
		/* ICMP has no ports: a port-restricted selector never matches it. */
		{&host_dns, NET(10, 0, 0, 1), NET(9, 9, 9, 9), 1, 0, 0, 53, false, false},
	};
	static const struct {
		const char *in;
		int rc;
		uint16_t lo, hi;
	} ranges[] = {
		{"80", 0, 80, 80},   {"0-65535", 0, 0, 65535}, {"1024-2048", 0, 1024, 2048},
		{"65536", -1, 0, 0}, {"2048-1024", -1, 0, 0},  {"-5", -1, 0, 0},
		{"5-", -1, 0, 0},    {"a-b", -1, 0, 0},        {"", -1, 0, 0},
		{"1-2-3", -1, 0, 0}, {"80 ", -1, 0, 0},
	};
	static const struct {
		const char *in;
		int rc;
		uint8_t proto;
	} protos[] = {
		{"tcp", 0, 6},  {"udp", 0, 17}, {"icmp", 0, 1}, {"any", 0, 0}, {"47", 0, 47},
		{"256", -1, 0}, {"TCP", -1, 0}, {"", -1, 0},    {"-1", -1, 0},
	};
	uint8_t pkt[28];
	struct esgw_flow flow;
	char buf[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = make_packet(pkt, cases[i].src, cases[i].dst, cases[i].proto,
					 cases[i].frag, cases[i].sport, cases[i].dport);

		CHECK(esgw_flow_from_ipv4(pkt, len, &flow) == 0, "case %zu: flow", i);
		CHECK(esgw_selector_match(cases[i].sel, &flow) == cases[i].out, "case %zu: out", i);
		CHECK(esgw_selector_match_reverse(cases[i].sel, &flow) == cases[i].in,
		      "case %zu: in", i);
	}

	/* Truncation: no header, header without ports, bad version, bad IHL. */
	make_packet(pkt, 1, 2, 6, 0, 1, 2);
	CHECK(esgw_flow_from_ipv4(pkt, 19, &flow) < 0, "short header");
	CHECK(esgw_flow_from_ipv4(pkt, 22, &flow) < 0, "TCP without its ports");
	CHECK(esgw_flow_from_ipv4(pkt, 24, &flow) == 0 && flow.sport == 1 && flow.dport == 2,
	      "ports read");
	make_packet(pkt, 1, 2, 1, 0, 1, 2);
	CHECK(esgw_flow_from_ipv4(pkt, 20, &flow) == 0 && !flow.has_ports, "ICMP needs no ports");
	pkt[0] = 0x65;
	CHECK(esgw_flow_from_ipv4(pkt, 28, &flow) < 0, "IPv6 version refused");
	pkt[0] = 0x44;
	CHECK(esgw_flow_from_ipv4(pkt, 28, &flow) < 0, "IHL below 5 refused");
	pkt[0] = 0x4f;
	CHECK(esgw_flow_from_ipv4(pkt, 28, &flow) < 0, "IHL beyond the data refused");

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		uint16_t lo = 1, hi = 1;
		int rc = esgw_parse_port_range(ranges[i].in, &lo, &hi);

		CHECK(rc == ranges[i].rc, "range '%s': rc %d", ranges[i].in, rc);
		if (rc == 0)
			CHECK(lo == ranges[i].lo && hi == ranges[i].hi, "range '%s': %u-%u",
			      ranges[i].in, lo, hi);
	}
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		uint8_t p = 99;
		int rc = esgw_parse_protocol(protos[i].in, &p);

		CHECK(rc == protos[i].rc, "protocol '%s': rc %d", protos[i].in, rc);
		if (rc == 0)
			CHECK(p == protos[i].proto, "protocol '%s': %u", protos[i].in, p);
	}
	CHECK(strcmp(esgw_protocol_name(6, buf, sizeof(buf)), "tcp") == 0, "name of 6");
	CHECK(strcmp(esgw_protocol_name(47, buf, sizeof(buf)), "47") == 0, "name of 47");
	return check_report("test_selector");
}
