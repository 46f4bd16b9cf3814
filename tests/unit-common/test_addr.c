/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the API's value parsers: IPv4 and IPv6 addresses, prefixes, hex keys,
 * numbers; every malformed input must be refused. And struct esgw_addr, the
 * binary address of the internal configuration channel, both ways. */
#include <string.h>

#include "addr.h"
#include "check.h"

/* Text to binary and back, the byte counts and lengths the binary form
 * takes, and host bits. */
static void check_esgw_addr(void)
{
	static const struct {
		const char *in;
		int rc;
		uint8_t family, len;
		const char *canon; /* formatted back with its length */
	} texts[] = {
		{"10.0.0.1/24", 0, 4, 24, "10.0.0.1/24"},
		{"192.168.3.2", 0, 4, 32, "192.168.3.2/32"},
		{"0.0.0.0/0", 0, 4, 0, "0.0.0.0/0"},
		{"2001:DB8:0::1/64", 0, 6, 64, "2001:db8::1/64"},
		{"::", 0, 6, 128, "::/128"},
		{"10.0.0.1/33", -1, 0, 0, NULL},
		{"2001:db8::/129", -1, 0, 0, NULL},
		{"10.0.0/8", -1, 0, 0, NULL},
		{"", -1, 0, 0, NULL},
		{NULL, -1, 0, 0, NULL},
	};
	static const struct {
		size_t n;
		uint32_t len;
		int rc;
	} sizes[] = {
		{4, 32, 0}, {4, 0, 0},  {16, 128, 0}, {4, 33, -1}, {16, 129, -1},
		{0, 0, -1}, {5, 8, -1}, {15, 8, -1},  {17, 8, -1},
	};
	static const uint8_t bytes[16] = {0x0a, 0x01, 0x02, 0x03};
	char buf[ESGW_ADDR_STRLEN];
	struct esgw_addr a;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		int rc = esgw_addr_parse(texts[i].in, &a);

		CHECK(rc == texts[i].rc, "addr '%s' rc %d", texts[i].in ? texts[i].in : "NULL", rc);
		if (rc == 0)
			CHECK(a.family == texts[i].family && a.len == texts[i].len &&
				      strcmp(esgw_addr_format(&a, 1, buf), texts[i].canon) == 0,
			      "addr '%s' value %s", texts[i].in, buf);
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		CHECK(esgw_addr_from_bytes(&a, bytes, sizes[i].n, sizes[i].len) == sizes[i].rc,
		      "%zu bytes, length %u", sizes[i].n, sizes[i].len);
	CHECK(esgw_addr_parse_prefix("10.0.0.0/8", &a) == 0 && a.len == 8 &&
		      esgw_addr_parse_prefix("2001:db8::/32", &a) == 0 && a.len == 32 &&
		      esgw_addr_parse_prefix("10.0.0.1", &a) < 0 &&
		      esgw_addr_parse_prefix("2001:db8::1", &a) < 0 &&
		      esgw_addr_parse_prefix(NULL, &a) < 0,
	      "a prefix needs its length");
	CHECK(esgw_addr_from_bytes(&a, NULL, 4, 32) < 0, "no bytes");
	CHECK(esgw_addr_from_bytes(&a, bytes, 4, 24) == 0 && a.family == 4 &&
		      esgw_addr_ipv4(&a) == 0x0a010203 && esgw_addr_size(&a) == 4 &&
		      strcmp(esgw_addr_format(&a, 0, buf), "10.1.2.3") == 0,
	      "IPv4 from bytes: %s", buf);
	esgw_addr_clear_host(&a);
	CHECK(strcmp(esgw_addr_format(&a, 1, buf), "10.1.2.0/24") == 0, "IPv4 host bits: %s", buf);
	CHECK(esgw_addr_parse("2001:db8::ffff/116", &a) == 0 && esgw_addr_size(&a) == 16 &&
		      esgw_addr_ipv4(&a) == 0,
	      "IPv6 size");
	esgw_addr_clear_host(&a);
	CHECK(strcmp(esgw_addr_format(&a, 1, buf), "2001:db8::f000/116") == 0, "IPv6 host bits: %s",
	      buf);
}

