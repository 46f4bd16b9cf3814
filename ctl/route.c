/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's routes: `route add|del`, a canonical prefix to a next hop on a
 * connected subnet or into a route-based tunnel. */
#include "ctld.h"

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "validate.h"

#define OK ESGW__STATUS__STATUS_OK
#define INVALID ESGW__STATUS__STATUS_INVALID_ARGUMENT
#define NOT_FOUND ESGW__STATUS__STATUS_NOT_FOUND
#define EXISTS ESGW__STATUS__STATUS_ALREADY_EXISTS

/* Canonical route prefix into canon (ESGW_ADDR_STRLEN bytes); refuses host
 * bits like `ip route` does. */
static Esgw__Status route_prefix(const char *s, char *canon, char *err, size_t errlen)
{
	struct esgw_addr a, net;

	if (esgw_addr_parse_prefix(s, &a) < 0) {
		if (esgw_is_ipv6_text(s))
			snprintf(err, errlen,
				 "route prefix '%.64s' is not an IPv6 prefix X:X::X/LEN", s);
		else
			snprintf(err, errlen,
				 "route prefix '%.64s' is not an IPv4 prefix A.B.C.D/LEN",
				 s ? s : "");
		return INVALID;
	}
	esgw_addr_format(&a, 1, canon);
	net = a;
	esgw_addr_clear_host(&net);
	if (memcmp(net.bytes, a.bytes, sizeof(a.bytes)) != 0) {
		snprintf(err, errlen, "route prefix %s has bits set beyond its length", canon);
		return INVALID;
	}
	return OK;
}

Esgw__Status route_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			      size_t errlen)
{
	const Esgw__Route *r = req->route_add;
	bool has_via = r->via[0] != '\0', has_tunnel = r->tunnel[0] != '\0';
	char canon[ESGW_ADDR_STRLEN];
	Esgw__Route *copy;

	(void)resp;
	if (route_prefix(r->prefix, canon, err, errlen) != OK)
		return INVALID;
	if (state_route(canon) != NULL) {
		snprintf(err, errlen, "route %s already exists", canon);
		return EXISTS;
	}
	if (has_via == has_tunnel) {
		snprintf(err, errlen, "route %s needs exactly one of 'via ADDR' or 'tunnel NAME'",
			 canon);
		return INVALID;
	}
	if (has_via && esgw_check_address(r->via, "next hop", err, errlen) < 0)
		return INVALID;
	if (has_via && esgw_is_ipv6_text(r->via) != esgw_is_ipv6_text(canon)) {
		snprintf(err, errlen, "route %s: next hop %s is of the other address family", canon,
			 r->via);
		return INVALID;
	}
	if (has_tunnel && r->interface[0] != '\0') {
		snprintf(err, errlen, "route %s: 'dev' goes only with 'via'", canon);
		return INVALID;
	}
	if (r->interface[0] != '\0' && state_interface(r->interface) == NULL) {
		snprintf(err, errlen, "interface %.40s does not exist", r->interface);
		return NOT_FOUND;
	}
	if (has_tunnel && state_tunnel(r->tunnel) == NULL) {
		snprintf(err, errlen, "tunnel %.40s does not exist", r->tunnel);
		return NOT_FOUND;
	}
	copy = msg_clone(r);
	str_set(&copy->prefix, canon);
	config_add(CONFIG_ROUTE, copy);
	ESGW_INFO("route %s added", canon);
	return OK;
}

Esgw__Status route_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			      size_t errlen)
{
	char canon[ESGW_ADDR_STRLEN];
	Esgw__Route *r;

	(void)resp;
	if (route_prefix(req->route_del->prefix, canon, err, errlen) != OK)
		return INVALID;
	r = state_route(canon);
	if (r == NULL) {
		snprintf(err, errlen, "route %s does not exist", canon);
		return NOT_FOUND;
	}
	config_remove_item(CONFIG_ROUTE, r);
	ESGW_INFO("route %s deleted", canon);
	return OK;
}
