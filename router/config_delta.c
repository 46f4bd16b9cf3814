/* SPDX-License-Identifier: BSD-3-Clause */
/* A configuration change (DpConfigDelta) applied to the router's tables in
 * place, between bursts like a whole push: routes into tunnels (IPv4 and
 * IPv6) in and out of the FIBs, tunnels added at the end of the tunnel table or removed (the last
 * one moving into the hole, config_tunnel.c) or, deleted and added by one
 * change, replaced where they are (a rekey), SAs in and out of the SA table
 * kept beside the tables for the tunnels that will use them, NAT-T ports
 * counted. What it does not do in place (routes by next hop:
 * their port comes from the connected subnets the whole build collects) it
 * answers 1 for before changing anything, and esgw-ctld pushes the whole
 * configuration instead; so it does for a change of many routes. */
#include <stdbool.h>
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

#define DELTA_ROUTES_MAX 256

static const struct router_tables *probing; /* for sa_home */

static uint32_t sa_home(const void *e)
{
	return probe_hash(((const struct router_sa_conf *)e)->id) & probing->sa_conf_mask;
}

static int sa_used(const void *e)
{
	return ((const struct router_sa_conf *)e)->used;
}

/* The entry of id, or the free one where it would go. */
static struct router_sa_conf *sa_entry(const struct router_tables *t, uint32_t id)
{
	uint32_t i = probe_hash(id) & t->sa_conf_mask;

	while (t->sa_conf[i].used && t->sa_conf[i].id != id)
		i = (i + 1) & t->sa_conf_mask;
	return &t->sa_conf[i];
}

const Esgw__DpSa *router_sa_conf_find(const struct router_tables *t, uint32_t id, Esgw__DpSa *buf)
{
	const struct router_sa_conf *c;

	if (t->sa_conf == NULL)
		return NULL;
	c = sa_entry(t, id);
	if (!c->used)
		return NULL;
	esgw__dp_sa__init(buf);
	buf->id = c->id;
	buf->slot = c->slot;
	buf->worker = c->worker;
	buf->spi = c->spi;
	buf->algorithm = (Esgw__Algorithm)c->algorithm;
	buf->udp_encap = c->udp_encap;
	buf->udp_sport = c->udp_sport;
	return buf;
}

/* A table for n SAs at most half full; the old entries moved in. */
static int sa_table_size(struct router_tables *t, size_t n)
{
	uint32_t size = 16, old_mask = t->sa_conf_mask;
	struct router_sa_conf *old = t->sa_conf;

	while (size < 2 * n)
		size *= 2;
	t->sa_conf = calloc(size, sizeof(*t->sa_conf));
	if (t->sa_conf == NULL) {
		t->sa_conf = old;
		return -1;
	}
	t->sa_conf_mask = size - 1;
	for (uint32_t i = 0; old != NULL && i <= old_mask; i++)
		if (old[i].used)
			*sa_entry(t, old[i].id) = old[i];
	free(old);
	return 0;
}

static void sa_put(struct router_tables *t, const Esgw__DpSa *s)
{
	struct router_sa_conf *c = sa_entry(t, s->id);

	t->sa_conf_used += !c->used;
	*c = (struct router_sa_conf){.id = s->id,
				     .slot = s->slot,
				     .worker = s->worker,
				     .spi = s->spi,
				     .algorithm = (uint32_t)s->algorithm,
				     .udp_sport = s->udp_sport,
				     .udp_encap = s->udp_encap,
				     .used = 1};
}

/* How many SAs use each NAT-T port: a port goes when its last SA does (4500
 * stays: IKE moves there before any SA exists). */
static void natt_ref(struct router_tables *t, const Esgw__DpSa *s, int delta)
{
	uint16_t port = natt_local_port(s);
	uint32_t k = 0;

	if (port == 0)
		return;
	while (k < t->nb_natt_ports && t->natt_ports[k] != port)
		k++;
	if (k == t->nb_natt_ports) {
		if (delta < 0 || k == ROUTER_NATT_PORTS_MAX)
			return; /* as natt_ports_build: the ports past the limit are not taken */
		t->natt_ports[t->nb_natt_ports++] = port;
		t->natt_refs[k] = 0;
	}
	t->natt_refs[k] += (uint32_t)delta;
	if (t->natt_refs[k] == 0 && port != 4500) { /* RFC 3948 */
		t->nb_natt_ports--;
		t->natt_ports[k] = t->natt_ports[t->nb_natt_ports];
		t->natt_refs[k] = t->natt_refs[t->nb_natt_ports];
	}
}

