/* SPDX-License-Identifier: BSD-3-Clause */
/* Hash indexes over the arrays of ctld.config (SAs by id and SPI, tunnels by
 * name and by SA, routes by prefix), so that a lookup costs the same with
 * 20,000 tunnels as with 10. An index holds positions, never pointers, and
 * every hit is checked against the live array, so a stale entry can only
 * miss, never point at freed memory. It follows appends by itself (new items
 * at the end); anything else that changes an array's order or an indexed
 * key in place (a removal, a restored configuration, tunnel set) calls
 * state_changed(), and the next lookup rebuilds it. */
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

void *state_index_find(struct state_index *ix, const struct state_index_kind *kind,
		       void *const *items, size_t n, uint64_t h, const void *key)
{
	size_t mask, i;

	if (ix->epoch != state_epoch || ix->config != ctld.config || n < ix->n || ix->cap == 0)
		index_reset(ix, ix->cap ? ix->cap : 64);
	index_catch_up(ix, kind, items, n);
	mask = ix->cap - 1;
	for (i = h & mask; ix->pos[i] != 0; i = (i + 1) & mask) {
		size_t pos = ix->pos[i] - 1;

		if (ix->hash[i] == h && pos < n && kind->match(items[pos], key))
			return items[pos];
	}
	return NULL;
}
