/* SPDX-License-Identifier: BSD-3-Clause */
/* ESP anti-replay window (RFC 4303 section 3.4.3), kept as a ring of 64-bit
 * words in the style of RFC 6479 so that sliding never shifts the whole bitmap.
 * Pure functions: the crypto worker calls replay_check() before decrypting and
 * replay_update() only after the ICV verified, so a forged packet never moves
 * the window. */
#ifndef ESGW_REPLAY_H
#define ESGW_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#define REPLAY_WINDOW_MAX 4096 /* packets */
#define REPLAY_WINDOW_DEFAULT 64
#define REPLAY_WORDS (REPLAY_WINDOW_MAX / 64 + 1) /* one spare word, RFC 6479 */

struct replay_window {
	uint64_t top;   /* highest sequence number accepted so far, 0: none yet */
	uint32_t size;  /* window size in packets, 64..REPLAY_WINDOW_MAX */
	uint32_t words; /* bitmap words in use: a power of two >= size / 64 + 1 (replay_init) */
	uint64_t bitmap[REPLAY_WORDS];
};

/* size is rounded up to a multiple of 64 and clamped to 64..REPLAY_WINDOW_MAX. */
void replay_init(struct replay_window *w, uint32_t size);
/* The ring slot of bitmap word n (sequence number >> 6). This and the two
 * below are inline: the crypto worker checks every packet twice (before
 * decrypting, and again in packet order after) and updates once; as calls
 * they cost a few cycles of a 64-byte packet's ~100. */
static inline uint64_t replay_ring_slot(const struct replay_window *w, uint64_t n)
{
	if (__builtin_expect((w->words & (w->words - 1)) == 0, 1))
		return n & (w->words - 1);
	return n % w->words; /* REPLAY_WINDOW_MAX only */
}

/* true if seq may be accepted: non-zero, not too old, not yet seen. */
static inline bool replay_check(const struct replay_window *w, uint64_t seq)
{
	if (seq == 0)
		return false; /* sequence numbers start at 1 (RFC 4303 3.3.3) */
	if (seq > w->top)
		return true; /* ahead of the window: new */
	if (w->top - seq >= w->size)
		return false; /* behind the window: too old */
	return (w->bitmap[replay_ring_slot(w, seq >> 6)] & (1ull << (seq & 63))) == 0;
}

/* Record seq as seen (call only after the ICV verified); slides the window. */
static inline void replay_update(struct replay_window *w, uint64_t seq)
{
	uint64_t word = replay_ring_slot(w, seq >> 6);

	if (seq > w->top) {
		uint64_t top_word = w->top >> 6, new_word = seq >> 6;
		uint64_t diff = new_word - top_word;

		/* Clear the words the window slides onto; all of them if it jumps far. */
		if (diff > w->words)
			diff = w->words;
		for (uint64_t i = 1; i <= diff; i++)
			w->bitmap[replay_ring_slot(w, top_word + i)] = 0;
		w->top = seq;
	}
	w->bitmap[word] |= 1ull << (seq & 63);
}
/* Extended sequence numbers (RFC 4303 appendix A2.2): the 64-bit sequence
 * number of a packet that carries only the low 32 bits, inferred from the
 * window. The ICV covers the high bits, so a wrong guess fails authentication
 * instead of being accepted. */
uint64_t replay_esn_infer(const struct replay_window *w, uint32_t seq_lo);

#endif
