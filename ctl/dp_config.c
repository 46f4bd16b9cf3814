/* SPDX-License-Identifier: BSD-3-Clause */
/* The DpConfig each dataplane process needs, from ctld's configuration (each
 * object converted by dp_object.c): interfaces for rxtx and the router;
 * routes, tunnels, policies and neighbours for the router; SAs without keys
 * for the router and with keys only for the worker that owns (or hands over)
 * each SA. */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

/* n objects of ctld.config turned by convert into a list of push memory. */
#define OBJECTS(b, field, n_field, convert)                                                        \
	do {                                                                                       \
		(b)->cfg.n_field = ctld.config->n_field;                                           \
		(b)->cfg.field =                                                                   \
			arena_alloc(&(b)->objects, (b)->cfg.n_field * sizeof(*(b)->cfg.field));    \
		for (size_t i_ = 0; i_ < ctld.config->n_field; i_++)                               \
			(b)->cfg.field[i_] = convert(&(b)->objects, ctld.config->field[i_]);       \
	} while (0)

/* What SA sa is to process p: without keys for the router; for a crypto
 * worker, with keys, if placed on it or handed over by it; else NULL. */
static Esgw__DpSa *sa_for(struct arena *o, const Esgw__Sa *sa, const struct dp_proc *p)
{
	Esgw__DpSa *d;

	if (p->worker < 0)
		return dp_object_sa(o, sa, false);
	if (sa->worker == p->worker) {
		/* Wait in standby for a hand-over in flight, else own it. */
		d = dp_object_sa(o, sa, true);
		d->adopt = handover_from(sa) < 0;
		return d;
	}
	if (handover_from(sa) == p->worker) {
		/* Keep it until the router's hand-over marker. */
		d = dp_object_sa(o, sa, true);
		d->leaving = true;
		return d;
	}
	return NULL;
}

static void sas_for(struct dp_config *b, const struct dp_proc *p)
{
	b->cfg.sas = arena_alloc(&b->objects, ctld.config->n_sas * sizeof(*b->cfg.sas));
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		Esgw__DpSa *d = sa_for(&b->objects, ctld.config->sas[i], p);

		if (d != NULL)
			b->cfg.sas[b->cfg.n_sas++] = d;
	}
}

void dp_config_build(struct dp_config *b, const struct dp_proc *p)
{
	esgw__dp_config__init(&b->cfg);
	b->cfg.generation = ctld.generation;
	b->cfg.workers = ctld.config->workers;
	if (p->worker < 0)
		OBJECTS(b, interfaces, n_interfaces, dp_object_interface);
	if (strcmp(p->role, "router") == 0) {
		OBJECTS(b, routes, n_routes, dp_object_route);
		OBJECTS(b, tunnels, n_tunnels, dp_object_tunnel);
		OBJECTS(b, policies, n_policies, dp_object_policy); /* in evaluation order */
		OBJECTS(b, neighbors, n_neighbors, dp_object_neighbor);
	}
	if (strcmp(p->role, "rxtx") != 0)
		sas_for(b, p);
}

void dp_config_free(struct dp_config *b)
{
	arena_free(&b->objects);
}

/* Whether a policy names SA id. */
static bool policy_names_sa(uint32_t id)
{
	for (size_t i = 0; i < ctld.config->n_policies; i++) {
		const Esgw__Policy *pol = ctld.config->policies[i];

		if (pol->sa_out == id)
			return true;
		for (size_t k = 0; k < pol->n_sa_in; k++)
			if (pol->sa_in[k] == id)
				return true;
	}
	return false;
}

/* Whether a policy names the SA or tunnel item (or the tunnel's SAs): a
 * policy becomes usable or not with it, which only the router's whole build
 * works out. */
static bool policy_names(enum config_kind kind, const void *item)
{
	const Esgw__Tunnel *t = item;

	if (kind == CONFIG_SA)
		return policy_names_sa(((const Esgw__Sa *)item)->id);
	if (kind != CONFIG_TUNNEL)
		return false;
	for (size_t i = 0; i < ctld.config->n_policies; i++)
		if (strcmp(ctld.config->policies[i]->tunnel, t->name) == 0)
			return true;
	if (ctld.config->n_policies > 0 && policy_names_sa(t->sa_out))
		return true;
	for (size_t k = 0; ctld.config->n_policies > 0 && k < t->n_sa_in; k++)
		if (policy_names_sa(t->sa_in[k]))
			return true;
	return false;
}

bool dp_config_delta_possible(void)
{
	uint64_t base;

	if (!change_kept(&base) || base + 1 != ctld.generation)
		return false;
	for (size_t i = 0; i < change_count(); i++) {
		struct change_item e = change_entry(i);

		if (e.net && (e.kind == CONFIG_NEIGHBOR || policy_names(e.kind, e.item)))
			return false;
	}
	return true;
}

