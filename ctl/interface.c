/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's interfaces: `interface add|del` (a DPDK device and its name)
 * and `interface address add|del`, addresses kept in canonical form. */
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

/* An interface address with its subnet's length, into canon (ESGW_ADDR_STRLEN
 * bytes) in canonical form ("2001:DB8:0::1/64" -> "2001:db8::1/64"). */
static Esgw__Status check_interface_address(const char *s, char *canon, char *err, size_t errlen)
{
	struct esgw_addr a;

	if (esgw_addr_parse_prefix(s, &a) < 0 || a.len == 0) {
		if (esgw_is_ipv6_text(s))
			snprintf(err, errlen,
				 "address '%.64s' is not an IPv6 address with a length "
				 "X:X::X/LEN (LEN 1..128)",
				 s);
		else
			snprintf(err, errlen,
				 "address '%.64s' is not an IPv4 address with a length "
				 "A.B.C.D/LEN (LEN 1..32)",
				 s ? s : "");
		return INVALID;
	}
	esgw_addr_format(&a, 1, canon);
	return OK;
}

/* The device of a new interface: named, printable, no other interface's,
 * and a port left for it. Its name goes into device (128 bytes). */
static Esgw__Status check_device(const char *devargs, char *device, char *err, size_t errlen)
{
	char other[128];

	esgw_devargs_device(devargs, device, 128);
	if (device[0] == '\0' || strlen(devargs) > 255) {
		snprintf(err, errlen,
			 "devargs '%.64s' has no device name (e.g. "
			 "net_af_packet0,iface=eth1)",
			 devargs);
		return INVALID;
	}
	for (const char *p = devargs; *p; p++) {
		if (*p <= ' ' || *p > '~') {
			snprintf(err, errlen,
				 "devargs must not contain spaces or control characters");
			return INVALID;
		}
	}
	for (size_t i = 0; i < ctld.config->n_interfaces; i++) {
		Esgw__Interface *o = ctld.config->interfaces[i];

		if (strcmp(esgw_devargs_device(o->devargs, other, sizeof(other)), device) == 0) {
			snprintf(err, errlen, "device %s is already used by interface %s", device,
				 o->name);
			return EXISTS;
		}
	}
	if (ctld.config->n_interfaces >= ESGW_MAX_PORTS) {
		snprintf(err, errlen, "at most %d interfaces: the dataplane has no more ports",
			 ESGW_MAX_PORTS);
		return INVALID;
	}
	return OK;
}

/* What is stored of a checked new interface: the default MTU, a larger
 * af_packet ring, addresses in canonical form. */
static Esgw__Interface *interface_copy(const Esgw__Interface *in, const char *device)
{
	Esgw__Interface *copy = msg_clone(in);
	char canon[ESGW_ADDR_STRLEN], err[160];

	if (copy->mtu == 0)
		copy->mtu = 1500;
	if (strncmp(device, "net_af_packet", 13) == 0 &&
	    strstr(copy->devargs, "framecnt=") == NULL) {
		/* af_packet's kernel ring holds 512 frames by default: 0.2 s of a
		 * modest stream when rxtx is starved of CPU. 4096 (8 MB) rides out
		 * such stalls; what still overflows is counted as rx_missed. */
		char longer[300];

		snprintf(longer, sizeof(longer), "%s,framecnt=4096", copy->devargs);
		str_set(&copy->devargs, longer);
	}
	for (size_t i = 0; i < copy->n_addresses; i++) {
		check_interface_address(copy->addresses[i], canon, err, sizeof(err));
		str_set(&copy->addresses[i], canon);
	}
	return copy;
}

