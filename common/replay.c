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

/* The ring slot of bitmap word n (sequence number >> 6). */
static inline uint64_t ring_slot(const struct replay_window *w, uint64_t n)
{
	if (__builtin_expect((w->words & (w->words - 1)) == 0, 1))
		return n & (w->words - 1);
	return n % w->words; /* REPLAY_WINDOW_MAX only */
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

bool replay_check(const struct replay_window *w, uint64_t seq)
{
	uint64_t word;

	if (seq == 0)
		return false; /* sequence numbers start at 1 (RFC 4303 3.3.3) */
	if (seq > w->top)
		return true; /* ahead of the window: new */
	if (w->top - seq >= w->size)
		return false; /* behind the window: too old */
	word = ring_slot(w, seq >> 6);
	return (w->bitmap[word] & (1ull << (seq & 63))) == 0;
}

void replay_update(struct replay_window *w, uint64_t seq)
{
	uint64_t word = ring_slot(w, seq >> 6);

	if (seq > w->top) {
		uint64_t top_word = w->top >> 6, new_word = seq >> 6;
		uint64_t diff = new_word - top_word;

		/* Clear the words the window slides onto; all of them if it jumps far. */
		if (diff > w->words)
			diff = w->words;
		for (uint64_t i = 1; i <= diff; i++)
			w->bitmap[ring_slot(w, top_word + i)] = 0;
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
