/* SPDX-License-Identifier: BSD-3-Clause */
/* Sequence numbers and lifetimes in the ESP core: ESN encap and decap across
 * 2^32 in one burst, the stops at 2^32 - 1 (no ESN) and 2^64 - 1 (ESN), and
 * soft / hard limits in packets, bytes and seconds, exact within a burst,
 * counted only for authentic inbound packets. */
#include "test_common.h"

static IMB_MGR *mgr;

#define N 8

/* n inner packets of len bytes through encap; returns how many passed. */
static uint16_t encap_n(struct test_sa *t, struct test_pkt p[], uint16_t n, uint16_t len)
{
	struct esp_sa *sas[N];
	struct esp_buf bufs[N];
	uint8_t inner[1500];
	uint16_t passed;

	for (uint16_t i = 0; i < n; i++) {
		test_inner_ipv4(inner, len, (uint8_t)i);
		test_pkt_set(&p[i], inner, len);
		bufs[i] = p[i].buf;
		sas[i] = t->sa;
	}
	passed = esp_encap_burst(mgr, sas, bufs, n);
	for (uint16_t i = 0; i < n; i++)
		p[i].buf = bufs[i];
	return passed;
}

static uint16_t decap_n(struct test_sa *t, struct test_pkt p[], uint16_t n)
{
	struct esp_sa *sas[N];
	struct esp_buf bufs[N];
	uint16_t passed;

	for (uint16_t i = 0; i < n; i++) {
		bufs[i] = p[i].buf;
		sas[i] = t->sa;
	}
	passed = esp_decap_burst(mgr, sas, bufs, n);
	for (uint16_t i = 0; i < n; i++)
		p[i].buf = bufs[i];
	return passed;
}

static void test_esn_wrap(int alg)
{
	struct test_sa *tx = test_sa_new(mgr, alg, 0x5000, 64, true);
	struct test_sa *rx = test_sa_new(mgr, alg, 0x5000, 64, true);
	static struct test_pkt p[N];
	const char *name = esp_alg_name(alg);

	tx->rt.seq_out = (1ull << 32) - 3;
	replay_update(&rx->rt.replay, (1ull << 32) - 3);
	CHECK(encap_n(tx, p, 4, 60) == 4, "%s: ESN encap across 2^32", name);
	CHECK(tx->rt.seq_out == (1ull << 32) + 1, "%s: seq_out %#lx", name,
	      (unsigned long)tx->rt.seq_out);
	CHECK(read_be32(p[1].buf.data + 24) == UINT32_MAX && read_be32(p[2].buf.data + 24) == 0 &&
		      read_be32(p[3].buf.data + 24) == 1,
	      "%s: low halves on the wire", name);
	CHECK(decap_n(rx, p, 4) == 4, "%s: ESN decap across 2^32 in one burst: %s", name,
	      esgw_drop_name(p[0].buf.drop));
	CHECK(rx->rt.replay.top == (1ull << 32) + 1, "%s: window top %#lx", name,
	      (unsigned long)rx->rt.replay.top);

	/* The last ESN sequence number is 2^64 - 1. */
	tx->rt.seq_out = UINT64_MAX - 1;
	CHECK(encap_n(tx, p, 2, 60) == 1 && p[1].buf.drop == ESGW_DROP_SEQ_OVERFLOW,
	      "%s: ESN stop at 2^64 - 1", name);
	CHECK(tx->rt.expired & ESGW_SA_SEQ_EXHAUSTED, "%s: exhaustion not flagged", name);
	test_sa_free(tx);
	test_sa_free(rx);
}

static void test_no_esn_stop(void)
{
	struct test_sa *t = test_sa_new(mgr, ESP_ALG_AES_GCM_128, 0x5001, 64, false);
	static struct test_pkt p[N];

	t->rt.seq_out = UINT32_MAX - 2;
	CHECK(encap_n(t, p, 4, 60) == 2, "no ESN: 2 of 4 before 2^32 - 1");
	CHECK(p[2].buf.drop == ESGW_DROP_SEQ_OVERFLOW && p[3].buf.drop == ESGW_DROP_SEQ_OVERFLOW,
	      "no ESN: overflow drops");
	CHECK(esgw_sa_drops(&t->rt, ESGW_DROP_SEQ_OVERFLOW) == 2, "seq_overflow counted %lu",
	      (unsigned long)esgw_sa_drops(&t->rt, ESGW_DROP_SEQ_OVERFLOW));
	CHECK(t->rt.expired == ESGW_SA_SEQ_EXHAUSTED, "expired bits %#x", t->rt.expired);
	test_sa_free(t);
}

