/* SPDX-License-Identifier: BSD-3-Clause */
/* Every way the ESP core refuses a packet gets the right drop reason and
 * counter: wrong ICV (window unmoved), truncation, replays, wrong SPI,
 * fragments, sequence number overflow, no room; plus key validation, wiping,
 * and bursts larger than one job-manager chunk. */
#include "test_common.h"

static IMB_MGR *mgr;

static struct test_sa *new_sa(int alg, uint32_t window)
{
	return test_sa_new(mgr, alg, 0x3000 + (uint32_t)alg, window, false);
}

/* Encapsulate an inner packet of len bytes into p. */
static void encap(struct test_sa *t, struct test_pkt *p, uint16_t len)
{
	uint8_t inner[1500];

	test_inner_ipv4(inner, len, 7);
	test_pkt_set(p, inner, len);
	if (esp_encap_burst(mgr, &t->sa, &p->buf, 1) != 1) {
		fprintf(stderr, "encap failed: %s\n", esgw_drop_name(p->buf.drop));
		exit(1);
	}
}

/* Decap a copy of the packet in p; returns the drop reason or -1 if passed. */
static int decap_copy(struct test_sa *t, const struct test_pkt *p)
{
	static struct test_pkt q;

	test_pkt_set(&q, p->buf.data, p->buf.len);
	return esp_decap_burst(mgr, &t->sa, &q.buf, 1) == 1 ? -1 : q.buf.drop;
}

static const char *reason(int r)
{
	return r < 0 ? "passed" : esgw_drop_name((enum esgw_drop)r);
}

static void test_icv(int alg)
{
	struct test_sa *t = new_sa(alg, 64);
	static struct test_pkt p;
	unsigned int icv_at, iv_end;
	int r;

	encap(t, &p, 100);
	icv_at = p.buf.len - t->sa->icv_len;
	iv_end = 28 + t->sa->iv_len;
	/* Flip one bit in each ICV byte, in the ciphertext, the IV and the seq. */
	for (unsigned int i = 24; i < p.buf.len; i++) {
		if (i >= iv_end && i < icv_at && i != iv_end && i != icv_at - 1)
			continue;      /* first and last ciphertext bytes stand for the rest */
		p.buf.data[i] ^= 0x02; /* not 0x01: that turns seq 1 into 0, a replay */
		r = decap_copy(t, &p);
		CHECK(r == ESGW_DROP_AUTH_FAILED, "%s: flipped byte %u: %s", esp_alg_name(alg), i,
		      reason(r));
		CHECK(t->rt.replay.top == 0, "%s: forged packet moved the window to %lu",
		      esp_alg_name(alg), (unsigned long)t->rt.replay.top);
		p.buf.data[i] ^= 0x02;
	}
	CHECK(esgw_sa_drops(&t->rt, ESGW_DROP_AUTH_FAILED) > 0, "auth_failed not counted");
	r = decap_copy(t, &p);
	CHECK(r == -1, "%s: genuine packet after forgeries: %s", esp_alg_name(alg), reason(r));
	CHECK(t->rt.replay.top == 1, "%s: window top %lu", esp_alg_name(alg),
	      (unsigned long)t->rt.replay.top);
	test_sa_free(t);
}

static void test_truncated(int alg)
{
	struct test_sa *t = new_sa(alg, 64);
	static struct test_pkt p, q;
	unsigned int minimum = 20 + 8 + t->sa->iv_len + t->sa->block_len + t->sa->icv_len;
	int r;

	encap(t, &p, 60);
	for (unsigned int cut = 0; cut < p.buf.len; cut++) {
		/* Shortened consistently: IP total length matches the buffer. */
		test_pkt_set(&q, p.buf.data, (uint16_t)cut);
		if (cut >= 4)
			write_be16(q.buf.data + 2, (uint16_t)cut);
		r = esp_decap_burst(mgr, &t->sa, &q.buf, 1) == 1 ? -1 : q.buf.drop;
		if (cut < minimum)
			CHECK(r == ESGW_DROP_MALFORMED, "%s: cut to %u: %s", esp_alg_name(alg), cut,
			      reason(r));
		else
			CHECK(r == ESGW_DROP_MALFORMED || r == ESGW_DROP_AUTH_FAILED,
			      "%s: cut to %u: %s", esp_alg_name(alg), cut, reason(r));
		/* Buffer shorter than the IP header says. */
		test_pkt_set(&q, p.buf.data, (uint16_t)cut);
		r = esp_decap_burst(mgr, &t->sa, &q.buf, 1) == 1 ? -1 : q.buf.drop;
		CHECK(r == ESGW_DROP_MALFORMED, "%s: buffer cut to %u: %s", esp_alg_name(alg), cut,
		      reason(r));
	}
	CHECK(t->rt.replay.top == 0, "truncated packets moved the window");
	test_sa_free(t);
}

