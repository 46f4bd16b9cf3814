/* SPDX-License-Identifier: BSD-3-Clause */
/* The anti-replay window (common/replay.c) at its edges, table-driven like
 * WireGuard's T(seq, expected) self-test, plus a long random walk checked
 * against a naive reference that remembers every sequence number. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "replay.h"

struct step {
	uint64_t seq;
	bool accept; /* check result; an accepted seq is then recorded */
	int line;
};

#define T(seq, accept)                                                                             \
	{                                                                                          \
		(seq), (accept), __LINE__                                                          \
	}

static const struct step window_64[] = {
	T(0, false),                       /* sequence numbers start at 1 */
	T(1, true),                        /* first packet */
	T(1, false),                       /* duplicate */
	T(3, true),           T(2, true),  /* out of order inside the window */
	T(2, false),          T(66, true), /* slide: window is now 3..66 */
	T(2, false),                       /* too old: 66 - 2 = 64 = window size */
	T(3, false),                       /* oldest inside the window, already seen */
	T(4, true),                        /* oldest unseen inside the window */
	T(65, true),          T(65, false),
	T(64, true),          T(130, true), /* window 67..130 */
	T(66, false),                       /* just fell out */
	T(67, true),          T(67, false),
	T(129, true),         T(131, true),
	T(1000000, true),                       /* big jump clears everything */
	T(130, false),        T(999936, false), /* 1000000 - 64 */
	T(999937, true),                        /* 1000000 - 63 */
	T(999999, true),      T(1000000, false),
	T(0xfffffffe, true), /* top of the 32-bit space */
	T(0xffffffff, true),  T(0xffffffff, false),
	T(0xfffffffe, false), T(0xffffffc0, true), /* 0xffffffff - 63 */
	T(0xffffffbf, false),
};

static const struct step window_4096[] = {
	T(0, false),    T(1, true),      T(4096, true), /* window 1..4096 */
	T(1, false),                                    /* still inside, seen */
	T(2, true),                                     /* still inside, unseen */
	T(4097, true),                                  /* window 2..4097 */
	T(1, false),                                    /* too old */
	T(2, false),    T(3, true),      T(2048, true),          T(2048, false),
	T(8193, true),  /* window 4098..8193 */
	T(4097, false), /* 8193 - 4097 = 4096: too old */
	T(4098, true),  T(100000, true), T(100000 - 4095, true), T(100000 - 4096, false),
	T(99999, true), T(99999, false),
};

static void run_table(const char *name, uint32_t size, const struct step *steps, size_t n)
{
	struct replay_window w;

	replay_init(&w, size);
	for (size_t i = 0; i < n; i++) {
		bool got = replay_check(&w, steps[i].seq);

		CHECK(got == steps[i].accept, "%s line %d: seq %lu: %s, want %s", name,
		      steps[i].line, (unsigned long)steps[i].seq, got ? "accepted" : "rejected",
		      steps[i].accept ? "accepted" : "rejected");
		if (got)
			replay_update(&w, steps[i].seq);
	}
}

/* Bits left behind in a reused bitmap word must not reject new numbers. */
static void test_word_reuse(uint32_t size)
{
	struct replay_window w;
	uint64_t jump;

	replay_init(&w, size);
	for (uint64_t s = 1; s <= size; s++)
		replay_update(&w, s);
	jump = 3 * (uint64_t)size + 17;
	CHECK(replay_check(&w, jump), "size %u: jump rejected", size);
	replay_update(&w, jump);
	for (uint64_t s = jump - size + 1; s < jump; s++)
		CHECK(replay_check(&w, s), "size %u: seq %lu inside the new window rejected", size,
		      (unsigned long)s);
	CHECK(!replay_check(&w, jump - size), "size %u: seq just outside accepted", size);
}

static void test_sizes(void)
{
	static const struct {
		uint32_t asked, got;
	} sizes[] = {{0, 64},      {1, 64},      {64, 64},     {65, 128},    {100, 128},
		     {1024, 1024}, {4095, 4096}, {4096, 4096}, {5000, 4096}, {UINT32_MAX, 4096}};
	struct replay_window w;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		replay_init(&w, sizes[i].asked);
		CHECK(w.size == sizes[i].got, "replay_init(%u): size %u, want %u", sizes[i].asked,
		      w.size, sizes[i].got);
		CHECK(w.top == 0, "replay_init(%u): top not 0", sizes[i].asked);
	}
}

/* The ring has at least size / 64 + 1 words, a power of two (a mask, not a
 * division, per packet) whenever that fits in REPLAY_WORDS. */
static void test_ring_words(void)
{
	for (uint32_t size = 64; size <= REPLAY_WINDOW_MAX; size += 64) {
		struct replay_window w;
		uint32_t need = size / 64 + 1;

		replay_init(&w, size);
		CHECK(w.words >= need && w.words <= REPLAY_WORDS, "size %u: %u words", size,
		      w.words);
		if (size < REPLAY_WINDOW_MAX)
			CHECK((w.words & (w.words - 1)) == 0,
			      "size %u: %u words, not a power of two", size, w.words);
	}
}

/* A random walk (mostly forward, some reordering, some replays, some jumps)
 * against a reference that remembers every number it accepted. */
#define WALK_MAX 400000

