/* SPDX-License-Identifier: BSD-3-Clause */
/* The neighbour table of both families: IPv4 next hops resolved by ARP
 * (arp.c) and IPv6 ones by neighbor discovery (nd.c) share one bounded
 * table, its timers, its eviction and the packets waiting for resolution.
 *
 * The table is input any sender on a link can try to fill, so:
 * - entries are created only by our own resolutions (incomplete, at most
 *   NEIGH_INCOMPLETE_MAX of them, the oldest evicted first) and by requests
 *   addressed to us from senders on the receiving port's subnets (arp.c,
 *   nd.c decide); replies and advertisements only complete or update
 *   entries that exist (RFC 4861 7.2.5; the ND override flag is the
 *   caller's to respect);
 * - when the table is full a learnt entry takes the place of the least
 *   recently used reachable one, never of an incomplete one or of a static
 *   one, so a flood of spoofed senders evicts itself while the next hops in
 *   use stay (every resolution moves its entry to the front);
 * - static entries (`neighbor add`, RFC 4861's manual configuration, like
 *   `ip neigh ... permanent`) never expire, are never evicted and are never
 *   changed by what arrives;
 * - up to NEIGH_HOLD_PER_ENTRY packets wait per unresolved next hop (Linux
 *   holds about 100, so the first packets of a flow after an idle period are
 *   not lost), within NEIGH_HOLD_TOTAL mbufs for the whole table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define NEIGH_ENTRIES ESGW_NEIGHBOR_ENTRIES
#define NEIGH_BUCKETS 1024
#define NEIGH_INCOMPLETE_MAX 256
#define NEIGH_HOLD_PER_ENTRY 64
#define NEIGH_HOLD_TOTAL 1024
#define NEIGH_REQUESTS_MAX 3 /* RFC 4861 10: MAX_MULTICAST_SOLICIT; ARP likewise */
#define NEIGH_REACHABLE_S 300
#define NEIGH_REFRESH_S 240 /* re-ask when an entry this old is used */

enum neigh_state { NEIGH_FREE = 0, NEIGH_INCOMPLETE, NEIGH_REACHABLE, NEIGH_PERMANENT };
enum { LIST_INCOMPLETE = 0, LIST_REACHABLE = 1 };

struct neigh_entry {
	uint8_t addr[16]; /* IPv4: the address big endian in the first 4 bytes */
	uint16_t port;
	uint8_t family; /* 4 or 6 */
	uint8_t state;
	uint8_t requests; /* sent while incomplete */
	uint8_t nb_held;
	int32_t next;                 /* bucket chain, or the free list */
	int32_t prev_lru, next_lru;   /* in the list of its state (not permanent) */
	int32_t held_head, held_tail; /* slots in hold[] */
	struct rte_ether_addr mac;
	uint64_t expires;      /* REACHABLE: removed at this TSC */
	uint64_t refresh_at;   /* REACHABLE: re-ask when used after this */
	uint64_t next_request; /* no request before this TSC */
};

struct neigh_list {
	int32_t head, tail; /* head: most recently used or created */
	uint32_t n;
};

struct neighbor_table {
	struct neigh_entry entries[NEIGH_ENTRIES];
	int32_t buckets[NEIGH_BUCKETS];
	int32_t free_list;
	uint32_t nb_used, nb_permanent;
	struct neigh_list lists[2];
	struct rte_mbuf *hold[NEIGH_HOLD_TOTAL];
	int32_t hold_next[NEIGH_HOLD_TOTAL];
	int32_t hold_free;
	uint32_t nb_held;
};

int neighbor_table_init(struct router *r)
{
	struct neighbor_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	for (int b = 0; b < NEIGH_BUCKETS; b++)
		t->buckets[b] = -1;
	for (int i = 0; i < NEIGH_ENTRIES; i++)
		t->entries[i].next = i + 1 < NEIGH_ENTRIES ? i + 1 : -1;
	for (int i = 0; i < NEIGH_HOLD_TOTAL; i++)
		t->hold_next[i] = i + 1 < NEIGH_HOLD_TOTAL ? i + 1 : -1;
	for (int l = 0; l < 2; l++)
		t->lists[l].head = t->lists[l].tail = -1;
	r->neigh = t;
	return 0;
}