static void test_header_checks(int alg)
{
	struct test_sa *t = new_sa(alg, 64);
	static struct test_pkt p;
	int r;

	encap(t, &p, 80);
	p.buf.data[23] ^= 0x10; /* SPI */
	r = decap_copy(t, &p);
	CHECK(r == ESGW_DROP_NO_SA, "wrong SPI: %s", reason(r));
	p.buf.data[23] ^= 0x10;

	p.buf.data[6] |= 0x20; /* more fragments */
	r = decap_copy(t, &p);
	CHECK(r == ESGW_DROP_MALFORMED, "fragment: %s", reason(r));
	p.buf.data[6] &= (uint8_t)~0x20;

	p.buf.data[9] = 17; /* not ESP */
	r = decap_copy(t, &p);
	CHECK(r == ESGW_DROP_MALFORMED, "protocol 17: %s", reason(r));
	p.buf.data[9] = 50;

	p.buf.data[0] = 0x44; /* IHL 4 */
	r = decap_copy(t, &p);
	CHECK(r == ESGW_DROP_MALFORMED, "IHL 4: %s", reason(r));
	p.buf.data[0] = 0x45;

	/* Sequence number 0 never passes, and is refused before any crypto. */
	write_be32(p.buf.data + 24, 0);
	r = decap_copy(t, &p);
	CHECK(r == ESGW_DROP_REPLAY, "seq 0: %s", reason(r));
	test_sa_free(t);
}

static void test_replay_decap(int alg)
{
	struct test_sa *tx = new_sa(alg, 64), *rx = new_sa(alg, 64);
	static struct test_pkt pkts[70], pair[2];
	struct esp_sa *sas[2] = {rx->sa, rx->sa};
	struct esp_buf bufs[2];
	int r;

	for (int i = 0; i < 70; i++)
		encap(tx, &pkts[i], 40);
	r = decap_copy(rx, &pkts[0]);
	CHECK(r == -1, "seq 1: %s", reason(r));
	r = decap_copy(rx, &pkts[0]);
	CHECK(r == ESGW_DROP_REPLAY, "seq 1 again: %s", reason(r));
	r = decap_copy(rx, &pkts[69]);
	CHECK(r == -1, "seq 70: %s", reason(r));
	r = decap_copy(rx, &pkts[5]);
	CHECK(r == ESGW_DROP_REPLAY, "seq 6 (too old in a 64 window): %s", reason(r));
	r = decap_copy(rx, &pkts[6]);
	CHECK(r == -1, "seq 7 (oldest in the window): %s", reason(r));
	CHECK(esgw_sa_drops(&rx->rt, ESGW_DROP_REPLAY) == 2, "replay drops %lu",
	      (unsigned long)esgw_sa_drops(&rx->rt, ESGW_DROP_REPLAY));

	/* The same packet twice in one burst: both pass the first check, only
	 * one may pass the second. */
	test_pkt_set(&pair[0], pkts[10].buf.data, pkts[10].buf.len);
	test_pkt_set(&pair[1], pkts[10].buf.data, pkts[10].buf.len);
	bufs[0] = pair[0].buf;
	bufs[1] = pair[1].buf;
	CHECK(esp_decap_burst(mgr, sas, bufs, 2) == 1, "duplicate in one burst: both passed");
	CHECK(bufs[0].drop == ESP_NO_DROP && bufs[1].drop == ESGW_DROP_REPLAY,
	      "duplicate in one burst: %s / %s", esgw_drop_name(bufs[0].drop),
	      esgw_drop_name(bufs[1].drop));
	test_sa_free(tx);
	test_sa_free(rx);
}