static void sa_list_add(const Esgw__Sa ***list, size_t *n, const Esgw__Sa *sa)
{
	if (sa != NULL)
		(*list)[(*n)++] = sa;
}

static int sa_ptr_cmp(const void *a, const void *b)
{
	const void *x = *(const void *const *)a, *y = *(const void *const *)b;

	return x < y ? -1 : x > y;
}

/* The SAs a change sends, once each: those it added, and those of the
 * tunnels it added or removed (their direction and endpoints come from the
 * tunnel, dp_object_sa). */
static size_t delta_sas(struct arena *o, const Esgw__Sa ***out)
{
	size_t n = change_count(), cap = 0, k = 0, kept = 0;
	const Esgw__Sa **list;

	for (size_t i = 0; i < n; i++) {
		struct change_item e = change_entry(i);

		cap += e.kind == CONFIG_TUNNEL ? 1 + ((Esgw__Tunnel *)e.item)->n_sa_in : 1;
	}
	list = arena_alloc(o, (cap + 1) * sizeof(*list));
	for (size_t i = 0; i < n; i++) {
		struct change_item e = change_entry(i);

		if (!e.net)
			continue;
		if (e.kind == CONFIG_SA && e.added) {
			sa_list_add(&list, &k, e.item);
		} else if (e.kind == CONFIG_TUNNEL) {
			const Esgw__Tunnel *t = e.item;

			sa_list_add(&list, &k, state_sa(t->sa_out));
			for (size_t j = 0; j < t->n_sa_in; j++)
				sa_list_add(&list, &k, state_sa(t->sa_in[j]));
		}
	}
	qsort(list, k, sizeof(*list), sa_ptr_cmp);
	for (size_t i = 0; i < k; i++)
		if (kept == 0 || list[kept - 1] != list[i])
			list[kept++] = list[i];
	*out = list;
	return kept;
}

/* Lists of a delta sized for the whole change (each gets at most that). */
#define DELTA_LIST(b, field, n)                                                                    \
	((b)->delta.field = arena_alloc(&(b)->objects, ((n) + 1) * sizeof(*(b)->delta.field)))

void dp_config_delta_build(struct dp_config *b, const struct dp_proc *p)
{
	Esgw__DpConfigDelta *d = &b->delta;
	size_t n = change_count(), n_sas;
	bool router = strcmp(p->role, "router") == 0, rxtx = strcmp(p->role, "rxtx") == 0;
	const Esgw__Sa **sas;

	esgw__dp_config_delta__init(d);
	change_kept(&d->base_generation);
	d->generation = ctld.generation;
	d->workers = ctld.config->workers;
	if (rxtx)
		return; /* none of its objects */
	n_sas = delta_sas(&b->objects, &sas);
	DELTA_LIST(b, routes, n);
	DELTA_LIST(b, tunnels, n);
	DELTA_LIST(b, sas, n_sas);
	DELTA_LIST(b, routes_deleted, n);
	DELTA_LIST(b, tunnels_deleted, n);
	DELTA_LIST(b, sas_deleted, n);
	for (size_t i = 0; i < n_sas; i++) {
		Esgw__DpSa *s = sa_for(&b->objects, sas[i], p);

		if (s != NULL)
			d->sas[d->n_sas++] = s;
	}
	for (size_t i = 0; i < n; i++) {
		struct change_item e = change_entry(i);

		if (!e.net || (e.kind == CONFIG_SA && e.added) || (!router && e.kind != CONFIG_SA))
			continue;
		if (e.kind == CONFIG_SA) {
			Esgw__DpSaRef *ref = arena_alloc(&b->objects, sizeof(*ref));

			esgw__dp_sa_ref__init(ref);
			ref->id = ((Esgw__Sa *)e.item)->id;
			ref->slot = ((Esgw__Sa *)e.item)->slot;
			d->sas_deleted[d->n_sas_deleted++] = ref;
		} else if (e.kind == CONFIG_ROUTE && e.added) {
			d->routes[d->n_routes++] = dp_object_route(&b->objects, e.item);
		} else if (e.kind == CONFIG_ROUTE) {
			d->routes_deleted[d->n_routes_deleted++] =
				dp_object_route(&b->objects, e.item)->prefix;
		} else if (e.kind == CONFIG_TUNNEL && e.added) {
			d->tunnels[d->n_tunnels++] = dp_object_tunnel(&b->objects, e.item);
		} else if (e.kind == CONFIG_TUNNEL) {
			d->tunnels_deleted[d->n_tunnels_deleted++] = ((Esgw__Tunnel *)e.item)->name;
		}
	}
}
