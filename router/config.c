/* SPDX-License-Identifier: BSD-3-Clause */
/* Turns a pushed DpConfig into the router's tables: ports, FIB (local,
 * connected, static and tunnel routes), tunnels with their outer next hop, and
 * the inbound SPI table. The tables are built fresh and swapped in whole; the
 * data thread calls this between bursts, so packets never see a half-applied
 * configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "addr.h"
#include "log.h"
#include "router.h"

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		goto fail;                                                                         \
	} while (0)

static uint32_t spi_hash(uint32_t spi)
{
	return spi * 2654435761u; /* Knuth's multiplicative hash spreads sequential SPIs */
}

const struct router_sa_in *router_sa_in_lookup(const struct router_tables *t, uint32_t spi)
{
	if (t->sa_in == NULL)
		return NULL;
	for (uint32_t i = spi_hash(spi) & t->sa_in_mask;; i = (i + 1) & t->sa_in_mask) {
		if (!t->sa_in[i].used)
			return NULL;
		if (t->sa_in[i].spi == spi)
			return &t->sa_in[i];
	}
}

uint32_t router_source_address(const struct router_tables *t, uint32_t dst)
{
	const struct fib_route *rt = fib_lookup(&t->fib, dst);
	const struct router_port *port;
	uint32_t nexthop;

	if (rt == NULL)
		return 0;
	switch (rt->kind) {
	case FIB_LOCAL:
		return dst;
	case FIB_TUNNEL:
		return t->tunnels[rt->tunnel].local;
	default:
		break;
	}
	port = &t->ports[rt->port];
	nexthop = rt->kind == FIB_VIA ? rt->gateway : dst;
	for (uint32_t i = 0; i < port->nb_addrs; i++)
		if (((port->addrs[i].addr ^ nexthop) & esgw_prefix_mask(port->addrs[i].len)) == 0)
			return port->addrs[i].addr;
	return port->nb_addrs ? port->addrs[0].addr : 0;
}

void router_tables_free(struct router_tables *t)
{
	if (t == NULL)
		return;
	fib_free(&t->fib);
	fib6_free(&t->fib6);
	free(t->tunnels);
	free(t->sa_in);
	spd_free(t->spd);
	free(t);
}

int router_port_by_name(const struct router_tables *t, const char *name)
{
	for (int p = 0; p < ESGW_MAX_PORTS; p++)
		if (t->ports[p].present && strcmp(t->ports[p].name, name) == 0)
			return p;
	return -1;
}

static const Esgw__DpSa *sa_by_id(const Esgw__DpConfig *cfg, uint32_t id)
{
	for (size_t i = 0; i < cfg->n_sas; i++)
		if (cfg->sas[i]->id == id)
			return cfg->sas[i];
	return NULL;
}

int router_tunnel_by_name(const Esgw__DpConfig *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_tunnels; i++)
		if (strcmp(cfg->tunnels[i]->name, name) == 0)
			return (int)i;
	return -1;
}

