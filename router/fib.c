/* SPDX-License-Identifier: BSD-3-Clause */
/* Longest-prefix match: one hash table per prefix length in use, probed
 * longest first (fib.h). With thousands of tunnel routes of one length a
 * lookup is one probe in that length's table (one cache miss, and
 * fib_prefetch can take that ahead) where a bisection took a dozen dependent
 * ones. Built whole on a push of the whole configuration, changed in place
 * by one route on a change. */
#include "fib.h"

#include <stdlib.h>
#include <string.h>

#define FIB_MIN_TABLE 4 /* entries: one cache line of 16-byte routes */

static uint32_t mask_of(uint8_t len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
}

/* Masked prefixes have their low bits zero: mix every bit into the low ones
 * the table mask keeps (the finaliser of MurmurHash3). */
static uint32_t fib_hash(uint32_t key)
{
	key ^= key >> 16;
	key *= 0x85ebca6bu;
	key ^= key >> 13;
	key *= 0xc2b2ae35u;
	key ^= key >> 16;
	return key;
}

static int route_order(const struct fib_route *x, const struct fib_route *y)
{
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

/* The entry of key in g's table, or the empty one where it would go. */
static uint32_t slot_of(const struct fib_group *g, uint32_t key)
{
	uint32_t i = fib_hash(key) & g->table_mask;

	while (g->table[i].len != FIB_EMPTY && g->table[i].prefix != key)
		i = (i + 1) & g->table_mask;
	return i;
}

static struct fib_route *table_alloc(uint32_t entries)
{
	struct fib_route *table = malloc((size_t)entries * sizeof(*table));

	if (table != NULL)
		memset(table, FIB_EMPTY, (size_t)entries * sizeof(*table));
	return table;
}

/* g's table with room for count routes at most half full: 0, or -1 (g
 * unchanged). */
static int group_reserve(struct fib_group *g, uint32_t count)
{
	uint32_t size = FIB_MIN_TABLE, old_size = g->table ? g->table_mask + 1 : 0;
	struct fib_route *old = g->table, *table;

	while (size < 2 * count)
		size *= 2;
	if (size <= old_size)
		return 0;
	table = table_alloc(size);
	if (table == NULL)
		return -1;
	g->table = table;
	g->table_mask = size - 1;
	for (uint32_t i = 0; i < old_size; i++)
		if (old[i].len != FIB_EMPTY)
			g->table[slot_of(g, old[i].prefix)] = old[i];
	free(old);
	return 0;
}

/* The group of prefix length len, or (*found 0) where it would go. */
static uint32_t group_of(const struct fib *fib, uint8_t len, int *found)
{
	uint32_t g = 0;

	while (g < fib->nb_groups && fib->groups[g].len > len)
		g++;
	*found = g < fib->nb_groups && fib->groups[g].len == len;
	return g;
}

static void group_drop(struct fib *fib, uint32_t g)
{
	free(fib->groups[g].table);
	memmove(&fib->groups[g], &fib->groups[g + 1],
		(fib->nb_groups - g - 1) * sizeof(fib->groups[0]));
	fib->nb_groups--;
}

/* r (prefix already masked) into group g with room for count routes. */
static int group_put(struct fib *fib, uint32_t g, const struct fib_route *r, uint32_t count)
{
	struct fib_group *grp = &fib->groups[g];
	uint32_t i;

	i = slot_of(grp, r->prefix);
	if (grp->table[i].len != FIB_EMPTY) {
		/* As fib_build: the lowest kind (then port, gateway, tunnel) stays. */
		if (route_order(r, &grp->table[i]) < 0)
			grp->table[i] = *r;
		return 0;
	}
	if (group_reserve(grp, count) < 0)
		return -1;
	grp->table[slot_of(grp, r->prefix)] = *r;
	grp->count++;
	fib->nb_routes++;
	return 0;
}

/* The group of len made if missing (empty, with room for reserve routes):
 * its index, or -1 out of memory. */
static int group_make(struct fib *fib, uint8_t len, uint32_t reserve)
{
	struct fib_group *grp;
	int found;
	uint32_t g = group_of(fib, len, &found);

	if (found)
		return (int)g;
	memmove(&fib->groups[g + 1], &fib->groups[g], (fib->nb_groups - g) * sizeof(fib->groups[0]));
	fib->nb_groups++;
	grp = &fib->groups[g];
	memset(grp, 0, sizeof(*grp));
	grp->len = len;
	grp->mask = mask_of(len);
	if (group_reserve(grp, reserve) < 0) {
		group_drop(fib, g);
		return -1;
	}
	return (int)g;
}

int fib_build(struct fib *fib, const struct fib_route *routes, size_t n)
{
	uint32_t per_len[33] = {0};

	memset(fib, 0, sizeof(*fib));
	for (size_t i = 0; i < n; i++) {
		if (routes[i].len > 32)
			return -1;
		per_len[routes[i].len]++;
	}
	for (uint8_t len = 0; len <= 32; len++)
		if (per_len[len] != 0 && group_make(fib, len, per_len[len]) < 0)
			goto fail;
	for (size_t i = 0; i < n; i++) {
		struct fib_route r = routes[i];
		int found;
		uint32_t g = group_of(fib, r.len, &found);

		r.prefix &= mask_of(r.len);
		if (group_put(fib, g, &r, per_len[r.len]) < 0)
			goto fail;
	}
	return 0;
fail:
	fib_free(fib);
	return -1;
}

void fib_free(struct fib *fib)
{
	for (uint32_t g = 0; g < fib->nb_groups; g++)
		free(fib->groups[g].table);
	memset(fib, 0, sizeof(*fib));
}

const struct fib_route *fib_lookup(const struct fib *fib, uint32_t dst)
{
	for (uint32_t g = 0; g < fib->nb_groups; g++) {
		const struct fib_group *grp = &fib->groups[g];
		const struct fib_route *e = &grp->table[slot_of(grp, dst & grp->mask)];

		if (e->len != FIB_EMPTY)
			return e;
	}
	return NULL;
}

void fib_prefetch(const struct fib *fib, uint32_t dst)
{
	for (uint32_t g = 0; g < fib->nb_groups; g++) {
		const struct fib_group *grp = &fib->groups[g];

		__builtin_prefetch(&grp->table[fib_hash(dst & grp->mask) & grp->table_mask]);
	}
}

int fib_insert(struct fib *fib, const struct fib_route *route)
{
	struct fib_route r = *route;
	int g;

	if (r.len > 32)
		return -1;
	r.prefix &= mask_of(r.len);
	g = group_make(fib, r.len, 1);
	if (g < 0)
		return -1;
	if (group_put(fib, (uint32_t)g, &r, fib->groups[g].count + 1) < 0) {
		if (fib->groups[g].count == 0) /* the group just made */
			group_drop(fib, (uint32_t)g);
		return -1;
	}
	return 0;
}

int fib_remove(struct fib *fib, uint32_t prefix, uint8_t len, uint8_t kind)
{
	struct fib_group *grp;
	int found;
	uint32_t g, i;

	if (len > 32)
		return -1;
	g = group_of(fib, len, &found);
	if (!found)
		return -1;
	grp = &fib->groups[g];
	i = slot_of(grp, prefix & grp->mask);
	if (grp->table[i].len == FIB_EMPTY || grp->table[i].kind != kind)
		return -1; /* none, or one of another kind wins that prefix */
	/* Linear probing: the entries behind the hole move back where their
	 * home allows, so lookups still stop at the first empty entry. */
	memset(&grp->table[i], FIB_EMPTY, sizeof(grp->table[i]));
	for (uint32_t j = (i + 1) & grp->table_mask; grp->table[j].len != FIB_EMPTY;
	     j = (j + 1) & grp->table_mask) {
		uint32_t home = fib_hash(grp->table[j].prefix) & grp->table_mask;

		/* j may move into the hole at i if its home is not in (i, j]. */
		if (((j - home) & grp->table_mask) >= ((j - i) & grp->table_mask)) {
			grp->table[i] = grp->table[j];
			memset(&grp->table[j], FIB_EMPTY, sizeof(grp->table[j]));
			i = j;
		}
	}
	grp->count--;
	fib->nb_routes--;
	if (grp->count == 0)
		group_drop(fib, g);
	return 0;
}

const struct fib_route *fib_exact(const struct fib *fib, uint32_t prefix, uint8_t len)
{
	const struct fib_group *grp;
	const struct fib_route *e;
	int found;
	uint32_t g;

	if (len > 32)
		return NULL;
	g = group_of(fib, len, &found);
	if (!found)
		return NULL;
	grp = &fib->groups[g];
	e = &grp->table[slot_of(grp, prefix & grp->mask)];
	return e->len != FIB_EMPTY ? e : NULL;
}

void fib_retarget_tunnel(struct fib *fib, uint32_t from, uint32_t to)
{
	for (uint32_t g = 0; g < fib->nb_groups; g++)
		for (uint32_t i = 0; i <= fib->groups[g].table_mask; i++) {
			struct fib_route *e = &fib->groups[g].table[i];

			if (e->len != FIB_EMPTY && e->kind == FIB_TUNNEL && e->tunnel == from)
				e->tunnel = to;
		}
}
