/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 longest-prefix match: the routes in a prefix_table (prefix_table.h)
 * keyed by the prefix in host byte order, each with a slot that the
 * DIR-24-8 index (lpm24.h) of lookups names (fib.h). */
#include "fib.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(struct fib_route, len) == sizeof(uint32_t),
	       "prefix_table.h: the length right after the key");

static uint32_t mask_of(uint8_t len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
}

static void mask4(uint8_t mask[PREFIX_KEY_MAX], uint8_t len)
{
	uint32_t m = mask_of(len);

	memset(mask, 0, PREFIX_KEY_MAX);
	memcpy(mask, &m, sizeof(m));
}

static int route_order(const void *a, const void *b)
{
	const struct fib_route *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	/* Tie-breaks only to make duplicates resolve the same whatever the
	 * order they were given in. */
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->gateway != y->gateway)
		return x->gateway < y->gateway ? -1 : 1;
	if (x->tunnel != y->tunnel)
		return x->tunnel < y->tunnel ? -1 : 1;
	return 0;
}

static const struct prefix_kind fib4 = {
	.key_size = sizeof(uint32_t),
	.max_len = 32,
	.entry_size = sizeof(struct fib_entry),
	.mask = mask4,
	.order = route_order, /* of the routes: fib_entry begins with one */
};

/* A free slot, or LPM24_SLOT_MAX out of memory. */
static uint32_t slot_get(struct fib *fib)
{
	if (fib->nb_free_slots > 0)
		return fib->free_slots[--fib->nb_free_slots];
	if (fib->nb_slots == fib->slots_cap) {
		uint32_t cap = fib->slots_cap ? 2 * fib->slots_cap : 16;
		struct fib_route *slots;
		uint32_t *free_slots;

		if (cap > LPM24_SLOT_MAX)
			cap = LPM24_SLOT_MAX;
		if (cap == fib->slots_cap)
			return LPM24_SLOT_MAX;
		slots = realloc(fib->slots, (size_t)cap * sizeof(*slots));
		if (slots == NULL)
			return LPM24_SLOT_MAX;
		fib->slots = slots;
		free_slots = realloc(fib->free_slots, (size_t)cap * sizeof(*free_slots));
		if (free_slots == NULL)
			return LPM24_SLOT_MAX; /* the larger slots stay: harmless */
		fib->free_slots = free_slots;
		fib->slots_cap = cap;
	}
	return fib->nb_slots++;
}

static void slot_put(struct fib *fib, uint32_t slot)
{
	fib->slots[slot].len = PREFIX_EMPTY;
	fib->free_slots[fib->nb_free_slots++] = slot;
}

/* The longest route shorter than len (an indexed length, so at least 1)
 * covering prefix: its length and slot as the index knows it (cover_len 0:
 * none of /8 or longer). */
static void cover_of(const struct fib *fib, uint32_t prefix, uint8_t len, uint8_t *cover_len,
		     uint32_t *cover_slot)
{
	const struct fib_entry *c = prefix_table_lookup_upto(&fib->table, &prefix, sizeof(prefix),
							     sizeof(*c), (uint8_t)(len - 1));

	*cover_len = c != NULL && c->route.len >= LPM24_MIN_LEN ? c->route.len : 0;
	*cover_slot = c != NULL ? c->slot : 0;
}

struct index_all {
	struct fib *fib;
	int rc;
};

/* A built table's entry into a slot and the index. */
static void index_entry(void *entry, void *arg)
{
	struct fib_entry *e = entry;
	struct index_all *a = arg;

	if (a->rc < 0)
		return;
	e->slot = slot_get(a->fib);
	if (e->slot == LPM24_SLOT_MAX) {
		a->rc = -1;
		return;
	}
	a->fib->slots[e->slot] = e->route;
	if (e->route.len >= LPM24_MIN_LEN &&
	    lpm24_add(&a->fib->lpm, e->route.prefix, e->route.len, e->slot) < 0)
		a->rc = -1;
}