int config_delta_index(struct router_tables *t, const Esgw__DpConfig *cfg)
{
	if (sa_table_size(t, cfg->n_sas) < 0)
		return -1;
	for (size_t i = 0; i < cfg->n_sas; i++)
		sa_put(t, cfg->sas[i]);
	return 0;
}

void config_delta_natt_refs(struct router_tables *t)
{
	Esgw__DpSa buf;

	memset(t->natt_refs, 0, sizeof(t->natt_refs));
	for (uint32_t i = 0; t->sa_conf != NULL && i <= t->sa_conf_mask; i++) {
		uint16_t port;

		if (!t->sa_conf[i].used)
			continue;
		port = natt_local_port(router_sa_conf_find(t, t->sa_conf[i].id, &buf));
		for (uint32_t k = 0; port != 0 && k < t->nb_natt_ports; k++)
			if (t->natt_ports[k] == port)
				t->natt_refs[k]++;
	}
}

/* A route of a change: a prefix (IPv4 or IPv6) into a tunnel, else 1 (left
 * to a whole push). */
static int route_prefix(const Esgw__DpPrefix *p, const char *tunnel, struct esgw_addr *prefix)
{
	if (p == NULL ||
	    esgw_addr_from_bytes(prefix, p->address.data, p->address.len, p->length) < 0)
		return 1;
	return tunnel != NULL && tunnel[0] == '\0' ? 1 : 0;
}

/* The kind of the route held for exactly prefix in its family's FIB, or -1. */
static int route_kind(const struct router_tables *t, const struct esgw_addr *prefix)
{
	const struct fib_route *r4;
	const struct fib6_route *r6;

	if (prefix->family == 4) {
		r4 = fib_exact(&t->fib, esgw_addr_ipv4(prefix), prefix->len);
		return r4 != NULL ? r4->kind : -1;
	}
	r6 = fib6_exact(&t->fib6, prefix->bytes, prefix->len);
	return r6 != NULL ? r6->kind : -1;
}

/* The route into a tunnel of prefix out of its FIB: -1 when a local or
 * connected route of that prefix shadows it, as the whole build would have
 * it: nothing to remove. */
static void route_out(struct router_tables *t, const struct esgw_addr *prefix)
{
	if (prefix->family == 4)
		fib_remove(&t->fib, esgw_addr_ipv4(prefix), prefix->len, FIB_TUNNEL);
	else
		fib6_remove(&t->fib6, prefix->bytes, prefix->len, FIB_TUNNEL);
	config_tunnel_resolve_in(t, prefix);
}

/* A route of prefix into tunnel into its FIB: 0, or -1 out of memory. */
static int route_in(struct router_tables *t, const struct esgw_addr *prefix, uint32_t tunnel)
{
	int rc;

	if (prefix->family == 4) {
		struct fib_route r = {.prefix = esgw_addr_ipv4(prefix),
				      .len = prefix->len,
				      .kind = FIB_TUNNEL,
				      .tunnel = tunnel};

		rc = fib_insert(&t->fib, &r);
	} else {
		struct fib6_route r = {.len = prefix->len, .kind = FIB_TUNNEL, .tunnel = tunnel};

		memcpy(r.prefix, prefix->bytes, 16);
		rc = fib6_insert(&t->fib6, &r);
	}
	if (rc == 0)
		config_tunnel_resolve_in(t, prefix);
	return rc;
}

/* The ones a whole push does: refused before anything changes. A deleted
 * route is the FIB's of its prefix: into a tunnel, or shadowed by a local or
 * connected one (nothing to remove), not by next hop. A change that both
 * deletes and adds many tunnels is pushed whole too. */
#define DELTA_REPLACE_CHECKS 65536 /* tunnels deleted times tunnels added */

static int delta_in_place(const struct router_tables *t, const Esgw__DpConfigDelta *d)
{
	struct esgw_addr prefix;

	if ((uint64_t)d->n_tunnels_deleted * d->n_tunnels > DELTA_REPLACE_CHECKS)
		return 0;

	for (size_t i = 0; i < d->n_routes; i++)
		if (route_prefix(d->routes[i]->prefix, d->routes[i]->tunnel, &prefix) != 0)
			return 0;
	for (size_t i = 0; i < d->n_routes_deleted; i++)
		if (route_prefix(d->routes_deleted[i], NULL, &prefix) != 0 ||
		    route_kind(t, &prefix) == FIB_VIA)
			return 0;
	return 1;
}

