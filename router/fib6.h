/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's IPv6 forwarding table: longest-prefix match over local,
 * connected, static and tunnel routes, with the kinds of fib.h. Pure C (no
 * DPDK); built once per configuration and never modified afterwards. */
#ifndef ESGW_ROUTER_FIB6_H
#define ESGW_ROUTER_FIB6_H

#include <stddef.h>
#include <stdint.h>

#include "fib.h" /* enum fib_kind */

struct fib6_route {
	uint8_t prefix[16];
	uint8_t len;  /* 0..128 */
	uint8_t kind; /* enum fib_kind */
	uint16_t port;
	uint8_t gateway[16]; /* VIA: next hop */
	uint32_t tunnel;     /* TUNNEL: index into the router's tunnel table */
};

/* Routes sorted longest prefix first and searched in order: IPv6 tables of a
 * site-to-site gateway hold a handful of routes, so a linear scan of a
 * sorted array beats any trie on clarity and is fast enough. */
struct fib6 {
	struct fib6_route *routes;
	uint32_t nb_routes;
};

/* Build from n routes (copied; host bits cleared; a duplicate prefix keeps
 * the route of the lowest kind, then port, tunnel). 0, or -1 on a bad length
 * or out of memory. */
int fib6_build(struct fib6 *fib, const struct fib6_route *routes, size_t n);
void fib6_free(struct fib6 *fib);
const struct fib6_route *fib6_lookup(const struct fib6 *fib, const uint8_t dst[16]);

#endif
