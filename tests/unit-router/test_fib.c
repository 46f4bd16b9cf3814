/* SPDX-License-Identifier: BSD-3-Clause */
/* Table-driven tests of the router's longest-prefix matches (fib.c, fib6.c) and of its
 * header parsing and checksum arithmetic (headers.c), edge cases first. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "addr.h"
#include "fib.h"
#include "fib6.h"
#include "headers.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define NONE 0xffff /* expected: no route */

static const struct fib_route table[] = {
	{.prefix = IP(0, 0, 0, 0),
	 .len = 0,
	 .kind = FIB_VIA,
	 .port = 7,
	 .gateway = IP(192, 0, 2, 1)},
	{.prefix = IP(10, 0, 0, 0), .len = 8, .kind = FIB_VIA, .port = 1},
	{.prefix = IP(10, 1, 0, 0), .len = 16, .kind = FIB_TUNNEL, .port = 2, .tunnel = 2},
	{.prefix = IP(10, 1, 2, 77),
	 .len = 24,
	 .kind = FIB_CONNECTED,
	 .port = 3}, /* host bits set */
	{.prefix = IP(10, 1, 2, 1), .len = 32, .kind = FIB_LOCAL, .port = 3},
	{.prefix = IP(128, 0, 0, 0), .len = 1, .kind = FIB_VIA, .port = 4},
	{.prefix = IP(255, 255, 255, 255), .len = 32, .kind = FIB_VIA, .port = 5},
	/* same prefix twice: the lower kind (connected) must win wherever it sits */
	{.prefix = IP(172, 16, 0, 0), .len = 12, .kind = FIB_VIA, .port = 8},
	{.prefix = IP(172, 16, 0, 0), .len = 12, .kind = FIB_CONNECTED, .port = 6},
	{.prefix = IP(172, 16, 0, 0), .len = 12, .kind = FIB_TUNNEL, .port = 9},
};

static const struct {
	uint32_t dst;
	uint16_t port; /* we encode the expected route by its port */
} lookups[] = {
	{IP(10, 1, 2, 1), 3},                                /* /32 beats /24 */
	{IP(10, 1, 2, 2), 3},                                /* /24 */
	{IP(10, 1, 2, 255), 3},      {IP(10, 1, 1, 255), 2}, /* just below the /24: the /16 */
	{IP(10, 1, 3, 0), 2},                                /* just above */
	{IP(10, 2, 0, 0), 1},                                /* /8 */
	{IP(10, 255, 255, 255), 1},  {IP(11, 0, 0, 0), 7},   /* default */
	{IP(9, 255, 255, 255), 7},   {IP(0, 0, 0, 0), 7},         {IP(128, 0, 0, 0), 4}, /* /1 */
	{IP(200, 1, 2, 3), 4},       {IP(255, 255, 255, 254), 4}, {IP(255, 255, 255, 255), 5},
	{IP(127, 255, 255, 255), 7}, {IP(172, 16, 0, 1), 6}, /* duplicate prefix: connected */
	{IP(172, 31, 255, 255), 6},  {IP(172, 32, 0, 0), 4},
};

static void test_fib(void)
{
	struct fib fib, reversed, empty;
	struct fib_route rev[sizeof(table) / sizeof(table[0])];
	size_t n = sizeof(table) / sizeof(table[0]);
	struct fib_route bad = {.prefix = 0, .len = 33};

	CHECK(fib_build(&fib, table, n) == 0, "build");
	CHECK(fib.table.nb_routes == n - 2, "duplicates collapsed: %u routes",
	      fib.table.nb_routes);
	/* The same table given in reverse order answers the same. */
	for (size_t i = 0; i < n; i++)
		rev[i] = table[n - 1 - i];
	CHECK(fib_build(&reversed, rev, n) == 0, "build reversed");
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		const struct fib_route *a = fib_lookup(&fib, lookups[i].dst);
		const struct fib_route *b = fib_lookup(&reversed, lookups[i].dst);

		CHECK(a != NULL && a->port == lookups[i].port,
		      "lookup #%zu: %08x -> port %d, want %u", i, lookups[i].dst, a ? a->port : -1,
		      lookups[i].port);
		CHECK(b != NULL && a != NULL && memcmp(a, b, sizeof(*a)) == 0,
		      "lookup #%zu differs with the reversed input", i);
	}
	CHECK(fib_lookup(&fib, IP(10, 1, 2, 200))->prefix == IP(10, 1, 2, 0), "host bits cleared");
	fib_free(&fib);
	fib_free(&reversed);

	/* Without a default route, an address nothing covers finds nothing. */
	CHECK(fib_build(&fib, table + 1, 4) == 0, "build without default");
	CHECK(fib_lookup(&fib, IP(11, 0, 0, 1)) == NULL, "no default: no route");
	CHECK(fib_lookup(&fib, IP(9, 255, 255, 255)) == NULL, "no default: no route below");
	fib_free(&fib);

	CHECK(fib_build(&empty, NULL, 0) == 0, "empty build");
	CHECK(fib_lookup(&empty, IP(1, 2, 3, 4)) == NULL, "empty: no route");
	fib_free(&empty);
	CHECK(fib_build(&fib, &bad, 1) < 0, "length 33 refused");
}

