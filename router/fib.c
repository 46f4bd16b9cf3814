/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 longest-prefix match: a prefix_table (prefix_table.h) keyed by the
 * prefix in host byte order. */
#include "fib.h"

#include <stddef.h>
#include <string.h>

_Static_assert(offsetof(struct fib_route, len) == sizeof(uint32_t),
	       "prefix_table.h: the length right after the key");

static uint32_t mask_of(uint8_t len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
}

static void mask4(uint8_t mask[PREFIX_KEY_MAX], uint8_t len)
{
	uint32_t m = mask_of(len);

	memset(mask, 0, PREFIX_KEY_MAX);
	memcpy(mask, &m, sizeof(m));
}

static int route_order(const void *a, const void *b)
{
	const struct fib_route *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	/* Tie-breaks only to make duplicates resolve the same whatever the
	 * order they were given in. */
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->gateway != y->gateway)
		return x->gateway < y->gateway ? -1 : 1;
	if (x->tunnel != y->tunnel)
		return x->tunnel < y->tunnel ? -1 : 1;
	return 0;
}

static const struct prefix_kind fib4 = {
	.key_size = sizeof(uint32_t),
	.max_len = 32,
	.entry_size = sizeof(struct fib_route),
	.mask = mask4,
	.order = route_order,
};

int fib_build(struct fib *fib, const struct fib_route *routes, size_t n)
{
	return prefix_table_build(&fib->table, &fib4, routes, n);
}

void fib_free(struct fib *fib)
{
	prefix_table_free(&fib->table);
}

const struct fib_route *fib_lookup(const struct fib *fib, uint32_t dst)
{
	return prefix_table_lookup(&fib->table, &dst, sizeof(dst), sizeof(struct fib_route));
}

void fib_prefetch(const struct fib *fib, uint32_t dst)
{
	prefix_table_prefetch(&fib->table, &dst, sizeof(dst), sizeof(struct fib_route));
}

int fib_insert(struct fib *fib, const struct fib_route *route)
{
	return prefix_table_insert(&fib->table, &fib4, route);
}

int fib_remove(struct fib *fib, uint32_t prefix, uint8_t len, uint8_t kind)
{
	const struct fib_route *e = fib_exact(fib, prefix, len);

	if (e == NULL || e->kind != kind)
		return -1; /* none, or one of another kind wins that prefix */
	return prefix_table_remove(&fib->table, &fib4, &prefix, len);
}

const struct fib_route *fib_exact(const struct fib *fib, uint32_t prefix, uint8_t len)
{
	return prefix_table_exact(&fib->table, &fib4, &prefix, len);
}

/* Tunnel numbers from (index 0) into to (index 1). */
void fib_retarget_entry(uint8_t kind, uint32_t *tunnel, const uint32_t *from_to)
{
	if (kind == FIB_TUNNEL && *tunnel == from_to[0])
		*tunnel = from_to[1];
}

static void retarget(void *entry, void *arg)
{
	struct fib_route *r = entry;

	fib_retarget_entry(r->kind, &r->tunnel, arg);
}

void fib_retarget_tunnel(struct fib *fib, uint32_t from, uint32_t to)
{
	uint32_t from_to[2] = {from, to};

	prefix_table_each(&fib->table, &fib4, retarget, from_to);
}
