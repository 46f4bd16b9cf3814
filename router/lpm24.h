/* SPDX-License-Identifier: BSD-3-Clause */
/* The lookup index of the IPv4 FIB (fib.c): DIR-24-8, as DPDK's rte_lpm, in
 * the router's own memory. A destination's longest prefix of /8 or longer
 * is one read of tbl24 (indexed by its first 24 bits), or two where a
 * prefix longer than /24 lies in its /24 (a tbl8 group of 256 entries).
 * The cost does not depend on how many routes there are, and the 10,000 /24
 * routes of a hub sit side by side, not scattered over hash tables.
 *
 * An entry holds the length of the prefix it stands for and the caller's
 * number for the route (its slot, below LPM24_SLOT_MAX), or 0: no prefix of
 * /8 or longer covers it (fib.c then asks its table of shorter prefixes).
 * tbl24 is 64 MiB of address space mapped on demand: the pages the routes
 * write are what it takes (a /24 route 4 bytes, a /8 256 KiB; a lookup of an
 * address no route wrote reads the kernel's zero page). Pure C (no DPDK). */
#ifndef ESGW_ROUTER_LPM24_H
#define ESGW_ROUTER_LPM24_H

#include <stddef.h>
#include <stdint.h>

#define LPM24_MIN_LEN 8                 /* shorter prefixes are not indexed */
#define LPM24_SLOT_MAX ((1u << 24) - 1) /* slots 0 .. LPM24_SLOT_MAX - 1 */

struct lpm24 {
	uint32_t *tbl24;   /* 1 << 24 entries; NULL while empty */
	uint32_t *tbl8;    /* tbl8_cap groups of 256 entries */
	uint32_t tbl8_cap; /* groups allocated */
	uint32_t tbl8_top; /* groups ever handed out; the free ones are listed */
	uint32_t *tbl8_free;
	uint32_t nb_tbl8_free;
};

#define LPM24_EXT 0x80000000u /* a tbl24 entry naming a tbl8 group */
#define LPM24_LEN_SHIFT 24
#define LPM24_SLOT_MASK 0xffffffu

/* The slot + 1 of the longest indexed prefix covering dst, or 0. An empty
 * (zeroed) index finds nothing. */
static inline uint32_t lpm24_lookup(const struct lpm24 *l, uint32_t dst)
{
	uint32_t e;

	if (l->tbl24 == NULL)
		return 0;
	e = l->tbl24[dst >> 8];
	if (e & LPM24_EXT)
		e = l->tbl8[(size_t)(e & LPM24_SLOT_MASK) << 8 | (dst & 0xff)];
	return e & LPM24_SLOT_MASK;
}

/* Ask the cache for the tbl24 entry of dst. */
static inline void lpm24_prefetch(const struct lpm24 *l, uint32_t dst)
{
	if (l->tbl24 != NULL)
		__builtin_prefetch(&l->tbl24[dst >> 8]);
}

/* prefix/len (host bits clear, LPM24_MIN_LEN <= len <= 32) stands for slot
 * wherever no longer prefix does. 0, or -1 out of memory (l unchanged). */
int lpm24_add(struct lpm24 *l, uint32_t prefix, uint8_t len, uint32_t slot);
/* prefix/len is gone: where it stood, cover stands (the longest indexed
 * prefix shorter than len that covers it: its len and slot), or nothing
 * (cover_len 0). */
void lpm24_del(struct lpm24 *l, uint32_t prefix, uint8_t len, uint8_t cover_len,
	       uint32_t cover_slot);
void lpm24_free(struct lpm24 *l);

#endif
