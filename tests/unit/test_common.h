/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the ESP unit tests: an intel-ipsec-mb manager, packet
 * buffers shaped like mbufs, and SAs on private runtime slots, without DPDK. */
#ifndef ESGW_TEST_COMMON_H
#define ESGW_TEST_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h" /* tests/unit-common */
#include "esp.h"
#include "esp_vectors.h"
#include "replay.h"

static inline IMB_MGR *test_mgr(void)
{
	IMB_MGR *mgr = alloc_mb_mgr(0);

	if (mgr == NULL) {
		fprintf(stderr, "alloc_mb_mgr failed\n");
		exit(1);
	}
	init_mb_mgr_auto(mgr, NULL);
	if (imb_get_errno(mgr) != 0) {
		fprintf(stderr, "init_mb_mgr_auto: %s\n", imb_get_strerror(imb_get_errno(mgr)));
		exit(1);
	}
	return mgr;
}

/* A packet buffer like an mbuf's: 128 bytes of headroom, room behind. */
#define TEST_HEADROOM 128
#define TEST_BUF_SIZE 2048

struct test_pkt {
	uint8_t mem[TEST_BUF_SIZE] __attribute__((aligned(64)));
	struct esp_buf buf;
};

static inline void test_pkt_set(struct test_pkt *p, const void *data, uint16_t len)
{
	memset(p->mem, 0xee, sizeof(p->mem));
	memcpy(p->mem + TEST_HEADROOM, data, len);
	p->buf.data = p->mem + TEST_HEADROOM;
	p->buf.len = len;
	p->buf.headroom = TEST_HEADROOM;
	p->buf.tailroom = (uint16_t)(TEST_BUF_SIZE - TEST_HEADROOM - len);
	p->buf.drop = ESP_NO_DROP;
}

/* An SA on a fresh runtime slot, with the keys esp_vectors.h gives its
 * algorithm, and the IV secrets the vectors were made with. */
struct test_sa {
	struct esgw_sa_runtime rt;
	struct esp_sa *sa;
};

static inline struct test_sa *test_sa_new(IMB_MGR *mgr, int alg, uint32_t spi, uint32_t window,
					  bool esn)
{
	const struct esp_vector_keys *k = &vec_keys[alg];
	struct esp_sa_params p = {.spi = spi, .alg = (enum esp_alg)alg, .esn = esn};
	struct test_sa *t;
	char err[128];

	if (posix_memalign((void **)&t, 64, sizeof(*t)) != 0)
		exit(1);
	memset(t, 0, sizeof(*t));
	replay_init(&t->rt.replay, window);
	t->rt.spi = spi;
	t->rt.generation = 1;
	t->rt.installed_at = esp_clock_seconds();
	p.rt = &t->rt;
	p.crypto_key = k->crypto_key;
	p.crypto_key_len = k->crypto_key_len;
	p.integ_key = k->integ_key;
	p.integ_key_len = k->integ_key_len;
	p.salt = vec_salt;
	p.salt_len = k->salt_len;
	memcpy(&p.outer_src, vec_outer_src, 4);
	memcpy(&p.outer_dst, vec_outer_dst, 4);
	t->sa = esp_sa_alloc();
	if (t->sa == NULL || esp_sa_init(mgr, t->sa, &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "esp_sa_init %s: %s\n", esp_alg_name(alg), err);
		exit(1);
	}
	esp_sa_set_iv_secrets(mgr, t->sa, vec_iv_nonce, vec_iv_key);
	esp_seq_limit_raise(t->sa, UINT64_MAX); /* no reservation in these tests */
	return t;
}

static inline void test_sa_free(struct test_sa *t)
{
	esp_sa_free(t->sa);
	free(t);
}

/* A minimal valid inner IPv4 packet of len bytes (len >= 20). */
static inline void test_inner_ipv4(uint8_t *p, uint16_t len, uint8_t fill)
{
	for (unsigned int i = 0; i < len; i++)
		p[i] = (uint8_t)(fill + i * 13);
	p[0] = 0x45;
	p[1] = 0;
	write_be16(p + 2, len);
	p[8] = 64;
	p[9] = 253; /* experimental protocol number */
	write_be16(p + 10, 0);
	write_be16(p + 10, checksum_inet(p, 20));
}

#endif