/* Whether tunnel name is both deleted and added by d: replaced in place (a
 * rekey, `tunnel set`), keeping its number and the routes into it. The
 * lists are searched (delta_in_place bounds their product). */
static int replaced(const Esgw__DpConfigDelta *d, const char *name)
{
	int deleted = 0, added = 0;

	for (size_t i = 0; i < d->n_tunnels_deleted && !deleted; i++)
		deleted = strcmp(d->tunnels_deleted[i], name) == 0;
	for (size_t i = 0; deleted && i < d->n_tunnels && !added; i++)
		added = strcmp(d->tunnels[i]->name, name) == 0;
	return deleted && added;
}

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* delete_part leaves an SA the change adds again (readded: the ids of
 * d->sas, sorted) to add_part, which replaces it: so it sees where it was
 * (a move to another worker). */
static int delete_part(struct router_tables *t, const Esgw__DpConfigDelta *d,
		       const uint32_t *readded, char *err, size_t errlen)
{
	struct esgw_addr prefix;
	Esgw__DpSa buf;

	for (size_t i = 0; i < d->n_routes_deleted; i++) {
		route_prefix(d->routes_deleted[i], NULL, &prefix);
		route_out(t, &prefix);
	}
	for (size_t i = 0; i < d->n_tunnels_deleted; i++) {
		int index = config_tunnel_find(t, d->tunnels_deleted[i]);

		if (index < 0)
			FAIL("tunnel %s to delete is not there", d->tunnels_deleted[i]);
		if (!replaced(d, d->tunnels_deleted[i]))
			config_tunnel_remove(t, (uint32_t)index);
	}
	probing = t;
	for (size_t i = 0; i < d->n_sas_deleted; i++) {
		const Esgw__DpSa *s = router_sa_conf_find(t, d->sas_deleted[i]->id, &buf);

		if (s == NULL)
			FAIL("SA %u to delete is not there", d->sas_deleted[i]->id);
		if (bsearch(&d->sas_deleted[i]->id, readded, d->n_sas, sizeof(*readded), id_cmp))
			continue;
		natt_ref(t, s, -1);
		probe_remove(t->sa_conf, sizeof(*t->sa_conf), t->sa_conf_mask,
			     (uint32_t)(sa_entry(t, s->id) - t->sa_conf), sa_home, sa_used);
		t->sa_conf_used--;
	}
	return 0;
fail:
	return -1;
}

/* An SA of a change that was on another worker before it (`sa move`,
 * `workers set`): its slot and the two workers. */
struct sa_move {
	uint32_t slot, from, to, spi;
};

static int move_slot_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct sa_move *)a)->slot, y = ((const struct sa_move *)b)->slot;

	return (x > y) - (x < y);
}

/* The n SAs moved (sorted by slot) go to their new workers in the tables:
 * their inbound entry in the SPI table, the tunnels they are the outbound
 * SA of (one pass over the tunnels). Those in use get a hand-over marker
 * into their old worker's ring, as a whole push's comparison gives them
 * (handover.c). */
static void moves_apply(struct router *r, struct router_tables *t, struct sa_move *mv, size_t n)
{
	bool *used = calloc(n + 1, sizeof(*used));

	if (used == NULL) { /* the tables still say the old worker: a whole push mends it */
		ESGW_ERR("SA moves: out of memory");
		return;
	}
	for (size_t k = 0; k < n && t->sa_in != NULL; k++)
		for (uint32_t h = probe_hash(mv[k].spi) & t->sa_in_mask; t->sa_in[h].used;
		     h = (h + 1) & t->sa_in_mask)
			if (t->sa_in[h].spi == mv[k].spi && t->sa_in[h].slot == mv[k].slot) {
				t->sa_in[h].worker = (uint16_t)mv[k].to;
				used[k] = true;
			}
	for (uint32_t i = 0; i < t->nb_tunnels; i++) {
		struct sa_move key = {.slot = t->tunnels[i].sa_out_slot};
		struct sa_move *m = bsearch(&key, mv, n, sizeof(*mv), move_slot_cmp);

		if (m != NULL) {
			t->tunnels[i].worker = m->to;
			used[m - mv] = true;
		}
	}
	for (size_t k = 0; k < n; k++)
		if (used[k])
			router_handover_moved(r, mv[k].slot, mv[k].from, mv[k].to);
	free(used);
}

