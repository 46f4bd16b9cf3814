/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 longest-prefix match: a prefix_table (prefix_table.h) keyed by the
 * 16 bytes of the prefix. */
#include "fib6.h"

#include <string.h>

#include "addr.h"

_Static_assert(offsetof(struct fib6_route, len) == 16,
	       "prefix_table.h: the length right after the key");

static void mask6(uint8_t mask[PREFIX_KEY_MAX], uint8_t len)
{
	memset(mask, 0xff, PREFIX_KEY_MAX);
	esgw_prefix6_clear_host(mask, len);
}

static int route_order(const void *a, const void *b)
{
	const struct fib6_route *x = a, *y = b;
	int c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	c = memcmp(x->gateway, y->gateway, 16);
	if (c != 0)
		return c;
	return x->tunnel < y->tunnel ? -1 : x->tunnel > y->tunnel;
}

static const struct prefix_kind fib6_kind = {
	.key_size = 16,
	.max_len = 128,
	.entry_size = sizeof(struct fib6_route),
	.mask = mask6,
	.order = route_order,
};

int fib6_build(struct fib6 *fib, const struct fib6_route *routes, size_t n)
{
	return prefix_table_build(&fib->table, &fib6_kind, routes, n);
}

void fib6_free(struct fib6 *fib)
{
	prefix_table_free(&fib->table);
}

const struct fib6_route *fib6_lookup(const struct fib6 *fib, const uint8_t dst[16])
{
	return prefix_table_lookup(&fib->table, dst, 16, sizeof(struct fib6_route));
}

void fib6_prefetch(const struct fib6 *fib, const uint8_t dst[16])
{
	prefix_table_prefetch(&fib->table, dst, 16, sizeof(struct fib6_route));
}

int fib6_insert(struct fib6 *fib, const struct fib6_route *route)
{
	return prefix_table_insert(&fib->table, &fib6_kind, route);
}

int fib6_remove(struct fib6 *fib, const uint8_t prefix[16], uint8_t len, uint8_t kind)
{
	const struct fib6_route *e = fib6_exact(fib, prefix, len);

	if (e == NULL || e->kind != kind)
		return -1; /* none, or one of another kind wins that prefix */
	return prefix_table_remove(&fib->table, &fib6_kind, prefix, len);
}

const struct fib6_route *fib6_exact(const struct fib6 *fib, const uint8_t prefix[16], uint8_t len)
{
	return prefix_table_exact(&fib->table, &fib6_kind, prefix, len);
}

static void retarget(void *entry, void *arg)
{
	struct fib6_route *r = entry;

	fib_retarget_entry(r->kind, &r->tunnel, arg);
}

void fib6_retarget_tunnel(struct fib6 *fib, uint32_t from, uint32_t to)
{
	uint32_t from_to[2] = {from, to};

	prefix_table_each(&fib->table, &fib6_kind, retarget, from_to);
}