Esgw__Status interface_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				  size_t errlen)
{
	const Esgw__Interface *in = req->interface_add;
	char device[128], canon[ESGW_ADDR_STRLEN];
	Esgw__Interface *copy;
	Esgw__Status status;

	(void)resp;
	if (esgw_check_name(in->name, "interface name", err, errlen) < 0)
		return INVALID;
	if (state_interface(in->name) != NULL) {
		snprintf(err, errlen, "interface %s already exists", in->name);
		return EXISTS;
	}
	status = check_device(in->devargs, device, err, errlen);
	if (status != OK)
		return status;
	if (in->mtu != 0 && (in->mtu < ESGW_MTU_MIN || in->mtu > ESGW_MTU_MAX)) {
		snprintf(err, errlen, "mtu %u is out of range %d..%d", in->mtu, ESGW_MTU_MIN,
			 ESGW_MTU_MAX);
		return INVALID;
	}
	for (size_t i = 0; i < in->n_addresses; i++)
		if (check_interface_address(in->addresses[i], canon, err, errlen) != OK)
			return INVALID;
	copy = interface_copy(in, device);
	array_append(&ctld.config->interfaces, &ctld.config->n_interfaces, copy);
	ESGW_INFO("interface %s added (%s)", copy->name, copy->devargs);
	return OK;
}

Esgw__Status interface_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				  size_t errlen)
{
	const char *name = req->interface_del->name;

	(void)resp;
	for (size_t i = 0; i < ctld.config->n_interfaces; i++) {
		if (strcmp(ctld.config->interfaces[i]->name, name) != 0)
			continue;
		for (size_t r = 0; r < ctld.config->n_routes; r++) {
			if (strcmp(ctld.config->routes[r]->interface, name) == 0) {
				snprintf(err, errlen,
					 "interface %s is used by route %s: delete the route first",
					 name, ctld.config->routes[r]->prefix);
				return INVALID;
			}
		}
		if (neighbor_of_interface(name) != NULL) {
			snprintf(err, errlen,
				 "interface %s has static neighbor %s: delete it first", name,
				 neighbor_of_interface(name)->address);
			return INVALID;
		}
		esgw__interface__free_unpacked(ctld.config->interfaces[i], NULL);
		array_remove(&ctld.config->interfaces, &ctld.config->n_interfaces, i);
		ESGW_INFO("interface %s deleted", name);
		return OK;
	}
	snprintf(err, errlen, "interface %.40s does not exist", name);
	return NOT_FOUND;
}

static Esgw__Status address_change(const Esgw__AddressChange *ac, bool add, char *err,
				   size_t errlen)
{
	Esgw__Interface *in = state_interface(ac->interface);
	char canon[ESGW_ADDR_STRLEN];

	if (in == NULL) {
		snprintf(err, errlen, "interface %.40s does not exist", ac->interface);
		return NOT_FOUND;
	}
	if (check_interface_address(ac->address, canon, err, errlen) != OK)
		return INVALID;
	for (size_t i = 0; i < in->n_addresses; i++) {
		if (strcmp(in->addresses[i], canon) != 0)
			continue;
		if (add) {
			snprintf(err, errlen, "interface %s already has address %s", in->name,
				 canon);
			return EXISTS;
		}
		free(in->addresses[i]);
		array_remove(&in->addresses, &in->n_addresses, i);
		ESGW_INFO("interface %s: address %s deleted", in->name, canon);
		return OK;
	}
	if (!add) {
		snprintf(err, errlen, "interface %s has no address %s", in->name, canon);
		return NOT_FOUND;
	}
	array_append(&in->addresses, &in->n_addresses, NULL);
	in->addresses[in->n_addresses - 1] = NULL;
	str_set(&in->addresses[in->n_addresses - 1], canon);
	ESGW_INFO("interface %s: address %s added", in->name, canon);
	return OK;
}

Esgw__Status interface_address_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
					  size_t errlen)
{
	(void)resp;
	return address_change(req->address_add, true, err, errlen);
}

Esgw__Status interface_address_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
					  size_t errlen)
{
	(void)resp;
	return address_change(req->address_del, false, err, errlen);
}
