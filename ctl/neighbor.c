/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's static neighbours: `neighbor add IFACE ADDR MAC` and
 * `neighbor del IFACE ADDR`, kept in the configuration in canonical form
 * (address as inet_ntop writes it, MAC in lower case) and pushed to the
 * router, which makes them permanent entries of its neighbour table; and
 * `show neighbors`, the router's whole table (static and learnt). */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "esgw_limits.h"
#include "log.h"
#include "validate.h"

/* The address and MAC of n in canonical form; 0, or -1 if they do not parse. */
static int canonical(const Esgw__Neighbor *n, char *addr, size_t alen, char *mac, size_t mlen)
{
	uint8_t a6[16], m[6];
	uint32_t a4;

	if (esgw_is_ipv6_text(n->address)) {
		if (esgw_parse_ipv6(n->address, a6) < 0 || alen < ESGW_IPV6_STRLEN)
			return -1;
		esgw_fmt_ipv6(a6, addr);
	} else {
		if (esgw_parse_ipv4(n->address, &a4) < 0 || alen < 16)
			return -1;
		esgw_fmt_ipv4(a4, addr);
	}
	if (mac != NULL) {
		if (esgw_parse_mac(n->mac, m) < 0 || mlen < 18)
			return -1;
		esgw_fmt_mac(m, mac);
	}
	return 0;
}

static int neighbor_index(const char *interface, const char *address)
{
	for (size_t i = 0; i < ctld.config->n_neighbors; i++)
		if (strcmp(ctld.config->neighbors[i]->interface, interface) == 0 &&
		    strcmp(ctld.config->neighbors[i]->address, address) == 0)
			return (int)i;
	return -1;
}

Esgw__Neighbor *neighbor_of_interface(const char *interface)
{
	for (size_t i = 0; i < ctld.config->n_neighbors; i++)
		if (strcmp(ctld.config->neighbors[i]->interface, interface) == 0)
			return ctld.config->neighbors[i];
	return NULL;
}

Esgw__Status neighbor_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				 size_t errlen)
{
	const Esgw__Neighbor *n = req->neighbor_add;
	char addr[ESGW_IPV6_STRLEN], mac[18];
	Esgw__Neighbor *copy;

	(void)resp;
	if (esgw_check_neighbor(n, true, err, errlen) < 0 ||
	    canonical(n, addr, sizeof(addr), mac, sizeof(mac)) < 0) {
		if (err[0] == '\0')
			snprintf(err, errlen, "neighbor: bad address or MAC");
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	}
	if (state_interface(n->interface) == NULL) {
		snprintf(err, errlen, "interface %.40s does not exist", n->interface);
		return ESGW__STATUS__STATUS_NOT_FOUND;
	}
	if (neighbor_index(n->interface, addr) >= 0) {
		snprintf(err, errlen,
			 "interface %s already has a static neighbor %s: delete it first",
			 n->interface, addr);
		return ESGW__STATUS__STATUS_ALREADY_EXISTS;
	}
	copy = msg_clone(n);
	str_set(&copy->address, addr);
	str_set(&copy->mac, mac);
	config_add(CONFIG_NEIGHBOR, copy);
	ESGW_INFO("static neighbor %s on %s: %s", addr, n->interface, mac);
	return ESGW__STATUS__STATUS_OK;
}

Esgw__Status neighbor_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				 size_t errlen)
{
	const Esgw__Neighbor *n = req->neighbor_del;
	char addr[ESGW_IPV6_STRLEN];
	int i;

	(void)resp;
	if (esgw_check_neighbor(n, false, err, errlen) < 0 ||
	    canonical(n, addr, sizeof(addr), NULL, 0) < 0)
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	i = neighbor_index(n->interface, addr);
	if (i < 0) {
		snprintf(err, errlen, "interface %.40s has no static neighbor %s", n->interface,
			 addr);
		return ESGW__STATUS__STATUS_NOT_FOUND;
	}
	config_remove(CONFIG_NEIGHBOR, (size_t)i);
	ESGW_INFO("static neighbor %s on %s deleted", addr, n->interface);
	return ESGW__STATUS__STATUS_OK;
}
