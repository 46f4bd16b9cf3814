/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's FIBs, IPv4 and IPv6, from a pushed configuration: a local
 * route (/32, /128) and a connected one for each interface address (config.c
 * has put them in the ports), and the configured routes, each to a next hop
 * on a connected subnet or into a tunnel. Called by config.c while it builds
 * the tables that replace the old ones whole, after the ports and before the
 * tunnels (whose outer next hop is looked up in them). */
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

/* The routes of both families being collected, and the connected subnets
 * the next hops are looked up in. */
struct fib_lists {
	struct fib_route *v4;
	struct fib6_route *v6;
	size_t n4, n6;
	struct fib connected4;
	struct fib6 connected6;
};

/* Where a route leads: FIB_TUNNEL and the tunnel's index, or FIB_VIA and
 * the port. */
struct route_target {
	uint8_t kind;
	uint32_t tunnel;
	uint16_t port;
};

/* Local and connected routes from the ports' addresses. */
static void interface_routes(const struct router_tables *t, struct fib_lists *l)
{
	for (uint16_t p = 0; p < ESGW_MAX_PORTS; p++) {
		const struct router_port *port = &t->ports[p];

		for (uint32_t a = 0; port->present && a < port->nb_addrs; a++) {
			l->v4[l->n4++] = (struct fib_route){.prefix = port->addrs[a].addr,
							    .len = 32,
							    .kind = FIB_LOCAL,
							    .port = p};
			if (port->addrs[a].len < 32)
				l->v4[l->n4++] = (struct fib_route){.prefix = port->addrs[a].addr,
								    .len = port->addrs[a].len,
								    .kind = FIB_CONNECTED,
								    .port = p};
		}
		for (uint32_t a = 0; port->present && a < port->nb_addrs6; a++) {
			l->v6[l->n6] =
				(struct fib6_route){.len = 128, .kind = FIB_LOCAL, .port = p};
			memcpy(l->v6[l->n6++].prefix, port->addrs6[a].addr, 16);
			if (port->addrs6[a].len < 128) {
				l->v6[l->n6] = (struct fib6_route){.len = port->addrs6[a].len,
								   .kind = FIB_CONNECTED,
								   .port = p};
				memcpy(l->v6[l->n6++].prefix, port->addrs6[a].addr, 16);
			}
		}
	}
}

/* The port of the connected subnet holding via, or -1. */
static int connected_port(const struct fib_lists *l, const struct esgw_addr *via)
{
	if (via->family == 4) {
		const struct fib_route *r = fib_lookup(&l->connected4, esgw_addr_ipv4(via));

		return r != NULL && r->kind == FIB_CONNECTED ? r->port : -1;
	}
	if (via->family == 6) {
		const struct fib6_route *r = fib6_lookup(&l->connected6, via->bytes);

		return r != NULL && r->kind == FIB_CONNECTED ? r->port : -1;
	}
	return -1;
}

/* The prefix and next hop (family 0 when there is none) of route number
 * index. 0, or -1 with err. */
static int route_decode(const Esgw__DpRoute *rc, size_t index, struct esgw_addr *prefix,
			struct esgw_addr *via, char *err, size_t errlen)
{
	char text[ESGW_ADDR_STRLEN];

	memset(via, 0, sizeof(*via));
	if (rc->prefix == NULL ||
	    esgw_addr_from_bytes(prefix, rc->prefix->address.data, rc->prefix->address.len,
				 rc->prefix->length) < 0)
		FAIL("route %zu: bad prefix", index);
	if (rc->tunnel[0] == '\0' && rc->via.len != 0 &&
	    (esgw_addr_from_bytes(via, rc->via.data, rc->via.len, 0) < 0 ||
	     via->family != prefix->family))
		FAIL("route %s: bad next hop (%zu bytes)", esgw_addr_format(prefix, 1, text),
		     rc->via.len);
	return 0;
fail:
	return -1;
}

/* Where route rc (to prefix, next hop via) leads: its tunnel, or the port of
 * its interface, else of the connected subnet holding its next hop. */
static int route_target(const struct router_tables *t, const Esgw__DpConfig *cfg,
			const Esgw__DpRoute *rc, const struct esgw_addr *prefix,
			const struct esgw_addr *via, const struct fib_lists *l,
			struct route_target *to, char *err, size_t errlen)
{
	char text[ESGW_ADDR_STRLEN], hop[ESGW_ADDR_STRLEN];
	int port;

	esgw_addr_format(prefix, 1, text);
	if (rc->tunnel[0] != '\0') {
		int tun = router_tunnel_by_name(cfg, rc->tunnel);

		if (tun < 0)
			FAIL("route %s: unknown tunnel %s", text, rc->tunnel);
		*to = (struct route_target){.kind = FIB_TUNNEL, .tunnel = (uint32_t)tun};
		return 0;
	}
	if (via->family == 0)
		FAIL("route %s: neither a next hop nor a tunnel", text);
	if (rc->interface[0] != '\0') {
		port = router_port_by_name(t, rc->interface);
		if (port < 0)
			FAIL("route %s: unknown interface %s", text, rc->interface);
	} else {
		port = connected_port(l, via);
		if (port < 0)
			FAIL("route %s: next hop %s is not on a connected subnet", text,
			     esgw_addr_format(via, 0, hop));
	}
	*to = (struct route_target){.kind = FIB_VIA, .port = (uint16_t)port};
	return 0;
fail:
	return -1;
}

/* Configured route rc into the list of its family. */
static int add_route(const struct router_tables *t, const Esgw__DpConfig *cfg, size_t index,
		     struct fib_lists *l, char *err, size_t errlen)
{
	const Esgw__DpRoute *rc = cfg->routes[index];
	struct esgw_addr prefix, via;
	struct route_target to;

	if (route_decode(rc, index, &prefix, &via, err, errlen) < 0 ||
	    route_target(t, cfg, rc, &prefix, &via, l, &to, err, errlen) < 0)
		return -1;
	if (prefix.family == 4) {
		l->v4[l->n4++] = (struct fib_route){.prefix = esgw_addr_ipv4(&prefix),
						    .len = prefix.len,
						    .kind = to.kind,
						    .port = to.port,
						    .gateway = esgw_addr_ipv4(&via),
						    .tunnel = to.tunnel};
		return 0;
	}
	l->v6[l->n6] = (struct fib6_route){
		.len = prefix.len, .kind = to.kind, .port = to.port, .tunnel = to.tunnel};
	memcpy(l->v6[l->n6].prefix, prefix.bytes, 16);
	memcpy(l->v6[l->n6++].gateway, via.bytes, 16);
	return 0;
}

int config_fib_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	size_t max = cfg->n_routes + 2 * ESGW_MAX_PORTS * ROUTER_MAX_ADDRS;
	struct fib_lists l = {.v4 = calloc(max, sizeof(*l.v4)), .v6 = calloc(max, sizeof(*l.v6))};
	int rc = -1;

	if (l.v4 == NULL || l.v6 == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	interface_routes(t, &l);
	if (fib_build(&l.connected4, l.v4, l.n4) < 0 || fib6_build(&l.connected6, l.v6, l.n6) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cfg->n_routes; i++)
		if (add_route(t, cfg, i, &l, err, errlen) < 0)
			goto out;
	if (fib_build(&t->fib, l.v4, l.n4) < 0 || fib6_build(&t->fib6, l.v6, l.n6) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	fib_free(&l.connected4);
	fib6_free(&l.connected6);
	free(l.v4);
	free(l.v6);
	return rc;
}
