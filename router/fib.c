/* SPDX-License-Identifier: BSD-3-Clause */
/* Longest-prefix match: sorted route groups per prefix length, bisection within
 * a group. Chosen over a trie because it is easy to check by reading; built
 * whole on a push of the whole configuration, changed in place by one route
 * (a memmove of the entries behind it) on a change. */
#include "fib.h"

#include <stdlib.h>
#include <string.h>

static uint32_t mask_of(uint8_t len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
}

static int route_order(const void *a, const void *b)
{
	const struct fib_route *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1; /* longest first */
	if (x->prefix != y->prefix)
		return x->prefix < y->prefix ? -1 : 1;
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

int fib_build(struct fib *fib, const struct fib_route *routes, size_t n)
{
	struct fib_route *sorted;
	uint32_t kept = 0;

	memset(fib, 0, sizeof(*fib));
	for (size_t i = 0; i < n; i++)
		if (routes[i].len > 32)
			return -1;
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (sorted == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sorted[i] = routes[i];
		sorted[i].prefix &= mask_of(routes[i].len);
	}
	qsort(sorted, n, sizeof(*sorted), route_order);
	for (size_t i = 0; i < n; i++) {
		if (kept > 0 && sorted[kept - 1].len == sorted[i].len &&
		    sorted[kept - 1].prefix == sorted[i].prefix)
			continue; /* same prefix, worse or equal kind */
		sorted[kept++] = sorted[i];
	}
	for (uint32_t i = 0; i < kept; i++) {
		if (fib->nb_groups == 0 ||
		    fib->groups[fib->nb_groups - 1].mask != mask_of(sorted[i].len)) {
			fib->groups[fib->nb_groups].mask = mask_of(sorted[i].len);
			fib->groups[fib->nb_groups].start = i;
			fib->nb_groups++;
		}
		fib->groups[fib->nb_groups - 1].end = i + 1;
	}
	fib->routes = sorted;
	fib->nb_routes = kept;
	return 0;
}

void fib_free(struct fib *fib)
{
	free(fib->routes);
	memset(fib, 0, sizeof(*fib));
}

const struct fib_route *fib_lookup(const struct fib *fib, uint32_t dst)
{
	for (uint32_t g = 0; g < fib->nb_groups; g++) {
		uint32_t key = dst & fib->groups[g].mask;
		uint32_t lo = fib->groups[g].start, hi = fib->groups[g].end;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			uint32_t p = fib->routes[mid].prefix;

			if (p == key)
				return &fib->routes[mid];
			if (p < key)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return NULL;
}

/* Where the group of prefix length len is or would go (groups are longest
 * first); *found whether it exists. */
static uint32_t group_of(const struct fib *fib, uint8_t len, int *found)
{
	uint32_t g = 0;

	while (g < fib->nb_groups && fib->groups[g].mask > mask_of(len))
		g++;
	*found = g < fib->nb_groups && fib->groups[g].mask == mask_of(len);
	return g;
}

/* The position of route (len, prefix) in its group's range, or where it
 * would go; *found whether it is there. */
static uint32_t position_of(const struct fib *fib, uint32_t g, uint32_t prefix, int *found)
{
	uint32_t lo = fib->groups[g].start, hi = fib->groups[g].end;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fib->routes[mid].prefix < prefix)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < fib->groups[g].end && fib->routes[lo].prefix == prefix;
	return lo;
}

int fib_insert(struct fib *fib, const struct fib_route *route)
{
	struct fib_route r = *route, *grown;
	int has_group, has_route;
	uint32_t g, at;

	if (r.len > 32)
		return -1;
	r.prefix &= mask_of(r.len);
	g = group_of(fib, r.len, &has_group);
	if (!has_group) {
		uint32_t start = g < fib->nb_groups ? fib->groups[g].start : fib->nb_routes;

		memmove(&fib->groups[g + 1], &fib->groups[g],
			(fib->nb_groups - g) * sizeof(fib->groups[0]));
		fib->groups[g].mask = mask_of(r.len);
		fib->groups[g].start = fib->groups[g].end = start;
		fib->nb_groups++;
	}
	at = position_of(fib, g, r.prefix, &has_route);
	if (has_route) {
		/* As fib_build: the lowest kind (then port, gateway, tunnel) stays. */
		if (route_order(&r, &fib->routes[at]) < 0)
			fib->routes[at] = r;
		return 0;
	}
	grown = realloc(fib->routes, (fib->nb_routes + 1) * sizeof(*grown));
	if (grown == NULL) {
		if (fib->groups[g].start == fib->groups[g].end) { /* the group just made */
			memmove(&fib->groups[g], &fib->groups[g + 1],
				(fib->nb_groups - g - 1) * sizeof(fib->groups[0]));
			fib->nb_groups--;
		}
		return -1;
	}
	fib->routes = grown;
	memmove(&fib->routes[at + 1], &fib->routes[at], (fib->nb_routes - at) * sizeof(*grown));
	fib->routes[at] = r;
	fib->nb_routes++;
	fib->groups[g].end++;
	for (uint32_t k = g + 1; k < fib->nb_groups; k++) {
		fib->groups[k].start++;
		fib->groups[k].end++;
	}
	return 0;
}

int fib_remove(struct fib *fib, uint32_t prefix, uint8_t len, uint8_t kind)
{
	int has_group, has_route;
	uint32_t g, at;

	if (len > 32)
		return -1;
	prefix &= mask_of(len);
	g = group_of(fib, len, &has_group);
	if (!has_group)
		return -1;
	at = position_of(fib, g, prefix, &has_route);
	if (!has_route || fib->routes[at].kind != kind)
		return -1; /* none, or one of another kind wins that prefix */
	memmove(&fib->routes[at], &fib->routes[at + 1],
		(fib->nb_routes - at - 1) * sizeof(fib->routes[0]));
	fib->nb_routes--;
	fib->groups[g].end--;
	for (uint32_t k = g + 1; k < fib->nb_groups; k++) {
		fib->groups[k].start--;
		fib->groups[k].end--;
	}
	if (fib->groups[g].start == fib->groups[g].end) {
		memmove(&fib->groups[g], &fib->groups[g + 1],
			(fib->nb_groups - g - 1) * sizeof(fib->groups[0]));
		fib->nb_groups--;
	}
	return 0;
}

const struct fib_route *fib_exact(const struct fib *fib, uint32_t prefix, uint8_t len)
{
	int has_group, has_route;
	uint32_t g, at;

	if (len > 32)
		return NULL;
	g = group_of(fib, len, &has_group);
	if (!has_group)
		return NULL;
	at = position_of(fib, g, prefix & mask_of(len), &has_route);
	return has_route ? &fib->routes[at] : NULL;
}
