/* SPDX-License-Identifier: BSD-3-Clause */
/* The ESP crypto of a benchmark packet through intel-ipsec-mb, shared by
 * imb-raw (the crypto ceiling) and esgw-bench (which sends valid ESP into a
 * gateway): key schedules, one job per packet laid out as on the wire, and a
 * burst run to completion. Written against intel-ipsec-mb directly, not with
 * esgw's ESP core, so that what the generator sends is checked by the gateway
 * under test, not produced by the code it tests. */
#ifndef ESGW_BENCH_ESP_JOBS_H
#define ESGW_BENCH_ESP_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>

#include "esp_algorithms.h"

#define BENCH_ESP_HDR_LEN 8
#define BENCH_ESP_TRAILER_LEN 2 /* pad length, next header */
#define BENCH_ESP_MAX_BURST 256

/* The two algorithms the benchmarks measure. */
enum bench_alg { BENCH_ALG_GCM, BENCH_ALG_CBC_SHA1, BENCH_ALG_COUNT };

extern const char *const bench_alg_names[BENCH_ALG_COUNT];

/* Sizes of the algorithm on the wire, from esgw's one table of algorithms. */
const struct esp_alg_info *bench_alg_info(enum bench_alg alg);

/* The ESP payload of an inner packet of inner bytes: the packet, the fewest
 * padding bytes that align it with its trailer to the cipher block (RFC 4303
 * 2.4), and the trailer. */
static inline unsigned int bench_esp_payload_len(const struct esp_alg_info *info,
						 unsigned int inner)
{
	unsigned int pad = (0u - (inner + BENCH_ESP_TRAILER_LEN)) & (info->block_len - 1u);

	return inner + pad + BENCH_ESP_TRAILER_LEN;
}

/* Key schedules, precomputed once as a worker does per SA. */
struct bench_keys {
	struct gcm_key_data gcm __attribute__((aligned(64)));
	uint8_t enc[16 * 15] __attribute__((aligned(16)));
	uint8_t dec[16 * 15] __attribute__((aligned(16)));
	uint8_t ipad[IMB_SHA1_DIGEST_SIZE_IN_BYTES] __attribute__((aligned(16)));
	uint8_t opad[IMB_SHA1_DIGEST_SIZE_IN_BYTES] __attribute__((aligned(16)));
	uint8_t salt[4];
};

/* cipher_key: 16 bytes (AES-128); integ_key: 20 bytes (HMAC-SHA1); salt: 4. */
void bench_keys_init(IMB_MGR *mgr, const uint8_t *cipher_key, const uint8_t *integ_key,
		     const uint8_t *salt, struct bench_keys *k);

/* One ESP packet as on the wire after the outer IP header: ESP header, IV,
 * payload (inner packet, padding, trailer), ICV. */
struct bench_esp_buf {
	uint8_t *esp;
	uint8_t *plain_out; /* decrypt writes here so the ciphertext stays valid */
	uint8_t nonce[16];  /* GCM: salt || IV, filled by bench_esp_fill_job */
	uint8_t icv[16];    /* decrypt: the ICV computed, compared with the packet's */
	unsigned int iv_len, icv_len, payload_len;
};

/* Fills job for buf: encrypt in place and write the ICV after the payload, or
 * verify and decrypt into plain_out. */
void bench_esp_fill_job(IMB_JOB *job, enum bench_alg alg, int decrypt, const struct bench_keys *k,
			struct bench_esp_buf *buf);

struct bench_esp_counts {
	uint64_t errors, auth_failures;
};

/* Runs n packets through the burst API (IMB_GET_NEXT_BURST / IMB_SUBMIT_BURST)
 * and flushes until every job is done, as a worker must before handing the
 * packets on. Failed jobs and, on decrypt, ICVs that do not match are counted. */
void bench_esp_burst(IMB_MGR *mgr, enum bench_alg alg, int decrypt, const struct bench_keys *k,
		     struct bench_esp_buf *bufs[], unsigned int n, struct bench_esp_counts *c);

/* What an ESP decrypt does after the job: compare the ICV. */
void bench_esp_job_done(const IMB_JOB *job, int decrypt, struct bench_esp_counts *c);

#endif