/* Two prefix tables hold the same entries of the same lengths. */
static int table_same_part(const struct prefix_table *a, const struct prefix_table *b,
			   size_t key_size, size_t entry_size, size_t compared)
{
	if (a->nb_routes != b->nb_routes || a->nb_groups != b->nb_groups)
		return 0;
	for (uint32_t g = 0; g < a->nb_groups; g++) {
		const struct prefix_group *ga = &a->groups[g];

		if (ga->len != b->groups[g].len || ga->count != b->groups[g].count)
			return 0;
		for (uint32_t i = 0; i <= ga->table_mask; i++) {
			const uint8_t *x = ga->table + (size_t)i * entry_size, *y;

			if (x[key_size] == PREFIX_EMPTY)
				continue;
			y = prefix_slot(&b->groups[g], x, key_size, entry_size);
			if (y[key_size] == PREFIX_EMPTY || memcmp(x, y, compared) != 0)
				return 0;
		}
	}
	return 1;
}

static int table_same(const struct prefix_table *a, const struct prefix_table *b, size_t key_size,
		      size_t entry_size)
{
	return table_same_part(a, b, key_size, entry_size, entry_size);
}

/* The same routes (their slots may differ), and every slot of a route
 * held in a, of a route it holds. */
static int fib_same(const struct fib *a, const struct fib *b)
{
	size_t held = 0;

	for (uint32_t i = 0; i < a->nb_slots; i++) {
		const struct fib_route *s = &a->slots[i], *e;

		if (s->len == PREFIX_EMPTY)
			continue;
		e = fib_exact(a, s->prefix, s->len);
		if (e == NULL || memcmp(e, s, sizeof(*s)) != 0)
			return 0;
		held++;
	}
	return held == a->table.nb_routes &&
	       table_same_part(&a->table, &b->table, sizeof(uint32_t), sizeof(struct fib_entry),
			       offsetof(struct fib_entry, slot));
}

/* Routes inserted one at a time, in either order, then some removed, hold
 * what fib_build makes of the routes left (a change applied in place equals a
 * whole push). */
static void test_fib_in_place(void)
{
	size_t n = sizeof(table) / sizeof(table[0]);
	struct fib built, grown = {0}, shrunk = {0};
	struct fib_route left[sizeof(table) / sizeof(table[0])];
	size_t n_left = 0;

	for (size_t i = 0; i < n; i++)
		CHECK(fib_insert(&grown, &table[i]) == 0, "insert #%zu", i);
	for (size_t i = n; i-- > 0;)
		CHECK(fib_insert(&shrunk, &table[i]) == 0, "insert reversed #%zu", i);
	CHECK(fib_build(&built, table, n) == 0, "build");
	CHECK(fib_same(&grown, &built), "inserted = built");
	CHECK(fib_same(&shrunk, &built), "inserted in reverse = built");
	fib_free(&built);
	/* Out: the tunnel route, the default, one /32; a route shadowed by a
	 * lower kind is not there to remove. */
	CHECK(fib_remove(&shrunk, IP(10, 1, 0, 0), 16, FIB_TUNNEL) == 0, "remove tunnel route");
	CHECK(fib_remove(&shrunk, 0, 0, FIB_VIA) == 0, "remove default");
	CHECK(fib_remove(&shrunk, IP(255, 255, 255, 255), 32, FIB_VIA) == 0, "remove /32");
	CHECK(fib_remove(&shrunk, IP(172, 16, 0, 0), 12, FIB_VIA) < 0, "shadowed: not there");
	CHECK(fib_remove(&shrunk, IP(10, 1, 0, 0), 16, FIB_TUNNEL) < 0, "removed twice");
	CHECK(fib_exact(&shrunk, IP(10, 1, 2, 0), 24) != NULL, "exact /24");
	CHECK(fib_exact(&shrunk, IP(10, 1, 0, 0), 16) == NULL, "exact: gone");
	for (size_t i = 0; i < n; i++)
		if (!(table[i].len == 16 || table[i].len == 0 ||
		      (table[i].len == 32 && table[i].port == 5)))
			left[n_left++] = table[i];
	CHECK(fib_build(&built, left, n_left) == 0, "build of what is left");
	CHECK(fib_same(&shrunk, &built), "removed = built without");
	fib_free(&built);
	fib_free(&grown);
	fib_free(&shrunk);
}

