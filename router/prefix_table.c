/* SPDX-License-Identifier: BSD-3-Clause */
/* The changes of a longest-prefix-match table (prefix_table.h): build whole,
 * one entry in or out in place. With thousands of tunnel routes of one
 * length a lookup is one probe in that length's table (one cache miss, and a
 * prefetch can take that ahead) where a bisection or a scan took many. */
#include "prefix_table.h"

#include <stdlib.h>

#define PREFIX_MIN_TABLE 4 /* entries */

static uint8_t *entry_at(const struct prefix_group *g, const struct prefix_kind *k, uint32_t i)
{
	return g->table + (size_t)i * k->entry_size;
}

static uint8_t *table_alloc(const struct prefix_kind *k, uint32_t entries)
{
	uint8_t *table = malloc((size_t)entries * k->entry_size);

	if (table != NULL)
		memset(table, PREFIX_EMPTY, (size_t)entries * k->entry_size);
	return table;
}

/* g's table with room for count entries at most half full: 0, or -1 (g
 * unchanged). */
static int group_reserve(struct prefix_group *g, const struct prefix_kind *k, uint32_t count)
{
	uint32_t size = PREFIX_MIN_TABLE, old_size = g->table ? g->table_mask + 1 : 0;
	uint8_t *old = g->table, *table;

	while (size < 2 * count)
		size *= 2;
	if (size <= old_size)
		return 0;
	table = table_alloc(k, size);
	if (table == NULL)
		return -1;
	g->table = table;
	g->table_mask = size - 1;
	for (uint32_t i = 0; i < old_size; i++) {
		const uint8_t *e = old + (size_t)i * k->entry_size;

		if (e[k->key_size] != PREFIX_EMPTY)
			memcpy(prefix_slot(g, e, k->key_size, k->entry_size), e, k->entry_size);
	}
	free(old);
	return 0;
}

/* The group of prefix length len, or (*found 0) where it would go. */
static uint32_t group_of(const struct prefix_table *t, uint8_t len, int *found)
{
	uint32_t g = 0;

	while (g < t->nb_groups && t->groups[g].len > len)
		g++;
	*found = g < t->nb_groups && t->groups[g].len == len;
	return g;
}

static void group_drop(struct prefix_table *t, uint32_t g)
{
	free(t->groups[g].table);
	memmove(&t->groups[g], &t->groups[g + 1], (t->nb_groups - g - 1) * sizeof(t->groups[0]));
	t->nb_groups--;
}

/* entry (prefix already masked) into group g with room for count entries. */
static int group_put(struct prefix_table *t, const struct prefix_kind *k, uint32_t g,
		     const uint8_t *entry, uint32_t count)
{
	struct prefix_group *grp = &t->groups[g];
	uint8_t *e = prefix_slot(grp, entry, k->key_size, k->entry_size);

	if (e[k->key_size] != PREFIX_EMPTY) {
		/* As a build: the lowest by order stays. */
		if (k->order(entry, e) < 0)
			memcpy(e, entry, k->entry_size);
		return 0;
	}
	if (group_reserve(grp, k, count) < 0)
		return -1;
	memcpy(prefix_slot(grp, entry, k->key_size, k->entry_size), entry, k->entry_size);
	grp->count++;
	t->nb_routes++;
	return 0;
}

/* The group of len made if missing (empty, with room for reserve entries):
 * its index, or -1 out of memory. */
static int group_make(struct prefix_table *t, const struct prefix_kind *k, uint8_t len,
		      uint32_t reserve)
{
	struct prefix_group *grp;
	int found;
	uint32_t g = group_of(t, len, &found);

	if (found)
		return (int)g;
	memmove(&t->groups[g + 1], &t->groups[g], (t->nb_groups - g) * sizeof(t->groups[0]));
	t->nb_groups++;
	grp = &t->groups[g];
	memset(grp, 0, sizeof(*grp));
	grp->len = len;
	k->mask(grp->mask, len);
	if (group_reserve(grp, k, reserve) < 0) {
		group_drop(t, g);
		return -1;
	}
	return (int)g;
}

/* entry copied into buf with the host bits of its prefix cleared by g's mask. */
static void masked_copy(uint8_t *buf, const struct prefix_kind *k, const struct prefix_group *g,
			const uint8_t *entry)
{
	memcpy(buf, entry, k->entry_size);
	prefix_masked(buf, entry, g, k->key_size);
}

