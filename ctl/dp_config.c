/* SPDX-License-Identifier: BSD-3-Clause */
/* The DpConfig each dataplane process needs, from ctld's configuration (each
 * object converted by dp_object.c): interfaces for rxtx and the router;
 * routes, tunnels, policies and neighbours for the router; SAs without keys
 * for the router and with keys only for the worker that owns (or hands over)
 * each SA. */
#include "ctld.h"

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

/* The SAs a process gets: every one without keys for the router; for a
 * crypto worker, with keys, those placed on it and those it hands over. */
static void sas_for(struct dp_config *b, const struct dp_proc *p)
{
	b->cfg.sas = arena_alloc(&b->objects, ctld.config->n_sas * sizeof(*b->cfg.sas));
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		const Esgw__Sa *sa = ctld.config->sas[i];
		Esgw__DpSa *d;

		if (p->worker < 0) {
			b->cfg.sas[b->cfg.n_sas++] = dp_object_sa(&b->objects, sa, false);
		} else if (sa->worker == p->worker) {
			/* Wait in standby for a hand-over in flight, else own it. */
			d = dp_object_sa(&b->objects, sa, true);
			d->adopt = handover_from(sa) < 0;
			b->cfg.sas[b->cfg.n_sas++] = d;
		} else if (handover_from(sa) == p->worker) {
			/* Keep it until the router's hand-over marker. */
			d = dp_object_sa(&b->objects, sa, true);
			d->leaving = true;
			b->cfg.sas[b->cfg.n_sas++] = d;
		}
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
