/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 longest-prefix match over a sorted array (see fib6.h for why). */
#include "fib6.h"

#include <stdlib.h>
#include <string.h>

#include "addr.h"

static int route_order(const void *a, const void *b)
{
	const struct fib6_route *x = a, *y = b;
	int c;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1; /* longest first */
	c = memcmp(x->prefix, y->prefix, 16);
	if (c != 0)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	c = memcmp(x->gateway, y->gateway, 16);
	if (c != 0)
		return c;
	return x->tunnel < y->tunnel ? -1 : x->tunnel > y->tunnel;
}

int fib6_build(struct fib6 *fib, const struct fib6_route *routes, size_t n)
{
	struct fib6_route *sorted;
	uint32_t kept = 0;

	memset(fib, 0, sizeof(*fib));
	for (size_t i = 0; i < n; i++)
		if (routes[i].len > 128)
			return -1;
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (sorted == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sorted[i] = routes[i];
		esgw_prefix6_clear_host(sorted[i].prefix, sorted[i].len);
	}
	qsort(sorted, n, sizeof(*sorted), route_order);
	for (size_t i = 0; i < n; i++) {
		if (kept > 0 && sorted[kept - 1].len == sorted[i].len &&
		    memcmp(sorted[kept - 1].prefix, sorted[i].prefix, 16) == 0)
			continue;
		sorted[kept++] = sorted[i];
	}
	fib->routes = sorted;
	fib->nb_routes = kept;
	return 0;
}

void fib6_free(struct fib6 *fib)
{
	free(fib->routes);
	memset(fib, 0, sizeof(*fib));
}

const struct fib6_route *fib6_lookup(const struct fib6 *fib, const uint8_t dst[16])
{
	for (uint32_t i = 0; i < fib->nb_routes; i++)
		if (esgw_prefix6_match(fib->routes[i].prefix, dst, fib->routes[i].len))
			return &fib->routes[i];
	return NULL;
}
