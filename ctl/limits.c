/* SPDX-License-Identifier: BSD-3-Clause */
/* What the dataplane can hold, checked on every changed configuration before
 * esgw-ctld accepts it: a configuration the router would refuse (a table too
 * small, a next hop it cannot place) must be refused here, at the API, with
 * the limit in the message. Otherwise it would be saved, pushed, refused by
 * the router, and the router would come back from its next restart without
 * any tables at all. The limits are common/esgw_limits.h, the router's own. */
#include "ctld.h"

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "esgw_limits.h"

#define NATT_DEFAULT_PORT 4500

#define INVALID ESGW__STATUS__STATUS_INVALID_ARGUMENT

static Esgw__Status check_addresses(const Esgw__Config *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n_interfaces; i++) {
		if (c->interfaces[i]->n_addresses > ESGW_MAX_ADDRS_PER_INTERFACE) {
			snprintf(err, errlen,
				 "interface %s: at most %d addresses (IPv4 and IPv6 together): the "
				 "router's table holds no more",
				 c->interfaces[i]->name, ESGW_MAX_ADDRS_PER_INTERFACE);
			return INVALID;
		}
	}
	return ESGW__STATUS__STATUS_OK;
}

/* Distinct local ports of UDP-encapsulated SAs, 4500 always among them
 * (router/natt.c keeps them in a table of ESGW_MAX_NATT_PORTS). */
static Esgw__Status check_natt_ports(const Esgw__Config *c, char *err, size_t errlen)
{
	uint32_t ports[ESGW_MAX_NATT_PORTS] = {NATT_DEFAULT_PORT};
	size_t n = 1;

	for (size_t i = 0; i < c->n_sas; i++) {
		const Esgw__Sa *sa = c->sas[i];
		uint32_t port = sa->udp_sport ? sa->udp_sport : NATT_DEFAULT_PORT;
		size_t k;

		if (!sa->udp_encap)
			continue;
		for (k = 0; k < n && ports[k] != port; k++)
			;
		if (k < n)
			continue;
		if (n == ESGW_MAX_NATT_PORTS) {
			snprintf(err, errlen,
				 "SA %u: local UDP port %u would be the %zu-th NAT-T port: the router "
				 "takes at most %d (4500 included)",
				 sa->id, port, n + 1, ESGW_MAX_NATT_PORTS);
			return INVALID;
		}
		ports[n++] = port;
	}
	return ESGW__STATUS__STATUS_OK;
}

static Esgw__Status check_tunnel(const Esgw__Tunnel *t, char *err, size_t errlen)
{
	for (size_t k = 0; k < t->n_sa_in; k++) {
		if (t->sa_in[k] == t->sa_out) {
			snprintf(err, errlen,
				 "tunnel %s: SA %u cannot be both its sa-out and an sa-in "
				 "(one SA, one direction)",
				 t->name, t->sa_out);
			return INVALID;
		}
	}
	return ESGW__STATUS__STATUS_OK;
}

static Esgw__Status check_tunnels(const Esgw__Config *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n_tunnels; i++)
		if (check_tunnel(c->tunnels[i], err, errlen) != ESGW__STATUS__STATUS_OK)
			return INVALID;
	return ESGW__STATUS__STATUS_OK;
}

static bool on_connected_subnet(const Esgw__Config *c, const char *addr)
{
	bool v6 = esgw_is_ipv6_text(addr);
	uint8_t a6[16], p6[16], len;
	uint32_t a4, p4;

	if (v6 ? esgw_parse_ipv6(addr, a6) < 0 : esgw_parse_ipv4(addr, &a4) < 0)
		return false;
	for (size_t i = 0; i < c->n_interfaces; i++) {
		for (size_t k = 0; k < c->interfaces[i]->n_addresses; k++) {
			const char *s = c->interfaces[i]->addresses[k];

			if (esgw_is_ipv6_text(s) != v6)
				continue;
			if (v6 && esgw_parse_prefix6(s, p6, &len) == 0 && len < 128 &&
			    memcmp(p6, a6, 16) != 0 && esgw_prefix6_match(p6, a6, len))
				return true;
			if (!v6 && esgw_parse_prefix(s, &p4, &len) == 0 && len < 32 && p4 != a4 &&
			    ((p4 ^ a4) & esgw_prefix_mask(len)) == 0)
				return true;
		}
	}
	return false;
}

