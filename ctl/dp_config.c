/* SPDX-License-Identifier: BSD-3-Clause */
/* The DpConfig each dataplane process needs, built from ctld's configuration:
 * interfaces, routes, tunnels and policies for the router, SAs without keys
 * for the router and with keys only for the worker that owns (or hands over)
 * each SA. */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

#include "validate.h"

static void *build_alloc(struct dp_config *b, size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (p == NULL)
		abort();
	array_append(&b->mem, &b->n_mem, p);
	return p;
}

static void build_interfaces(struct dp_config *b)
{
	b->cfg.n_interfaces = ctld.config->n_interfaces;
	b->cfg.interfaces = build_alloc(b, b->cfg.n_interfaces * sizeof(*b->cfg.interfaces));
	for (size_t i = 0; i < ctld.config->n_interfaces; i++) {
		Esgw__Interface *in = ctld.config->interfaces[i];
		Esgw__DpInterface *d = build_alloc(b, sizeof(*d));
		char *device = build_alloc(b, strlen(in->devargs) + 1);

		esgw__dp_interface__init(d);
		d->name = in->name;
		d->device = esgw_devargs_device(in->devargs, device, strlen(in->devargs) + 1);
		d->n_addresses = in->n_addresses;
		d->addresses = in->addresses;
		d->mtu = in->mtu ? in->mtu : 1500;
		b->cfg.interfaces[i] = d;
	}
}

static Esgw__DpSa *build_sa(struct dp_config *b, const Esgw__Sa *sa, bool with_keys)
{
	Esgw__DpSa *d = build_alloc(b, sizeof(*d));
	Esgw__Tunnel *out = state_tunnel_out(sa->id), *in = state_tunnel_in(sa->id);
	Esgw__Tunnel *t = out ? out : in;

	if (t == NULL) { /* an SA only a policy sends with: its tunnel's endpoints */
		out = policy_tunnel_out(sa->id);
		t = out;
	}

	esgw__dp_sa__init(d);
	d->id = sa->id;
	d->slot = sa->slot;
	d->spi = sa->spi;
	/* An SA used both ways is sent as outbound (it needs local/remote for
	 * encapsulation); decapsulation finds it by slot either way. */
	d->direction = out  ? ESGW__DIRECTION__DIRECTION_OUTBOUND
		       : in ? ESGW__DIRECTION__DIRECTION_INBOUND
			    : ESGW__DIRECTION__DIRECTION_UNSPECIFIED;
	d->algorithm = sa->algorithm;
	if (with_keys) {
		d->crypto_key = sa->crypto_key;
		d->integ_key = sa->integ_key;
		d->salt = sa->salt;
	}
	d->replay_window = sa->replay_window;
	d->esn = sa->esn;
	d->instance = sa->instance;
	d->iv_mask = sa->iv_mask;
	/* Only a worker creates the SA's runtime slot, from these two. */
	d->seq_out_start = with_keys ? seq_floor_start(sa) : sa->seq_out_floor;
	d->seq_limit = sa->seq_out_floor;
	d->lifetime_soft = sa->lifetime_soft; /* borrowed from the config, like the keys */
	d->lifetime_hard = sa->lifetime_hard;
	d->worker = (uint32_t)sa->worker;
	d->udp_encap = sa->udp_encap;
	d->udp_sport = sa->udp_sport;
	d->udp_dport = sa->udp_dport;
	if (t != NULL) {
		d->local = t->local;
		d->remote = t->remote;
		d->tunnel = t->name;
	}
	return d;
}

void dp_config_build(struct dp_config *b, const struct dp_proc *p)
{
	esgw__dp_config__init(&b->cfg);
	b->cfg.generation = ctld.generation;
	b->cfg.workers = ctld.config->workers;
	if (p->worker < 0)
		build_interfaces(b);
	if (strcmp(p->role, "router") == 0) {
		b->cfg.n_routes = ctld.config->n_routes;
		b->cfg.routes = ctld.config->routes;
		b->cfg.n_tunnels = ctld.config->n_tunnels;
		b->cfg.tunnels = ctld.config->tunnels;
		b->cfg.n_policies = ctld.config->n_policies; /* in evaluation order */
		b->cfg.policies = ctld.config->policies;
		b->cfg.n_neighbors = ctld.config->n_neighbors;
		b->cfg.neighbors = ctld.config->neighbors;
	}
	if (strcmp(p->role, "rxtx") == 0)
		return;
	b->cfg.sas = build_alloc(b, ctld.config->n_sas * sizeof(*b->cfg.sas));
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		const Esgw__Sa *sa = ctld.config->sas[i];

		Esgw__DpSa *d;

		if (p->worker < 0) {
			b->cfg.sas[b->cfg.n_sas++] = build_sa(b, sa, false);
		} else if (sa->worker == p->worker) {
			/* Wait in standby for a hand-over in flight, else own it. */
			d = build_sa(b, sa, true);
			d->adopt = handover_from(sa) < 0;
			b->cfg.sas[b->cfg.n_sas++] = d;
		} else if (handover_from(sa) == p->worker) {
			/* Keep it until the router's hand-over marker. */
			d = build_sa(b, sa, true);
			d->leaving = true;
			b->cfg.sas[b->cfg.n_sas++] = d;
		}
	}
}

void dp_config_free(struct dp_config *b)
{
	for (size_t i = 0; i < b->n_mem; i++)
		free(b->mem[i]);
	free(b->mem);
}
