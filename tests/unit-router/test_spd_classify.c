/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of the policy classifier (router/spd_classify.c): a few cases
 * of first match in evaluation order, then random selector sets (prefixes
 * of several lengths over a small address space, so that they overlap;
 * protocols; port ranges) against random flows, each answer compared with a
 * scan of esgw_selector_match / esgw_selector_match_reverse in order. */
#include <stdlib.h>

#include "check.h"
#include "spd_classify.h"

#define NET(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static uint32_t mask_of(unsigned int len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
}

static struct esgw_selector sel(uint32_t src, unsigned int src_len, uint32_t dst,
				unsigned int dst_len, uint8_t proto, uint16_t dlo, uint16_t dhi)
{
	return (struct esgw_selector){src & mask_of(src_len), mask_of(src_len),
				      dst & mask_of(dst_len), mask_of(dst_len),
				      proto, 0, 65535, dlo, dhi};
}

static int32_t scan(const struct esgw_selector *s, uint32_t n, const struct esgw_flow *f,
		    int reverse)
{
	for (uint32_t i = 0; i < n; i++)
		if (reverse ? esgw_selector_match_reverse(&s[i], f) : esgw_selector_match(&s[i], f))
			return (int32_t)i;
	return -1;
}

static struct spd_classify *build(const struct esgw_selector *s, uint32_t n)
{
	const struct esgw_selector **p = calloc(n + 1, sizeof(*p));
	struct spd_classify *c;

	for (uint32_t i = 0; i < n; i++)
		p[i] = &s[i];
	c = spd_classify_build(p, n);
	free(p);
	return c;
}

static void test_cases(void)
{
	/* 0: a /16 with udp 7777; 1: a /32 inside it (more specific, later);
	 * 2: any to 10.9.0.0/24 of every protocol; 3: everything. */
	struct esgw_selector s[] = {
		sel(0, 0, NET(10, 9, 0, 0), 16, 17, 7777, 7777),
		sel(0, 0, NET(10, 9, 0, 5), 32, 0, 0, 65535),
		sel(NET(192, 168, 1, 0), 24, NET(10, 9, 0, 0), 24, 0, 0, 65535),
		sel(0, 0, 0, 0, 0, 0, 65535),
	};
	struct {
		struct esgw_flow flow;
		int32_t want, want_reverse;
	} cases[] = {
		{{NET(192, 168, 1, 1), NET(10, 9, 0, 5), 17, true, 1000, 7777}, 0, 3},
		{{NET(192, 168, 1, 1), NET(10, 9, 0, 5), 17, true, 1000, 7778}, 1, 3},
		{{NET(192, 168, 1, 1), NET(10, 9, 0, 6), 6, true, 1000, 7777}, 2, 3},
		{{NET(192, 168, 1, 1), NET(10, 9, 0, 6), 17, false, 0, 0}, 2, 3}, /* no ports */
		{{NET(10, 9, 0, 5), NET(192, 168, 1, 1), 17, true, 7777, 1000}, 3, 0},
		{{NET(10, 9, 0, 6), NET(192, 168, 1, 1), 1, false, 0, 0}, 3, 2},
	};
	struct spd_classify *c = build(s, 4), *none = build(s, 0), *narrow = build(s, 2);

	CHECK(c != NULL && none != NULL && narrow != NULL, "build");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(spd_classify_first(c, &cases[i].flow) == cases[i].want, "case %zu", i);
		CHECK(spd_classify_first_reverse(c, &cases[i].flow) == cases[i].want_reverse,
		      "case %zu reverse", i);
		CHECK(spd_classify_first(none, &cases[i].flow) == -1, "case %zu, no selectors", i);
	}
	/* A miss: neither of the first two. */
	CHECK(spd_classify_first(narrow, &cases[2].flow) == -1, "miss");
	spd_classify_free(c);
	spd_classify_free(none);
	spd_classify_free(narrow);
}

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)random() % n;
}

/* Addresses from 10.0.0.0/13-ish pieces so that prefixes overlap often. */
static uint32_t rnd_addr(void)
{
	return NET(10, rnd(4), rnd(4), rnd(8));
}

static struct esgw_selector rnd_sel(void)
{
	static const unsigned int lens[] = {0, 8, 14, 16, 24, 29, 32};
	static const uint8_t protos[] = {0, 0, 6, 17, 1};
	struct esgw_selector s = sel(rnd_addr(), lens[rnd(7)], rnd_addr(), lens[rnd(7)],
				     protos[rnd(5)], 0, 65535);

	if ((s.proto == 6 || s.proto == 17) && rnd(2)) {
		s.dport_lo = (uint16_t)rnd(8);
		s.dport_hi = (uint16_t)(s.dport_lo + rnd(4));
	}
	if ((s.proto == 6 || s.proto == 17) && rnd(3) == 0) {
		s.sport_lo = (uint16_t)rnd(8);
		s.sport_hi = (uint16_t)(s.sport_lo + rnd(4));
	}
	return s;
}

static void test_random(void)
{
	static const uint32_t sizes[] = {1, 3, 10, 100, 1000, 5000};
	static struct esgw_selector s[5000];
	uint32_t wrong = 0, flows = 0;

	srandom(13);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];
		struct spd_classify *c;

		for (uint32_t i = 0; i < n; i++)
			s[i] = rnd_sel();
		c = build(s, n);
		CHECK(c != NULL, "build %u", n);
		for (int j = 0; c != NULL && j < 20000; j++) {
			static const uint8_t protos[] = {6, 17, 1, 50};
			struct esgw_flow f = {rnd_addr(), rnd_addr(), protos[rnd(4)], false,
					      (uint16_t)rnd(12), (uint16_t)rnd(12)};

			f.has_ports = (f.proto == 6 || f.proto == 17) && rnd(8) != 0;
			wrong += spd_classify_first(c, &f) != scan(s, n, &f, 0);
			wrong += spd_classify_first_reverse(c, &f) != scan(s, n, &f, 1);
			flows++;
		}
		spd_classify_free(c);
	}
	CHECK(wrong == 0, "%u of %u flows classified unlike the scan", wrong, 2 * flows);
}

int main(void)
{
	test_cases();
	test_random();
	return check_report("test_spd_classify");
}
