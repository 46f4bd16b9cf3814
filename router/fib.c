/* SPDX-License-Identifier: BSD-3-Clause */
/* Longest-prefix match: sorted route groups per prefix length, bisection within
 * a group. Chosen over a trie because tables are small and rebuilt whole on
 * every configuration push, and because it is easy to check by reading. */
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
