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
#include "slot_table.h"
#include "router.h"
#include "spd.h"

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		goto fail;                                                                         \
	} while (0)

const struct router_sa_in *router_sa_in_lookup(const struct router_tables *t, uint32_t spi)
{
	if (t->sa_in == NULL)
		return NULL;
	for (uint32_t i = probe_hash(spi) & t->sa_in_mask;; i = (i + 1) & t->sa_in_mask) {
		if (!t->sa_in[i].used)
			return NULL;
		if (t->sa_in[i].spi == spi)
			return &t->sa_in[i];
	}
}

static int sa_placement(const struct router_tables *t, const Esgw__DpSa *sa, char *err,
			size_t errlen)
{
	if (sa->slot >= t->max_sas)
		FAIL("SA %u: slot %u out of range: the shared table has %u (--max-sas)", sa->id,
		     sa->slot, t->max_sas);
	if (sa->worker >= ESGW_MAX_WORKERS)
		FAIL("SA %u: worker %u out of range", sa->id, sa->worker);
	return 0;
fail:
	return -1;
}

/* Room for cap tunnels, each on cache lines of its own (page-aligned
 * memory of its own, slot_table.h: resident only where written), the first
 * n of old (old_cap of them) copied and old freed; NULL out of memory (old
 * kept). */
static struct router_tunnel *tunnels_realloc(struct router_tunnel *old, uint32_t n,
					     uint32_t old_cap, uint32_t cap)
{
	struct router_tunnel *tun = esgw_slot_table_alloc(cap, sizeof(*tun));

	if (tun == NULL)
		return NULL;
	if (old != NULL)
		memcpy(tun, old, n * sizeof(*tun));
	esgw_slot_table_free(old, old_cap, sizeof(*old));
	return tun;
}

