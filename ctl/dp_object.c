/* SPDX-License-Identifier: BSD-3-Clause */
/* One object of ctld's configuration in its dataplane.proto form: addresses
 * and prefixes turned from the API's canonical text into bytes here, once, so
 * that no dataplane process parses text. Strings, lists and keys are borrowed
 * from ctld.config (valid while it is unchanged); the rest lives in the
 * arena of one push. */
#include "ctld.h"

#include <string.h>

#include "addr.h"
#include "validate.h"

static ProtobufCBinaryData bytes_of(struct arena *o, const void *data, size_t len)
{
	ProtobufCBinaryData b = {.len = len, .data = arena_alloc(o, len)};

	memcpy(b.data, data, len);
	return b;
}

/* An address ("" for none). Text that does not parse (a configuration file
 * edited by hand) goes empty: the process refuses it, naming the object. */
static ProtobufCBinaryData address_bytes(struct arena *o, const char *text)
{
	ProtobufCBinaryData none = {0, NULL};
	struct esgw_addr a;

	if (text == NULL || text[0] == '\0' || esgw_addr_parse(text, &a) < 0)
		return none;
	return bytes_of(o, a.bytes, esgw_addr_size(&a));
}

/* A prefix; one that does not parse goes with an empty address, as above. */
static Esgw__DpPrefix *prefix(struct arena *o, const char *text)
{
	Esgw__DpPrefix *p = arena_alloc(o, sizeof(*p));
	struct esgw_addr a;

	esgw__dp_prefix__init(p);
	if (esgw_addr_parse(text, &a) == 0) {
		p->address = bytes_of(o, a.bytes, esgw_addr_size(&a));
		p->length = a.len;
	}
	return p;
}

/* A policy's source or destination: absent for "" (any). */
static Esgw__DpPrefix *selector(struct arena *o, const char *text)
{
	return text[0] == '\0' ? NULL : prefix(o, text);
}

Esgw__DpInterface *dp_object_interface(struct arena *o, const Esgw__Interface *in)
{
	Esgw__DpInterface *d = arena_alloc(o, sizeof(*d));
	size_t len = strlen(in->devargs) + 1;

	esgw__dp_interface__init(d);
	d->name = in->name;
	d->device = esgw_devargs_device(in->devargs, arena_alloc(o, len), len);
	d->n_addresses = in->n_addresses;
	d->addresses = arena_alloc(o, in->n_addresses * sizeof(*d->addresses));
	for (size_t a = 0; a < in->n_addresses; a++)
		d->addresses[a] = prefix(o, in->addresses[a]);
	d->mtu = in->mtu ? in->mtu : 1500;
	return d;
}

Esgw__DpRoute *dp_object_route(struct arena *o, const Esgw__Route *r)
{
	Esgw__DpRoute *d = arena_alloc(o, sizeof(*d));

	esgw__dp_route__init(d);
	d->prefix = prefix(o, r->prefix);
	d->via = address_bytes(o, r->via);
	d->interface = r->interface;
	d->tunnel = r->tunnel;
	return d;
}

Esgw__DpTunnel *dp_object_tunnel(struct arena *o, const Esgw__Tunnel *t)
{
	Esgw__DpTunnel *d = arena_alloc(o, sizeof(*d));

	esgw__dp_tunnel__init(d);
	d->name = t->name;
	d->local = address_bytes(o, t->local);
	d->remote = address_bytes(o, t->remote);
	d->sa_out = t->sa_out;
	d->n_sa_in = t->n_sa_in;
	d->sa_in = t->sa_in;
	return d;
}

Esgw__DpSa *dp_object_sa(struct arena *o, const Esgw__Sa *sa, bool with_keys)
{
	Esgw__DpSa *d = arena_alloc(o, sizeof(*d));
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
		d->local = address_bytes(o, t->local);
		d->remote = address_bytes(o, t->remote);
		d->tunnel = t->name;
	}
	return d;
}

Esgw__DpPolicy *dp_object_policy(struct arena *o, const Esgw__Policy *p)
{
	Esgw__DpPolicy *d = arena_alloc(o, sizeof(*d));

	esgw__dp_policy__init(d);
	d->name = p->name;
	d->src = selector(o, p->src);
	d->dst = selector(o, p->dst);
	d->protocol = p->protocol;
	d->sport_lo = p->sport_lo;
	d->sport_hi = p->sport_hi;
	d->dport_lo = p->dport_lo;
	d->dport_hi = p->dport_hi;
	d->action = p->action;
	d->tunnel = p->tunnel;
	d->sa_out = p->sa_out;
	d->n_sa_in = p->n_sa_in;
	d->sa_in = p->sa_in;
	d->priority = p->priority;
	return d;
}

Esgw__DpNeighbor *dp_object_neighbor(struct arena *o, const Esgw__Neighbor *n)
{
	Esgw__DpNeighbor *d = arena_alloc(o, sizeof(*d));
	uint8_t mac[6];

	esgw__dp_neighbor__init(d);
	d->interface = n->interface;
	d->address = address_bytes(o, n->address);
	if (esgw_parse_mac(n->mac, mac) == 0)
		d->mac = bytes_of(o, mac, sizeof(mac));
	return d;
}