static void test_encap_drops(int alg)
{
	struct test_sa *t = new_sa(alg, 64);
	static struct test_pkt p;
	uint8_t inner[100];
	struct esp_sa *sa = t->sa;

	test_inner_ipv4(inner, 100, 1);
	/* The last sequence number without ESN is 2^32 - 1; then the SA stops. */
	t->rt.seq_out = UINT32_MAX - 1;
	test_pkt_set(&p, inner, 100);
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 1, "seq 2^32-1 refused");
	CHECK(read_be32(p.buf.data + 24) == UINT32_MAX, "seq on the wire %u",
	      read_be32(p.buf.data + 24));
	test_pkt_set(&p, inner, 100);
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 && p.buf.drop == ESGW_DROP_SEQ_OVERFLOW,
	      "after 2^32-1: %s", esgw_drop_name(p.buf.drop));
	CHECK(t->rt.seq_out == UINT32_MAX, "seq_out moved past 2^32-1");
	CHECK(p.buf.data == p.mem + TEST_HEADROOM && p.buf.len == 100, "dropped buffer changed");
	t->rt.seq_out = 0;

	test_pkt_set(&p, inner, 100);
	p.buf.headroom = 20;
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 && p.buf.drop == ESGW_DROP_TOO_BIG,
	      "no headroom: %s", esgw_drop_name(p.buf.drop));
	test_pkt_set(&p, inner, 100);
	p.buf.tailroom = 10;
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 && p.buf.drop == ESGW_DROP_TOO_BIG,
	      "no tailroom: %s", esgw_drop_name(p.buf.drop));

	test_pkt_set(&p, inner, 100);
	p.buf.data[0] = 0x65; /* IPv6? not ours */
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 && p.buf.drop == ESGW_DROP_MALFORMED,
	      "version 6 inner: %s", esgw_drop_name(p.buf.drop));
	test_pkt_set(&p, inner, 100);
	write_be16(p.buf.data + 2, 101); /* longer than the buffer */
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 && p.buf.drop == ESGW_DROP_MALFORMED,
	      "inner total length past the buffer: %s", esgw_drop_name(p.buf.drop));

	sa->outer_dst = 0; /* an SA without tunnel endpoints: inbound only */
	test_pkt_set(&p, inner, 100);
	CHECK(esp_encap_burst(mgr, &sa, &p.buf, 1) == 0 && p.buf.drop == ESGW_DROP_NO_SA,
	      "inbound-only SA: %s", esgw_drop_name(p.buf.drop));
	CHECK(t->rt.seq_out == 0, "dropped packets used sequence numbers: %lu",
	      (unsigned long)t->rt.seq_out);
	test_sa_free(t);
}

/* 40 packets over two SAs of different algorithms: more than one 32-job
 * chunk, mixed key schedules in one manager run, and (encap frames and
 * ciphers a group of packets at a time, ESP_GROUP) packets dropped
 * between them: every seventh inner header says version 6, not ours. */
static void test_mixed_burst(void)
{
	struct test_sa *gcm = new_sa(ESP_ALG_AES_GCM_128, 64);
	struct test_sa *cbc = new_sa(ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 64);
	static struct test_pkt pkts[40];
	struct esp_sa *sas[40], *in_sas[40];
	struct esp_buf bufs[40], in[40];
	uint8_t inner[40][200];
	unsigned int n_in = 0, n_gcm = 0, n_cbc = 0;

	for (int i = 0; i < 40; i++) {
		uint16_t len = (uint16_t)(20 + i * 4);

		test_inner_ipv4(inner[i], len, (uint8_t)i);
		if (i % 7 == 3)
			inner[i][0] = 0x65;
		test_pkt_set(&pkts[i], inner[i], len);
		bufs[i] = pkts[i].buf;
		sas[i] = i % 3 ? gcm->sa : cbc->sa;
	}
	CHECK(esp_encap_burst(mgr, sas, bufs, 40) == 34, "mixed encap burst");
	for (int i = 0; i < 40; i++) {
		if (i % 7 == 3) {
			CHECK(bufs[i].drop == ESGW_DROP_MALFORMED && bufs[i].len == 20 + i * 4 &&
				      memcmp(bufs[i].data, inner[i], bufs[i].len) == 0,
			      "dropped packet %d: %s, changed", i, esgw_drop_name(bufs[i].drop));
			continue;
		}
		*(i % 3 ? &n_gcm : &n_cbc) += 1;
		in_sas[n_in] = sas[i];
		in[n_in++] = bufs[i];
	}
	CHECK(esp_decap_burst(mgr, in_sas, in, (uint16_t)n_in) == n_in, "mixed decap burst");
	for (int i = 0, k = 0; i < 40; i++) {
		if (i % 7 == 3)
			continue;
		CHECK(in[k].len == 20 + i * 4 && memcmp(in[k].data, inner[i], in[k].len) == 0,
		      "mixed burst packet %d changed", i);
		k++;
	}
	CHECK(gcm->rt.ctr.packets == 2 * n_gcm && cbc->rt.ctr.packets == 2 * n_cbc,
	      "packet counters %lu %lu", (unsigned long)gcm->rt.ctr.packets,
	      (unsigned long)cbc->rt.ctr.packets);
	CHECK(gcm->rt.seq_out == n_gcm && cbc->rt.seq_out == n_cbc,
	      "dropped packets used sequence numbers: %lu %lu", (unsigned long)gcm->rt.seq_out,
	      (unsigned long)cbc->rt.seq_out);
	test_sa_free(gcm);
	test_sa_free(cbc);
}

