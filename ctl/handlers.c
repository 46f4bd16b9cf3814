/* SPDX-License-Identifier: BSD-3-Clause */
/* The control API: one handler per Request body, found in a table. Each handler
 * checks every field and reference before it changes anything; the dispatcher
 * then saves the new configuration and pushes it, or restores the old one. */
#include "ctld.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "addr.h"
#include "esp_algorithms.h"
#include "log.h"
#include "replay.h"
#include "validate.h"

typedef Esgw__Status (*handler_fn)(const Esgw__Request *req, Esgw__Response *resp, char *err,
				   size_t errlen);

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

static Esgw__Status interface_add(const Esgw__Request *req, Esgw__Response *resp, char *err,
				  size_t errlen)
{
	const Esgw__Interface *in = req->interface_add;
	char device[128], other[128], canon[ESGW_ADDR_STRLEN];
	Esgw__Interface *copy;

	(void)resp;
	if (esgw_check_name(in->name, "interface name", err, errlen) < 0)
		return INVALID;
	if (state_interface(in->name) != NULL) {
		snprintf(err, errlen, "interface %s already exists", in->name);
		return EXISTS;
	}
	esgw_devargs_device(in->devargs, device, sizeof(device));
	if (device[0] == '\0' || strlen(in->devargs) > 255) {
		snprintf(err, errlen,
			 "devargs '%.64s' has no device name (e.g. "
			 "net_af_packet0,iface=eth1)",
			 in->devargs);
		return INVALID;
	}
	for (const char *p = in->devargs; *p; p++) {
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
	if (in->mtu != 0 && (in->mtu < ESGW_MTU_MIN || in->mtu > ESGW_MTU_MAX)) {
		snprintf(err, errlen, "mtu %u is out of range %d..%d", in->mtu, ESGW_MTU_MIN,
			 ESGW_MTU_MAX);
		return INVALID;
	}
	for (size_t i = 0; i < in->n_addresses; i++)
		if (check_interface_address(in->addresses[i], canon, err, errlen) != OK)
			return INVALID;

	copy = msg_clone(in);
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
		check_interface_address(copy->addresses[i], canon, err, errlen);
		str_set(&copy->addresses[i], canon);
	}
	array_append(&ctld.config->interfaces, &ctld.config->n_interfaces, copy);
	ESGW_INFO("interface %s added (%s)", copy->name, copy->devargs);
	return OK;
}

