/* SPDX-License-Identifier: BSD-3-Clause */
/* ESP crypto jobs for the benchmarks (see esp_jobs.h): AES-GCM-128 (RFC 4106)
 * and AES-CBC-128 with HMAC-SHA1-96 (RFC 3602, 2404) through intel-ipsec-mb. */
#include <string.h>

#include "esp_jobs.h"

const char *const bench_alg_names[BENCH_ALG_COUNT] = {"aes-gcm-128", "aes-cbc-128-sha1-96"};

const struct esp_alg_info *bench_alg_info(enum bench_alg alg)
{
	return esp_alg_by_name(bench_alg_names[alg]);
}

/* HMAC-SHA1 inner and outer hash states (1.3 has no imb_hmac_ipad_opad). */
static void hmac_sha1_precompute(IMB_MGR *mgr, const uint8_t *key, struct bench_keys *k)
{
	uint8_t block[IMB_SHA1_BLOCK_SIZE];

	memset(block, 0x36, sizeof(block));
	for (size_t i = 0; i < IMB_SHA1_DIGEST_SIZE_IN_BYTES; i++)
		block[i] ^= key[i];
	IMB_SHA1_ONE_BLOCK(mgr, block, k->ipad);
	memset(block, 0x5c, sizeof(block));
	for (size_t i = 0; i < IMB_SHA1_DIGEST_SIZE_IN_BYTES; i++)
		block[i] ^= key[i];
	IMB_SHA1_ONE_BLOCK(mgr, block, k->opad);
}

void bench_keys_init(IMB_MGR *mgr, const uint8_t *cipher_key, const uint8_t *integ_key,
		     const uint8_t *salt, struct bench_keys *k)
{
	IMB_AES128_GCM_PRE(mgr, cipher_key, &k->gcm);
	IMB_AES_KEYEXP_128(mgr, cipher_key, k->enc, k->dec);
	hmac_sha1_precompute(mgr, integ_key, k);
	memcpy(k->salt, salt, sizeof(k->salt));
}

void bench_esp_fill_job(IMB_JOB *job, enum bench_alg alg, int decrypt, const struct bench_keys *k,
			struct bench_esp_buf *p)
{
	unsigned int payload_off = BENCH_ESP_HDR_LEN + p->iv_len;

	job->chain_order = decrypt ? IMB_ORDER_HASH_CIPHER : IMB_ORDER_CIPHER_HASH;
	job->cipher_direction = decrypt ? IMB_DIR_DECRYPT : IMB_DIR_ENCRYPT;
	job->key_len_in_bytes = IMB_KEY_128_BYTES;
	job->src = p->esp;
	job->dst = decrypt ? p->plain_out : p->esp + payload_off;
	job->cipher_start_src_offset_in_bytes = payload_off;
	job->msg_len_to_cipher_in_bytes = p->payload_len;
	job->auth_tag_output = decrypt ? p->icv : p->esp + payload_off + p->payload_len;
	job->auth_tag_output_len_in_bytes = p->icv_len;
	job->user_data = p;
	if (alg == BENCH_ALG_GCM) {
		/* RFC 4106 4: the nonce is the salt and the 8-byte IV on the wire. */
		memcpy(p->nonce, k->salt, 4);
		memcpy(p->nonce + 4, p->esp + BENCH_ESP_HDR_LEN, 8);
		job->cipher_mode = IMB_CIPHER_GCM;
		job->hash_alg = IMB_AUTH_AES_GMAC;
		job->enc_keys = &k->gcm;
		job->dec_keys = &k->gcm;
		job->iv = p->nonce;
		job->iv_len_in_bytes = 12;
		job->hash_start_src_offset_in_bytes = payload_off;
		job->msg_len_to_hash_in_bytes = p->payload_len;
		job->u.GCM.aad = p->esp; /* SPI || sequence number, RFC 4106 5 */
		job->u.GCM.aad_len_in_bytes = BENCH_ESP_HDR_LEN;
	} else {
		job->cipher_mode = IMB_CIPHER_CBC;
		job->hash_alg = IMB_AUTH_HMAC_SHA_1;
		job->enc_keys = k->enc;
		job->dec_keys = k->dec;
		job->iv = p->esp + BENCH_ESP_HDR_LEN;
		job->iv_len_in_bytes = 16;
		/* RFC 4303 2.8: the ICV covers ESP header, IV and ciphertext. */
		job->hash_start_src_offset_in_bytes = 0;
		job->msg_len_to_hash_in_bytes = payload_off + p->payload_len;
		job->u.HMAC._hashed_auth_key_xor_ipad = k->ipad;
		job->u.HMAC._hashed_auth_key_xor_opad = k->opad;
	}
}

/* Counted, so a wrong layout shows as failures instead of a flattering rate. */
void bench_esp_job_done(const IMB_JOB *job, int decrypt, struct bench_esp_counts *c)
{
	const struct bench_esp_buf *p = job->user_data;

	if (job->status != IMB_STATUS_COMPLETED) {
		c->errors++;
		return;
	}
	if (decrypt && memcmp(p->icv, p->esp + BENCH_ESP_HDR_LEN + p->iv_len + p->payload_len,
			      p->icv_len) != 0)
		c->auth_failures++;
}

void bench_esp_burst(IMB_MGR *mgr, enum bench_alg alg, int decrypt, const struct bench_keys *k,
		     struct bench_esp_buf *bufs[], unsigned int n, struct bench_esp_counts *c)
{
	IMB_JOB *jobs[BENCH_ESP_MAX_BURST];
	unsigned int got, done;

	while ((got = IMB_GET_NEXT_BURST(mgr, n, jobs)) < n) {
		unsigned int flushed = IMB_FLUSH_BURST(mgr, n - got, jobs);

		for (unsigned int i = 0; i < flushed; i++)
			bench_esp_job_done(jobs[i], decrypt, c);
	}
	for (unsigned int i = 0; i < n; i++)
		bench_esp_fill_job(jobs[i], alg, decrypt, k, bufs[i]);
	done = IMB_SUBMIT_BURST(mgr, n, jobs);
	if (done == 0 && imb_get_errno(mgr) != 0) {
		c->errors += n;
		return;
	}
	for (unsigned int i = 0; i < done; i++)
		bench_esp_job_done(jobs[i], decrypt, c);
	while ((done = IMB_FLUSH_BURST(mgr, n, jobs)) > 0)
		for (unsigned int i = 0; i < done; i++)
			bench_esp_job_done(jobs[i], decrypt, c);
}
