/* SPDX-License-Identifier: BSD-3-Clause */
/* OwnerReconcile: a client that manages objects of its own (the strongSwan
 * plugin, owner "ike") tells, when it (re)connects, which of its SAs, tunnels
 * and policies it still knows; everything else of that owner goes, in one
 * configuration change. An esgw-ctld restart then keeps what charon still
 * uses, and a charon restart removes what it forgot. */
#include "ctld.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

static bool listed_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool listed_name(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static bool owned(const char *owner, const char *by)
{
	return owner != NULL && strcmp(owner, by) == 0;
}

static bool route_uses_tunnel(const char *name)
{
	for (size_t i = 0; i < ctld.config->n_routes; i++)
		if (strcmp(ctld.config->routes[i]->tunnel, name) == 0)
			return true;
	return false;
}

/* Drop SA id from the inbound list of tunnel t if others remain; false if
 * the SA still has to stay (it is t's only inbound SA). */
static bool unlink_inbound(Esgw__Tunnel *t, uint32_t id)
{
	for (size_t i = 0; i < t->n_sa_in; i++) {
		if (t->sa_in[i] != id)
			continue;
		if (t->n_sa_in == 1)
			return false;
		memmove(&t->sa_in[i], &t->sa_in[i + 1], (t->n_sa_in - i - 1) * sizeof(t->sa_in[0]));
		t->n_sa_in--;
		return true;
	}
	return true;
}

Esgw__Status owner_reconcile_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				    size_t errlen)
{
	const Esgw__OwnerReconcile *r = req->owner_reconcile;
	unsigned int policies = 0, tunnels = 0, sas = 0, kept = 0;

	(void)resp;
	if (r->owner[0] == '\0') {
		snprintf(err, errlen,
			 "owner reconcile needs an owner name (manual objects have none)");
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	}
	for (size_t i = ctld.config->n_policies; i-- > 0;) {
		Esgw__Policy *p = ctld.config->policies[i];

		if (!owned(p->owner, r->owner) ||
		    listed_name(r->keep_policies, r->n_keep_policies, p->name))
			continue;
		esgw__policy__free_unpacked(p, NULL);
		array_remove(&ctld.config->policies, &ctld.config->n_policies, i);
		policies++;
	}
	for (size_t i = ctld.config->n_tunnels; i-- > 0;) {
		Esgw__Tunnel *t = ctld.config->tunnels[i];

		if (!owned(t->owner, r->owner) ||
		    listed_name(r->keep_tunnels, r->n_keep_tunnels, t->name))
			continue;
		if (route_uses_tunnel(t->name) || policy_of_tunnel(t->name) != NULL) {
			kept++; /* an operator's route or policy points at it */
			continue;
		}
		esgw__tunnel__free_unpacked(t, NULL);
		array_remove(&ctld.config->tunnels, &ctld.config->n_tunnels, i);
		tunnels++;
	}
	for (size_t i = ctld.config->n_sas; i-- > 0;) {
		Esgw__Sa *sa = ctld.config->sas[i];
		Esgw__Tunnel *in;

		if (!owned(sa->owner, r->owner) || listed_id(r->keep_sas, r->n_keep_sas, sa->id))
			continue;
		in = state_tunnel_in(sa->id);
		if (state_tunnel_out(sa->id) != NULL ||
		    (in != NULL && !unlink_inbound(in, sa->id))) {
			kept++;
			continue;
		}
		sa_free(sa);
		array_remove(&ctld.config->sas, &ctld.config->n_sas, i);
		sas++;
	}
	ESGW_INFO("owner %s reconciled: removed %u policies, %u tunnels, %u SAs%s", r->owner,
		  policies, tunnels, sas, kept ? " (some kept: still referenced)" : "");
	return ESGW__STATUS__STATUS_OK;
}
