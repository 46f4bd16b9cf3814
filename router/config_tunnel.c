/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's tunnels and inbound SPI table from a pushed configuration:
 * each tunnel's outer endpoints (both IPv4 or both IPv6), outbound SA and
 * outer next hop (looked up in the FIBs config_fib.c has built), and every
 * inbound SA by SPI. Called by config.c while it builds the tables that
 * replace the old ones whole; the SPI lookup of the data path is here too,
 * beside the hash it shares with the builder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The tunnel table and an SPI table twice as large as the inbound SAs. */
static int tunnels_alloc(struct router_tables *t, const Esgw__DpConfig *cfg, char *err,
			 size_t errlen)
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
	return 0;
fail:
	return -1;
}

/* The outer source and destination of tc, both IPv4 or both IPv6. */
static int tunnel_endpoints(struct router_tunnel *tun, const Esgw__DpTunnel *tc)
{
	struct esgw_addr local, remote;

	if (esgw_addr_from_bytes(&local, tc->local.data, tc->local.len, 0) < 0 ||
	    esgw_addr_from_bytes(&remote, tc->remote.data, tc->remote.len, 0) < 0 ||
	    local.family != remote.family)
		return -1;
	tun->outer_ipv6 = local.family == 6;
	if (tun->outer_ipv6) {
		memcpy(tun->local6, local.bytes, 16);
		memcpy(tun->remote6, remote.bytes, 16);
	} else {
		tun->local = esgw_addr_ipv4(&local);
		tun->remote = esgw_addr_ipv4(&remote);
	}
	return 0;
}

/* The outer packet leaves by a port route; a remote routed into a tunnel (or
 * to ourselves) would loop, so it stays unresolved and its packets count as
 * no_route. */
static void tunnel_resolve_outer(const struct router_tables *t, struct router_tunnel *tun)
{
	char text[ESGW_IPV6_STRLEN];

	if (tun->outer_ipv6) {
		const struct fib6_route *outer = fib6_lookup(&t->fib6, tun->remote6);

		if (outer != NULL && (outer->kind == FIB_CONNECTED || outer->kind == FIB_VIA)) {
			tun->outer_resolved = 1;
			tun->outer_port = outer->port;
			memcpy(tun->outer_nexthop6,
			       outer->kind == FIB_VIA ? outer->gateway : tun->remote6, 16);
		}
	} else {
		const struct fib_route *outer = fib_lookup(&t->fib, tun->remote);

		if (outer != NULL && (outer->kind == FIB_CONNECTED || outer->kind == FIB_VIA)) {
			tun->outer_resolved = 1;
			tun->outer_port = outer->port;
			tun->outer_nexthop = outer->kind == FIB_VIA ? outer->gateway : tun->remote;
		}
	}
	if (!tun->outer_resolved)
		ESGW_WARN("tunnel %s: no route over a port to remote %s", tun->name,
			  tun->outer_ipv6 ? esgw_fmt_ipv6(tun->remote6, text)
					  : esgw_fmt_ipv4(tun->remote, text));
}

/* Inbound SA in of tunnel number index into the SPI table. */
static int spi_table_add(struct router_tables *t, const Esgw__DpSa *in,
			 const struct router_tunnel *tun, size_t index, char *err, size_t errlen)
{
	uint32_t h;

	if (sa_placement(in, err, errlen) < 0)
		return -1;
	for (h = spi_hash(in->spi) & t->sa_in_mask; t->sa_in[h].used; h = (h + 1) & t->sa_in_mask)
		if (t->sa_in[h].spi == in->spi)
			FAIL("SPI %u used by two inbound SAs", in->spi);
	t->sa_in[h] = (struct router_sa_in){.spi = in->spi,
					    .slot = in->slot,
					    .worker = in->worker,
					    .remote = tun->remote,
					    .udp_port = natt_local_port(in),
					    .used = 1};
	t->sa_tunnel[in->slot] = (uint32_t)index + 1;
	t->sa_in[h].remote_ipv6 = tun->outer_ipv6;
	memcpy(t->sa_in[h].remote6, tun->remote6, 16);
	return 0;
fail:
	return -1;
}

/* Tunnel number index from tc: endpoints, outbound SA, outer next hop, and
 * its inbound SAs in the SPI table. */
static int add_tunnel(struct router_tables *t, const Esgw__DpConfig *cfg, size_t index, char *err,
		      size_t errlen)
{
	const Esgw__DpTunnel *tc = cfg->tunnels[index];
	struct router_tunnel *tun = &t->tunnels[index];
	const Esgw__DpSa *sa = router_sa_by_id(cfg, tc->sa_out);

	if (strlen(tc->name) >= sizeof(tun->name))
		FAIL("tunnel name too long: %s", tc->name);
	strcpy(tun->name, tc->name);
	if (tunnel_endpoints(tun, tc) < 0)
		FAIL("tunnel %s: bad local or remote address (%zu and %zu bytes)", tc->name,
		     tc->local.len, tc->remote.len);
	if (sa == NULL)
		FAIL("tunnel %s: outbound SA %u not in the configuration", tc->name, tc->sa_out);
	if (sa_placement(sa, err, errlen) < 0)
		return -1;
	tun->sa_out_slot = sa->slot;
	tun->worker = sa->worker;
	tunnel_set_overhead(tun, (unsigned int)sa->algorithm); /* frag.c: inner MTU */
	tunnel_resolve_outer(t, tun);
	t->nb_tunnels++;
	for (size_t k = 0; k < tc->n_sa_in; k++) {
		const Esgw__DpSa *in = router_sa_by_id(cfg, tc->sa_in[k]);

		if (in == NULL)
			FAIL("tunnel %s: inbound SA %u not in the configuration", tc->name,
			     tc->sa_in[k]);
		if (spi_table_add(t, in, tun, index, err, errlen) < 0)
			return -1;
	}
	return 0;
fail:
	return -1;
}

int config_tunnel_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err,
			size_t errlen)
{
	if (tunnels_alloc(t, cfg, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < cfg->n_tunnels; i++)
		if (add_tunnel(t, cfg, i, err, errlen) < 0)
			return -1;
	return 0;
}
