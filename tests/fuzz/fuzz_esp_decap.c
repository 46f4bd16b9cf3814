/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the inbound path: ESP header and length checks, ESN
 * inference, the replay window, ICV verification, decryption and the
 * padding / next-header / inner-header checks, for every algorithm.
 *
 * Input: byte 0 picks the algorithm (low 7 bits, index into the algorithm
 * table) and ESN (bit 7); bytes 1..8 are the replay window's top before the
 * packet (little endian, 0: fresh SA); the rest is one outer IPv4 + ESP
 * packet. The SA uses the keys of tests/unit/esp_vectors.h, so the seed
 * corpus (gen_corpus.py, scapy) holds packets that decrypt.
 *
 * Besides the sanitizers' checks it asserts what must hold for any input:
 * a passed packet is an IPv4 packet inside the buffer and is then a replay,
 * also in a burst of copies over two SAs, which the ESP core takes a group
 * at a time (ESP_GROUP), asking for the next groups' SA lines; a dropped
 * one has a reason and was counted once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esp.h"
#include "esp_vectors.h"
#include "replay.h"

#define HEADROOM 128
#define BUF_SIZE 2048
#define PREFIX 9
#define COPIES 20 /* more than two groups of ESP_GROUP */

static IMB_MGR *mgr;

static void require(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_esp_decap: invariant broken: %s\n", what);
		abort();
	}
}

static uint64_t counted_drops(const struct esgw_sa_runtime *rt)
{
	uint64_t n = 0;

	for (int i = 0; i < ESGW_SA_DROP_MAX; i++)
		n += rt->drops[i];
	return n;
}

static void set_buf(struct esp_buf *b, uint8_t *mem, const uint8_t *data, size_t len)
{
	memcpy(mem + HEADROOM, data, len);
	b->data = mem + HEADROOM;
	b->len = (uint16_t)len;
	b->headroom = HEADROOM;
	b->tailroom = (uint16_t)(BUF_SIZE - HEADROOM - len);
	b->drop = ESP_NO_DROP;
}

static struct esp_sa *sa_new(const struct esp_sa_params *p)
{
	struct esp_sa *sa = esp_sa_alloc();
	char err[128];

	if (sa == NULL || esp_sa_init(mgr, sa, p, err, sizeof(err)) < 0) {
		fprintf(stderr, "esp_sa_init: %s\n", err);
		abort();
	}
	return sa;
}

/* COPIES of the packet in one burst, every other one for a second SA of
 * another SPI (with its own runtime slot): after the first tries none may
 * pass, the first SA's as replays or refused again, the second's as no_sa
 * (or malformed). */
static void copies_over_two_sas(struct esp_sa *sa, struct esp_sa_params p, const uint8_t *pkt,
				size_t len)
{
	static uint8_t mem[COPIES][BUF_SIZE] __attribute__((aligned(64)));
	static struct esgw_sa_runtime rt2 __attribute__((aligned(64)));
	struct esp_sa *sas[COPIES], *other;
	struct esp_buf bufs[COPIES];

	memset(&rt2, 0, sizeof(rt2));
	replay_init(&rt2.replay, 64);
	p.spi = p.spi == UINT32_MAX ? 1 : p.spi + 1;
	p.rt = &rt2;
	other = sa_new(&p);
	for (int i = 0; i < COPIES; i++) {
		set_buf(&bufs[i], mem[i], pkt, len);
		sas[i] = i % 2 ? other : sa;
	}
	require(esp_decap_burst(mgr, sas, bufs, COPIES) == 0,
		"a copy passed in a burst over two SAs");
	require(counted_drops(&rt2) == COPIES / 2, "the other SA's copies, one drop each");
	for (int i = 0; i < COPIES; i++)
		require(bufs[i].drop < ESGW_DROP_MAX, "a named drop reason");
	esp_sa_free(other);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[2][BUF_SIZE] __attribute__((aligned(64)));
	static struct esgw_sa_runtime rt __attribute__((aligned(64)));
	const struct esp_alg_info *info;
	struct esp_sa_params p = {0};
	struct esp_sa *sa, *sas[2];
	struct esp_buf bufs[2];
	uint64_t top = 0;
	uint16_t passed;

	if (mgr == NULL) {
		mgr = alloc_mb_mgr(0);
		if (mgr == NULL)
			abort();
		init_mb_mgr_auto(mgr, NULL);
	}
	if (size < PREFIX || size - PREFIX > BUF_SIZE - HEADROOM)
		return 0;
	info = &esp_algorithms[(data[0] & 0x7f) % ESP_ALG_COUNT];
	for (int i = 8; i >= 1; i--)
		top = top << 8 | data[i];

	memset(&rt, 0, sizeof(rt));
	replay_init(&rt.replay, 64);
	if (top)
		replay_update(&rt.replay, top);
	rt.installed_at = esp_clock_seconds();
	/* The SA's SPI is the packet's (when it has one): a wrong SPI is
	 * the router's business, the decap after it is what is fuzzed. */
	p.spi = size >= PREFIX + 24 ? read_be32(data + PREFIX + 20) : 0x1001;
	if (p.spi == 0)
		p.spi = 1;
	p.alg = info->alg;
	p.esn = data[0] >> 7;
	p.crypto_key = vec_keys[info->alg].crypto_key;
	p.crypto_key_len = vec_keys[info->alg].crypto_key_len;
	p.integ_key = vec_keys[info->alg].integ_key;
	p.integ_key_len = vec_keys[info->alg].integ_key_len;
	p.salt = vec_salt;
	p.salt_len = vec_keys[info->alg].salt_len;
	p.rt = &rt;
	sa = sa_new(&p);

	set_buf(&bufs[0], mem[0], data + PREFIX, size - PREFIX);
	sas[0] = sa;
	passed = esp_decap_burst(mgr, sas, bufs, 1);
	require(passed + counted_drops(&rt) == 1, "one packet, one outcome");
	if (passed) {
		const struct esp_buf *b = &bufs[0];

		require(b->data >= mem[0] && b->data + b->len <= mem[0] + BUF_SIZE,
			"inner packet inside the buffer");
		require(b->headroom + b->len + b->tailroom == BUF_SIZE, "buffer accounting");
		require(b->len >= 20 && (b->data[0] >> 4) == 4, "inner IPv4");
		require(rt.ctr.packets == 1 && rt.ctr.bytes == b->len, "SA counters");
	} else {
		require(bufs[0].drop < ESGW_DROP_MAX, "a named drop reason");
	}

	/* The same packet twice more in one burst: never accepted again. */
	set_buf(&bufs[0], mem[0], data + PREFIX, size - PREFIX);
	set_buf(&bufs[1], mem[1], data + PREFIX, size - PREFIX);
	sas[1] = sa;
	passed = esp_decap_burst(mgr, sas, bufs, 2);
	require(passed == 0, "a replay or a refused packet passed on a second try");
	copies_over_two_sas(sa, p, data + PREFIX, size - PREFIX);
	esp_sa_free(sa);
	return 0;
}