int prefix_table_build(struct prefix_table *t, const struct prefix_kind *k, const void *entries,
		       size_t n)
{
	uint32_t per_len[PREFIX_LEN_MAX + 1] = {0};
	const uint8_t *in = entries;
	uint8_t *buf = malloc(k->entry_size);

	memset(t, 0, sizeof(*t));
	if (buf == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint8_t len = in[i * k->entry_size + k->key_size];

		if (len > k->max_len)
			goto fail;
		per_len[len]++;
	}
	for (uint32_t len = 0; len <= k->max_len; len++)
		if (per_len[len] != 0 && group_make(t, k, (uint8_t)len, per_len[len]) < 0)
			goto fail;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = in + i * k->entry_size;
		int found;
		uint32_t g = group_of(t, e[k->key_size], &found);

		masked_copy(buf, k, &t->groups[g], e);
		if (group_put(t, k, g, buf, per_len[e[k->key_size]]) < 0)
			goto fail;
	}
	free(buf);
	return 0;
fail:
	free(buf);
	prefix_table_free(t);
	return -1;
}

void prefix_table_free(struct prefix_table *t)
{
	for (uint32_t g = 0; g < t->nb_groups; g++)
		free(t->groups[g].table);
	memset(t, 0, sizeof(*t));
}

int prefix_table_insert(struct prefix_table *t, const struct prefix_kind *k, const void *entry)
{
	uint8_t len = ((const uint8_t *)entry)[k->key_size], *buf;
	int g, rc = -1;

	if (len > k->max_len)
		return -1;
	g = group_make(t, k, len, 1);
	if (g < 0)
		return -1;
	buf = malloc(k->entry_size);
	if (buf != NULL) {
		masked_copy(buf, k, &t->groups[g], entry);
		rc = group_put(t, k, (uint32_t)g, buf, t->groups[g].count + 1);
		free(buf);
	}
	if (rc < 0 && t->groups[g].count == 0) /* the group just made */
		group_drop(t, (uint32_t)g);
	return rc;
}

/* The group of len and the entry of key/len in it (empty if none), or -1. */
static int find(const struct prefix_table *t, const struct prefix_kind *k, const void *key,
		uint8_t len, uint8_t **entry)
{
	uint8_t masked[PREFIX_KEY_MAX];
	int found;
	uint32_t g;

	if (len > k->max_len)
		return -1;
	g = group_of(t, len, &found);
	if (!found)
		return -1;
	prefix_masked(masked, key, &t->groups[g], k->key_size);
	*entry = prefix_slot(&t->groups[g], masked, k->key_size, k->entry_size);
	return (*entry)[k->key_size] != PREFIX_EMPTY ? (int)g : -1;
}

void *prefix_table_exact(const struct prefix_table *t, const struct prefix_kind *k,
			 const void *key, uint8_t len)
{
	uint8_t *e;

	return find(t, k, key, len, &e) < 0 ? NULL : e;
}

int prefix_table_remove(struct prefix_table *t, const struct prefix_kind *k, const void *key,
			uint8_t len)
{
	struct prefix_group *grp;
	uint8_t *e;
	int g = find(t, k, key, len, &e);
	uint32_t i;

	if (g < 0)
		return -1;
	grp = &t->groups[g];
	i = (uint32_t)((e - grp->table) / k->entry_size);
	/* Linear probing: the entries behind the hole move back where their
	 * home allows, so lookups still stop at the first empty entry. */
	memset(e, PREFIX_EMPTY, k->entry_size);
	for (uint32_t j = (i + 1) & grp->table_mask; entry_at(grp, k, j)[k->key_size] != PREFIX_EMPTY;
	     j = (j + 1) & grp->table_mask) {
		uint32_t home = prefix_hash(entry_at(grp, k, j), k->key_size) & grp->table_mask;

		/* j may move into the hole at i if its home is not in (i, j]. */
		if (((j - home) & grp->table_mask) >= ((j - i) & grp->table_mask)) {
			memcpy(entry_at(grp, k, i), entry_at(grp, k, j), k->entry_size);
			memset(entry_at(grp, k, j), PREFIX_EMPTY, k->entry_size);
			i = j;
		}
	}
	grp->count--;
	t->nb_routes--;
	if (grp->count == 0)
		group_drop(t, (uint32_t)g);
	return 0;
}

void prefix_table_each(struct prefix_table *t, const struct prefix_kind *k,
		       void (*fn)(void *entry, void *arg), void *arg)
{
	for (uint32_t g = 0; g < t->nb_groups; g++)
		for (uint32_t i = 0; i <= t->groups[g].table_mask; i++) {
			uint8_t *e = entry_at(&t->groups[g], k, i);

			if (e[k->key_size] != PREFIX_EMPTY)
				fn(e, arg);
		}
}