/* A hub's table: thousands of /24 tunnel routes beside the few of the
 * ports, inserted one by one (the tables grow), every third removed (the
 * entries behind each hole move back): the same as a build of what is left,
 * and every destination finds its route, the removed ones the cover. */
static void test_fib_many(void)
{
	enum { N = 5000 };
	struct fib_route *routes = calloc(N + 2, sizeof(*routes)), *left = calloc(N + 2, sizeof(*left));
	struct fib grown = {0}, built;
	size_t n_left = 0, bad = 0;

	CHECK(routes != NULL && left != NULL, "memory");
	if (routes == NULL || left == NULL)
		goto out;
	routes[0] = (struct fib_route){.prefix = IP(10, 128, 0, 0), .len = 9, .kind = FIB_VIA, .port = 1};
	routes[1] = (struct fib_route){.prefix = IP(192, 168, 1, 2), .len = 32, .kind = FIB_LOCAL};
	for (uint32_t i = 0; i < N; i++)
		routes[i + 2] = (struct fib_route){.prefix = IP(10, 128, 0, 0) + ((i + 1) << 8),
						   .len = 24,
						   .kind = FIB_TUNNEL,
						   .tunnel = i};
	for (size_t i = 0; i < N + 2; i++)
		CHECK(fib_insert(&grown, &routes[i]) == 0, "insert #%zu", i);
	for (size_t i = 0; i < N + 2; i++) {
		if (i >= 2 && i % 3 == 0) {
			CHECK(fib_remove(&grown, routes[i].prefix, 24, FIB_TUNNEL) == 0, "remove #%zu", i);
			continue;
		}
		left[n_left++] = routes[i];
	}
	CHECK(fib_build(&built, left, n_left) == 0, "build of what is left");
	CHECK(fib_same(&grown, &built), "many removed = built without");
	for (size_t i = 2; i < N + 2; i++) {
		const struct fib_route *rt = fib_lookup(&grown, routes[i].prefix | 77);

		if (i % 3 == 0)
			bad += rt == NULL || rt->len != 9;
		else
			bad += rt == NULL || rt->len != 24 || rt->tunnel != routes[i].tunnel;
	}
	CHECK(bad == 0, "%zu lookups wrong", bad);
	fib_retarget_tunnel(&grown, 2, 4242);
	CHECK(fib_lookup(&grown, IP(10, 128, 3, 1))->tunnel == 4242, "tunnel renumbered");
	fib_free(&built);
	fib_free(&grown);
out:
	free(routes);
	free(left);
}

/* Of two routes covering an address, by the first criteria of either
 * family (longest, then lowest kind, then lowest port): 1 x wins, -1 y
 * wins, 0 a tie so far. */
static int route_first(unsigned int x_len, unsigned int y_len, unsigned int x_kind,
		       unsigned int y_kind, unsigned int x_port, unsigned int y_port)
{
	if (x_len != y_len)
		return x_len > y_len ? 1 : -1;
	if (x_kind != y_kind)
		return x_kind < y_kind ? 1 : -1;
	if (x_port != y_port)
		return x_port < y_port ? 1 : -1;
	return 0;
}

/* The IPv6 routes of the brute force below: which of two covering routes
 * wins, as fib6.c holds them (longest, then lowest kind, port, gateway,
 * tunnel). */
static int better6(const struct fib6_route *x, const struct fib6_route *y)
{
	int c = route_first(x->len, y->len, x->kind, y->kind, x->port, y->port);

	if (c == 0)
		c = -memcmp(x->gateway, y->gateway, 16);
	return c != 0 ? c > 0 : x->tunnel < y->tunnel;
}

static const struct fib6_route *brute6(const struct fib6_route *r, size_t n, const uint8_t dst[16])
{
	const struct fib6_route *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (esgw_prefix6_match(r[i].prefix, dst, r[i].len) && (best == NULL || better6(&r[i], best)))
			best = &r[i];
	return best;
}

static uint32_t rnd_state;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* A random route: near one of a few bases (so routes cover each other), of
 * a length often a usual one, any kind. */
