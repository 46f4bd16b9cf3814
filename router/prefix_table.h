/* SPDX-License-Identifier: BSD-3-Clause */
/* Longest-prefix match over keys of one size, for fib.c (IPv4, 4 bytes) and
 * fib6.c (IPv6, 16): one hash table per prefix length in use, probed longest
 * first, so a lookup costs one probe per length in use (a handful in real
 * tables) whatever the number of routes, and a route goes in or out in
 * place. Each table is open addressing with linear probing, at most half
 * full. Its entries are the caller's records of entry_size bytes: the masked
 * prefix (key_size bytes, in the caller's layout) first, its length in the
 * byte after, PREFIX_EMPTY there in an empty entry. The lookups are inline:
 * a caller passing constant sizes gets code for its key. Pure C (no DPDK). */
#ifndef ESGW_ROUTER_PREFIX_TABLE_H
#define ESGW_ROUTER_PREFIX_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PREFIX_EMPTY 0xff
#define PREFIX_KEY_MAX 16
#define PREFIX_LEN_MAX 128

struct prefix_group {
	uint8_t mask[PREFIX_KEY_MAX]; /* of the prefix length, in the key's layout */
	uint8_t len;
	uint32_t count; /* routes in table */
	uint32_t table_mask;
	uint8_t *table; /* table_mask + 1 entries */
};

struct prefix_table {
	uint32_t nb_routes;
	uint32_t nb_groups;
	struct prefix_group groups[PREFIX_LEN_MAX + 1]; /* longest prefix first */
};

/* What a user keeps in its table. */
struct prefix_kind {
	uint8_t key_size; /* a multiple of 4, at most PREFIX_KEY_MAX */
	uint8_t max_len;  /* longest prefix, at most PREFIX_LEN_MAX */
	uint16_t entry_size;
	/* The mask of a prefix length, in the key's layout. */
	void (*mask)(uint8_t mask[PREFIX_KEY_MAX], uint8_t len);
	/* Of two entries of one prefix, the lower (< 0) is the one held. */
	int (*order)(const void *a, const void *b);
};

/* Masked prefixes have their low bits zero: every word of the key folded,
 * then mixed into the low bits the table mask keeps (MurmurHash3's
 * finaliser). */
static inline uint32_t prefix_hash(const uint8_t *key, size_t key_size)
{
	uint32_t h = 0, w;

	for (size_t i = 0; i < key_size; i += 4) {
		memcpy(&w, key + i, 4);
		h = h * 0x9e3779b1u + w;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* The entry of (masked) key in g's table, or the empty one where it would go. */
static inline uint8_t *prefix_slot(const struct prefix_group *g, const uint8_t *key,
				   size_t key_size, size_t entry_size)
{
	uint32_t i = prefix_hash(key, key_size) & g->table_mask;

	for (;;) {
		uint8_t *e = g->table + (size_t)i * entry_size;

		if (e[key_size] == PREFIX_EMPTY || memcmp(e, key, key_size) == 0)
			return e;
		i = (i + 1) & g->table_mask;
	}
}

static inline void prefix_masked(uint8_t out[PREFIX_KEY_MAX], const uint8_t *key,
				 const struct prefix_group *g, size_t key_size)
{
	for (size_t i = 0; i < key_size; i++)
		out[i] = key[i] & g->mask[i];
}

/* The entry of the longest prefix of at most max_len covering key, or
 * NULL. Pointers into the table hold until it is next changed. */
static inline const void *prefix_table_lookup_upto(const struct prefix_table *t, const void *key,
						   size_t key_size, size_t entry_size,
						   uint8_t max_len)
{
	uint32_t g = 0;

	while (g < t->nb_groups && t->groups[g].len > max_len)
		g++;
	for (; g < t->nb_groups; g++) {
		uint8_t k[PREFIX_KEY_MAX];
		const uint8_t *e;

		prefix_masked(k, key, &t->groups[g], key_size);
		e = prefix_slot(&t->groups[g], k, key_size, entry_size);
		if (e[key_size] != PREFIX_EMPTY)
			return e;
	}
	return NULL;
}

/* The entry of the longest prefix covering key, or NULL. */
static inline const void *prefix_table_lookup(const struct prefix_table *t, const void *key,
					      size_t key_size, size_t entry_size)
{
	return prefix_table_lookup_upto(t, key, key_size, entry_size, PREFIX_LEN_MAX);
}

/* Ask the cache for the entries prefix_table_lookup will read first, in the
 * tables of more than PREFIX_PREFETCH_MIN entries: the small ones (a few
 * addresses, connected subnets, a default route) stay cached by their use,
 * and hashing the key for each would cost more than it saves. */
#define PREFIX_PREFETCH_MIN 1024
static inline void prefix_table_prefetch(const struct prefix_table *t, const void *key,
					 size_t key_size, size_t entry_size)
{
	for (uint32_t g = 0; g < t->nb_groups; g++) {
		const struct prefix_group *grp = &t->groups[g];
		uint8_t k[PREFIX_KEY_MAX];

		if (grp->table_mask < PREFIX_PREFETCH_MIN)
			continue;
		prefix_masked(k, key, grp, key_size);
		__builtin_prefetch(grp->table +
				   (size_t)(prefix_hash(k, key_size) & grp->table_mask) * entry_size);
	}
}

/* Build from n entries (copied; host bits of prefixes cleared; of a prefix
 * given more than once the entry lowest by k->order stays, whatever the input
 * order). 0, or -1 on a length above k->max_len or out of memory. */
int prefix_table_build(struct prefix_table *t, const struct prefix_kind *k, const void *entries,
		       size_t n);
void prefix_table_free(struct prefix_table *t);
/* One entry more, as prefix_table_build would hold it. 0, or -1 on a bad
 * length or out of memory (t unchanged). */
int prefix_table_insert(struct prefix_table *t, const struct prefix_kind *k, const void *entry);
/* The entry held for exactly key/len (host bits ignored), or NULL. */
void *prefix_table_exact(const struct prefix_table *t, const struct prefix_kind *k,
			 const void *key, uint8_t len);
/* The entry of key/len out: 0, or -1 if there is none. */
int prefix_table_remove(struct prefix_table *t, const struct prefix_kind *k, const void *key,
			uint8_t len);
/* fn on every entry held, in no particular order (it may change what
 * follows the key and length). */
void prefix_table_each(struct prefix_table *t, const struct prefix_kind *k,
		       void (*fn)(void *entry, void *arg), void *arg);

#endif