int main(void)
{
	static const struct {
		const char *in;
		int rc;
		uint32_t addr;
		uint8_t len;
	} prefixes[] = {
		{"10.0.0.1/24", 0, 0x0a000001, 24},
		{"0.0.0.0/0", 0, 0, 0},
		{"192.168.3.2", 0, 0xc0a80302, 32},
		{"1.2.3.4/32", 0, 0x01020304, 32},
		{"1.2.3.4/33", -1, 0, 0},
		{"1.2.3/24", -1, 0, 0},
		{"1.2.3.4/", -1, 0, 0},
		{"1.2.3.4/-1", -1, 0, 0},
		{"256.1.1.1/8", -1, 0, 0},
		{"", -1, 0, 0},
		{"a.b.c.d/8", -1, 0, 0},
		{"1.2.3.4/24 ", -1, 0, 0},
		{"10.0.0.1/24/8", -1, 0, 0},
	};
	static const struct {
		const char *in;
		int rc;
		size_t len;
	} hexes[] = {
		{"4339314b55523947594d6d3547666b45", 0, 16},
		{"0x00ff", 0, 2},
		{"abc", -1, 0},
		{"zz", -1, 0},
		{"", -1, 0},
		{"0x", -1, 0},
		{"000102030405060708090a0b0c0d0e0f1011121314151617", -1, 0}, /* 24 > max 20 */
	};
	static const struct {
		const char *in;
		uint32_t max;
		int rc;
		uint32_t v;
	} nums[] = {
		{"1000", 0xffffffffu, 0, 1000},
		{"0x3e8", 0xffffffffu, 0, 1000},
		{"4294967295", 0xffffffffu, 0, 0xffffffffu},
		{"4294967296", 0xffffffffu, -1, 0},
		{"-1", 100, -1, 0},
		{"12a", 100, -1, 0},
		{"", 100, -1, 0},
		{"101", 100, -1, 0},
		{" 5", 100, -1, 0},
	};
	static const struct {
		const char *in;
		int rc;
		const char *canon; /* formatted back */
		uint8_t len;
	} prefixes6[] = {
		{"2001:db8:3::1/64", 0, "2001:db8:3::1", 64},
		{"::/0", 0, "::", 0},
		{"2001:DB8::1", 0, "2001:db8::1", 128},
		{"fe80::1/10", 0, "fe80::1", 10},
		{"::ffff:1.2.3.4/128", 0, "::ffff:1.2.3.4", 128},
		{"2001:db8::/129", -1, NULL, 0},
		{"2001:db8::1/", -1, NULL, 0},
		{"2001:db8:::1/64", -1, NULL, 0},
		{"1.2.3.4/24", -1, NULL, 0},
		{"2001:db8::g/64", -1, NULL, 0},
		{"", -1, NULL, 0},
		{"2001:db8::/64/1", -1, NULL, 0},
		{"2001:db8::/-1", -1, NULL, 0},
	};
	uint8_t key[20];
	char buf[18], buf6[ESGW_IPV6_STRLEN];
	uint8_t a6[16], b6[16];

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		uint32_t a = 0;
		uint8_t l = 0;
		int rc = esgw_parse_prefix(prefixes[i].in, &a, &l);

		CHECK(rc == prefixes[i].rc, "prefix '%s' rc %d", prefixes[i].in, rc);
		if (rc == 0)
			CHECK(a == prefixes[i].addr && l == prefixes[i].len, "prefix '%s' value",
			      prefixes[i].in);
	}
	for (size_t i = 0; i < sizeof(hexes) / sizeof(hexes[0]); i++) {
		size_t len = 0;
		int rc = esgw_parse_hex(hexes[i].in, key, sizeof(key), &len);

		CHECK(rc == hexes[i].rc && (rc < 0 || len == hexes[i].len), "hex '%s'",
		      hexes[i].in);
	}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		uint32_t v = 0;
		int rc = esgw_parse_u32(nums[i].in, nums[i].max, &v);

		CHECK(rc == nums[i].rc && (rc < 0 || v == nums[i].v), "number '%s'", nums[i].in);
	}
	CHECK(esgw_prefix_mask(0) == 0 && esgw_prefix_mask(24) == 0xffffff00u &&
		      esgw_prefix_mask(32) == 0xffffffffu,
	      "masks");
	CHECK(strcmp(esgw_fmt_ipv4(0xc0a80302, buf), "192.168.3.2") == 0, "fmt ipv4");
	CHECK(strcmp(esgw_fmt_mac((const uint8_t *)"\x02\x00\x00\xab\xcd\xef", buf),
		     "02:00:00:ab:cd:ef") == 0,
	      "fmt mac");
	{
		static const struct {
			const char *in;
			int rc;
		} macs[] = {{"02:00:00:AB:cd:ef", 0},
			    {"02:00:00:ab:cd", -1},
			    {"02:00:00:ab:cd:ef:", -1},
			    {"02-00-00-ab-cd-ef", -1},
			    {"02:00:00:ab:cd:eg", -1},
			    {"2:0:0:ab:cd:ef", -1},
			    {"", -1}};
		uint8_t mac[6];

		for (size_t i = 0; i < sizeof(macs) / sizeof(macs[0]); i++)
			CHECK(esgw_parse_mac(macs[i].in, mac) == macs[i].rc, "mac '%s'",
			      macs[i].in);
		esgw_parse_mac("02:00:00:AB:cd:ef", mac);
		CHECK(memcmp(mac, "\x02\x00\x00\xab\xcd\xef", 6) == 0, "parse mac value");
	}
	for (size_t i = 0; i < sizeof(prefixes6) / sizeof(prefixes6[0]); i++) {
		uint8_t l = 0;
		int rc = esgw_parse_prefix6(prefixes6[i].in, a6, &l);

		CHECK(rc == prefixes6[i].rc, "prefix6 '%s' rc %d", prefixes6[i].in, rc);
		if (rc == 0)
			CHECK(l == prefixes6[i].len &&
				      strcmp(esgw_fmt_ipv6(a6, buf6), prefixes6[i].canon) == 0,
			      "prefix6 '%s' value %s/%u", prefixes6[i].in, buf6, l);
	}
	CHECK(esgw_parse_ipv6("2001:db8::1", a6) == 0 && esgw_parse_ipv6("2001:db8::ffff", b6) == 0,
	      "parse ipv6");
	CHECK(esgw_parse_ipv6("2001:db8::1/64", a6) < 0, "ipv6 with a length is not an address");
	CHECK(esgw_prefix6_match(a6, b6, 64) && esgw_prefix6_match(a6, b6, 112) &&
		      !esgw_prefix6_match(a6, b6, 113) && !esgw_prefix6_match(a6, b6, 128) &&
		      esgw_prefix6_match(a6, b6, 0),
	      "prefix6 match");
	esgw_prefix6_clear_host(b6, 116);
	CHECK(strcmp(esgw_fmt_ipv6(b6, buf6), "2001:db8::f000") == 0, "clear host bits: %s", buf6);
	esgw_prefix6_clear_host(b6, 0);
	CHECK(strcmp(esgw_fmt_ipv6(b6, buf6), "::") == 0, "clear all bits: %s", buf6);
	CHECK(esgw_is_ipv6_text("::1") && !esgw_is_ipv6_text("10.0.0.1") &&
		      !esgw_is_ipv6_text(NULL),
	      "ipv6 text");
	check_esgw_addr();
	return check_report("test_addr");
}
