/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the API's value parsers: addresses, prefixes, hex keys,
 * numbers; every malformed input must be refused. */
#include <string.h>

#include "addr.h"
#include "check.h"

int main(void)
{
	static const struct {
		const char *in;
		int rc;
		uint32_t addr;
		uint8_t len;
	} prefixes[] = {
		{"10.0.0.1/24", 0, 0x0a000001, 24},  {"0.0.0.0/0", 0, 0, 0},
		{"192.168.3.2", 0, 0xc0a80302, 32},  {"1.2.3.4/32", 0, 0x01020304, 32},
		{"1.2.3.4/33", -1, 0, 0},            {"1.2.3/24", -1, 0, 0},
		{"1.2.3.4/", -1, 0, 0},              {"1.2.3.4/-1", -1, 0, 0},
		{"256.1.1.1/8", -1, 0, 0},           {"", -1, 0, 0},
		{"a.b.c.d/8", -1, 0, 0},             {"1.2.3.4/24 ", -1, 0, 0},
		{"10.0.0.1/24/8", -1, 0, 0},
	};
	static const struct {
		const char *in;
		int rc;
		size_t len;
	} hexes[] = {
		{"4339314b55523947594d6d3547666b45", 0, 16}, {"0x00ff", 0, 2}, {"abc", -1, 0},
		{"zz", -1, 0}, {"", -1, 0}, {"0x", -1, 0},
		{"000102030405060708090a0b0c0d0e0f1011121314151617", -1, 0}, /* 24 > max 20 */
	};
	static const struct {
		const char *in;
		uint32_t max;
		int rc;
		uint32_t v;
	} nums[] = {
		{"1000", 0xffffffffu, 0, 1000}, {"0x3e8", 0xffffffffu, 0, 1000},
		{"4294967295", 0xffffffffu, 0, 0xffffffffu}, {"4294967296", 0xffffffffu, -1, 0},
		{"-1", 100, -1, 0}, {"12a", 100, -1, 0}, {"", 100, -1, 0}, {"101", 100, -1, 0},
		{" 5", 100, -1, 0},
	};
	uint8_t key[20];
	char buf[18];

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

		CHECK(rc == hexes[i].rc && (rc < 0 || len == hexes[i].len), "hex '%s'", hexes[i].in);
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
	return check_report("test_addr");
}
