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
	CHECK(esp_get_be32(p[1].buf.data + 24) == UINT32_MAX &&
		      esp_get_be32(p[2].buf.data + 24) == 0 &&
		      esp_get_be32(p[3].buf.data + 24) == 1,
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
	CHECK(t->rt.ctr.drops[ESGW_DROP_SEQ_OVERFLOW] == 2, "seq_overflow counted %lu",
	      (unsigned long)t->rt.ctr.drops[ESGW_DROP_SEQ_OVERFLOW]);
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
	CHECK(t->rt.ctr.packets == 5 && t->rt.ctr.drops[ESGW_DROP_SA_EXPIRED] == 7,
	      "packets %lu, sa_expired %lu", (unsigned long)t->rt.ctr.packets,
	      (unsigned long)t->rt.ctr.drops[ESGW_DROP_SA_EXPIRED]);
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

int main(void)
{
	mgr = test_mgr();
	for (size_t a = 0; a < ESP_ALG_COUNT; a++)
		test_esn_wrap(esp_algorithms[a].alg);
	test_no_esn_stop();
	test_packet_limits();
	test_byte_and_time_limits();
	test_inbound_limits();
	free_mb_mgr(mgr);
	return check_report("test_esp_lifetime");
}