static void random_route6(struct fib6_route *r)
{
	static const uint8_t lens[] = {0, 16, 32, 48, 56, 64, 96, 120, 127, 128};
	static const uint8_t bases[3][16] = {
		{0x20, 0x01, 0x0d, 0xb8},
		{0x20, 0x01, 0x0d, 0xb8, 0, 0x10},
		{0xfd, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	};

	memset(r, 0, sizeof(*r));
	memcpy(r->prefix, bases[rnd() % 3], 16);
	for (int k = rnd() % 4; k > 0; k--)
		r->prefix[rnd() % 16] ^= (uint8_t)(1u << (rnd() % 8));
	r->len = rnd() % 2 ? lens[rnd() % sizeof(lens)] : (uint8_t)(rnd() % 129);
	r->kind = (uint8_t)(rnd() % 4);
	r->port = (uint16_t)(rnd() % 3);
	r->gateway[15] = (uint8_t)(rnd() % 2);
	r->tunnel = rnd() % 50;
	if (rnd() % 2) /* host bits set: cleared on the way in */
		r->prefix[15] |= 0x80;
}

/* A destination under route r, or anywhere near the bases. */
static void random_dst6(const struct fib6_route *r, uint8_t dst[16])
{
	memcpy(dst, r->prefix, 16);
	for (unsigned int b = r->len; b < 128; b++)
		if (rnd() % 2)
			dst[b / 8] ^= (uint8_t)(0x80 >> (b % 8));
	if (rnd() % 4 == 0)
		dst[rnd() % 16] ^= (uint8_t)(1u << (rnd() % 8));
}

/* Which of two IPv4 routes covering an address wins, as fib.c holds them
 * (longest, then lowest kind, port, gateway, tunnel). */
static int better4(const struct fib_route *x, const struct fib_route *y)
{
	int c = route_first(x->len, y->len, x->kind, y->kind, x->port, y->port);

	if (c == 0 && x->gateway != y->gateway)
		c = x->gateway < y->gateway ? 1 : -1;
	return c != 0 ? c > 0 : x->tunnel < y->tunnel;
}

static int covers4(const struct fib_route *r, uint32_t dst)
{
	return r->len == 0 || ((r->prefix ^ dst) >> (32 - r->len)) == 0;
}

static const struct fib_route *brute4(const struct fib_route *r, const uint8_t *in, size_t n,
				      uint32_t dst)
{
	const struct fib_route *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (in[i] && covers4(&r[i], dst) && (best == NULL || better4(&r[i], best)))
			best = &r[i];
	return best;
}

/* A random IPv4 route near one of a few bases, of every length from the
 * default route to /32 (those the index leaves to the table, /8 to /24 in
 * tbl24, and longer in tbl8 groups), any kind. */
static void random_route4(struct fib_route *r)
{
	static const uint8_t lens[] = {0, 1, 7, 8, 9, 16, 20, 23, 24, 25, 26, 28, 30, 31, 32};
	static const uint32_t bases[] = {IP(10, 0, 0, 0), IP(10, 1, 2, 0), IP(192, 168, 1, 0),
					 IP(128, 0, 0, 0)};

	memset(r, 0, sizeof(*r));
	r->prefix = bases[rnd() % 4] ^ (rnd() % 3 ? rnd() & 0x3ff : 0);
	r->len = rnd() % 3 ? lens[rnd() % sizeof(lens)] : (uint8_t)(rnd() % 33);
	r->kind = (uint8_t)(rnd() % 4);
	r->port = (uint16_t)(rnd() % 3);
	r->gateway = rnd() % 2;
	r->tunnel = rnd() % 50;
}

/* Every lookup, under the routes, near them and anywhere, is the brute
 * force's longest-prefix match of the routes in; returns how many are not. */
static size_t lookups4(const struct fib *fib, const struct fib_route *routes, const uint8_t *in,
		       size_t n)
{
	size_t bad = 0;

	for (int i = 0; i < 2000; i++) {
		uint32_t dst = rnd();
		const struct fib_route *want, *got;

		if (i % 4 != 0) /* under a route, its host bits random */
			dst = routes[rnd() % n].prefix ^ (dst & (i % 4 == 1 ? 0xff : 0xffff));
		want = brute4(routes, in, n, dst);
		got = fib_lookup(fib, dst);
		bad += (want == NULL) != (got == NULL) ||
		       (want != NULL && (got->len != want->len || got->kind != want->kind ||
					 got->port != want->port || got->gateway != want->gateway ||
					 got->tunnel != want->tunnel || !covers4(got, dst)));
	}
	return bad;
}

/* Random IPv4 route sets, in and out one at a time in random order: after
 * each round every lookup is the brute force's, the table equals a whole
 * build of the routes in, and once all are out the index has given every
 * tbl8 group back. */
static void test_fib4_random(void)
{
	enum { N = 300 };
	struct fib_route *routes = calloc(N, sizeof(*routes)), *left = calloc(N, sizeof(*left));
	uint8_t in[N];
	size_t bad = 0;

	CHECK(routes != NULL && left != NULL, "memory");
	for (uint32_t seed = 1; routes != NULL && left != NULL && seed <= 20; seed++) {
		struct fib grown = {0}, built;
		size_t n = 10 + seed * 14, n_left;

		rnd_state = seed * 2246822519u;
		memset(in, 0, sizeof(in));
		for (size_t i = 0; i < n; i++) {
			random_route4(&routes[i]);
			/* One route per prefix and length: a shadowed one is not
			 * there to remove (test_fib_in_place has those). */
			for (size_t j = 0; j < i; j++)
				if (routes[j].len == routes[i].len &&
				    covers4(&routes[j], routes[i].prefix) &&
				    covers4(&routes[i], routes[j].prefix)) {
					routes[i].len = 32;
					routes[i].prefix = IP(172, 16, 0, 0) + (uint32_t)i;
					break;
				}
			if (routes[i].len < 32) /* host bits set: cleared on the way in */
				routes[i].prefix &= ~(0xffffffffu >> routes[i].len) | (rnd() & 1);
		}
		for (int round = 0; round < 6; round++) {
			for (size_t k = 0; k < n; k++) {
				size_t i = rnd() % n;

				if (!in[i] && (round % 2 == 0 || rnd() % 4 == 0)) {
					CHECK(fib_insert(&grown, &routes[i]) == 0,
					      "seed %u: insert", seed);
					in[i] = 1;
				} else if (in[i] && (round % 2 == 1 || rnd() % 4 == 0)) {
					CHECK(fib_remove(&grown, routes[i].prefix, routes[i].len,
							 routes[i].kind) == 0,
					      "seed %u: remove", seed);
					in[i] = 0;
				}
			}
			for (size_t i = 0; i < n; i++) /* the prefix as the table holds it */
				if (routes[i].len < 32)
					routes[i].prefix &= ~(0xffffffffu >> routes[i].len);
			bad += lookups4(&grown, routes, in, n);
			n_left = 0;
			for (size_t i = 0; i < n; i++)
				if (in[i])
					left[n_left++] = routes[i];
			CHECK(fib_build(&built, left, n_left) == 0, "seed %u: build", seed);
			CHECK(fib_same(&grown, &built) && fib_same(&built, &grown),
			      "seed %u round %d: in place = built", seed, round);
			bad += lookups4(&built, routes, in, n);
			fib_free(&built);
		}
		for (size_t i = 0; i < n; i++)
			if (in[i])
				CHECK(fib_remove(&grown, routes[i].prefix, routes[i].len,
						 routes[i].kind) == 0,
				      "seed %u: remove at the end", seed);
		CHECK(grown.table.nb_routes == 0 && fib_lookup(&grown, IP(10, 1, 2, 3)) == NULL &&
			      grown.lpm.nb_tbl8_free == grown.lpm.tbl8_top,
		      "seed %u: empty at the end, every tbl8 group back (%u of %u)", seed,
		      grown.lpm.nb_tbl8_free, grown.lpm.tbl8_top);
		fib_free(&grown);
	}
	CHECK(bad == 0, "%zu IPv4 lookups differ from the brute force", bad);
	free(routes);
	free(left);
}

/* Random IPv6 route sets inserted one at a time (in either order) equal a
 * whole build; some removed equal a build of the rest; and every lookup,
 * of destinations under the routes and around them, is the brute-force
 * longest-prefix match of the routes held. */
static void test_fib6_random(void)
{
	enum { N = 600, LOOKUPS = 3000 };
	struct fib6_route *routes = calloc(N, sizeof(*routes)), *left = calloc(N, sizeof(*left));
	size_t bad = 0;

	CHECK(routes != NULL && left != NULL, "memory");
	for (uint32_t seed = 1; routes != NULL && left != NULL && seed <= 20; seed++) {
		struct fib6 grown = {0}, reversed = {0}, built;
		size_t n = 20 + seed * seed, n_left = 0;

		rnd_state = seed * 2654435761u;
		if (n > N)
			n = N;
		for (size_t i = 0; i < n; i++)
			random_route6(&routes[i]);
		for (size_t i = 0; i < n; i++) {
			CHECK(fib6_insert(&grown, &routes[i]) == 0, "seed %u: insert #%zu", seed, i);
			CHECK(fib6_insert(&reversed, &routes[n - 1 - i]) == 0, "seed %u: insert", seed);
		}
		CHECK(fib6_build(&built, routes, n) == 0, "seed %u: build", seed);
		CHECK(table_same(&grown.table, &built.table, 16, sizeof(struct fib6_route)),
		      "seed %u: inserted = built", seed);
		CHECK(table_same(&reversed.table, &built.table, 16, sizeof(struct fib6_route)),
		      "seed %u: inserted in reverse = built", seed);
		for (size_t i = 0; i < LOOKUPS; i++) {
			uint8_t dst[16];
			const struct fib6_route *want, *got;

			random_dst6(&routes[rnd() % n], dst);
			want = brute6(routes, n, dst);
			got = fib6_lookup(&built, dst);
			fib6_prefetch(&built, dst);
			bad += (want == NULL) != (got == NULL) ||
			       (want != NULL && (got->len != want->len || got->kind != want->kind ||
						 got->port != want->port || got->tunnel != want->tunnel ||
						 memcmp(got->gateway, want->gateway, 16) != 0 ||
						 !esgw_prefix6_match(got->prefix, want->prefix, want->len)));
		}
		/* Out: about half of the routes whose prefix no other route has
		 * (one that another holds is shadowed, or shadows, as a whole
		 * build would). */
		for (size_t i = 0; i < n; i++) {
			int unique = 1;

			for (size_t j = 0; j < n && unique; j++)
				unique = j == i || routes[j].len != routes[i].len ||
					 !esgw_prefix6_match(routes[j].prefix, routes[i].prefix,
							     routes[i].len);
			if (unique && rnd() % 2) {
				CHECK(fib6_remove(&grown, routes[i].prefix, routes[i].len,
						  routes[i].kind) == 0,
				      "seed %u: remove #%zu", seed, i);
				CHECK(fib6_remove(&grown, routes[i].prefix, routes[i].len,
						  routes[i].kind) < 0,
				      "seed %u: removed twice", seed);
				continue;
			}
			left[n_left++] = routes[i];
		}
		fib6_free(&built);
		CHECK(fib6_build(&built, left, n_left) == 0, "seed %u: build of the rest", seed);
		CHECK(table_same(&grown.table, &built.table, 16, sizeof(struct fib6_route)),
		      "seed %u: removed = built without (%zu of %zu left)", seed, n_left, n);
		for (size_t i = 0; i < LOOKUPS; i++) {
			uint8_t dst[16];
			const struct fib6_route *want, *got;

			random_dst6(&routes[rnd() % n], dst);
			want = brute6(left, n_left, dst);
			got = fib6_lookup(&grown, dst);
			bad += (want == NULL) != (got == NULL) ||
			       (want != NULL && (got->len != want->len || got->kind != want->kind ||
						 got->tunnel != want->tunnel));
		}
		fib6_free(&built);
		fib6_free(&grown);
		fib6_free(&reversed);
	}
	CHECK(bad == 0, "%zu IPv6 lookups differ from the brute force", bad);
	free(routes);
	free(left);
}

/* In place on an IPv6 table of the shapes the router makes: a kind other
 * than the held one is not removed, a tunnel renumbered follows, a length
 * above 128 is refused. */
static void test_fib6_in_place(void)
{
	struct fib6 fib = {0};
	struct fib6_route net = {.prefix = {0x20, 0x01, 0x0d, 0xb8}, .len = 32, .kind = FIB_CONNECTED},
			  tun = {.prefix = {0x20, 0x01, 0x0d, 0xb8, 0, 7}, .len = 64, .kind = FIB_TUNNEL,
				 .tunnel = 3},
			  bad = {.len = 129};
	uint8_t dst[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};

	CHECK(fib6_insert(&fib, &net) == 0 && fib6_insert(&fib, &tun) == 0, "insert");
	CHECK(fib6_insert(&fib, &bad) < 0, "length 129 refused");
	CHECK(fib6_build(&(struct fib6){0}, &bad, 1) < 0, "length 129 refused by a build");
	CHECK(fib6_lookup(&fib, dst)->tunnel == 3, "into the tunnel");
	fib6_retarget_tunnel(&fib, 3, 1234);
	CHECK(fib6_lookup(&fib, dst)->tunnel == 1234, "tunnel renumbered");
	CHECK(fib6_remove(&fib, tun.prefix, 64, FIB_VIA) < 0, "another kind: not removed");
	CHECK(fib6_exact(&fib, tun.prefix, 64) != NULL, "exact");
	CHECK(fib6_remove(&fib, tun.prefix, 64, FIB_TUNNEL) == 0, "removed");
	CHECK(fib6_lookup(&fib, dst)->kind == FIB_CONNECTED, "the cover after");
	CHECK(fib6_remove(&fib, net.prefix, 32, FIB_CONNECTED) == 0, "last removed");
	CHECK(fib.table.nb_groups == 0 && fib6_lookup(&fib, dst) == NULL, "empty");
	fib6_free(&fib);
}

/* A valid 20-byte IPv4 header for a packet of total_len bytes. */
static void make_ipv4(uint8_t *p, uint16_t total_len, uint8_t ttl, uint16_t id)
{
	headers_ipv4_write((struct rte_ipv4_hdr *)p, total_len, ttl, IPPROTO_ESP, IP(10, 0, 0, 1),
			   IP(10, 9, 8, 7));
	write_be16(p + 4, id);
	write_be16(p + 10, 0);
	write_be16(p + 10, checksum_inet(p, 20));
}

static void test_ipv4_check(void)
{
	static const struct {
		const char *what;
		int byte, value;       /* change byte to value (-1: none) */
		size_t avail, pkt_len; /* header_avail, packet_len */
		int fix_checksum;
		int ok;
		enum esgw_drop reason;
		uint16_t total_len;
	} cases[] = {
		{"valid", -1, 0, 60, 60, 0, 1, 0, 60},
		{"ethernet padding after the packet", -1, 0, 60, 80, 0, 1, 0, 60},
		{"truncated: shorter than total length", -1, 0, 59, 59, 0, 0, ESGW_DROP_MALFORMED,
		 0},
		{"shorter than a header", -1, 0, 19, 19, 0, 0, ESGW_DROP_MALFORMED, 0},
		{"version 6", 0, 0x65, 60, 60, 1, 0, ESGW_DROP_MALFORMED, 0},
		{"header length 16", 0, 0x44, 60, 60, 1, 0, ESGW_DROP_MALFORMED, 0},
		{"header length 0", 0, 0x40, 60, 60, 1, 0, ESGW_DROP_MALFORMED, 0},
		{"options beyond the contiguous bytes", 0, 0x46, 20, 60, 1, 0, ESGW_DROP_MALFORMED,
		 0},
		{"total length below header length", 3, 12, 60, 60, 1, 0, ESGW_DROP_MALFORMED, 0},
		{"bad checksum", 8, 63, 60, 60, 0, 0, ESGW_DROP_BAD_IP_CHECKSUM, 0},
		{"checksum field corrupted", 11, 0x00, 60, 60, 0, 0, ESGW_DROP_BAD_IP_CHECKSUM, 0},
	};
	uint8_t pkt[80];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum esgw_drop reason = ESGW_DROP_MAX;
		uint16_t total_len = 0;
		int rc;

		memset(pkt, 0xab, sizeof(pkt));
		make_ipv4(pkt, 60, 64, 0x1234);
		if (cases[i].byte >= 0)
			pkt[cases[i].byte] = (uint8_t)cases[i].value;
		if (cases[i].fix_checksum) {
			write_be16(pkt + 10, 0);
			write_be16(pkt + 10, checksum_inet(pkt, 20));
		}
		rc = headers_ipv4_check((const struct rte_ipv4_hdr *)pkt, cases[i].avail,
					cases[i].pkt_len, &total_len, &reason);
		CHECK((rc == 0) == cases[i].ok, "%s: rc %d", cases[i].what, rc);
		if (cases[i].ok)
			CHECK(total_len == cases[i].total_len, "%s: total %u", cases[i].what,
			      total_len);
		else
			CHECK(reason == cases[i].reason, "%s: reason %s", cases[i].what,
			      esgw_drop_name(reason));
	}
	/* A header with options (24 bytes) is fine when its bytes are there. */
	memset(pkt, 0, sizeof(pkt));
	make_ipv4(pkt, 60, 64, 1);
	pkt[0] = 0x46;
	write_be16(pkt + 10, 0);
	write_be16(pkt + 10, checksum_inet(pkt, 24));
	{
		enum esgw_drop reason;
		uint16_t total_len;

		CHECK(headers_ipv4_check((const struct rte_ipv4_hdr *)pkt, 60, 60, &total_len,
					 &reason) == 0,
		      "24-byte header");
	}
}

