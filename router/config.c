/* SPDX-License-Identifier: BSD-3-Clause */
/* Turns a pushed DpConfig into the router's tables: the ports with their
 * addresses here, then the FIBs (config_fib.c), the tunnels and SPI table
 * (config_tunnel.c), the policies (spd.c) and static neighbours
 * (neighbor.c). Addresses come in binary (proto/dataplane.proto): no part of
 * it parses text. The tables are built fresh and swapped in whole; the data
 * thread calls this between bursts, so packets never see a half-applied
 * configuration. A change alone (DpConfigDelta) is applied to them in place
 * by config_delta.c, between bursts too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "addr.h"
#include "log.h"
#include "router.h"
#include "slot_table.h"

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		goto fail;                                                                         \
	} while (0)

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

struct router_tables *router_tables_new(uint32_t max_sas)
{
	struct router_tables *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->max_sas = max_sas;
	t->sa_tunnel = esgw_slot_table_alloc(max_sas, sizeof(*t->sa_tunnel));
	if (t->sa_tunnel == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void router_tables_free(struct router_tables *t)
{
	if (t == NULL)
		return;
	fib_free(&t->fib);
	fib6_free(&t->fib6);
	for (uint32_t i = 0; t->tunnel_in != NULL && i < t->nb_tunnels; i++) {
		free(t->tunnel_in[i].spi);
		free(t->tunnel_in[i].slot);
	}
	free(t->tunnel_in);
	free(t->tunnel_by_name);
	free(t->sa_conf);
	esgw_slot_table_free(t->tunnels, t->tunnels_cap, sizeof(*t->tunnels));
	esgw_slot_table_free(t->sa_in, t->sa_in_mask + 1, sizeof(*t->sa_in));
	esgw_slot_table_free(t->sa_tunnel, t->max_sas, sizeof(*t->sa_tunnel));
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

/* The configuration being applied, its SAs sorted by id and its tunnels by
 * name, so that the tables of 20,000 tunnels build in O(n log n), not with
 * a scan per reference. Valid for cfg only, during router_config_apply. */
static struct {
	const Esgw__DpConfig *cfg;
	const Esgw__DpSa **sas;  /* by id */
	uint32_t *tunnels;       /* indexes into cfg->tunnels, by name */
} lookup;

static int sa_id_cmp(const void *a, const void *b)
{
	uint32_t x = (*(const Esgw__DpSa *const *)a)->id, y = (*(const Esgw__DpSa *const *)b)->id;

	return x < y ? -1 : x > y;
}

static int tunnel_name_cmp(const void *a, const void *b)
{
	Esgw__DpTunnel *const *t = lookup.cfg->tunnels;

	return strcmp(t[*(const uint32_t *)a]->name, t[*(const uint32_t *)b]->name);
}

static void lookup_free(void)
{
	free(lookup.sas);
	free(lookup.tunnels);
	memset(&lookup, 0, sizeof(lookup));
}

/* 0, or -1 out of memory (the lookups then scan). */
static int lookup_build(const Esgw__DpConfig *cfg)
{
	lookup_free();
	lookup.sas = malloc((cfg->n_sas + 1) * sizeof(*lookup.sas));
	lookup.tunnels = malloc((cfg->n_tunnels + 1) * sizeof(*lookup.tunnels));
	if (lookup.sas == NULL || lookup.tunnels == NULL) {
		lookup_free();
		return -1;
	}
	lookup.cfg = cfg;
	for (size_t i = 0; i < cfg->n_sas; i++)
		lookup.sas[i] = cfg->sas[i];
	for (size_t i = 0; i < cfg->n_tunnels; i++)
		lookup.tunnels[i] = (uint32_t)i;
	qsort(lookup.sas, cfg->n_sas, sizeof(*lookup.sas), sa_id_cmp);
	qsort(lookup.tunnels, cfg->n_tunnels, sizeof(*lookup.tunnels), tunnel_name_cmp);
	return 0;
}