static void test_random_walk(uint32_t size, unsigned int seed)
{
	static uint8_t seen[WALK_MAX + 1];
	struct replay_window w;
	uint64_t top = 0, seq;
	unsigned int disagreements = 0;

	memset(seen, 0, sizeof(seen));
	replay_init(&w, size);
	srand(seed);
	for (int i = 0; i < 200000; i++) {
		int r = rand() % 100;
		bool want, got;

		if (r < 60)
			seq = top + 1 + (uint64_t)(rand() % 3);
		else if (r < 90)
			seq = top > 0 ? top - (uint64_t)(rand() % (size + 64)) : 0;
		else if (r < 99)
			seq = top + (uint64_t)(rand() % (3 * size));
		else
			seq = top + 1 + (uint64_t)(rand() % 20000);
		if ((int64_t)seq < 0 || seq > WALK_MAX)
			continue;
		want = seq != 0 && !seen[seq] && (seq > top || top - seq < size);
		got = replay_check(&w, seq);
		if (got != want && disagreements++ < 5)
			CHECK(got == want, "size %u step %d: seq %lu top %lu: %d, reference %d",
			      size, i, (unsigned long)seq, (unsigned long)top, got, want);
		if (want) {
			replay_update(&w, seq);
			seen[seq] = 1;
			if (seq > top)
				top = seq;
		}
	}
	CHECK(disagreements == 0, "size %u: %u disagreements with the reference", size,
	      disagreements);
}

/* ESN inference (RFC 4303 A2.2): top of the window, window size, the low
 * half received, and the 64-bit number it must stand for. */
struct esn_case {
	uint64_t top;
	uint32_t size;
	uint32_t seq_lo;
	uint64_t want;
	int line;
};

#define E(top, size, lo, want)                                                                     \
	{                                                                                          \
		(top), (size), (lo), (want), __LINE__                                              \
	}
#define G (1ull << 32)

static const struct esn_case esn_cases[] = {
	/* case A: window 0xffffffc0..0xffffffff inside subspace 0 */
	E(G - 1, 64, 0xffffffffu, G - 1),      /* the top itself (a replay, but hi 0) */
	E(G - 1, 64, 0xffffffc0u, G - 64),     /* bottom of the window */
	E(G - 1, 64, 0xffffffbfu, 2 * G - 65), /* below the window: next subspace */
	E(G - 1, 64, 0, G),                    /* the wrap: 2^32 */
	E(G - 1, 64, 5, G + 5),
	E(G, 64, 0, G),                        /* case B from here: window spans 0xffffffc1..2^32 */
	E(G + 5, 64, 0xfffffffdu, G - 3),      /* late packet from before the wrap */
	E(G + 5, 64, 0xffffffc6u, G - 58),     /* bottom of the spanning window */
	E(G + 5, 64, 0xffffffc5u, 2 * G - 59), /* below it: taken as far ahead (RFC A2.2) */
	E(G + 5, 64, 6, G + 6),                /* ahead in subspace 1 */
	E(G + 5, 64, 0x80000000u, G + 0x80000000u),
	E(G + 62, 64, 0xffffffffu, G - 1),     /* 64 - 1 = 63 > 62: still spanning */
	E(G + 63, 64, 0xffffffffu, 2 * G - 1), /* window 2^32..2^32+63: case A, next subspace */
	E(G + 63, 64, 0, G),
	E(5 * G + 100, 4096, 0xfffff100u, 5 * G - 0xf00), /* 4096 window spanning */
	E(5 * G + 100, 4096, 200, 5 * G + 200),
	/* no subspace below 0: a far-ahead low half stays in subspace 0 */
	E(0, 64, 0xfffffff0u, 0xfffffff0u), E(10, 64, 0xfffffff0u, 0xfffffff0u), E(10, 64, 3, 3),
	E(1000, 64, 3, G + 3), /* case A: below the window means the next one */
};

static void test_esn_infer(void)
{
	for (size_t i = 0; i < sizeof(esn_cases) / sizeof(esn_cases[0]); i++) {
		const struct esn_case *c = &esn_cases[i];
		struct replay_window w;
		uint64_t got;

		replay_init(&w, c->size);
		if (c->top)
			replay_update(&w, c->top);
		got = replay_esn_infer(&w, c->seq_lo);
		CHECK(got == c->want, "line %d: top %#lx lo %#x: inferred %#lx, want %#lx", c->line,
		      (unsigned long)c->top, c->seq_lo, (unsigned long)got, (unsigned long)c->want);
	}
}

/* A stream crossing 2^32 with reordering: every packet inferred right and
 * accepted once, the replays refused. */
static void test_esn_stream(void)
{
	struct replay_window w;
	unsigned int wrong = 0;

	replay_init(&w, 128);
	replay_update(&w, G - 200);
	for (uint64_t seq = G - 199; seq < G + 200; seq += 2) {
		/* send seq + 1 before seq: out of order by one */
		for (int k = 1; k >= 0; k--) {
			uint64_t s = seq + (uint64_t)k, got = replay_esn_infer(&w, (uint32_t)s);

			wrong += got != s || !replay_check(&w, got);
			replay_update(&w, got);
			wrong += replay_check(&w, replay_esn_infer(&w, (uint32_t)s));
		}
	}
	CHECK(wrong == 0, "ESN stream across 2^32: %u mistakes", wrong);
}

int main(void)
{
	test_esn_infer();
	test_esn_stream();
	run_table("window 64", 64, window_64, sizeof(window_64) / sizeof(window_64[0]));
	run_table("window 4096", 4096, window_4096, sizeof(window_4096) / sizeof(window_4096[0]));
	test_sizes();
	test_word_reuse(64);
	test_word_reuse(128);
	test_word_reuse(1024);
	test_word_reuse(4032);
	test_word_reuse(4096);
	test_ring_words();
	test_random_walk(64, 1);
	test_random_walk(128, 2);
	test_random_walk(1024, 4);
	test_random_walk(4032, 5);
	test_random_walk(4096, 3);
	return check_report("test_replay");
}