static int add_ports(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->n_interfaces; i++) {
		const Esgw__DpInterface *ifc = cfg->interfaces[i];
		struct router_port *port;
		char ring_name[RTE_RING_NAMESIZE];
		uint16_t port_id;

		if (rte_eth_dev_get_port_by_name(ifc->device, &port_id) != 0)
			FAIL("interface %s: DPDK port %s not found (not probed by esgw-rxtx yet?)",
			     ifc->name, ifc->device);
		if (port_id >= ESGW_MAX_PORTS)
			FAIL("interface %s: port id %u over the limit of %d", ifc->name, port_id,
			     ESGW_MAX_PORTS);
		port = &t->ports[port_id];
		if (port->present)
			FAIL("interfaces %s and %s use the same port %s", port->name, ifc->name,
			     ifc->device);
		if (strlen(ifc->name) >= sizeof(port->name))
			FAIL("interface name too long: %s", ifc->name);
		if (ifc->n_addresses > ROUTER_MAX_ADDRS)
			FAIL("interface %s: more than %d addresses", ifc->name, ROUTER_MAX_ADDRS);
		port->present = 1;
		strcpy(port->name, ifc->name);
		port->mtu = ifc->mtu ? ifc->mtu : 1500;
		if (rte_eth_macaddr_get(port_id, &port->mac) != 0)
			FAIL("interface %s: cannot read the MAC address of port %u", ifc->name,
			     port_id);
		snprintf(ring_name, sizeof(ring_name), ESGW_RING_TX_FMT, port_id);
		port->tx_ring = rte_ring_lookup(ring_name);
		if (port->tx_ring == NULL)
			FAIL("interface %s: ring %s not found", ifc->name, ring_name);
		esgw_ring_producer_recover(port->tx_ring); /* we are its one producer */
		for (size_t a = 0; a < ifc->n_addresses; a++) {
			uint32_t addr;
			uint8_t len;

			if (esgw_is_ipv6_text(ifc->addresses[a]))
				continue; /* ipv6_tables_build */
			if (esgw_parse_prefix(ifc->addresses[a], &addr, &len) < 0 || len == 0)
				FAIL("interface %s: bad address %s", ifc->name, ifc->addresses[a]);
			port->addrs[port->nb_addrs].addr = addr;
			port->addrs[port->nb_addrs++].len = len;
		}
	}
	return 0;
fail:
	return -1;
}

/* Local and connected routes from interface addresses. */
static size_t interface_routes(const struct router_tables *t, struct fib_route *out)
{
	size_t n = 0;

	for (uint16_t p = 0; p < ESGW_MAX_PORTS; p++) {
		const struct router_port *port = &t->ports[p];

		for (uint32_t a = 0; port->present && a < port->nb_addrs; a++) {
			out[n++] = (struct fib_route){.prefix = port->addrs[a].addr,
						      .len = 32,
						      .kind = FIB_LOCAL,
						      .port = p};
			if (port->addrs[a].len < 32)
				out[n++] = (struct fib_route){.prefix = port->addrs[a].addr,
							      .len = port->addrs[a].len,
							      .kind = FIB_CONNECTED,
							      .port = p};
		}
	}
	return n;
}

int router_route_target(const struct router_tables *t, const Esgw__DpConfig *cfg,
			const Esgw__Route *rc, int connected_port, uint8_t *kind, uint32_t *tunnel,
			uint16_t *port, char *err, size_t errlen)
{
	if (rc->tunnel[0] != '\0') {
		int tun = router_tunnel_by_name(cfg, rc->tunnel);

		if (tun < 0)
			FAIL("route %s: unknown tunnel %s", rc->prefix, rc->tunnel);
		*kind = FIB_TUNNEL;
		*tunnel = (uint32_t)tun;
	} else if (rc->via[0] != '\0') {
		int p = connected_port;

		*kind = FIB_VIA;
		if (rc->interface[0] != '\0') {
			p = router_port_by_name(t, rc->interface);
			if (p < 0)
				FAIL("route %s: unknown interface %s", rc->prefix, rc->interface);
		} else if (p < 0) {
			FAIL("route %s: next hop %s is not on a connected subnet", rc->prefix,
			     rc->via);
		}
		*port = (uint16_t)p;
	} else {
		FAIL("route %s: neither a next hop nor a tunnel", rc->prefix);
	}
	return 0;
fail:
	return -1;
}

