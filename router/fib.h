/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's IPv4 forwarding table: longest-prefix match over local,
 * connected, static and tunnel routes. Pure C (no DPDK) so it is unit-tested
 * alone; built whole on a push of the whole configuration, changed in place
 * by one route on a change. */
#ifndef ESGW_ROUTER_FIB_H
#define ESGW_ROUTER_FIB_H

#include <stddef.h>
#include <stdint.h>

#include "lpm24.h"
#include "prefix_table.h"

/* Lower value wins when two routes have the same prefix: a gateway address
 * beats the subnet it sits on, which beats a static route to the same prefix. */
enum fib_kind {
	FIB_LOCAL = 0,     /* an address of the gateway itself (/32) */
	FIB_CONNECTED = 1, /* a subnet on a port: the destination is the next hop */
	FIB_VIA = 2,       /* next hop gateway on a port */
	FIB_TUNNEL = 3,    /* into a route-based tunnel */
};

struct fib_route {
	uint32_t prefix;  /* host byte order; the key of prefix_table.h */
	uint8_t len;      /* 0..32, PREFIX_EMPTY in an empty entry */
	uint8_t kind;     /* enum fib_kind */
	uint16_t port;    /* DPDK port id (LOCAL, CONNECTED, VIA) */
	uint32_t gateway; /* VIA: next hop address */
	uint32_t tunnel;  /* TUNNEL: index into the router's tunnel table */
};

/* The routes in a prefix_table (prefix_table.h: one hash table per prefix
 * length in use), which holds each prefix's route and answers the changes;
 * lookups go to a DIR-24-8 index (lpm24.h) of the slots, where each route
 * has a copy that stays put while the table's entries move. Prefixes
 * shorter than /8 (a default route) are not indexed: what the index does
 * not cover, the table's groups of those lengths answer. A zeroed struct
 * fib is an empty one. */
struct fib_entry {
	struct fib_route route;
	uint32_t slot; /* of the copy lookups return */
};

struct fib {
	struct prefix_table table; /* of struct fib_entry */
	struct lpm24 lpm;
	struct fib_route *slots; /* len PREFIX_EMPTY in a free one */
	uint32_t nb_slots, slots_cap;
	uint32_t *free_slots;
	uint32_t nb_free_slots;
};

/* Build from n routes (copied; host bits of prefixes cleared; duplicates of a
 * prefix keep the route of the lowest kind, then of the lowest port, gateway,
 * tunnel: the same whatever the input order). Returns 0, or
 * -1 on a bad length or out of memory. */
int fib_build(struct fib *fib, const struct fib_route *routes, size_t n);
void fib_free(struct fib *fib);
/* One route more, as fib_build would hold it (a duplicate prefix keeps the
 * lower kind). 0, or -1 on a bad length or out of memory (fib unchanged). */
int fib_insert(struct fib *fib, const struct fib_route *route);
/* The route of prefix/len and kind out: 0, or -1 if there is none (or
 * another kind holds the prefix). */
int fib_remove(struct fib *fib, uint32_t prefix, uint8_t len, uint8_t kind);
/* The route held for exactly prefix/len, or NULL. */
const struct fib_route *fib_exact(const struct fib *fib, uint32_t prefix, uint8_t len);
/* The most specific route covering dst, or NULL: one or two reads of the
 * index and the route's slot. Pointers into the fib hold until it is next
 * changed. */
const struct fib_route *fib_lookup_short(const struct fib *fib, uint32_t dst);
static inline const struct fib_route *fib_lookup(const struct fib *fib, uint32_t dst)
{
	uint32_t s = lpm24_lookup(&fib->lpm, dst);

	return s != 0 ? &fib->slots[s - 1] : fib_lookup_short(fib, dst);
}
/* Ask the cache for the index entry fib_lookup(fib, dst) will read first. */
static inline void fib_prefetch(const struct fib *fib, uint32_t dst)
{
	lpm24_prefetch(&fib->lpm, dst);
}
/* Every FIB_TUNNEL route into tunnel from now into tunnel to. */
void fib_retarget_tunnel(struct fib *fib, uint32_t from, uint32_t to);
/* One route's part of that, for fib6.c too: from_to[0] into from_to[1]. */
void fib_retarget_entry(uint8_t kind, uint32_t *tunnel, const uint32_t *from_to);

#endif