static void test_ttl_checksum(void)
{
	uint8_t pkt[20];
	enum esgw_drop reason;
	uint16_t total_len;
	unsigned int bad = 0;

	/* Every TTL worth decrementing, ids spread so checksums hit every carry
	 * case, including the header whose checksum is 0x0000 or 0xffff. */
	for (unsigned int ttl = 2; ttl <= 255; ttl++) {
		for (unsigned int id = 0; id < 65536; id += 251) {
			make_ipv4(pkt, 20, (uint8_t)ttl, (uint16_t)id);
			headers_ipv4_decrement_ttl((struct rte_ipv4_hdr *)pkt);
			if (pkt[8] != ttl - 1 ||
			    headers_ipv4_check((const struct rte_ipv4_hdr *)pkt, 20, 20, &total_len,
					       &reason) != 0 ||
			    read_be16(pkt + 10) == 0xffff)
				bad++;
		}
	}
	CHECK(bad == 0, "%u headers with a wrong checksum after TTL decrement", bad);
	/* RFC 1624 eqn. 3 equals a full recomputation. */
	for (unsigned int w = 0; w < 65536; w += 97) {
		uint16_t before, after;

		make_ipv4(pkt, 20, 64, 7);
		before = read_be16(pkt + 10);
		write_be16(pkt + 4, (uint16_t)w); /* change the id word from 7 to w */
		write_be16(pkt + 10, 0);
		after = checksum_inet(pkt, 20);
		CHECK(checksum_adjust(before, 7, (uint16_t)w) == after || (w == 7),
		      "adjust 7 -> %u", w);
	}
}

