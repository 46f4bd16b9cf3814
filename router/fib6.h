/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's IPv6 forwarding table: longest-prefix match over local,
 * connected, static and tunnel routes, with the kinds of fib.h and the
 * structure of fib.c (prefix_table.h: one hash table per prefix length in
 * use). Pure C (no DPDK); built whole on a push of the whole configuration,
 * changed in place by one route on a change. */
#ifndef ESGW_ROUTER_FIB6_H
#define ESGW_ROUTER_FIB6_H

#include <stddef.h>
#include <stdint.h>

#include "fib.h" /* enum fib_kind */
#include "prefix_table.h"

struct fib6_route {
	uint8_t prefix[16]; /* the key of prefix_table.h */
	uint8_t len;        /* 0..128, PREFIX_EMPTY in an empty entry */
	uint8_t kind;       /* enum fib_kind */
	uint16_t port;
	uint8_t gateway[16]; /* VIA: next hop */
	uint32_t tunnel;     /* TUNNEL: index into the router's tunnel table */
};

struct fib6 {
	struct prefix_table table;
};

/* As fib.h's functions of the same names, for 16-byte addresses (network
 * byte order). Build: a duplicate prefix keeps the route of the lowest kind,
 * then port, gateway, tunnel. */
int fib6_build(struct fib6 *fib, const struct fib6_route *routes, size_t n);
void fib6_free(struct fib6 *fib);
int fib6_insert(struct fib6 *fib, const struct fib6_route *route);
int fib6_remove(struct fib6 *fib, const uint8_t prefix[16], uint8_t len, uint8_t kind);
const struct fib6_route *fib6_exact(const struct fib6 *fib, const uint8_t prefix[16], uint8_t len);
const struct fib6_route *fib6_lookup(const struct fib6 *fib, const uint8_t dst[16]);
void fib6_prefetch(const struct fib6 *fib, const uint8_t dst[16]);
void fib6_retarget_tunnel(struct fib6 *fib, uint32_t from, uint32_t to);

#endif