static Esgw__Status interface_del(const Esgw__Request *req, Esgw__Response *resp, char *err,
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
		if (state_neighbor_of_interface(name) != NULL) {
			snprintf(err, errlen,
				 "interface %s has static neighbor %s: delete it first", name,
				 state_neighbor_of_interface(name)->address);
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

static Esgw__Status address_add(const Esgw__Request *req, Esgw__Response *resp, char *err,
				size_t errlen)
{
	(void)resp;
	return address_change(req->address_add, true, err, errlen);
}

static Esgw__Status address_del(const Esgw__Request *req, Esgw__Response *resp, char *err,
				size_t errlen)
{
	(void)resp;
	return address_change(req->address_del, false, err, errlen);
}

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

static Esgw__Status route_add(const Esgw__Request *req, Esgw__Response *resp, char *err,
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
	array_append(&ctld.config->routes, &ctld.config->n_routes, copy);
	ESGW_INFO("route %s added", canon);
	return OK;
}

static Esgw__Status route_del(const Esgw__Request *req, Esgw__Response *resp, char *err,
			      size_t errlen)
{
	char canon[ESGW_ADDR_STRLEN];

	(void)resp;
	if (route_prefix(req->route_del->prefix, canon, err, errlen) != OK)
		return INVALID;
	for (size_t i = 0; i < ctld.config->n_routes; i++) {
		if (strcmp(ctld.config->routes[i]->prefix, canon) == 0) {
			esgw__route__free_unpacked(ctld.config->routes[i], NULL);
			array_remove(&ctld.config->routes, &ctld.config->n_routes, i);
			ESGW_INFO("route %s deleted", canon);
			return OK;
		}
	}
	snprintf(err, errlen, "route %s does not exist", canon);
	return NOT_FOUND;
}

static Esgw__Status sa_add(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	const Esgw__Sa *sa = req->sa_add;
	const struct esp_alg_info *info;
	Esgw__Sa *other, *copy;
	int slot, worker;

	(void)resp;
	if (esgw_check_sa(sa, err, errlen) < 0)
		return INVALID;
	if (state_sa(sa->id) != NULL) {
		snprintf(err, errlen, "SA %u already exists", sa->id);
		return EXISTS;
	}
	other = state_sa_by_spi(sa->spi);
	if (other != NULL) {
		snprintf(err, errlen, "SPI %u (0x%08x) is already used by SA %u", sa->spi, sa->spi,
			 other->id);
		return EXISTS;
	}
	if (sa->worker >= (int32_t)ctld.config->workers) {
		snprintf(err, errlen, "worker %d does not exist (workers 0..%u)", sa->worker,
			 ctld.config->workers - 1);
		return INVALID;
	}
	worker = sa->worker >= 0 ? sa->worker : state_least_loaded_worker();
	slot = state_free_slot();
	if (slot < 0) {
		snprintf(err, errlen, "all %d SA slots are in use: at most %d SAs", ESGW_MAX_SA,
			 ESGW_MAX_SA);
		return INVALID;
	}
	copy = msg_clone(sa);
	info = esp_alg_lookup((unsigned int)copy->algorithm);
	if (info->salt_len != 0 && copy->salt.len == 0) {
		/* AEAD key || salt (RFC 4106 8.1, RFC 7634 2 keying material): store them apart. */
		copy->salt.data = malloc(info->salt_len);
		if (copy->salt.data == NULL)
			abort();
		memcpy(copy->salt.data, copy->crypto_key.data + info->key_len, info->salt_len);
		copy->salt.len = info->salt_len;
		explicit_bzero(copy->crypto_key.data + info->key_len, info->salt_len);
		copy->crypto_key.len = info->key_len;
	}
	copy->direction = ESGW__DIRECTION__DIRECTION_UNSPECIFIED; /* follows from the tunnels */
	copy->worker = worker;
	copy->slot = (uint32_t)slot;
	copy->instance = seq_floor_new_instance();
	/* ctld's to set, never the client's: the floor (seq_floor.c) and the
	 * AEAD IV mask, drawn once for the SA's whole life (esp_encap.c). */
	seq_floor_sa_added(copy);
	if (getrandom(&copy->iv_mask, sizeof(copy->iv_mask), 0) != sizeof(copy->iv_mask)) {
		sa_free(copy);
		snprintf(err, errlen, "getrandom failed: cannot draw the SA's IV mask");
		return ESGW__STATUS__STATUS_INTERNAL;
	}
	if (copy->replay_window == 0)
		copy->replay_window = REPLAY_WINDOW_DEFAULT;
	if (copy->udp_encap) { /* RFC 3948: 4500 both ways unless told otherwise */
		copy->udp_sport = copy->udp_sport ? copy->udp_sport : 4500;
		copy->udp_dport = copy->udp_dport ? copy->udp_dport : 4500;
	}
	array_append(&ctld.config->sas, &ctld.config->n_sas, copy);
	ESGW_INFO("SA %u added: spi 0x%08x, %s, worker %d, slot %d", copy->id, copy->spi,
		  esgw_algorithm_name(copy->algorithm), worker, slot);
	return OK;
}

static Esgw__Status sa_del(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	uint32_t id = req->sa_del->id;
	Esgw__Tunnel *t = state_tunnel_out(id);

	(void)resp;
	if (t == NULL)
		t = state_tunnel_in(id);
	if (t != NULL) {
		snprintf(err, errlen, "SA %u is used by tunnel %s: delete the tunnel first", id,
			 t->name);
		return INVALID;
	}
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		if (ctld.config->sas[i]->id == id) {
			sa_free(ctld.config->sas[i]);
			array_remove(&ctld.config->sas, &ctld.config->n_sas, i);
			ESGW_INFO("SA %u deleted", id);
			return OK;
		}
	}
	snprintf(err, errlen, "SA %u does not exist", id);
	return NOT_FOUND;
}

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

static Esgw__Status tunnel_add(const Esgw__Request *req, Esgw__Response *resp, char *err,
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
	array_append(&ctld.config->tunnels, &ctld.config->n_tunnels, msg_clone(t));
	ESGW_INFO("tunnel %s added: %s -> %s, sa-out %u", t->name, t->local, t->remote, t->sa_out);
	return OK;
}

static Esgw__Status tunnel_del(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const char *name = req->tunnel_del->name;
	const Esgw__Policy *policy = state_policy_of_tunnel(name);

	(void)resp;
	if (policy != NULL) {
		snprintf(err, errlen, "tunnel %s is used by policy %s: delete the policy first",
			 name, policy->name);
		return INVALID;
	}
	for (size_t r = 0; r < ctld.config->n_routes; r++) {
		if (strcmp(ctld.config->routes[r]->tunnel, name) == 0) {
			snprintf(err, errlen,
				 "tunnel %s is used by route %s: delete the route first", name,
				 ctld.config->routes[r]->prefix);
			return INVALID;
		}
	}
	for (size_t i = 0; i < ctld.config->n_tunnels; i++) {
		if (strcmp(ctld.config->tunnels[i]->name, name) == 0) {
			esgw__tunnel__free_unpacked(ctld.config->tunnels[i], NULL);
			array_remove(&ctld.config->tunnels, &ctld.config->n_tunnels, i);
			ESGW_INFO("tunnel %s deleted", name);
			return OK;
		}
	}
	snprintf(err, errlen, "tunnel %.40s does not exist", name);
	return NOT_FOUND;
}

/* Rekey without loss (RFC 4301 4.4.2.1 semantics): replace an existing
 * tunnel's sa_out and/or sa_in in one configuration generation. The router
 * switches outbound packets to the new SA between two bursts; inbound keeps
 * accepting every SA listed, so the old one goes on decrypting what is in
 * flight until a later `tunnel set` drops it from sa_in. */
static Esgw__Status tunnel_set(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const Esgw__Tunnel *t = req->tunnel_set;
	Esgw__Tunnel *cur = state_tunnel(t->name), *other;
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
	if (set_out)
		cur->sa_out = t->sa_out;
	if (t->n_sa_in != 0) {
		uint32_t *in = malloc(t->n_sa_in * sizeof(*in));

		if (in == NULL)
			abort();
		memcpy(in, t->sa_in, t->n_sa_in * sizeof(*in));
		free(cur->sa_in);
		cur->sa_in = in;
		cur->n_sa_in = t->n_sa_in;
	}
	ESGW_INFO("tunnel %s set: sa-out %u, %zu sa-in", cur->name, cur->sa_out, cur->n_sa_in);
	return OK;
}

static Esgw__Status show(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	Esgw__ShowReply *reply;
	Esgw__ShowRequest__What what = req->show->what;

	if (what <= ESGW__SHOW_REQUEST__WHAT__WHAT_UNSPECIFIED ||
	    (what > ESGW__SHOW_REQUEST__WHAT__WHAT_DATAPLANE &&
	     what != ESGW__SHOW_REQUEST__WHAT__WHAT_POLICIES &&
	     what != ESGW__SHOW_REQUEST__WHAT__WHAT_NEIGHBORS)) {
		snprintf(err, errlen, "show: unknown item %d", what);
		return INVALID;
	}
	reply = calloc(1, sizeof(*reply));
	if (reply == NULL)
		abort();
	esgw__show_reply__init(reply);
	show_build(what, reply);
	resp->show = reply;
	return OK;
}

static const struct handler {
	Esgw__Request__BodyCase body;
	handler_fn fn;
	bool changes;            /* saves and pushes on success */
	bool changes_interfaces; /* the dataplane restarts with the new port set */
} handlers[] = {
	{ESGW__REQUEST__BODY_INTERFACE_ADD, interface_add, true, true},
	{ESGW__REQUEST__BODY_INTERFACE_DEL, interface_del, true, true},
	{ESGW__REQUEST__BODY_ADDRESS_ADD, address_add, true, false},
	{ESGW__REQUEST__BODY_ADDRESS_DEL, address_del, true, false},
	{ESGW__REQUEST__BODY_ROUTE_ADD, route_add, true, false},
	{ESGW__REQUEST__BODY_ROUTE_DEL, route_del, true, false},
	{ESGW__REQUEST__BODY_SA_ADD, sa_add, true, false},
	{ESGW__REQUEST__BODY_SA_DEL, sa_del, true, false},
	{ESGW__REQUEST__BODY_TUNNEL_ADD, tunnel_add, true, false},
	{ESGW__REQUEST__BODY_TUNNEL_DEL, tunnel_del, true, false},
	{ESGW__REQUEST__BODY_TUNNEL_SET, tunnel_set, true, false},
	{ESGW__REQUEST__BODY_SHOW, show, false, false},
	{ESGW__REQUEST__BODY_POLICY_ADD, policy_add_handle, true, false},
	{ESGW__REQUEST__BODY_POLICY_DEL, policy_del_handle, true, false},
	{ESGW__REQUEST__BODY_NEIGHBOR_ADD, neighbor_add_handle, true, false},
	{ESGW__REQUEST__BODY_NEIGHBOR_DEL, neighbor_del_handle, true, false},
	{ESGW__REQUEST__BODY_OWNER_RECONCILE, owner_reconcile_handle, true, false},
	{ESGW__REQUEST__BODY_SA_UPDATE, sa_update_handle, true, false},
	/* They save and push themselves: a move is several pushes in order. */
	{ESGW__REQUEST__BODY_SA_MOVE, sa_move_handle, false, false},
	{ESGW__REQUEST__BODY_WORKERS_SET, workers_set_handle, false, false},
	{ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE, events_handle_subscribe, false, false},
};

void handle_request(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	const struct handler *h = NULL;
	Esgw__Config *before;

	err[0] = '\0';
	if (req->version != ESGW__API_VERSION__API_VERSION_CURRENT) {
		resp->status = ESGW__STATUS__STATUS_VERSION_MISMATCH;
		snprintf(err, errlen, "API version %u is not supported (this esgw-ctld speaks %u)",
			 req->version, ESGW__API_VERSION__API_VERSION_CURRENT);
		goto out;
	}
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].body == req->body_case)
			h = &handlers[i];
	if (h == NULL) {
		resp->status = ESGW__STATUS__STATUS_UNSUPPORTED;
		snprintf(err, errlen, "unknown or empty request (body %d)", req->body_case);
		goto out;
	}
	if (!h->changes) {
		resp->status = h->fn(req, resp, err, errlen);
		goto out;
	}
	/* Handlers check before they change, but a copy costs little and makes a
	 * failed save leave memory and disk in agreement. */
	before = msg_clone(ctld.config);
	resp->status = h->fn(req, resp, err, errlen);
	if (resp->status == OK)
		resp->status = config_check_limits(ctld.config, err, errlen);
	if (resp->status == OK && config_save(ctld.config, ctld.opt.config_path, err, errlen) < 0) {
		ESGW_ERR("%s", err);
		resp->status = ESGW__STATUS__STATUS_INTERNAL;
	}
	if (resp->status != OK) {
		config_free(ctld.config);
		ctld.config = before;
		goto out;
	}
	events_config_diff(before, ctld.config);
	config_free(before);
	ctld_config_changed(h->changes_interfaces);
out:
	if (resp->status != OK)
		resp->error = err;
}

void handle_response_free(Esgw__Response *resp)
{
	if (resp->show != NULL) {
		show_free(resp->show);
		free(resp->show);
		resp->show = NULL;
	}
}