static int build_fib(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	struct fib connected = {0};
	struct fib_route *routes;
	size_t n, max = cfg->n_routes + 2 * ESGW_MAX_PORTS * ROUTER_MAX_ADDRS;

	routes = calloc(max, sizeof(*routes));
	if (routes == NULL)
		FAIL("out of memory");
	n = interface_routes(t, routes);
	if (fib_build(&connected, routes, n) < 0)
		FAIL("out of memory");
	for (size_t i = 0; i < cfg->n_routes; i++) {
		const Esgw__Route *rc = cfg->routes[i];
		struct fib_route *rt = &routes[n];
		const struct fib_route *on_link = NULL;

		if (esgw_is_ipv6_text(rc->prefix))
			continue; /* ipv6_tables_build */
		if (esgw_parse_prefix(rc->prefix, &rt->prefix, &rt->len) < 0)
			FAIL("route %s: bad prefix", rc->prefix);
		if (rc->tunnel[0] == '\0' && rc->via[0] != '\0') {
			if (esgw_parse_ipv4(rc->via, &rt->gateway) < 0)
				FAIL("route %s: bad next hop %s", rc->prefix, rc->via);
			on_link = fib_lookup(&connected, rt->gateway);
		}
		if (router_route_target(t, cfg, rc,
					on_link && on_link->kind == FIB_CONNECTED ? on_link->port
										  : -1,
					&rt->kind, &rt->tunnel, &rt->port, err, errlen) < 0)
			goto fail;
		n++;
	}
	if (fib_build(&t->fib, routes, n) < 0)
		FAIL("out of memory");
	fib_free(&connected);
	free(routes);
	return 0;
fail:
	fib_free(&connected);
	free(routes);
	return -1;
}

static int sa_placement(const Esgw__DpSa *sa, char *err, size_t errlen)
{
	if (sa->slot >= ESGW_MAX_SA)
		FAIL("SA %u: slot %u out of range", sa->id, sa->slot);
	if (sa->worker >= ESGW_MAX_WORKERS)
		FAIL("SA %u: worker %u out of range", sa->id, sa->worker);
	return 0;
fail:
	return -1;
}

static int add_tunnels(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	size_t nb_in = 0, size = 16;

	t->tunnels = calloc(cfg->n_tunnels ? cfg->n_tunnels : 1, sizeof(*t->tunnels));
	if (t->tunnels == NULL)
		FAIL("out of memory");
	for (size_t i = 0; i < cfg->n_tunnels; i++)
		nb_in += cfg->tunnels[i]->n_sa_in;
	while (size < 2 * nb_in)
		size *= 2;
	t->sa_in = calloc(size, sizeof(*t->sa_in));
	if (t->sa_in == NULL)
		FAIL("out of memory");
	t->sa_in_mask = (uint32_t)size - 1;

	for (size_t i = 0; i < cfg->n_tunnels; i++) {
		const Esgw__Tunnel *tc = cfg->tunnels[i];
		struct router_tunnel *tun = &t->tunnels[i];
		const Esgw__DpSa *sa = sa_by_id(cfg, tc->sa_out);
		const struct fib_route *outer;

		if (strlen(tc->name) >= sizeof(tun->name))
			FAIL("tunnel name too long: %s", tc->name);
		strcpy(tun->name, tc->name);
		if (esgw_is_ipv6_text(tc->local)) {
			if (ipv6_tunnel_endpoints(t, tun, tc->local, tc->remote) < 0)
				FAIL("tunnel %s: bad local or remote address", tc->name);
		} else if (esgw_parse_ipv4(tc->local, &tun->local) < 0 ||
			   esgw_parse_ipv4(tc->remote, &tun->remote) < 0) {
			FAIL("tunnel %s: bad local or remote address", tc->name);
		}
		if (sa == NULL)
			FAIL("tunnel %s: outbound SA %u not in the configuration", tc->name,
			     tc->sa_out);
		if (sa_placement(sa, err, errlen) < 0)
			return -1;
		tun->sa_out_slot = sa->slot;
		tun->worker = sa->worker;
		tunnel_set_overhead(tun, (unsigned int)sa->algorithm); /* frag.c: inner MTU */

		/* The outer packet leaves by a port route; a remote routed into a
		 * tunnel (or to ourselves) would loop, so it stays unresolved and
		 * its packets count as no_route. */
		outer = tun->outer_ipv6 ? NULL : fib_lookup(&t->fib, tun->remote);
		if (tun->outer_ipv6) {
			if (!tun->outer_resolved)
				ESGW_WARN("tunnel %s: no route over a port to remote %s", tc->name,
					  tc->remote);
		} else if (outer != NULL &&
			   (outer->kind == FIB_CONNECTED || outer->kind == FIB_VIA)) {
			tun->outer_resolved = 1;
			tun->outer_port = outer->port;
			tun->outer_nexthop = outer->kind == FIB_VIA ? outer->gateway : tun->remote;
		} else {
			ESGW_WARN("tunnel %s: no route over a port to remote %s", tc->name,
				  tc->remote);
		}
		t->nb_tunnels++;

		for (size_t k = 0; k < tc->n_sa_in; k++) {
			const Esgw__DpSa *in = sa_by_id(cfg, tc->sa_in[k]);
			uint32_t h;

			if (in == NULL)
				FAIL("tunnel %s: inbound SA %u not in the configuration", tc->name,
				     tc->sa_in[k]);
			if (sa_placement(in, err, errlen) < 0)
				return -1;
			for (h = spi_hash(in->spi) & t->sa_in_mask; t->sa_in[h].used;
			     h = (h + 1) & t->sa_in_mask)
				if (t->sa_in[h].spi == in->spi)
					FAIL("SPI %u used by two inbound SAs", in->spi);
			t->sa_in[h] = (struct router_sa_in){.spi = in->spi,
							    .slot = in->slot,
							    .worker = in->worker,
							    .remote = tun->remote,
							    .udp_port = natt_local_port(in),
							    .used = 1};
			t->sa_tunnel[in->slot] = (uint32_t)i + 1;
			t->sa_in[h].remote_ipv6 = tun->outer_ipv6;
			memcpy(t->sa_in[h].remote6, tun->remote6, 16);
		}
	}
	return 0;
fail:
	return -1;
}