static void test_arp(void)
{
	static const uint8_t request[ARP_MESSAGE_LEN] = {
		0x00, 0x01, 0x08, 0x00, 6,    4,    0x00, 0x01, /* Ethernet, IPv4, request */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,             /* sender MAC */
		10,   0,    0,    2,                            /* sender IP */
		0,    0,    0,    0,    0,    0,                /* target MAC */
		10,   0,    0,    1,                            /* target IP */
	};
	static const struct {
		const char *what;
		int byte, value;
		size_t len;
		int ok;
	} cases[] = {
		{"request", -1, 0, 28, 1},
		{"padded to a minimum frame", -1, 0, 46, 1},
		{"reply", 7, 2, 28, 1},
		{"truncated", -1, 0, 27, 0},
		{"empty", -1, 0, 0, 0},
		{"hardware type 6", 1, 6, 28, 0},
		{"protocol IPv6", 2, 0x86, 28, 0},
		{"hardware length 8", 4, 8, 28, 0},
		{"protocol length 16", 5, 16, 28, 0},
		{"opcode 3 (RARP)", 7, 3, 28, 0},
		{"opcode 0", 7, 0, 28, 0},
	};
	uint8_t buf[64], out[ARP_MESSAGE_LEN];
	struct arp_message msg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf, request, sizeof(request));
		if (cases[i].byte >= 0)
			buf[cases[i].byte] = (uint8_t)cases[i].value;
		CHECK((headers_arp_parse((const struct rte_arp_hdr *)buf, cases[i].len, &msg) ==
		       0) == cases[i].ok,
		      "%s", cases[i].what);
	}
	CHECK(headers_arp_parse((const struct rte_arp_hdr *)request, sizeof(request), &msg) == 0 &&
		      msg.op == ARP_OP_REQUEST && msg.sender_ip == IP(10, 0, 0, 2) &&
		      msg.target_ip == IP(10, 0, 0, 1) && msg.sender_mac[0] == 0x02 &&
		      msg.sender_mac[5] == 0x01,
	      "fields");
	headers_arp_write((struct rte_arp_hdr *)out, &msg);
	CHECK(memcmp(out, request, sizeof(request)) == 0, "write(parse(x)) == x");
}