static void test_packet_limits(void)
{
	struct test_sa *t = test_sa_new(mgr, ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 0x5002, 64, false);
	static struct test_pkt p[N];

	t->sa->soft.packets = 3;
	t->sa->hard.packets = 5;
	CHECK(encap_n(t, p, 2, 60) == 2 && t->rt.expired == 0, "below soft: bits %#x",
	      t->rt.expired);
	CHECK(encap_n(t, p, 2, 60) == 2 && t->rt.expired == ESGW_SA_SOFT_EXPIRED,
	      "past soft: still sending, soft set (%#x)", t->rt.expired);
	/* 4 sent; a burst of 8 lets exactly one more through. */
	CHECK(encap_n(t, p, 8, 60) == 1, "hard limit inside a burst");
	CHECK(t->rt.expired == (ESGW_SA_SOFT_EXPIRED | ESGW_SA_HARD_EXPIRED), "bits %#x",
	      t->rt.expired);
	CHECK(t->rt.ctr.packets == 5 && esgw_sa_drops(&t->rt, ESGW_DROP_SA_EXPIRED) == 7,
	      "packets %lu, sa_expired %lu", (unsigned long)t->rt.ctr.packets,
	      (unsigned long)esgw_sa_drops(&t->rt, ESGW_DROP_SA_EXPIRED));
	CHECK(t->rt.seq_out == 5, "expired packets used sequence numbers");
	test_sa_free(t);
}

static void test_byte_and_time_limits(void)
{
	struct test_sa *t = test_sa_new(mgr, ESP_ALG_CHACHA20_POLY1305, 0x5003, 64, false);
	static struct test_pkt p[N];
	uint32_t now = esp_clock_seconds();

	t->sa->hard.bytes = 250; /* 100-byte packets: the third starts at 200 < 250 */
	CHECK(encap_n(t, p, 4, 100) == 3, "byte limit: %lu bytes", (unsigned long)t->rt.ctr.bytes);
	test_sa_free(t);

	t = test_sa_new(mgr, ESP_ALG_AES_GCM_256, 0x5004, 64, false);
	t->sa->soft.seconds = 50;
	t->sa->hard.seconds = 90;
	t->rt.installed_at = now - 60;
	CHECK(encap_n(t, p, 1, 60) == 1 && t->rt.expired == ESGW_SA_SOFT_EXPIRED,
	      "60 s of 50 soft: bits %#x", t->rt.expired);
	t->rt.installed_at = now - 95;
	t->sa->check_time = 0; /* as if the clock had moved on */
	CHECK(encap_n(t, p, 1, 60) == 0 && p[0].buf.drop == ESGW_DROP_SA_EXPIRED,
	      "95 s of 90 hard: %s", esgw_drop_name(p[0].buf.drop));
	/* An idle SA expires by time when the worker asks (on a stats query). */
	test_sa_free(t);
	t = test_sa_new(mgr, ESP_ALG_AES_GCM_256, 0x5005, 64, false);
	t->sa->hard.seconds = 10;
	t->rt.installed_at = now - 11;
	CHECK(esp_lifetime_check(t->sa, now) == 1 && (t->rt.expired & ESGW_SA_HARD_EXPIRED),
	      "idle SA past its hard seconds");
	test_sa_free(t);
}

/* Inbound: forgeries cannot use up a lifetime; a hard-expired SA drops
 * before spending crypto on the packet. */
static void test_inbound_limits(void)
{
	struct test_sa *tx = test_sa_new(mgr, ESP_ALG_NULL_HMAC_SHA256_128, 0x5006, 64, false);
	struct test_sa *rx = test_sa_new(mgr, ESP_ALG_NULL_HMAC_SHA256_128, 0x5006, 64, false);
	static struct test_pkt p[N];
	uint16_t forged = 0;

	rx->sa->hard.packets = 2;
	CHECK(encap_n(tx, p, 5, 80) == 5, "inbound: encap");
	for (int i = 0; i < 3; i++)
		p[i].buf.data[p[i].buf.len - 1] ^= 1;
	CHECK(decap_n(rx, p, 3) == 0, "inbound: forgeries passed");
	for (int i = 0; i < 3; i++)
		forged += p[i].buf.drop == ESGW_DROP_AUTH_FAILED;
	CHECK(forged == 3 && rx->rt.expired == 0, "forgeries counted towards the lifetime");
	CHECK(decap_n(rx, p + 3, 2) == 2, "inbound: two genuine under a hard limit of 2");
	encap_n(tx, p, 2, 80);
	CHECK(decap_n(rx, p, 2) == 0 && p[0].buf.drop == ESGW_DROP_SA_EXPIRED &&
		      p[1].buf.drop == ESGW_DROP_SA_EXPIRED,
	      "inbound past hard: %s", esgw_drop_name(p[0].buf.drop));
	CHECK(rx->rt.ctr.packets == 2, "inbound packets %lu", (unsigned long)rx->rt.ctr.packets);
	test_sa_free(tx);
	test_sa_free(rx);
}

/* The durable sequence-number floor (esp_seq_limit_raise): the SA sends
 * every number below it, holds at it without using a number (seq_hold, not
 * exhaustion), continues once it is raised, never goes back, and stays
 * inside the number space without ESN. */
