/* SPDX-License-Identifier: BSD-3-Clause */
/* Anti-replay window as a ring of 64-bit words (RFC 6479): sliding forward
 * clears only the words the window moves past, never shifts the bitmap. */
#include "replay.h"

#include <string.h>

void replay_init(struct replay_window *w, uint32_t size)
{
	if (size < 64)
		size = REPLAY_WINDOW_DEFAULT;
	if (size > REPLAY_WINDOW_MAX)
		size = REPLAY_WINDOW_MAX;
	size = (size + 63) & ~63u;
	memset(w, 0, sizeof(*w));
	w->size = size;
	w->words = size / 64 + 1;
}

bool replay_check(const struct replay_window *w, uint64_t seq)
{
	uint64_t word;

	if (seq == 0)
		return false; /* sequence numbers start at 1 (RFC 4303 3.3.3) */
	if (seq > w->top)
		return true; /* ahead of the window: new */
	if (w->top - seq >= w->size)
		return false; /* behind the window: too old */
	word = (seq >> 6) % w->words;
	return (w->bitmap[word] & (1ull << (seq & 63))) == 0;
}

void replay_update(struct replay_window *w, uint64_t seq)
{
	uint64_t word = (seq >> 6) % w->words;

	if (seq > w->top) {
		uint64_t top_word = w->top >> 6, new_word = seq >> 6;
		uint64_t diff = new_word - top_word;

		/* Clear the words the window slides onto; all of them if it jumps far. */
		if (diff > w->words)
			diff = w->words;
		for (uint64_t i = 1; i <= diff; i++)
			w->bitmap[(top_word + i) % w->words] = 0;
		w->top = seq;
	}
	w->bitmap[word] |= 1ull << (seq & 63);
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
