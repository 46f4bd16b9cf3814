/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's route-based tunnels: `tunnel add|del` and `tunnel set` (a
 * rekey: new outbound and inbound SAs in one generation). */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "validate.h"

#define OK ESGW__STATUS__STATUS_OK
#define INVALID ESGW__STATUS__STATUS_INVALID_ARGUMENT
#define NOT_FOUND ESGW__STATUS__STATUS_NOT_FOUND
#define EXISTS ESGW__STATUS__STATUS_ALREADY_EXISTS

/* A tunnel's sa-in list: existing SAs, each once, none inbound for another
 * tunnel than self (NULL for a new tunnel). */
static Esgw__Status check_sa_in(const Esgw__Tunnel *t, const Esgw__Tunnel *self, char *err,
				size_t errlen)
{
	for (size_t i = 0; i < t->n_sa_in; i++) {
		Esgw__Tunnel *other;

		if (state_sa(t->sa_in[i]) == NULL) {
			snprintf(err, errlen, "sa-in: SA %u does not exist", t->sa_in[i]);
			return NOT_FOUND;
		}
		for (size_t j = 0; j < i; j++) {
			if (t->sa_in[j] == t->sa_in[i]) {
				snprintf(err, errlen, "sa-in lists SA %u twice", t->sa_in[i]);
				return INVALID;
			}
		}
		other = state_tunnel_in(t->sa_in[i]);
		if (other != NULL && other != self) {
			snprintf(err, errlen, "SA %u is already an inbound SA of tunnel %s",
				 t->sa_in[i], other->name);
			return INVALID;
		}
	}
	return OK;
}

Esgw__Status tunnel_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const Esgw__Tunnel *t = req->tunnel_add;
	Esgw__Tunnel *other;
	Esgw__Status status;

	(void)resp;
	if (esgw_check_name(t->name, "tunnel name", err, errlen) < 0)
		return INVALID;
	if (state_tunnel(t->name) != NULL) {
		snprintf(err, errlen, "tunnel %s already exists", t->name);
		return EXISTS;
	}
	if (esgw_check_address(t->local, "local address", err, errlen) < 0 ||
	    esgw_check_address(t->remote, "remote address", err, errlen) < 0)
		return INVALID;
	if (esgw_is_ipv6_text(t->local) != esgw_is_ipv6_text(t->remote)) {
		snprintf(err, errlen, "tunnel %s: local %s and remote %s are of different families",
			 t->name, t->local, t->remote);
		return INVALID;
	}
	if (state_sa(t->sa_out) == NULL) {
		snprintf(err, errlen, "sa-out: SA %u does not exist", t->sa_out);
		return NOT_FOUND;
	}
	other = state_tunnel_out(t->sa_out);
	if (other != NULL) {
		snprintf(err, errlen, "SA %u is already the outbound SA of tunnel %s", t->sa_out,
			 other->name);
		return INVALID;
	}
	if (t->n_sa_in == 0) {
		snprintf(err, errlen, "tunnel %s needs at least one sa-in", t->name);
		return INVALID;
	}
	status = check_sa_in(t, NULL, err, errlen);
	if (status != OK)
		return status;
	config_add(CONFIG_TUNNEL, msg_clone(t));
	ESGW_INFO("tunnel %s added: %s -> %s, sa-out %u", t->name, t->local, t->remote, t->sa_out);
	return OK;
}

Esgw__Status tunnel_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const char *name = req->tunnel_del->name;
	const Esgw__Policy *policy = policy_of_tunnel(name);
	const Esgw__Route *route;
	Esgw__Tunnel *t;

	(void)resp;
	if (policy != NULL) {
		snprintf(err, errlen, "tunnel %s is used by policy %s: delete the policy first",
			 name, policy->name);
		return INVALID;
	}
	route = state_route_into(name);
	if (route != NULL) {
		snprintf(err, errlen, "tunnel %s is used by route %s: delete the route first", name,
			 route->prefix);
		return INVALID;
	}
	t = state_tunnel(name);
	if (t == NULL) {
		snprintf(err, errlen, "tunnel %.40s does not exist", name);
		return NOT_FOUND;
	}
	config_remove_item(CONFIG_TUNNEL, t);
	ESGW_INFO("tunnel %s deleted", name);
	return OK;
}

/* Rekey without loss (RFC 4301 4.4.2.1 semantics): replace an existing
 * tunnel's sa_out and/or sa_in in one configuration generation. The router
 * switches outbound packets to the new SA between two bursts; inbound keeps
 * accepting every SA listed, so the old one goes on decrypting what is in
 * flight until a later `tunnel set` drops it from sa_in. */
Esgw__Status tunnel_set_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const Esgw__Tunnel *t = req->tunnel_set;
	Esgw__Tunnel *cur = state_tunnel(t->name), *other, *next;
	bool set_out = t->sa_out != 0;
	Esgw__Status status;

	(void)resp;
	if (cur == NULL) {
		snprintf(err, errlen, "tunnel %.40s does not exist", t->name);
		return NOT_FOUND;
	}
	if ((t->local[0] && strcmp(t->local, cur->local) != 0) ||
	    (t->remote[0] && strcmp(t->remote, cur->remote) != 0)) {
		snprintf(err, errlen,
			 "tunnel set changes SAs only: delete and add the tunnel to "
			 "change its endpoints");
		return INVALID;
	}
	if (!set_out && t->n_sa_in == 0) {
		snprintf(err, errlen, "tunnel set %s: give sa-out ID and/or sa-in ID[,ID...]",
			 t->name);
		return INVALID;
	}
	if (set_out) {
		if (state_sa(t->sa_out) == NULL) {
			snprintf(err, errlen, "sa-out: SA %u does not exist", t->sa_out);
			return NOT_FOUND;
		}
		other = state_tunnel_out(t->sa_out);
		if (other != NULL && other != cur) {
			snprintf(err, errlen, "SA %u is already the outbound SA of tunnel %s",
				 t->sa_out, other->name);
			return INVALID;
		}
	}
	status = check_sa_in(t, cur, err, errlen);
	if (status != OK)
		return status;
	/* A new copy for the old one (config_replace), not a change in place:
	 * its SAs are index keys (state_tunnel_out, _in), set before it is added. */
	next = msg_clone(cur);
	if (set_out)
		next->sa_out = t->sa_out;
	if (t->n_sa_in != 0) {
		uint32_t *in = malloc(t->n_sa_in * sizeof(*in));

		if (in == NULL)
			abort();
		memcpy(in, t->sa_in, t->n_sa_in * sizeof(*in));
		free(next->sa_in);
		next->sa_in = in;
		next->n_sa_in = t->n_sa_in;
	}
	config_replace(CONFIG_TUNNEL, cur, next);
	ESGW_INFO("tunnel %s set: sa-out %u, %zu sa-in", next->name, next->sa_out, next->n_sa_in);
	return OK;
}