static void test_seq_reservation(void)
{
	struct test_sa *t = test_sa_new(mgr, ESP_ALG_AES_GCM_128, 0x5003, 64, false);
	static struct test_pkt p[N];

	t->rt.seq_out_max = 0; /* a fresh slot: nothing reserved yet */
	CHECK(encap_n(t, p, 2, 60) == 0 && p[0].buf.drop == ESGW_DROP_SEQ_HOLD, "no floor: %s",
	      esgw_drop_name(p[0].buf.drop));
	esp_seq_limit_raise(t->sa, 5);
	CHECK(t->rt.seq_out_max == 4, "floor 5: max %lu", (unsigned long)t->rt.seq_out_max);
	CHECK(encap_n(t, p, 6, 60) == 4 && p[4].buf.drop == ESGW_DROP_SEQ_HOLD &&
		      p[5].buf.drop == ESGW_DROP_SEQ_HOLD,
	      "4 below floor 5, then held");
	CHECK(t->rt.seq_out == 4 && read_be32(p[3].buf.data + 24) == 4, "seq_out %lu",
	      (unsigned long)t->rt.seq_out);
	CHECK(esgw_sa_drops(&t->rt, ESGW_DROP_SEQ_HOLD) == 4 && t->rt.expired == 0,
	      "seq_hold %lu, expired %#x",
	      (unsigned long)esgw_sa_drops(&t->rt, ESGW_DROP_SEQ_HOLD), t->rt.expired);
	esp_seq_limit_raise(t->sa, 3); /* a late, lower push changes nothing */
	esp_seq_limit_raise(t->sa, 0);
	CHECK(t->rt.seq_out_max == 4, "limit went down to %lu", (unsigned long)t->rt.seq_out_max);
	esp_seq_limit_raise(t->sa, 7);
	CHECK(encap_n(t, p, 3, 60) == 2 && p[2].buf.drop == ESGW_DROP_SEQ_HOLD &&
		      t->rt.seq_out == 6,
	      "raised to 7: seq_out %lu", (unsigned long)t->rt.seq_out);
	esp_seq_limit_raise(t->sa, 1ull << 40);
	CHECK(t->rt.seq_out_max == UINT32_MAX, "no ESN: max %#lx",
	      (unsigned long)t->rt.seq_out_max);
	test_sa_free(t);
}

/* AEAD IVs are the sequence number XOR the SA's iv_mask and nothing else: an
 * SA rebuilt from the same parameters (a configuration push, a worker
 * restart, a move) sends the same IV for the same number, so IVs repeat only
 * if sequence numbers do. CBC IVs are drawn anew: unpredictable. */
static void test_iv_construction(int alg)
{
	const struct esp_vector_keys *k = &vec_keys[alg];
	struct esgw_sa_runtime *rt = aligned_alloc(64, sizeof(*rt));
	struct esp_sa_params prm = {.spi = 0x5004, .alg = (enum esp_alg)alg, .rt = rt};
	const struct esp_alg_info *info = esp_alg_lookup(alg);
	uint8_t iv[2][16], inner[60];
	static struct test_pkt p;
	char err[128];

	memset(rt, 0, sizeof(*rt));
	prm.crypto_key = k->crypto_key;
	prm.crypto_key_len = k->crypto_key_len;
	prm.integ_key = k->integ_key;
	prm.integ_key_len = k->integ_key_len;
	prm.salt = vec_salt;
	prm.salt_len = k->salt_len;
	prm.iv_mask = 0x0123456789abcdefull;
	memcpy(&prm.outer_src, vec_outer_src, 4);
	memcpy(&prm.outer_dst, vec_outer_dst, 4);
	test_inner_ipv4(inner, sizeof(inner), 7);
	for (int build = 0; build < 2; build++) {
		struct esp_sa *sa = esp_sa_alloc();

		CHECK(esp_sa_init(mgr, sa, &prm, err, sizeof(err)) == 0, "%s: %s",
		      esp_alg_name(alg), err);
		esp_seq_limit_raise(sa, UINT64_MAX);
		rt->seq_out = 41; /* the same next number both times */
		test_pkt_set(&p, inner, sizeof(inner));
		CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 1, "%s: encap", esp_alg_name(alg));
		memcpy(iv[build], p.buf.data + 20 + 8, info->iv_len);
		esp_sa_free(sa);
	}
	if (info->integ == ESP_INTEG_AEAD) {
		uint64_t want = 42 ^ prm.iv_mask;

		for (int i = 0; i < 8; i++)
			CHECK(iv[0][i] == (uint8_t)(want >> (56 - 8 * i)), "%s: IV byte %d",
			      esp_alg_name(alg), i);
		CHECK(memcmp(iv[0], iv[1], 8) == 0, "%s: a rebuild changed the IV",
		      esp_alg_name(alg));
	} else if (info->iv_len == 16) {
		CHECK(memcmp(iv[0], iv[1], 16) != 0, "%s: CBC IV predictable across inits",
		      esp_alg_name(alg));
	}
	free(rt);
}

int main(void)
{
	mgr = test_mgr();
	test_seq_reservation();
	for (size_t a = 0; a < ESP_ALG_COUNT; a++)
		test_iv_construction(esp_algorithms[a].alg);
	for (size_t a = 0; a < ESP_ALG_COUNT; a++)
		test_esn_wrap(esp_algorithms[a].alg);
	test_no_esn_stop();
	test_packet_limits();
	test_byte_and_time_limits();
	test_inbound_limits();
	free_mb_mgr(mgr);
	return check_report("test_esp_lifetime");
}
