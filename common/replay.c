/* SPDX-License-Identifier: BSD-3-Clause */
/* Anti-replay window as a ring of 64-bit words (RFC 6479): sliding forward
 * clears only the words the window moves past, never shifts the bitmap. */
#include "replay.h"

#include <string.h>

/* A window of size packets needs size / 64 + 1 words (one spare, so that the
 * oldest and the newest word never share a slot); any more only keep bits
 * that the size check rejects anyway. A power of two turns the word index
 * into a mask instead of a 64-bit division (tens of cycles, three per
 * packet): every window but the largest gets one within REPLAY_WORDS. */
static uint32_t ring_words(uint32_t size)
{
	uint32_t need = size / 64 + 1, words = 1;

	while (words < need)
		words <<= 1;
	return words <= REPLAY_WORDS ? words : need;
}

void replay_init(struct replay_window *w, uint32_t size)
{
	if (size < 64)
		size = REPLAY_WINDOW_DEFAULT;
	if (size > REPLAY_WINDOW_MAX)
		size = REPLAY_WINDOW_MAX;
	size = (size + 63) & ~63u;
	memset(w, 0, sizeof(*w));
	w->size = size;
	w->words = ring_words(size);
}

uint64_t replay_esn_infer(const struct replay_window *w, uint32_t seq_lo)
{
	uint32_t top_lo = (uint32_t)w->top, top_hi = (uint32_t)(w->top >> 32);
	uint32_t bottom_lo = top_lo - (w->size - 1); /* modulo 2^32 */
	uint32_t hi;

	if (top_lo >= w->size - 1) {
		/* Case A: the window lies within one 2^32 subspace. A low half
		 * below it belongs to the next subspace. */
		hi = seq_lo >= bottom_lo ? top_hi : top_hi + 1;
	} else {
		/* Case B: the window spans the subspace boundary. A low half at
		 * or above its (wrapped) bottom belongs to the previous subspace,
		 * unless there is none. */
		hi = seq_lo >= bottom_lo && top_hi > 0 ? top_hi - 1 : top_hi;
	}
	return (uint64_t)hi << 32 | seq_lo;
}