/* The tunnel table and an SPI table twice as large as the inbound SAs. */
static int tunnels_alloc(struct router_tables *t, const Esgw__DpConfig *cfg, char *err,
			 size_t errlen)
{
	size_t nb_in = 0, size = 16, names = 16;

	t->tunnels_cap = cfg->n_tunnels ? (uint32_t)cfg->n_tunnels : 1;
	t->tunnels = tunnels_realloc(NULL, 0, 0, t->tunnels_cap);
	t->tunnel_in = calloc(t->tunnels_cap, sizeof(*t->tunnel_in));
	if (t->tunnels == NULL || t->tunnel_in == NULL)
		FAIL("out of memory");
	for (size_t i = 0; i < cfg->n_tunnels; i++)
		nb_in += cfg->tunnels[i]->n_sa_in;
	while (size < 2 * nb_in)
		size *= 2;
	t->sa_in = esgw_slot_table_alloc(size, sizeof(*t->sa_in));
	if (t->sa_in == NULL)
		FAIL("out of memory");
	t->sa_in_mask = (uint32_t)size - 1;
	while (names < 2 * cfg->n_tunnels)
		names *= 2;
	t->tunnel_by_name = calloc(names, sizeof(*t->tunnel_by_name));
	if (t->tunnel_by_name == NULL)
		FAIL("out of memory");
	t->tunnel_by_name_mask = (uint32_t)names - 1;
	return 0;
fail:
	return -1;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

int config_tunnel_find(const struct router_tables *t, const char *name)
{
	if (t->tunnel_by_name == NULL)
		return -1;
	for (uint32_t i = name_hash(name) & t->tunnel_by_name_mask;;
	     i = (i + 1) & t->tunnel_by_name_mask) {
		uint32_t at = t->tunnel_by_name[i];

		if (at == 0)
			return -1;
		if (strcmp(t->tunnels[at - 1].name, name) == 0)
			return (int)at - 1;
	}
}

/* The name table's entry of tunnel index (which is in it). */
static uint32_t name_entry(const struct router_tables *t, uint32_t index)
{
	uint32_t i = name_hash(t->tunnels[index].name) & t->tunnel_by_name_mask;

	while (t->tunnel_by_name[i] != index + 1)
		i = (i + 1) & t->tunnel_by_name_mask;
	return i;
}

/* The tables being changed: what probe_remove's callbacks look at. */
static const struct router_tables *probing;

static uint32_t name_home(const void *e)
{
	return name_hash(probing->tunnels[*(const uint32_t *)e - 1].name) &
	       probing->tunnel_by_name_mask;
}

static int name_used(const void *e)
{
	return *(const uint32_t *)e != 0;
}

static uint32_t spi_home(const void *e)
{
	return probe_hash(((const struct router_sa_in *)e)->spi) & probing->sa_in_mask;
}

static int spi_used(const void *e)
{
	return ((const struct router_sa_in *)e)->used;
}

void probe_remove(void *table, size_t size, uint32_t mask, uint32_t i,
		  uint32_t (*home_of)(const void *entry), int (*used)(const void *entry))
{
	uint8_t *tab = table;

	memset(tab + (size_t)i * size, 0, size);
	for (uint32_t j = (i + 1) & mask; used(tab + (size_t)j * size); j = (j + 1) & mask) {
		uint32_t home = home_of(tab + (size_t)j * size);

		/* j may move into the hole at i if its home is not in (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			memcpy(tab + (size_t)i * size, tab + (size_t)j * size, size);
			memset(tab + (size_t)j * size, 0, size);
			i = j;
		}
	}
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

	if (sa_placement(t, in, err, errlen) < 0)
		return -1;
	for (h = probe_hash(in->spi) & t->sa_in_mask; t->sa_in[h].used; h = (h + 1) & t->sa_in_mask)
		if (t->sa_in[h].spi == in->spi)
			FAIL("SPI %u used by two inbound SAs", in->spi);
	t->sa_in[h] = (struct router_sa_in){.spi = in->spi,
					    .slot = in->slot,
					    .worker = (uint16_t)in->worker,
					    .udp_port = natt_local_port(in),
					    .remote_ipv6 = tun->outer_ipv6,
					    .used = 1};
	if (tun->outer_ipv6)
		memcpy(t->sa_in[h].remote6, tun->remote6, 16);
	else
		t->sa_in[h].remote = tun->remote;
	t->sa_tunnel[in->slot] = (uint32_t)index + 1;
	t->sa_in_used++;
	return 0;
fail:
	return -1;
}

/* Tunnel number index from tc: endpoints, outbound SA, outer next hop, and
 * its inbound SAs in the SPI table; the SAs from the tables' kept
 * configuration (config_delta_index). */
static int add_tunnel(struct router_tables *t, const Esgw__DpTunnel *tc, size_t index, char *err,
		      size_t errlen)
{
	struct router_tunnel *tun = &t->tunnels[index];
	struct router_tunnel_in *in_list = &t->tunnel_in[index];
	Esgw__DpSa buf;
	const Esgw__DpSa *sa = router_sa_conf_find(t, tc->sa_out, &buf);
	uint32_t h;

	if (strlen(tc->name) >= sizeof(tun->name))
		FAIL("tunnel name too long: %s", tc->name);
	if (config_tunnel_find(t, tc->name) >= 0)
		FAIL("tunnel %s given twice", tc->name);
	memset(tun, 0, sizeof(*tun));
	strcpy(tun->name, tc->name);
	if (tunnel_endpoints(tun, tc) < 0)
		FAIL("tunnel %s: bad local or remote address (%zu and %zu bytes)", tc->name,
		     tc->local.len, tc->remote.len);
	if (sa == NULL)
		FAIL("tunnel %s: outbound SA %u not in the configuration", tc->name, tc->sa_out);
	if (sa_placement(t, sa, err, errlen) < 0)
		return -1;
	tun->sa_out_slot = sa->slot;
	tun->worker = sa->worker;
	tunnel_set_overhead(tun, (unsigned int)sa->algorithm); /* frag.c: inner MTU */
	tunnel_resolve_outer(t, tun);
	in_list->spi = calloc(tc->n_sa_in + 1, sizeof(*in_list->spi));
	in_list->slot = calloc(tc->n_sa_in + 1, sizeof(*in_list->slot));
	in_list->n = 0;
	if (in_list->spi == NULL || in_list->slot == NULL)
		FAIL("out of memory");
	for (h = name_hash(tc->name) & t->tunnel_by_name_mask; t->tunnel_by_name[h] != 0;
	     h = (h + 1) & t->tunnel_by_name_mask)
		;
	t->tunnel_by_name[h] = (uint32_t)index + 1;
	t->nb_tunnels++;
	for (size_t k = 0; k < tc->n_sa_in; k++) {
		const Esgw__DpSa *in = router_sa_conf_find(t, tc->sa_in[k], &buf);

		if (in == NULL)
			FAIL("tunnel %s: inbound SA %u not in the configuration", tc->name,
			     tc->sa_in[k]);
		if (spi_table_add(t, in, tun, index, err, errlen) < 0)
			return -1;
		in_list->spi[in_list->n] = in->spi;
		in_list->slot[in_list->n++] = in->slot;
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
		if (add_tunnel(t, cfg->tunnels[i], i, err, errlen) < 0)
			return -1;
	return 0;
}

/* Room for one tunnel more (and its name and inbound SAs at most half full). */
static int tunnels_grow(struct router_tables *t, size_t n_in, char *err, size_t errlen)
{
	if (t->nb_tunnels == t->tunnels_cap) {
		uint32_t cap = t->tunnels_cap ? 2 * t->tunnels_cap : 16;
		struct router_tunnel *tun =
			tunnels_realloc(t->tunnels, t->nb_tunnels, t->tunnels_cap, cap);
		struct router_tunnel_in *in;

		if (tun == NULL)
			FAIL("out of memory");
		t->tunnels = tun;
		in = realloc(t->tunnel_in, cap * sizeof(*in));
		if (in == NULL)
			FAIL("out of memory");
		memset(in + t->tunnels_cap, 0, (cap - t->tunnels_cap) * sizeof(*in));
		t->tunnel_in = in;
		t->tunnels_cap = cap;
	}
	if (2 * (t->nb_tunnels + 1) > t->tunnel_by_name_mask + 1) {
		uint32_t size = 2 * (t->tunnel_by_name_mask + 1);
		uint32_t *names = calloc(size, sizeof(*names));

		if (names == NULL)
			FAIL("out of memory");
		free(t->tunnel_by_name);
		t->tunnel_by_name = names;
		t->tunnel_by_name_mask = size - 1;
		for (uint32_t i = 0; i < t->nb_tunnels; i++) {
			uint32_t h = name_hash(t->tunnels[i].name) & t->tunnel_by_name_mask;

			while (names[h] != 0)
				h = (h + 1) & t->tunnel_by_name_mask;
			names[h] = i + 1;
		}
	}
	if (2 * (t->sa_in_used + n_in) > t->sa_in_mask + 1) {
		uint32_t size = 2 * (t->sa_in_mask + 1);
		struct router_sa_in *old = t->sa_in, *tab;

		while (2 * (t->sa_in_used + n_in) > size)
			size *= 2;
		tab = esgw_slot_table_alloc(size, sizeof(*tab));
		if (tab == NULL)
			FAIL("out of memory");
		for (uint32_t i = 0; old != NULL && i <= t->sa_in_mask; i++) {
			uint32_t h = probe_hash(old[i].spi) & (size - 1);

			if (!old[i].used)
				continue;
			while (tab[h].used)
				h = (h + 1) & (size - 1);
			tab[h] = old[i];
		}
		esgw_slot_table_free(old, old != NULL ? t->sa_in_mask + 1 : 0, sizeof(*old));
		t->sa_in = tab;
		t->sa_in_mask = size - 1;
	}
	return 0;
fail:
	return -1;
}

int config_tunnel_add(struct router_tables *t, const Esgw__DpTunnel *tc, char *err, size_t errlen)
{
	if (tunnels_grow(t, tc->n_sa_in, err, errlen) < 0)
		return -1;
	return add_tunnel(t, tc, t->nb_tunnels, err, errlen);
}

/* References to tunnel from into to: routes, inbound SAs, policies. */
static void tunnel_renumber(struct router_tables *t, uint32_t from, uint32_t to)
{
	const struct router_tunnel_in *in = &t->tunnel_in[to];

	fib_retarget_tunnel(&t->fib, from, to);
	fib6_retarget_tunnel(&t->fib6, from, to);
	for (uint32_t k = 0; k < in->n; k++)
		t->sa_tunnel[in->slot[k]] = to + 1;
	for (uint32_t i = 0; t->spd != NULL && i < t->spd->nb_policies; i++)
		if (t->spd->policies[i].tunnel == from)
			t->spd->policies[i].tunnel = to;
}

/* The tunnel at index out of the name table and its inbound SAs out of the
 * SPI table; its place in the tunnel table left as it is. */
static void tunnel_unlink(struct router_tables *t, uint32_t index)
{
	struct router_tunnel_in *in = &t->tunnel_in[index];

	probing = t;
	for (uint32_t k = 0; k < in->n; k++) {
		for (uint32_t h = probe_hash(in->spi[k]) & t->sa_in_mask; t->sa_in[h].used;
		     h = (h + 1) & t->sa_in_mask) {
			if (t->sa_in[h].spi != in->spi[k])
				continue;
			probe_remove(t->sa_in, sizeof(*t->sa_in), t->sa_in_mask, h, spi_home,
				     spi_used);
			t->sa_in_used--;
			break;
		}
		t->sa_tunnel[in->slot[k]] = 0;
	}
	probe_remove(t->tunnel_by_name, sizeof(*t->tunnel_by_name), t->tunnel_by_name_mask,
		     name_entry(t, index), name_home, name_used);
	free(in->spi);
	free(in->slot);
	in->spi = in->slot = NULL;
	in->n = 0;
}

void config_tunnel_remove(struct router_tables *t, uint32_t index)
{
	uint32_t last = t->nb_tunnels - 1;

	tunnel_unlink(t, index);
	if (index != last) {
		/* The last one into the hole: its name entry first (found by its
		 * old index), then what refers to it. */
		uint32_t e = name_entry(t, last);

		t->tunnels[index] = t->tunnels[last];
		t->tunnel_in[index] = t->tunnel_in[last];
		t->tunnel_by_name[e] = index + 1;
		tunnel_renumber(t, last, index);
	}
	memset(&t->tunnels[last], 0, sizeof(t->tunnels[last]));
	memset(&t->tunnel_in[last], 0, sizeof(t->tunnel_in[last]));
	t->nb_tunnels--;
}

int config_tunnel_replace(struct router_tables *t, uint32_t index, const Esgw__DpTunnel *tc,
			  char *err, size_t errlen)
{
	if (tunnels_grow(t, tc->n_sa_in, err, errlen) < 0)
		return -1;
	tunnel_unlink(t, index);
	t->nb_tunnels--; /* add_tunnel counts it in again, at the same index */
	return add_tunnel(t, tc, index, err, errlen);
}

void config_tunnel_resolve_in(struct router_tables *t, const struct esgw_addr *prefix)
{
	uint32_t mask = esgw_prefix_mask(prefix->len), v4 = esgw_addr_ipv4(prefix);

	for (uint32_t i = 0; i < t->nb_tunnels; i++) {
		struct router_tunnel *tun = &t->tunnels[i];

		if (prefix->family == 6 ? !tun->outer_ipv6 ||
						  !esgw_prefix6_match(prefix->bytes, tun->remote6,
								      prefix->len)
					: tun->outer_ipv6 || ((tun->remote ^ v4) & mask) != 0)
			continue;
		tun->outer_resolved = 0;
		tunnel_resolve_outer(t, tun);
	}
}