int fib_build(struct fib *fib, const struct fib_route *routes, size_t n)
{
	struct fib_entry *entries = calloc(n ? n : 1, sizeof(*entries));
	struct index_all all = {.fib = fib};

	memset(fib, 0, sizeof(*fib));
	if (entries == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		entries[i].route = routes[i];
	all.rc = prefix_table_build(&fib->table, &fib4, entries, n);
	free(entries);
	if (all.rc == 0)
		prefix_table_each(&fib->table, &fib4, index_entry, &all);
	if (all.rc < 0)
		fib_free(fib);
	return all.rc;
}

void fib_free(struct fib *fib)
{
	prefix_table_free(&fib->table);
	lpm24_free(&fib->lpm);
	free(fib->slots);
	free(fib->free_slots);
	memset(fib, 0, sizeof(*fib));
}

const struct fib_route *fib_lookup_short(const struct fib *fib, uint32_t dst)
{
	const struct fib_entry *e = prefix_table_lookup_upto(&fib->table, &dst, sizeof(dst),
							     sizeof(*e), LPM24_MIN_LEN - 1);

	return e != NULL ? &fib->slots[e->slot] : NULL;
}

int fib_insert(struct fib *fib, const struct fib_route *route)
{
	struct fib_entry e = {.route = *route};
	const struct fib_entry *old, *held;

	if (route->len > 32)
		return -1;
	old = prefix_table_exact(&fib->table, &fib4, &route->prefix, route->len);
	/* A prefix held already keeps its slot, whichever route wins. */
	e.slot = old != NULL ? old->slot : slot_get(fib);
	if (e.slot == LPM24_SLOT_MAX)
		return -1;
	if (prefix_table_insert(&fib->table, &fib4, &e) < 0)
		goto fail;
	held = prefix_table_exact(&fib->table, &fib4, &route->prefix, route->len);
	fib->slots[e.slot] = held->route;
	if (old == NULL && route->len >= LPM24_MIN_LEN &&
	    lpm24_add(&fib->lpm, held->route.prefix, route->len, e.slot) < 0) {
		prefix_table_remove(&fib->table, &fib4, &route->prefix, route->len);
		goto fail;
	}
	return 0;
fail:
	if (old == NULL)
		slot_put(fib, e.slot);
	return -1;
}

int fib_remove(struct fib *fib, uint32_t prefix, uint8_t len, uint8_t kind)
{
	const struct fib_entry *e = prefix_table_exact(&fib->table, &fib4, &prefix, len);
	uint32_t slot, masked, cover_slot;
	uint8_t cover_len;

	if (e == NULL || e->route.kind != kind)
		return -1; /* none, or one of another kind wins that prefix */
	slot = e->slot;
	masked = e->route.prefix;
	if (prefix_table_remove(&fib->table, &fib4, &prefix, len) < 0)
		return -1;
	if (len >= LPM24_MIN_LEN) {
		cover_of(fib, masked, len, &cover_len, &cover_slot);
		lpm24_del(&fib->lpm, masked, len, cover_len, cover_slot);
	}
	slot_put(fib, slot);
	return 0;
}

const struct fib_route *fib_exact(const struct fib *fib, uint32_t prefix, uint8_t len)
{
	const struct fib_entry *e = prefix_table_exact(&fib->table, &fib4, &prefix, len);

	return e != NULL ? &e->route : NULL;
}

/* Tunnel numbers from (index 0) into to (index 1). */
void fib_retarget_entry(uint8_t kind, uint32_t *tunnel, const uint32_t *from_to)
{
	if (kind == FIB_TUNNEL && *tunnel == from_to[0])
		*tunnel = from_to[1];
}

static void retarget(void *entry, void *arg)
{
	struct fib_entry *e = entry;

	fib_retarget_entry(e->route.kind, &e->route.tunnel, arg);
}

void fib_retarget_tunnel(struct fib *fib, uint32_t from, uint32_t to)
{
	uint32_t from_to[2] = {from, to};

	prefix_table_each(&fib->table, &fib4, retarget, from_to);
	for (uint32_t i = 0; i < fib->nb_slots; i++)
		if (fib->slots[i].len != PREFIX_EMPTY)
			fib_retarget_entry(fib->slots[i].kind, &fib->slots[i].tunnel, from_to);
}