int router_config_apply(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	struct router *r = router_of(dp);
	struct router_tables *t = calloc(1, sizeof(*t));
	char ring_name[RTE_RING_NAMESIZE];

	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->generation = cfg->generation;
	t->workers = cfg->workers;
	if (router_ipv6_init(r) < 0 || add_ports(t, cfg, err, errlen) < 0 ||
	    build_fib(t, cfg, err, errlen) < 0 || ipv6_tables_build(t, cfg, err, errlen) < 0 ||
	    add_tunnels(t, cfg, err, errlen) < 0 || spd_build(t, cfg, err, errlen) < 0 ||
	    neighbor_static_check(t, cfg, err, errlen) < 0) {
		router_tables_free(t);
		return -1;
	}
	/* Worker rings exist from rxtx's start; look again for any missed. */
	for (uint32_t w = 0; w < ESGW_MAX_WORKERS; w++) {
		if (r->crypto_ring[w] != NULL)
			continue;
		snprintf(ring_name, sizeof(ring_name), ESGW_RING_CRYPTO_FMT, w);
		r->crypto_ring[w] = rte_ring_lookup(ring_name);
	}
	natt_ports_build(t, cfg);
	punt_ring_lookup(r); /* rxtx may have created it since */
	router_flush(r);     /* batches hold ring pointers of the old tables */
	/* After the flush: the markers go behind every packet already sent. */
	router_handover_begin(r, r->tables, t);
	neighbor_prune(r, t);
	router_tables_free(r->tables);
	r->tables = t;
	r->fib_cache_valid = 0; /* it pointed into the freed tables */
	neighbor_static_apply(r, cfg); /* may send what waited: with the new tables */
	ESGW_INFO("configuration %lu applied: %u routes, %u tunnels",
		  (unsigned long)cfg->generation, t->fib.nb_routes, t->nb_tunnels);
	return 0;
}