void neighbor_table_free(struct router *r)
{
	struct neighbor_table *t = r->neigh;

	if (t == NULL)
		return;
	/* Held mbufs go back to the shared pool: other processes keep using it. */
	for (int i = 0; i < NEIGH_HOLD_TOTAL; i++)
		if (t->hold[i] != NULL)
			rte_pktmbuf_free(t->hold[i]);
	free(t);
	r->neigh = NULL;
}

/* Over the key as two 8-byte words, as entry_find compares it and
 * neighbor_addr4 writes it. */
static uint32_t bucket_of(uint8_t family, uint16_t port, const uint8_t addr[16])
{
	uint64_t lo, hi, h = (uint64_t)family << 16 | port;

	memcpy(&lo, addr, 8);
	memcpy(&hi, addr + 8, 8);
	h = (h ^ lo) * 0x9e3779b97f4a7c15u;
	h = (h ^ hi) * 0x9e3779b97f4a7c15u;
	return (uint32_t)(h >> 32) % NEIGH_BUCKETS;
}

static int32_t index_of(const struct neighbor_table *t, const struct neigh_entry *e)
{
	return (int32_t)(e - t->entries);
}

static struct neigh_entry *entry_find(struct neighbor_table *t, uint8_t family, uint16_t port,
				      const uint8_t addr[16])
{
	for (int32_t i = t->buckets[bucket_of(family, port, addr)]; i >= 0;
	     i = t->entries[i].next) {
		struct neigh_entry *e = &t->entries[i];

		if (e->family == family && e->port == port && memcmp(e->addr, addr, 16) == 0)
			return e;
	}
	return NULL;
}

static void list_unlink(struct neighbor_table *t, struct neigh_entry *e, int l)
{
	struct neigh_list *list = &t->lists[l];

	if (e->prev_lru >= 0)
		t->entries[e->prev_lru].next_lru = e->next_lru;
	else
		list->head = e->next_lru;
	if (e->next_lru >= 0)
		t->entries[e->next_lru].prev_lru = e->prev_lru;
	else
		list->tail = e->prev_lru;
	list->n--;
}

static void list_push_front(struct neighbor_table *t, struct neigh_entry *e, int l)
{
	struct neigh_list *list = &t->lists[l];
	int32_t i = index_of(t, e);

	e->prev_lru = -1;
	e->next_lru = list->head;
	if (list->head >= 0)
		t->entries[list->head].prev_lru = i;
	else
		list->tail = i;
	list->head = i;
	list->n++;
}

static int list_of(const struct neigh_entry *e)
{
	return e->state == NEIGH_INCOMPLETE  ? LIST_INCOMPLETE
	       : e->state == NEIGH_REACHABLE ? LIST_REACHABLE
					     : -1;
}

/* Move e to another state, keeping the lists right. */
static void set_state(struct neighbor_table *t, struct neigh_entry *e, uint8_t state)
{
	int from = list_of(e), to;

	if (from >= 0)
		list_unlink(t, e, from);
	if (e->state == NEIGH_PERMANENT)
		t->nb_permanent--;
	e->state = state;
	to = list_of(e);
	if (to >= 0)
		list_push_front(t, e, to);
	if (state == NEIGH_PERMANENT)
		t->nb_permanent++;
}

/* Take e's held packets off it, in arrival order: the caller frees or
 * sends them. Returns how many went into out. */
static unsigned int held_take(struct neighbor_table *t, struct neigh_entry *e,
			      struct rte_mbuf *out[NEIGH_HOLD_PER_ENTRY])
{
	unsigned int n = 0;

	for (int32_t s = e->held_head; s >= 0;) {
		int32_t next = t->hold_next[s];

		out[n++] = t->hold[s];
		t->hold[s] = NULL;
		t->hold_next[s] = t->hold_free;
		t->hold_free = s;
		t->nb_held--;
		s = next;
	}
	e->held_head = e->held_tail = -1;
	e->nb_held = 0;
	return n;
}