static void test_small_parsers(void)
{
	static const uint8_t esp[8] = {0x00, 0x00, 0x03, 0xe8, 0, 0, 0, 1};
	static const uint8_t echo[8] = {ICMP_ECHO_REQUEST, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t unreach[8] = {ICMP_DEST_UNREACHABLE, 1, 0, 0, 0, 0, 0, 0};
	static const struct {
		uint32_t addr;
		int martian, mcast_bcast;
	} addrs[] = {
		{IP(10, 0, 0, 1), 0, 0},        {IP(0, 0, 0, 0), 1, 0},
		{IP(0, 1, 2, 3), 1, 0},         {IP(127, 0, 0, 1), 1, 0},
		{IP(224, 0, 0, 1), 1, 1},       {IP(239, 255, 255, 255), 1, 1},
		{IP(240, 0, 0, 1), 1, 0},       {IP(255, 255, 255, 255), 1, 1},
		{IP(223, 255, 255, 255), 0, 0}, {IP(1, 0, 0, 0), 0, 0},
	};
	uint32_t spi = 0;

	CHECK(headers_esp_spi((const struct rte_esp_hdr *)esp, 7, &spi) < 0,
	      "ESP with 7 bytes is truncated");
	CHECK(headers_esp_spi((const struct rte_esp_hdr *)esp, 0, &spi) < 0, "empty ESP");
	CHECK(headers_esp_spi((const struct rte_esp_hdr *)esp, 8, &spi) == 0 && spi == 1000,
	      "SPI 1000: %u", spi);
	CHECK(!headers_icmp_is_error((const struct rte_icmp_hdr *)echo, 8), "echo is not an error");
	CHECK(headers_icmp_is_error((const struct rte_icmp_hdr *)unreach, 8),
	      "unreachable is an error");
	CHECK(headers_icmp_is_error((const struct rte_icmp_hdr *)echo, 0),
	      "unknown type: treated as an error");
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		CHECK(headers_ipv4_martian_source(addrs[i].addr) == addrs[i].martian,
		      "martian %08x", addrs[i].addr);
		CHECK(headers_ipv4_multicast_or_broadcast(addrs[i].addr) == addrs[i].mcast_bcast,
		      "multicast/broadcast %08x", addrs[i].addr);
	}
}

int main(void)
{
	test_fib();
	test_fib_in_place();
	test_fib_many();
	test_fib4_random();
	test_fib6_random();
	test_fib6_in_place();
	test_ipv4_check();
	test_ttl_checksum();
	test_arp();
	test_small_parsers();
	return check_report("router fib/headers");
}
