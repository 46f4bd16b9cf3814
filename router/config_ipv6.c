/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's IPv6 tables from a pushed configuration: IPv6 interface
 * addresses, the IPv6 FIB (local, connected and configured routes) and the
 * outer next hop of tunnels with IPv6 endpoints. Called by config.c while it
 * builds the tables that replace the old ones whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "router.h"

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		goto fail;                                                                         \
	} while (0)

/* Interface addresses: a local /128 and a connected route each. */
static int add_addresses(struct router_tables *t, const Esgw__DpConfig *cfg,
			 struct fib6_route *routes, size_t *n, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->n_interfaces; i++) {
		const Esgw__DpInterface *ifc = cfg->interfaces[i];
		int p = router_port_by_name(t, ifc->name);
		struct router_port *port;

		if (p < 0)
			continue; /* add_ports refused it already */
		port = &t->ports[p];
		for (size_t a = 0; a < ifc->n_addresses; a++) {
			uint8_t addr[16], len;

			if (!esgw_is_ipv6_text(ifc->addresses[a]))
				continue;
			if (esgw_parse_prefix6(ifc->addresses[a], addr, &len) < 0 || len == 0)
				FAIL("interface %s: bad address %s", ifc->name, ifc->addresses[a]);
			memcpy(port->addrs6[port->nb_addrs6].addr, addr, 16);
			port->addrs6[port->nb_addrs6++].len = len;
			routes[*n] = (struct fib6_route){
				.len = 128, .kind = FIB_LOCAL, .port = (uint16_t)p};
			memcpy(routes[(*n)++].prefix, addr, 16);
			if (len < 128) {
				routes[*n] = (struct fib6_route){
					.len = len, .kind = FIB_CONNECTED, .port = (uint16_t)p};
				memcpy(routes[(*n)++].prefix, addr, 16);
			}
		}
	}
	return 0;
fail:
	return -1;
}

int ipv6_tables_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	size_t n = 0, max = cfg->n_routes + 2 * ESGW_MAX_PORTS * ROUTER_MAX_ADDRS;
	struct fib6_route *routes = calloc(max, sizeof(*routes));
	struct fib6 connected = {0};

	if (routes == NULL)
		FAIL("out of memory");
	if (add_addresses(t, cfg, routes, &n, err, errlen) < 0)
		goto fail_quiet;
	if (fib6_build(&connected, routes, n) < 0)
		FAIL("out of memory");
	for (size_t i = 0; i < cfg->n_routes; i++) {
		const Esgw__Route *rc = cfg->routes[i];
		struct fib6_route *rt = &routes[n];
		const struct fib6_route *on_link = NULL;

		if (!esgw_is_ipv6_text(rc->prefix))
			continue;
		memset(rt, 0, sizeof(*rt));
		if (esgw_parse_prefix6(rc->prefix, rt->prefix, &rt->len) < 0)
			FAIL("route %s: bad prefix", rc->prefix);
		if (rc->tunnel[0] == '\0' && rc->via[0] != '\0') {
			if (esgw_parse_ipv6(rc->via, rt->gateway) < 0)
				FAIL("route %s: bad next hop %s", rc->prefix, rc->via);
			on_link = fib6_lookup(&connected, rt->gateway);
		}
		if (router_route_target(t, cfg, rc,
					on_link && on_link->kind == FIB_CONNECTED ? on_link->port
										  : -1,
					&rt->kind, &rt->tunnel, &rt->port, err, errlen) < 0)
			goto fail_quiet;
		n++;
	}
	if (fib6_build(&t->fib6, routes, n) < 0)
		FAIL("out of memory");
	fib6_free(&connected);
	free(routes);
	return 0;
fail:
fail_quiet:
	fib6_free(&connected);
	free(routes);
	return -1;
}

int ipv6_tunnel_endpoints(const struct router_tables *t, struct router_tunnel *tun,
			  const char *local, const char *remote)
{
	const struct fib6_route *outer;

	if (esgw_parse_ipv6(local, tun->local6) < 0 || esgw_parse_ipv6(remote, tun->remote6) < 0)
		return -1;
	tun->outer_ipv6 = 1;
	outer = fib6_lookup(&t->fib6, tun->remote6);
	/* As for IPv4: only a port route; into a tunnel or to us would loop. */
	if (outer != NULL && (outer->kind == FIB_CONNECTED || outer->kind == FIB_VIA)) {
		tun->outer_resolved = 1;
		tun->outer_port = outer->port;
		memcpy(tun->outer_nexthop6, outer->kind == FIB_VIA ? outer->gateway : tun->remote6,
		       16);
	}
	return 0;
}