static int add_part(struct router_tables *t, const Esgw__DpConfigDelta *d, struct sa_move *mv,
		    size_t *n_mv, char *err, size_t errlen)
{
	struct esgw_addr prefix;
	Esgw__DpSa buf;

	if (2 * (t->sa_conf_used + d->n_sas) > t->sa_conf_mask + 1 &&
	    sa_table_size(t, t->sa_conf_used + d->n_sas) < 0)
		FAIL("out of memory");
	for (size_t i = 0; i < d->n_sas; i++) {
		const Esgw__DpSa *old = router_sa_conf_find(t, d->sas[i]->id, &buf);

		if (old != NULL) {
			natt_ref(t, old, -1);
			if (old->worker != d->sas[i]->worker && old->slot == d->sas[i]->slot)
				mv[(*n_mv)++] = (struct sa_move){.slot = old->slot,
								 .from = old->worker,
								 .to = d->sas[i]->worker,
								 .spi = old->spi};
		}
		sa_put(t, d->sas[i]);
		natt_ref(t, d->sas[i], +1);
	}
	for (size_t i = 0; i < d->n_tunnels; i++) {
		const Esgw__DpTunnel *tc = d->tunnels[i];
		int rc = replaced(d, tc->name)
				 ? config_tunnel_replace(t, (uint32_t)config_tunnel_find(t, tc->name),
							 tc, err, errlen)
				 : config_tunnel_add(t, tc, err, errlen);

		if (rc < 0)
			return -1;
	}
	for (size_t i = 0; i < d->n_routes; i++) {
		const Esgw__DpRoute *rc = d->routes[i];
		int tunnel = config_tunnel_find(t, rc->tunnel);
		char text[ESGW_ADDR_STRLEN];

		route_prefix(rc->prefix, rc->tunnel, &prefix);
		if (tunnel < 0)
			FAIL("route %s: unknown tunnel %s", esgw_addr_format(&prefix, 1, text),
			     rc->tunnel);
		if (route_in(t, &prefix, (uint32_t)tunnel) < 0)
			FAIL("out of memory");
	}
	return 0;
fail:
	return -1;
}

int router_config_delta(struct esgw_dp *dp, const Esgw__DpConfigDelta *d, char *err, size_t errlen)
{
	struct router *r = router_of(dp);
	struct router_tables *t = r->tables;
	struct sa_move *mv;
	uint32_t *readded;
	size_t n_mv = 0;
	int rc;

	/* Each route costs a look at every tunnel (config_tunnel_resolve_in):
	 * many (a batch loading thousands) are cheaper built whole. */
	if (t == NULL || t->sa_conf == NULL || d->n_routes + d->n_routes_deleted > DELTA_ROUTES_MAX ||
	    !delta_in_place(t, d))
		return 1;
	mv = calloc(d->n_sas + 1, sizeof(*mv));
	readded = malloc((d->n_sas + 1) * sizeof(*readded));
	if (mv == NULL || readded == NULL) {
		free(mv);
		free(readded);
		return 1;
	}
	egress_invalidate(r); /* before any change: nothing decided by them is used */
	for (size_t i = 0; i < d->n_sas; i++)
		readded[i] = d->sas[i]->id;
	qsort(readded, d->n_sas, sizeof(*readded), id_cmp);
	/* Deletions first: an object in both is replaced. A failure part way
	 * (only what esgw-ctld has checked already, or out of memory) leaves
	 * the tables consistent but not complete: esgw-ctld pushes them whole. */
	rc = delete_part(t, d, readded, err, errlen) < 0 || add_part(t, d, mv, &n_mv, err, errlen) < 0
		     ? -1
		     : 0;
	free(readded);
	if (rc < 0) {
		free(mv);
		return -1;
	}
	qsort(mv, n_mv, sizeof(*mv), move_slot_cmp);
	if (n_mv)
		moves_apply(r, t, mv, n_mv);
	free(mv);
	t->generation = d->generation;
	t->workers = d->workers;
	ESGW_INFO("configuration %lu applied in place: %u IPv4 and %u IPv6 routes, %u tunnels",
		  (unsigned long)d->generation, t->fib.table.nb_routes, t->fib6.table.nb_routes,
		  t->nb_tunnels);
	return 0;
}