const Esgw__DpSa *router_sa_by_id(const Esgw__DpConfig *cfg, uint32_t id)
{
	size_t lo = 0, hi = cfg->n_sas;

	if (lookup.cfg != cfg) {
		for (size_t i = 0; i < cfg->n_sas; i++)
			if (cfg->sas[i]->id == id)
				return cfg->sas[i];
		return NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lookup.sas[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cfg->n_sas && lookup.sas[lo]->id == id ? lookup.sas[lo] : NULL;
}

int router_tunnel_by_name(const Esgw__DpConfig *cfg, const char *name)
{
	size_t lo = 0, hi = cfg->n_tunnels;

	if (lookup.cfg != cfg) {
		for (size_t i = 0; i < cfg->n_tunnels; i++)
			if (strcmp(cfg->tunnels[i]->name, name) == 0)
				return (int)i;
		return -1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(cfg->tunnels[lookup.tunnels[mid]]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < cfg->n_tunnels && strcmp(cfg->tunnels[lookup.tunnels[lo]]->name, name) == 0)
		return (int)lookup.tunnels[lo];
	return -1;
}

/* An interface's addresses of either family into port. */
static int port_addresses(struct router_port *port, const Esgw__DpInterface *ifc, char *err,
			  size_t errlen)
{
	for (size_t a = 0; a < ifc->n_addresses; a++) {
		const Esgw__DpPrefix *p = ifc->addresses[a];
		struct esgw_addr in;

		if (esgw_addr_from_bytes(&in, p->address.data, p->address.len, p->length) < 0 ||
		    in.len == 0)
			FAIL("interface %s: bad address (%zu bytes, length %u)", ifc->name,
			     p->address.len, p->length);
		if (in.family == 4) {
			port->addrs[port->nb_addrs].addr = esgw_addr_ipv4(&in);
			port->addrs[port->nb_addrs++].len = in.len;
		} else {
			memcpy(port->addrs6[port->nb_addrs6].addr, in.bytes, 16);
			port->addrs6[port->nb_addrs6++].len = in.len;
		}
	}
	return 0;
fail:
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
		if (port_addresses(port, ifc, err, errlen) < 0)
			return -1;
	}
	return 0;
fail:
	return -1;
}

int router_config_apply(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	struct router *r = router_of(dp);
	struct router_tables *t = router_tables_new(r->dp.max_sas);
	char ring_name[RTE_RING_NAMESIZE];

	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->generation = cfg->generation;
	t->workers = cfg->workers;
	lookup_build(cfg);
	if (reassembly_init(r) < 0 || add_ports(t, cfg, err, errlen) < 0 ||
	    config_fib_build(t, cfg, err, errlen) < 0 ||
	    (config_delta_index(t, cfg) < 0 && snprintf(err, errlen, "out of memory")) ||
	    config_tunnel_build(t, cfg, err, errlen) < 0 || spd_build(t, cfg, err, errlen) < 0 ||
	    neighbor_static_check(t, cfg, err, errlen) < 0) {
		lookup_free();
		router_tables_free(t);
		return -1;
	}
	lookup_free();
	/* Worker rings exist from rxtx's start; look again for any missed. */
	for (uint32_t w = 0; w < r->dp.max_workers; w++) {
		if (r->crypto_ring[w] != NULL)
			continue;
		snprintf(ring_name, sizeof(ring_name), ESGW_RING_CRYPTO_FMT, w);
		r->crypto_ring[w] = rte_ring_lookup(ring_name);
	}
	egress_invalidate(r); /* whatever the new tables decide */
	natt_ports_build(t, cfg);
	config_delta_natt_refs(t);
	punt_ring_lookup(r); /* rxtx may have created it since */
	router_flush(r);     /* batches hold ring pointers of the old tables */
	/* After the flush: the markers go behind every packet already sent. */
	router_handover_begin(r, r->tables, t);
	neighbor_prune(r, t);
	router_tables_free(r->tables);
	r->tables = t;
	neighbor_static_apply(r, cfg); /* may send what waited: with the new tables */
	ESGW_INFO("configuration %lu applied: %u routes, %u tunnels",
		  (unsigned long)cfg->generation, t->fib.table.nb_routes, t->nb_tunnels);
	return 0;
}
