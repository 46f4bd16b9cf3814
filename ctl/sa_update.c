/* SPDX-License-Identifier: BSD-3-Clause */
/* SaUpdate: an installed SA moves to other outer addresses or UDP ports in
 * place, as an IKE daemon asks when the peer's NAT mapping changed or the
 * peer moved (charon's update_sa). Only the configuration changes: the SA
 * keeps its id, SPI, slot and instance, so the crypto worker that owns it
 * keeps the runtime state (sequence numbers, replay window, counters,
 * lifetimes) and only writes another outer header from the next packet on,
 * and the router's inbound SPI table takes the tunnel's new remote address
 * and the SA's new local port in the same push. */
#include "ctld.h"

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "validate.h"

#define INVALID ESGW__STATUS__STATUS_INVALID_ARGUMENT

/* The tunnels whose endpoints are the SA's (dp_config.c gives the SA those of
 * the first): where it sends, where it receives, or the policy's it sends
 * for. */
static size_t sa_tunnels(uint32_t id, Esgw__Tunnel *out[3])
{
	Esgw__Tunnel *all[3] = {state_tunnel_out(id), state_tunnel_in(id), policy_tunnel_out(id)};
	size_t n = 0;

	for (size_t i = 0; i < 3; i++) {
		bool seen = all[i] == NULL;

		for (size_t k = 0; k < n && !seen; k++)
			seen = out[k] == all[i];
		if (!seen)
			out[n++] = all[i];
	}
	return n;
}

static Esgw__Status check_request(const Esgw__SaUpdate *u, const Esgw__Sa *sa,
				  Esgw__Tunnel *const *tunnels, size_t n, char *err, size_t errlen)
{
	bool encap = u->encap == ESGW__SA_UPDATE__ENCAP__ENCAP_UNCHANGED
			     ? sa->udp_encap
			     : u->encap == ESGW__SA_UPDATE__ENCAP__ENCAP_UDP;

	if ((u->local[0] && esgw_check_address(u->local, "local address", err, errlen) < 0) ||
	    (u->remote[0] && esgw_check_address(u->remote, "remote address", err, errlen) < 0))
		return INVALID;
	if (u->encap > ESGW__SA_UPDATE__ENCAP__ENCAP_NONE) {
		snprintf(err, errlen, "sa update: unknown encapsulation %d", u->encap);
		return INVALID;
	}
	if (u->udp_sport > 65535 || u->udp_dport > 65535) {
		snprintf(err, errlen, "sa update: UDP ports are 1..65535");
		return INVALID;
	}
	if (!encap && (u->udp_sport || u->udp_dport)) {
		snprintf(err, errlen, "sa update: ports go only with encap udp");
		return INVALID;
	}
	if ((u->local[0] || u->remote[0]) && n == 0) {
		snprintf(err, errlen,
			 "SA %u is in no tunnel: its outer addresses are those of the tunnel "
			 "it joins",
			 sa->id);
		return INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		const char *local = u->local[0] ? u->local : tunnels[i]->local;
		const char *remote = u->remote[0] ? u->remote : tunnels[i]->remote;

		if (esgw_is_ipv6_text(local) != esgw_is_ipv6_text(remote)) {
			snprintf(err, errlen,
				 "tunnel %s: local %s and remote %s would be of different families",
				 tunnels[i]->name, local, remote);
			return INVALID;
		}
	}
	return ESGW__STATUS__STATUS_OK;
}

Esgw__Status sa_update_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			      size_t errlen)
{
	const Esgw__SaUpdate *u = req->sa_update;
	Esgw__Sa *sa = state_sa(u->id);
	Esgw__Tunnel *tunnels[3];
	Esgw__Status status;
	size_t n;

	(void)resp;
	if (sa == NULL) {
		snprintf(err, errlen, "SA %u does not exist", u->id);
		return ESGW__STATUS__STATUS_NOT_FOUND;
	}
	n = sa_tunnels(sa->id, tunnels);
	status = check_request(u, sa, tunnels, n, err, errlen);
	if (status != ESGW__STATUS__STATUS_OK)
		return status;
	/* New copies for the old objects (config_replace), not changes in place. */
	for (size_t i = 0; i < n; i++) {
		Esgw__Tunnel *next = msg_clone(tunnels[i]);

		if (u->local[0])
			str_set(&next->local, u->local);
		if (u->remote[0])
			str_set(&next->remote, u->remote);
		config_replace(CONFIG_TUNNEL, tunnels[i], next);
		tunnels[i] = next;
	}
	sa = sa_replace(sa, sa->worker);
	if (u->encap != ESGW__SA_UPDATE__ENCAP__ENCAP_UNCHANGED)
		sa->udp_encap = u->encap == ESGW__SA_UPDATE__ENCAP__ENCAP_UDP;
	if (!sa->udp_encap) {
		sa->udp_sport = sa->udp_dport = 0;
	} else { /* RFC 3948: 4500 where nothing was ever said, as sa add does */
		sa->udp_sport = u->udp_sport ? u->udp_sport : sa->udp_sport ? sa->udp_sport : 4500;
		sa->udp_dport = u->udp_dport ? u->udp_dport : sa->udp_dport ? sa->udp_dport : 4500;
	}
	ESGW_INFO("SA %u updated in place: %s %s -> %s, encap %s %u/%u", sa->id,
		  n ? tunnels[0]->name : "(no tunnel)", n ? tunnels[0]->local : "-",
		  n ? tunnels[0]->remote : "-", sa->udp_encap ? "udp" : "none", sa->udp_sport,
		  sa->udp_dport);
	return ESGW__STATUS__STATUS_OK;
}
