/* SPDX-License-Identifier: BSD-3-Clause */
/* First-match classification of a flow against selectors in evaluation
 * order, at a per-packet cost that does not grow with the number of
 * selectors: tuple-space search. Selectors are grouped by the pair of their
 * source and destination prefix lengths (a tuple); each tuple hashes the
 * masked address pair to the selectors with those prefixes, in evaluation
 * order. A lookup probes one hash slot per tuple, tuples taken in the order
 * of their first selector, and stops at the first tuple that cannot hold an
 * earlier match than the one found. Protocol and ports are checked with
 * esgw_selector_match on the few selectors of the slot, so "matches" means
 * exactly what it means everywhere else (common/selector.c). No DPDK call:
 * the unit tests link it alone. */
#ifndef ESGW_ROUTER_SPD_CLASSIFY_H
#define ESGW_ROUTER_SPD_CLASSIFY_H

#include <stdint.h>

#include "selector.h"

struct spd_classify;

/* A classifier of sels[0..n-1], sels[i] evaluated before sels[i + 1] (the
 * selectors are copied). NULL when out of memory. */
struct spd_classify *spd_classify_build(const struct esgw_selector *const *sels, uint32_t n);
void spd_classify_free(struct spd_classify *c);

/* The index of the first selector that flow matches (esgw_selector_match),
 * or -1 if none does. */
int32_t spd_classify_first(const struct spd_classify *c, const struct esgw_flow *flow);
/* The same with source and destination swapped (esgw_selector_match_reverse):
 * the inbound half of the selectors. */
int32_t spd_classify_first_reverse(const struct spd_classify *c, const struct esgw_flow *flow);

#endif