/* Remove an entry; its held packets are dropped as unresolved. */
static void entry_delete(struct router *r, struct neigh_entry *e)
{
	struct neighbor_table *t = r->neigh;
	int32_t idx = index_of(t, e), *link = &t->buckets[bucket_of(e->family, e->port, e->addr)];
	struct rte_mbuf *held[NEIGH_HOLD_PER_ENTRY];
	unsigned int n = held_take(t, e, held);

	if (e->state == NEIGH_REACHABLE || e->state == NEIGH_PERMANENT)
		egress_invalidate(r); /* its address may be written down (egress.c) */
	while (*link != idx)
		link = &t->entries[*link].next;
	*link = e->next;
	set_state(t, e, NEIGH_FREE);
	e->next = t->free_list;
	t->free_list = idx;
	t->nb_used--;
	for (unsigned int h = 0; h < n; h++)
		router_drop(r, held[h], ESGW_DROP_ARP_UNRESOLVED);
}

/* A free entry for a new neighbour in state. When the table is full the
 * least recently used reachable entry goes; an entry learnt from a request
 * (what a spoofing sender can make) takes no other, a resolution or a
 * static entry takes the oldest incomplete one if no reachable one is
 * left. Incomplete entries beyond their own bound replace the oldest of
 * them. NULL if nothing may go. */
static struct neigh_entry *entry_create(struct router *r, uint8_t family, uint16_t port,
					const uint8_t addr[16], uint8_t state)
{
	struct neighbor_table *t = r->neigh;
	int32_t victim = -1, i;
	struct neigh_entry *e;
	uint32_t b;

	if (state == NEIGH_INCOMPLETE && t->lists[LIST_INCOMPLETE].n >= NEIGH_INCOMPLETE_MAX) {
		victim = t->lists[LIST_INCOMPLETE].tail; /* the oldest resolution */
	} else if (t->free_list < 0) {
		victim = t->lists[LIST_REACHABLE].tail;
		if (victim < 0 && state != NEIGH_REACHABLE)
			victim = t->lists[LIST_INCOMPLETE].tail;
	}
	if (victim >= 0) {
		entry_delete(r, &t->entries[victim]);
		r->ctr.neighbor_evicted++;
	}
	i = t->free_list;
	if (i < 0)
		return NULL; /* every entry is static */
	e = &t->entries[i];
	t->free_list = e->next;
	memset(e, 0, sizeof(*e));
	memcpy(e->addr, addr, 16);
	e->family = family;
	e->port = port;
	e->held_head = e->held_tail = -1;
	e->prev_lru = e->next_lru = -1;
	b = bucket_of(family, port, addr);
	e->next = t->buckets[b];
	t->buckets[b] = i;
	t->nb_used++;
	set_state(t, e, state);
	return e;
}

static void solicit(struct router *r, const struct neigh_entry *e)
{
	if (e->family == 4)
		arp_send_request(r, e->port, read_be32(e->addr));
	else
		nd_send_solicit(r, e->port, e->addr);
}

/* Now reachable with mac: send what waited, through the full output path
 * again since the configuration may have changed meanwhile. */
static void learn(struct router *r, struct neigh_entry *e, const uint8_t mac[6], uint8_t state)
{
	struct rte_mbuf *held[NEIGH_HOLD_PER_ENTRY];
	unsigned int n;

	if ((e->state == NEIGH_REACHABLE || e->state == NEIGH_PERMANENT) &&
	    memcmp(e->mac.addr_bytes, mac, 6) != 0)
		egress_invalidate(r); /* the old address may be written down (egress.c) */
	memcpy(e->mac.addr_bytes, mac, 6);
	set_state(r->neigh, e, state);
	e->requests = 0;
	e->expires = r->now + NEIGH_REACHABLE_S * r->hz;
	e->refresh_at = r->now + NEIGH_REFRESH_S * r->hz;
	e->next_request = 0;
	/* Off the entry before sending: resolving others may evict it. */
	n = held_take(r->neigh, e, held);
	for (unsigned int h = 0; h < n; h++)
		forward_output(r, held[h]); /* by version: IPv4, IPv6, into a tunnel */
}

int neighbor_resolve(struct router *r, uint8_t family, uint16_t port, const uint8_t addr[16],
		     struct rte_mbuf *m, struct rte_ether_addr *mac)
{
	struct neighbor_table *t = r->neigh;
	struct neigh_entry *e = entry_find(t, family, port, addr);
	int32_t s;