static void test_key_validation(void)
{
	static const uint8_t key20[64] = {1}, salt[4] = {2};
	struct esgw_sa_runtime *rt = calloc(1, sizeof(*rt));
	struct esp_sa *sa = esp_sa_alloc();
	static const struct {
		int alg;
		size_t crypto, integ, salt;
		bool ok;
	} cases[] = {
		{ESP_ALG_AES_GCM_128, 16, 0, 4, true},
		{ESP_ALG_AES_GCM_128, 20, 0, 0, true},
		{ESP_ALG_AES_GCM_128, 16, 0, 0, false},
		{ESP_ALG_AES_GCM_128, 20, 0, 4, false},
		{ESP_ALG_AES_GCM_128, 32, 0, 4, false},
		{ESP_ALG_AES_GCM_128, 16, 20, 4, false},
		{ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 16, 20, 0, true},
		{ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 16, 16, 0, false},
		{ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 20, 20, 0, false},
		{ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 16, 0, 0, false},
		{ESP_ALG_AES_CBC_128_HMAC_SHA1_96, 16, 20, 4, false},
		{ESP_ALG_AES_GCM_256, 32, 0, 4, true},
		{ESP_ALG_AES_GCM_256, 36, 0, 0, true},
		{ESP_ALG_AES_GCM_256, 16, 0, 4, false},
		{ESP_ALG_CHACHA20_POLY1305, 32, 0, 4, true},
		{ESP_ALG_CHACHA20_POLY1305, 36, 0, 0, true},
		{ESP_ALG_CHACHA20_POLY1305, 16, 0, 4, false},
		{ESP_ALG_CHACHA20_POLY1305, 32, 0, 0, false},
		{ESP_ALG_AES_CBC_256_HMAC_SHA1_96, 32, 20, 0, true},
		{ESP_ALG_AES_CBC_256_HMAC_SHA1_96, 16, 20, 0, false},
		{ESP_ALG_AES_CBC_128_HMAC_SHA256_128, 16, 32, 0, true},
		{ESP_ALG_AES_CBC_128_HMAC_SHA256_128, 16, 20, 0, false},
		{ESP_ALG_AES_CBC_256_HMAC_SHA512_256, 32, 64, 0, true},
		{ESP_ALG_AES_CBC_256_HMAC_SHA512_256, 32, 32, 0, false},
		{ESP_ALG_NULL_HMAC_SHA1_96, 0, 20, 0, true},
		{ESP_ALG_NULL_HMAC_SHA1_96, 16, 20, 0, false},
		{ESP_ALG_NULL_HMAC_SHA256_128, 0, 32, 0, true},
		{ESP_ALG_NULL_HMAC_SHA512_256, 0, 64, 4, false},
		{13, 16, 20, 0, false},
		{0, 16, 0, 4, false},
	};
	char err[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct esp_sa_params p = {
			.spi = 0x4000,
			.alg = (enum esp_alg)cases[i].alg,
			.rt = rt,
			.crypto_key = key20,
			.crypto_key_len = cases[i].crypto,
			.integ_key = key20,
			.integ_key_len = cases[i].integ,
			.salt = salt,
			.salt_len = cases[i].salt,
		};
		int rc;

		err[0] = '\0';
		rc = esp_sa_init(mgr, sa, &p, err, sizeof(err));
		CHECK((rc == 0) == cases[i].ok, "case %zu (%s %zu/%zu/%zu): rc %d: %s", i,
		      esp_alg_name(cases[i].alg), cases[i].crypto, cases[i].integ, cases[i].salt,
		      rc, err);
		if (!cases[i].ok)
			CHECK(err[0] != '\0', "case %zu: no error message", i);
	}
	{
		struct esp_sa_params p = {.spi = 0,
					  .alg = ESP_ALG_AES_GCM_128,
					  .rt = rt,
					  .crypto_key = key20,
					  .crypto_key_len = 20};

		CHECK(esp_sa_init(mgr, sa, &p, err, sizeof(err)) < 0, "SPI 0 accepted");
	}
	/* Wiping leaves no byte of any key schedule behind. */
	{
		struct esp_sa_params p = {.spi = 0x4000,
					  .alg = ESP_ALG_AES_CBC_128_HMAC_SHA1_96,
					  .rt = rt,
					  .crypto_key = key20,
					  .crypto_key_len = 16,
					  .integ_key = key20,
					  .integ_key_len = 20};
		const uint8_t *bytes = (const uint8_t *)sa;
		size_t nonzero = 0;

		CHECK(esp_sa_init(mgr, sa, &p, err, sizeof(err)) == 0, "CBC SA: %s", err);
		esp_sa_wipe(sa);
		for (size_t i = 0; i < sizeof(*sa); i++)
			nonzero += bytes[i] != 0;
		CHECK(nonzero == 0, "%zu bytes left after esp_sa_wipe", nonzero);
	}
	esp_sa_free(sa);
	free(rt);
}