static Esgw__Status check_next_hop(const Esgw__Config *c, const Esgw__Route *r, char *err,
				   size_t errlen)
{
	if (r->via[0] == '\0' || r->interface[0] != '\0')
		return ESGW__STATUS__STATUS_OK; /* a tunnel, or a port named with dev */
	if (!on_connected_subnet(c, r->via)) {
		snprintf(err, errlen,
			 "route %s: next hop %s is not on the subnet of an interface address "
			 "(add the address first, or name the port with dev)",
			 r->prefix, r->via);
		return INVALID;
	}
	return ESGW__STATUS__STATUS_OK;
}

static Esgw__Status check_next_hops(const Esgw__Config *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n_routes; i++)
		if (check_next_hop(c, c->routes[i], err, errlen) != ESGW__STATUS__STATUS_OK)
			return INVALID;
	return ESGW__STATUS__STATUS_OK;
}

Esgw__Status config_check_limits(const Esgw__Config *c, char *err, size_t errlen)
{
	Esgw__Status (*const checks[])(const Esgw__Config *, char *, size_t) = {
		check_addresses, check_natt_ports, check_tunnels, check_next_hops};

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		Esgw__Status st = checks[i](c, err, errlen);

		if (st != ESGW__STATUS__STATUS_OK)
			return st;
	}
	if (c->n_neighbors > ESGW_MAX_STATIC_NEIGHBORS) {
		snprintf(err, errlen, "at most %d static neighbors: the router keeps them among %d",
			 ESGW_MAX_STATIC_NEIGHBORS, ESGW_NEIGHBOR_ENTRIES);
		return INVALID;
	}
	return ESGW__STATUS__STATUS_OK;
}

Esgw__Status config_check_change_limits(const Esgw__Config *c, char *err, size_t errlen)
{
	bool natt = false;

	/* Only what the change added can break a limit (it does not touch the
	 * interfaces); each object checked if it is still there at the end. */
	for (size_t i = 0; i < change_count(); i++) {
		struct change_item e = change_entry(i);
		Esgw__Status st = ESGW__STATUS__STATUS_OK;

		if (!e.added)
			continue;
		if (e.kind == CONFIG_TUNNEL &&
		    state_tunnel(((Esgw__Tunnel *)e.item)->name) == e.item)
			st = check_tunnel(e.item, err, errlen);
		else if (e.kind == CONFIG_ROUTE &&
			 state_route(((Esgw__Route *)e.item)->prefix) == e.item)
			st = check_next_hop(c, e.item, err, errlen);
		else if (e.kind == CONFIG_SA && ((Esgw__Sa *)e.item)->udp_encap &&
			 ((Esgw__Sa *)e.item)->udp_sport != 0 &&
			 ((Esgw__Sa *)e.item)->udp_sport != NATT_DEFAULT_PORT)
			natt = true; /* maybe a port more: counted over every SA */
		if (st != ESGW__STATUS__STATUS_OK)
			return st;
	}
	if (natt)
		return check_natt_ports(c, err, errlen);
	if (c->n_neighbors > ESGW_MAX_STATIC_NEIGHBORS) {
		snprintf(err, errlen, "at most %d static neighbors: the router keeps them among %d",
			 ESGW_MAX_STATIC_NEIGHBORS, ESGW_NEIGHBOR_ENTRIES);
		return INVALID;
	}
	return ESGW__STATUS__STATUS_OK;
}