	if (e != NULL && e->state == NEIGH_PERMANENT) {
		*mac = e->mac;
		r->neigh_fresh_until = UINT64_MAX;
		return 1;
	}
	if (e != NULL && e->state == NEIGH_REACHABLE) {
		if (t->lists[LIST_REACHABLE].head != index_of(t, e)) {
			list_unlink(t, e, LIST_REACHABLE);
			list_push_front(t, e, LIST_REACHABLE);
		}
		if (r->now >= e->refresh_at && r->now >= e->next_request) {
			e->next_request = r->now + r->hz;
			solicit(r, e);
		}
		*mac = e->mac;
		r->neigh_fresh_until = e->refresh_at; /* to be confirmed from then on */
		return 1;
	}
	if (e == NULL) {
		e = entry_create(r, family, port, addr, NEIGH_INCOMPLETE);
		if (e == NULL) {
			router_drop(r, m, ESGW_DROP_ARP_UNRESOLVED);
			return 0;
		}
		e->requests = 1;
		e->next_request = r->now + r->hz;
		solicit(r, e);
	}
	if (e->nb_held == NEIGH_HOLD_PER_ENTRY || t->hold_free < 0) {
		router_drop(r, m, ESGW_DROP_ARP_UNRESOLVED);
		return 0;
	}
	s = t->hold_free;
	t->hold_free = t->hold_next[s];
	t->hold[s] = m;
	t->hold_next[s] = -1;
	if (e->held_tail >= 0)
		t->hold_next[e->held_tail] = s;
	else
		e->held_head = s;
	e->held_tail = s;
	e->nb_held++;
	t->nb_held++;
	r->ctr.neighbor_held++;
	return 0;
}

int neighbor_learn(struct router *r, uint8_t family, uint16_t port, const uint8_t addr[16],
		   const uint8_t mac[6], enum neighbor_how how)
{
	static const uint8_t zero[6];
	struct neigh_entry *e;

	if ((mac[0] & 1) || memcmp(mac, zero, 6) == 0)
		return 0; /* no neighbour has a multicast or a zero address */
	e = entry_find(r->neigh, family, port, addr);
	if (e == NULL) {
		if (how != NEIGH_LEARN_CREATE)
			return 0; /* nobody asked: nothing learnt */
		e = entry_create(r, family, port, addr, NEIGH_REACHABLE);
		if (e == NULL)
			return 0;
	}
	if (e->state == NEIGH_PERMANENT)
		return 0; /* configured: nothing on the wire changes it */
	/* An advertisement without the override flag completes an incomplete
	 * entry, and confirms a reachable one with the same address only. */
	if (how == NEIGH_LEARN_NO_OVERRIDE && e->state == NEIGH_REACHABLE &&
	    memcmp(e->mac.addr_bytes, mac, 6) != 0)
		return 0;
	learn(r, e, mac, NEIGH_REACHABLE);
	return 1;
}

void neighbor_timer(struct router *r, uint64_t now)
{
	struct neighbor_table *t = r->neigh;

	if (t == NULL || t->nb_used == t->nb_permanent)
		return;
	for (int i = 0; i < NEIGH_ENTRIES; i++) {
		struct neigh_entry *e = &t->entries[i];

		if (e->state == NEIGH_REACHABLE && now >= e->expires) {
			entry_delete(r, e);
		} else if (e->state == NEIGH_INCOMPLETE && now >= e->next_request) {
			if (e->requests >= NEIGH_REQUESTS_MAX) {
				entry_delete(r, e);
				continue;
			}
			e->requests++;
			e->next_request = now + r->hz;
			solicit(r, e);
		}
	}
}

int neighbor_waiting(const struct router *r)
{
	return r->neigh != NULL && r->neigh->lists[LIST_INCOMPLETE].n != 0;
}

void neighbor_prune(struct router *r, const struct router_tables *t)
{
	for (int i = 0; r->neigh != NULL && i < NEIGH_ENTRIES; i++) {
		struct neigh_entry *e = &r->neigh->entries[i];

		if (e->state != NEIGH_FREE && !t->ports[e->port].present)
			entry_delete(r, e);
	}
}

/* The static neighbour of cfg as a family, port and address; 0 or -1. */
static int static_key(const struct router_tables *t, const Esgw__DpNeighbor *n, uint8_t *family,
		      uint16_t *port, uint8_t addr[16], uint8_t mac[6])
{
	int p = router_port_by_name(t, n->interface);
	struct esgw_addr a;

	if (p < 0 || n->mac.len != 6 ||
	    esgw_addr_from_bytes(&a, n->address.data, n->address.len, 0) < 0)
		return -1;
	memcpy(mac, n->mac.data, 6);
	*port = (uint16_t)p;
	*family = a.family;
	if (a.family == 6)
		memcpy(addr, a.bytes, 16);
	else
		neighbor_addr4(esgw_addr_ipv4(&a), addr);
	return 0;
}