/* The 20-byte key||salt form keys the SA exactly like key plus salt. */
static void test_gcm_key_forms(void)
{
	struct test_sa *a = new_sa(ESP_ALG_AES_GCM_128, 64);
	struct esgw_sa_runtime *rt = calloc(1, sizeof(*rt));
	struct esp_sa *b = esp_sa_alloc();
	uint8_t key_salt[20];
	struct esp_sa_params p = {.spi = a->sa->spi,
				  .alg = ESP_ALG_AES_GCM_128,
				  .rt = rt,
				  .crypto_key = key_salt,
				  .crypto_key_len = 20};
	static struct test_pkt p1, p2;
	uint8_t inner[64];
	char err[128];

	memcpy(key_salt, vec_keys[ESP_ALG_AES_GCM_128].crypto_key, 16);
	memcpy(key_salt + 16, vec_salt, 4);
	memcpy(&p.outer_src, vec_outer_src, 4);
	memcpy(&p.outer_dst, vec_outer_dst, 4);
	CHECK(esp_sa_init(mgr, b, &p, err, sizeof(err)) == 0, "key||salt: %s", err);
	esp_seq_limit_raise(b, UINT64_MAX);
	b->iv_nonce = a->sa->iv_nonce;
	b->ip_id = a->sa->ip_id;
	test_inner_ipv4(inner, 64, 3);
	test_pkt_set(&p1, inner, 64);
	test_pkt_set(&p2, inner, 64);
	esp_encap_burst(mgr, &a->sa, &p1.buf, 1);
	esp_encap_burst(mgr, &b, &p2.buf, 1);
	CHECK(p1.buf.len == p2.buf.len && memcmp(p1.buf.data, p2.buf.data, p1.buf.len) == 0,
	      "key||salt encrypts differently from key + salt");
	esp_sa_free(b);
	free(rt);
	test_sa_free(a);
}

int main(void)
{
	mgr = test_mgr();
	for (size_t a = 0; a < ESP_ALG_COUNT; a++) {
		int alg = esp_algorithms[a].alg;

		test_icv(alg);
		test_truncated(alg);
		test_header_checks(alg);
		test_replay_decap(alg);
		test_encap_drops(alg);
	}
	test_mixed_burst();
	test_key_validation();
	test_gcm_key_forms();
	free_mb_mgr(mgr);
	return check_report("test_esp_drops");
}
