/* SPDX-License-Identifier: BSD-3-Clause */
/* Changes of the DIR-24-8 index (lpm24.h). A prefix writes every entry of
 * its range that a prefix no longer than it holds; removed, it gives the
 * entries it held back to the prefix that covers it. The order prefixes
 * come in does not matter. A tbl8 group is made when the first prefix
 * longer than /24 comes into a /24, and given back when the last one goes. */
#include "lpm24.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TBL24_ENTRIES (1u << 24)
#define TBL8_ENTRIES 256u

static uint32_t entry_of(uint8_t len, uint32_t slot)
{
	return (uint32_t)len << LPM24_LEN_SHIFT | (slot + 1);
}

static uint8_t len_of(uint32_t e)
{
	return (uint8_t)(e >> LPM24_LEN_SHIFT & 0x3f);
}

static int tbl24_map(struct lpm24 *l)
{
	void *p;

	if (l->tbl24 != NULL)
		return 0;
	/* Zero pages until written: reserve nothing. */
	p = mmap(NULL, (size_t)TBL24_ENTRIES * sizeof(uint32_t), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	l->tbl24 = p;
	return 0;
}

/* A tbl8 group filled with e (the entry of its /24 so far), or -1. */
static int64_t tbl8_get(struct lpm24 *l, uint32_t e)
{
	uint32_t g;

	if (l->nb_tbl8_free > 0) {
		g = l->tbl8_free[--l->nb_tbl8_free];
	} else {
		if (l->tbl8_top == l->tbl8_cap) {
			uint32_t cap = l->tbl8_cap ? 2 * l->tbl8_cap : 16;
			uint32_t *tbl8, *free_list;

			if (cap > LPM24_SLOT_MASK + 1u)
				return -1;
			tbl8 = realloc(l->tbl8, (size_t)cap * TBL8_ENTRIES * sizeof(uint32_t));
			if (tbl8 == NULL)
				return -1;
			l->tbl8 = tbl8;
			free_list = realloc(l->tbl8_free, (size_t)cap * sizeof(uint32_t));
			if (free_list == NULL)
				return -1; /* the larger tbl8 stays: harmless */
			l->tbl8_free = free_list;
			l->tbl8_cap = cap;
		}
		g = l->tbl8_top++;
	}
	for (uint32_t i = 0; i < TBL8_ENTRIES; i++)
		l->tbl8[(size_t)g * TBL8_ENTRIES + i] = e;
	return g;
}

/* Entries [first, first + n) of t: those held by a prefix of at most len
 * become e. */
static void fill(uint32_t *t, uint32_t first, uint32_t n, uint8_t len, uint32_t e)
{
	for (uint32_t i = first; i < first + n; i++)
		if (len_of(t[i]) <= len)
			t[i] = e;
}

/* Entries [first, first + n) of t: those held by a prefix of len exactly
 * become e. */
static void give_back(uint32_t *t, uint32_t first, uint32_t n, uint8_t len, uint32_t e)
{
	for (uint32_t i = first; i < first + n; i++)
		if (t[i] != 0 && len_of(t[i]) == len)
			t[i] = e;
}

static uint32_t *group(struct lpm24 *l, uint32_t ext)
{
	return &l->tbl8[(size_t)(ext & LPM24_SLOT_MASK) * TBL8_ENTRIES];
}

int lpm24_add(struct lpm24 *l, uint32_t prefix, uint8_t len, uint32_t slot)
{
	uint32_t e = entry_of(len, slot), i = prefix >> 8;

	if (len < LPM24_MIN_LEN || len > 32 || slot >= LPM24_SLOT_MAX || tbl24_map(l) < 0)
		return -1;
	if (len <= 24) {
		uint32_t n = 1u << (24 - len);

		for (uint32_t j = i; j < i + n; j++) {
			if (l->tbl24[j] & LPM24_EXT)
				fill(group(l, l->tbl24[j]), 0, TBL8_ENTRIES, len, e);
			else if (len_of(l->tbl24[j]) <= len)
				l->tbl24[j] = e;
		}
		return 0;
	}
	if (!(l->tbl24[i] & LPM24_EXT)) {
		int64_t g = tbl8_get(l, l->tbl24[i]);

		if (g < 0)
			return -1;
		l->tbl24[i] = LPM24_EXT | (uint32_t)g;
	}
	fill(group(l, l->tbl24[i]), prefix & 0xff, 1u << (32 - len), len, e);
	return 0;
}

void lpm24_del(struct lpm24 *l, uint32_t prefix, uint8_t len, uint8_t cover_len,
	       uint32_t cover_slot)
{
	uint32_t e = cover_len ? entry_of(cover_len, cover_slot) : 0, i = prefix >> 8, *g;

	if (l->tbl24 == NULL || len < LPM24_MIN_LEN || len > 32)
		return;
	if (len <= 24) {
		uint32_t n = 1u << (24 - len);

		for (uint32_t j = i; j < i + n; j++) {
			if (l->tbl24[j] & LPM24_EXT)
				give_back(group(l, l->tbl24[j]), 0, TBL8_ENTRIES, len, e);
			else if (l->tbl24[j] != 0 && len_of(l->tbl24[j]) == len)
				l->tbl24[j] = e;
		}
		return;
	}
	if (!(l->tbl24[i] & LPM24_EXT))
		return;
	g = group(l, l->tbl24[i]);
	give_back(g, prefix & 0xff, 1u << (32 - len), len, e);
	/* No prefix longer than /24 left: every entry is the /24's own. */
	for (uint32_t j = 0; j < TBL8_ENTRIES; j++)
		if (len_of(g[j]) > 24)
			return;
	l->tbl8_free[l->nb_tbl8_free++] = l->tbl24[i] & LPM24_SLOT_MASK;
	l->tbl24[i] = g[0];
}

void lpm24_free(struct lpm24 *l)
{
	if (l->tbl24 != NULL)
		munmap(l->tbl24, (size_t)TBL24_ENTRIES * sizeof(uint32_t));
	free(l->tbl8);
	free(l->tbl8_free);
	memset(l, 0, sizeof(*l));
}
