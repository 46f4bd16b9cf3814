/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's IPv6 tables from a pushed configuration (ipv6.c). Included
 * by router.h. */
#ifndef ESGW_ROUTER_IPV6_H
#define ESGW_ROUTER_IPV6_H

#include <stdint.h>

struct router;
struct router_tables;
struct router_tunnel;

/* ipv6.c */
/* Allocate the reassembly table once. 0, or -1. */
int router_ipv6_init(struct router *r);
/* From a pushed configuration: IPv6 interface addresses into t->ports and
 * t->fib6 from them and from the IPv6 routes. After the ports, before the
 * tunnels. 0, or -1 with err. */
int ipv6_tables_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen);
/* Outer source and destination, and its tunnel fields, for add_tunnels:
 * resolves the outer next hop through t->fib6. 0, or -1 if not IPv6 text. */
int ipv6_tunnel_endpoints(const struct router_tables *t, struct router_tunnel *tun,
			  const char *local, const char *remote);

#endif