int neighbor_static_check(const struct router_tables *t, const Esgw__DpConfig *cfg, char *err,
			  size_t errlen)
{
	uint8_t family, addr[16], mac[6];
	uint16_t port;

	for (size_t i = 0; i < cfg->n_neighbors; i++) {
		if (static_key(t, cfg->neighbors[i], &family, &port, addr, mac) < 0) {
			snprintf(err, errlen,
				 "neighbor on %s: bad interface, address (%zu bytes) or MAC "
				 "(%zu bytes)",
				 cfg->neighbors[i]->interface, cfg->neighbors[i]->address.len,
				 cfg->neighbors[i]->mac.len);
			return -1;
		}
	}
	if (cfg->n_neighbors > ESGW_MAX_STATIC_NEIGHBORS) {
		snprintf(err, errlen, "more than %d static neighbors", ESGW_MAX_STATIC_NEIGHBORS);
		return -1;
	}
	return 0;
}

void neighbor_static_apply(struct router *r, const Esgw__DpConfig *cfg)
{
	struct neighbor_table *t = r->neigh;
	uint8_t family, addr[16], mac[6];
	uint16_t port;

	/* Static entries the configuration no longer has go; then every one
	 * it has is (re)made permanent, releasing what waited for it. */
	for (int i = 0; i < NEIGH_ENTRIES; i++)
		if (t->entries[i].state == NEIGH_PERMANENT)
			entry_delete(r, &t->entries[i]);
	for (size_t i = 0; i < cfg->n_neighbors; i++) {
		struct neigh_entry *e;

		if (static_key(r->tables, cfg->neighbors[i], &family, &port, addr, mac) < 0)
			continue; /* neighbor_static_check refused it already */
		e = entry_find(t, family, port, addr);
		if (e == NULL)
			e = entry_create(r, family, port, addr, NEIGH_PERMANENT);
		if (e != NULL)
			learn(r, e, mac, NEIGH_PERMANENT);
	}
}

void neighbor_gauges(const struct router *r, struct neighbor_gauges *g)
{
	const struct neighbor_table *t = r->neigh;

	memset(g, 0, sizeof(*g));
	if (t == NULL)
		return;
	g->entries = t->nb_used;
	g->incomplete = t->lists[LIST_INCOMPLETE].n;
	g->permanent = t->nb_permanent;
	g->held = t->nb_held;
}

static const char *state_name(uint8_t state)
{
	switch (state) {
	case NEIGH_INCOMPLETE:
		return "incomplete";
	case NEIGH_REACHABLE:
		return "reachable";
	default:
		return "permanent";
	}
}

Esgw__NeighborInfo **neighbor_list(struct router *r, size_t *n)
{
	const struct neighbor_table *t = r->neigh;
	Esgw__NeighborInfo **out;
	size_t k = 0;

	*n = 0;
	if (t == NULL || t->nb_used == 0)
		return NULL;
	out = esgw_dp_stats_alloc(&r->dp, t->nb_used * sizeof(*out));
	for (int i = 0; i < NEIGH_ENTRIES && k < t->nb_used; i++) {
		const struct neigh_entry *e = &t->entries[i];
		Esgw__NeighborInfo *info;
		char buf[ESGW_IPV6_STRLEN];

		if (e->state == NEIGH_FREE)
			continue;
		info = esgw_dp_stats_alloc(&r->dp, sizeof(*info));
		esgw__neighbor_info__init(info);
		info->interface = esgw_dp_stats_strdup(&r->dp, r->tables->ports[e->port].name);
		info->address = esgw_dp_stats_strdup(
			&r->dp, e->family == 4 ? esgw_fmt_ipv4(read_be32(e->addr), buf)
					       : esgw_fmt_ipv6(e->addr, buf));
		info->mac = esgw_dp_stats_strdup(
			&r->dp,
			e->state == NEIGH_INCOMPLETE ? "" : esgw_fmt_mac(e->mac.addr_bytes, buf));
		info->state = (char *)state_name(e->state);
		info->held = e->nb_held;
		out[k++] = info;
	}
	*n = k;
	return out;
}
