/* SPDX-License-Identifier: BSD-3-Clause */
/* Hash indexes over the arrays of ctld.config (SAs by id and SPI, tunnels by
 * name and by SA, routes by prefix), so that a lookup costs the same with
 * 20,000 tunnels as with 10. An index holds positions, never pointers, and
 * every hit is checked against the live array, so a stale entry can only
 * miss, never point at freed memory. It follows appends by itself (new items
 * at the end); anything else that changes an array's order or an indexed
 * key in place (a restored configuration, tunnel set) calls state_changed(),
 * and the next lookup rebuilds it. A removal of one object (config_remove)
 * is followed in place by state_index_removed(): its entries out, and the
 * last object, which takes its place in the array, renumbered; O(1), as is
 * finding an object's position (state_index_position). */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

static uint64_t state_epoch = 1;

void state_changed(void)
{
	state_epoch++;
}

uint64_t state_epoch_now(void)
{
	return state_epoch;
}

uint64_t state_hash_u32(uint32_t v)
{
	uint64_t h = (uint64_t)v * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

uint64_t state_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void index_reset(struct state_index *ix, size_t cap)
{
	free(ix->pos);
	free(ix->hash);
	ix->cap = cap;
	ix->used = 0;
	ix->n = 0;
	ix->pos = calloc(cap, sizeof(*ix->pos));
	ix->hash = calloc(cap, sizeof(*ix->hash));
	if (ix->pos == NULL || ix->hash == NULL)
		abort();
	ix->epoch = state_epoch;
	ix->config = ctld.config;
}

/* Every index in use, to follow a removal. */
static struct state_index *indexes[32];
static const struct state_index_kind *index_kinds[32];
static size_t n_indexes;

static void index_register(struct state_index *ix, const struct state_index_kind *kind)
{
	for (size_t i = 0; i < n_indexes; i++)
		if (indexes[i] == ix)
			return;
	if (n_indexes == sizeof(indexes) / sizeof(indexes[0]))
		abort(); /* state.c has a fixed handful */
	indexes[n_indexes] = ix;
	index_kinds[n_indexes++] = kind;
}

/* Entry i out, the entries of its cluster behind it moved back where their
 * hash allows (linear probing stays exact without tombstones). */
static void index_delete(struct state_index *ix, size_t i)
{
	size_t mask = ix->cap - 1;

	ix->pos[i] = 0;
	ix->used--;
	for (size_t j = (i + 1) & mask; ix->pos[j] != 0; j = (j + 1) & mask) {
		size_t home = ix->hash[j] & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			ix->pos[i] = ix->pos[j];
			ix->hash[i] = ix->hash[j];
			ix->pos[j] = 0;
			i = j;
		}
	}
}

static void index_put(struct state_index *ix, uint64_t h, size_t pos)
{
	size_t mask = ix->cap - 1, i = h & mask;

	while (ix->pos[i] != 0)
		i = (i + 1) & mask;
	ix->pos[i] = (uint32_t)pos + 1;
	ix->hash[i] = h;
	ix->used++;
}

/* items[ix->n..n) into the index, growing it (a rebuild) past half full. */
static void index_catch_up(struct state_index *ix, const struct state_index_kind *kind,
			   void *const *items, size_t n)
{
	for (; ix->n < n; ix->n++) {
		size_t k = kind->nkeys(items[ix->n]);

		if (2 * (ix->used + k) > ix->cap) {
			size_t cap = ix->cap ? ix->cap : 64;

			while (cap < 4 * (ix->used + k + (n - ix->n)))
				cap *= 2;
			index_reset(ix, cap);
			index_catch_up(ix, kind, items, n);
			return;
		}
		for (size_t j = 0; j < k; j++)
			index_put(ix, kind->key_hash(items[ix->n], j), ix->n);
	}
}

/* Whether ix indexes the array in field as it is now (else the next lookup
 * rebuilds it). */
static bool index_current(const struct state_index *ix, const void *field)
{
	return ix->field == field && ix->epoch == state_epoch && ix->config == ctld.config &&
	       ix->cap != 0;
}

/* The slot of ix that holds position pos under hash h, or ix->cap. */
static size_t index_slot(const struct state_index *ix, uint64_t h, size_t pos)
{
	size_t mask = ix->cap - 1;

	for (size_t i = h & mask; ix->pos[i] != 0; i = (i + 1) & mask)
		if (ix->pos[i] == pos + 1 && ix->hash[i] == h)
			return i;
	return ix->cap;
}

/* The array in field: the address of the field that holds it. */
static void *const *field_items(const void *field)
{
	return *(void *const *const *)field;
}

void state_index_removed(const void *field, size_t n, size_t index)
{
	void *const *items = field_items(field);
	const void *item = items[index], *moved = items[n - 1];

	for (size_t x = 0; x < n_indexes; x++) {
		struct state_index *ix = indexes[x];
		const struct state_index_kind *kind = index_kinds[x];

		if (!index_current(ix, field))
			continue; /* another array, or rebuilt at the next lookup anyway */
		if (ix->n > n) {
			ix->epoch = 0;
			continue;
		}
		index_catch_up(ix, kind, items, n); /* the last one may be new */
		for (size_t k = 0; k < kind->nkeys(item); k++) {
			size_t i = index_slot(ix, kind->key_hash(item, k), index);

			if (i < ix->cap)
				index_delete(ix, i);
		}
		/* The last object takes its place: its entries say so. */
		if (index != n - 1)
			for (size_t k = 0; k < kind->nkeys(moved); k++) {
				size_t i = index_slot(ix, kind->key_hash(moved, k), n - 1);

				if (i < ix->cap)
					ix->pos[i] = (uint32_t)index + 1;
			}
		ix->n = n - 1;
	}
}

size_t state_index_position(const void *field, size_t n, const void *item)
{
	void *const *items = field_items(field);

	for (size_t x = 0; x < n_indexes; x++) {
		struct state_index *ix = indexes[x];
		const struct state_index_kind *kind = index_kinds[x];
		uint64_t h;
		size_t mask;

		if (!index_current(ix, field) || ix->n > n || kind->nkeys(item) == 0)
			continue;
		index_catch_up(ix, kind, items, n);
		h = kind->key_hash(item, 0);
		mask = ix->cap - 1;
		for (size_t i = h & mask; ix->pos[i] != 0; i = (i + 1) & mask) {
			size_t pos = ix->pos[i] - 1;

			if (ix->hash[i] == h && pos < n && items[pos] == item)
				return pos;
		}
	}
	return state_position(items, n, item); /* no index over that array yet */
}

void *state_index_find(struct state_index *ix, const struct state_index_kind *kind,
		       const void *field, void *const *items, size_t n, uint64_t h, const void *key)
{
	size_t mask, i;

	index_register(ix, kind);
	if (!index_current(ix, field) || n < ix->n)
		index_reset(ix, ix->cap ? ix->cap : 64);
	ix->field = field;
	index_catch_up(ix, kind, items, n);
	mask = ix->cap - 1;
	for (i = h & mask; ix->pos[i] != 0; i = (i + 1) & mask) {
		size_t pos = ix->pos[i] - 1;

		if (ix->hash[i] == h && pos < n && kind->match(items[pos], key))
			return items[pos];
	}
	return NULL;
}
