/* SPDX-License-Identifier: BSD-3-Clause */
/* Tuple-space search over policy selectors (spd_classify.h): what spd.c
 * matches packets with instead of a scan of every policy. */
#include "spd_classify.h"

#include <stdlib.h>

/* Selectors with one pair of prefix masks, and their hash table: slots
 * slot_base .. slot_base + slot_mask of the classifier's slots. */
struct spd_tuple {
	uint32_t src_mask, dst_mask;
	uint32_t first; /* the earliest selector of the tuple */
	uint32_t slot_base, slot_mask;
};

/* One masked address pair of a tuple: its selectors are
 * order[first .. first + count), in evaluation order. count 0: empty. */
struct spd_slot {
	uint32_t src, dst;
	uint32_t first, count;
};

struct spd_classify {
	uint32_t nb_tuples;
	struct spd_tuple *tuples; /* by their first selector */
	struct spd_slot *slots;
	uint32_t *order;
	struct esgw_selector *sel;
};

static uint32_t slot_hash(uint32_t src, uint32_t dst)
{
	uint64_t k = ((uint64_t)src << 32) | dst;

	k ^= k >> 29;
	k *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32);
}

/* The slot of (src, dst) in tuple t: its own, or the empty one to take. */
static struct spd_slot *slot_find(struct spd_slot *slots, const struct spd_tuple *t, uint32_t src,
				  uint32_t dst)
{
	for (uint32_t h = slot_hash(src, dst) & t->slot_mask;; h = (h + 1) & t->slot_mask) {
		struct spd_slot *s = &slots[t->slot_base + h];

		if (s->count == 0 || (s->src == src && s->dst == dst))
			return s;
	}
}

void spd_classify_free(struct spd_classify *c)
{
	if (c == NULL)
		return;
	free(c->tuples);
	free(c->slots);
	free(c->order);
	free(c->sel);
	free(c);
}

/* Tuples of sels (tuple_of[i] for each), in the order of their first
 * selector, each with room for twice its selectors. Returns the count. */
static uint32_t tuples_make(struct spd_classify *c, uint32_t n, uint32_t *tuple_of,
			    uint32_t *sizes)
{
	uint32_t nb = 0, base = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct esgw_selector *s = &c->sel[i];
		uint32_t t = 0;

		while (t < nb && (c->tuples[t].src_mask != s->src_mask ||
				  c->tuples[t].dst_mask != s->dst_mask))
			t++;
		if (t == nb) {
			c->tuples[nb] = (struct spd_tuple){s->src_mask, s->dst_mask, i, 0, 0};
			sizes[nb++] = 0;
		}
		sizes[t]++;
		tuple_of[i] = t;
	}
	for (uint32_t t = 0; t < nb; t++) {
		uint32_t cap = 2;

		while (cap < 2 * sizes[t])
			cap *= 2;
		c->tuples[t].slot_base = base;
		c->tuples[t].slot_mask = cap - 1;
		base += cap;
	}
	c->nb_tuples = nb;
	return base;
}

struct spd_classify *spd_classify_build(const struct esgw_selector *const *sels, uint32_t n)
{
	struct spd_classify *c = calloc(1, sizeof(*c));
	uint32_t *tuple_of = calloc(n + 1, sizeof(*tuple_of));
	uint32_t *sizes = calloc(n + 1, sizeof(*sizes));
	struct spd_slot **slot_of = calloc(n + 1, sizeof(*slot_of));
	uint32_t nb_slots, next = 0;

	if (c == NULL || tuple_of == NULL || sizes == NULL || slot_of == NULL)
		goto fail;
	c->sel = calloc(n + 1, sizeof(*c->sel));
	c->tuples = calloc(n + 1, sizeof(*c->tuples));
	c->order = calloc(n + 1, sizeof(*c->order));
	if (c->sel == NULL || c->tuples == NULL || c->order == NULL)
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		c->sel[i] = *sels[i];
		c->sel[i].src &= c->sel[i].src_mask;
		c->sel[i].dst &= c->sel[i].dst_mask;
	}
	nb_slots = tuples_make(c, n, tuple_of, sizes);
	c->slots = calloc(nb_slots + 1, sizeof(*c->slots));
	if (c->slots == NULL)
		goto fail;
	/* Count each slot's selectors, lay the slots' lists out one after the
	 * other, then fill them in evaluation order. */
	for (uint32_t i = 0; i < n; i++) {
		slot_of[i] = slot_find(c->slots, &c->tuples[tuple_of[i]], c->sel[i].src,
				       c->sel[i].dst);
		slot_of[i]->src = c->sel[i].src;
		slot_of[i]->dst = c->sel[i].dst;
		slot_of[i]->count++;
	}
	for (uint32_t k = 0; k < nb_slots; k++) {
		c->slots[k].first = next;
		next += c->slots[k].count;
		c->slots[k].count = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		c->order[slot_of[i]->first + slot_of[i]->count++] = i;
	free(tuple_of);
	free(sizes);
	free(slot_of);
	return c;
fail:
	free(tuple_of);
	free(sizes);
	free(slot_of);
	spd_classify_free(c);
	return NULL;
}

int32_t spd_classify_first(const struct spd_classify *c, const struct esgw_flow *flow)
{
	uint32_t best = UINT32_MAX;

	/* A tuple whose first selector comes after the best match so far
	 * cannot hold an earlier one, nor can any tuple after it. */
	for (uint32_t t = 0; t < c->nb_tuples && c->tuples[t].first < best; t++) {
		const struct spd_tuple *tp = &c->tuples[t];
		const struct spd_slot *s = slot_find(c->slots, tp, flow->src & tp->src_mask,
						     flow->dst & tp->dst_mask);

		for (uint32_t k = s->first; k < s->first + s->count && c->order[k] < best; k++)
			if (esgw_selector_match(&c->sel[c->order[k]], flow)) {
				best = c->order[k];
				break;
			}
	}
	return best == UINT32_MAX ? -1 : (int32_t)best;
}

int32_t spd_classify_first_reverse(const struct spd_classify *c, const struct esgw_flow *flow)
{
	struct esgw_flow swapped = *flow;

	swapped.src = flow->dst;
	swapped.dst = flow->src;
	swapped.sport = flow->dport;
	swapped.dport = flow->sport;
	return spd_classify_first(c, &swapped);
}
