/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by esp_encap.c and esp_decap.c: running a burst of prepared jobs
 * through intel-ipsec-mb's burst API and collecting each job's outcome, and
 * the parts of a job that are the same both ways (HMAC, cipher, ESN AAD). */
#ifndef ESGW_ESP_JOBS_H
#define ESGW_ESP_JOBS_H

#include <stdint.h>
#include <string.h>

#include <intel-ipsec-mb.h>

#include "esp.h"

/* Jobs carry their index in the burst in user_data: the manager hands them
 * back in its own order. */
static inline void esp_jobs_collect(IMB_JOB *const jobs[], uint32_t n, uint8_t completed[])
{
	for (uint32_t i = 0; i < n; i++)
		completed[(uintptr_t)jobs[i]->user_data] = jobs[i]->status == IMB_STATUS_COMPLETED;
}

/* n free jobs of the manager (n <= ESP_BURST_MAX), to fill and pass to
 * esp_jobs_run. The manager is empty between bursts (esp_jobs_run flushes), so
 * it always has n; the loop only guards that. */
static inline void esp_jobs_get(IMB_MGR *mgr, uint32_t n, IMB_JOB *jobs[])
{
	IMB_JOB *stale[ESP_BURST_MAX];

	while (IMB_GET_NEXT_BURST(mgr, n, jobs) < n)
		(void)IMB_FLUSH_BURST(mgr, ESP_BURST_MAX, stale);
}

/* Submit the n filled jobs as one burst (intel-ipsec-mb's burst API: one call
 * instead of a submit and a completed-job loop per packet) and finish them
 * all, so no job refers to a buffer the caller is about to hand on. A burst
 * the library refuses (an invalid job: a bug, as lengths are checked before)
 * leaves every job not run at completed 0, so its packets are dropped as
 * crypto errors, never sent unencrypted. */
static inline void esp_jobs_run(IMB_MGR *mgr, uint32_t n, IMB_JOB *jobs[], uint8_t completed[])
{
	/* Refused: 0, and jobs[0] points at the invalid job; nothing is
	 * collected from it, and the flush returns whatever did run. */
	uint32_t done = IMB_SUBMIT_BURST(mgr, n, jobs);

	esp_jobs_collect(jobs, done, completed);
	while ((done = IMB_FLUSH_BURST(mgr, n, jobs)) > 0)
		esp_jobs_collect(jobs, done, completed);
}

/* What runs one chunk of a burst (at most ESP_BURST_MAX packets, which its
 * scratch and the manager's burst hold): the number that passed. */
typedef uint16_t (*esp_jobs_chunk_fn)(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
				      uint16_t n, void *scratch);

/* A burst of any size, chunk by chunk: the number of packets that passed.
 * Inlined with a constant chunk, so the call is direct. */
static inline uint16_t esp_jobs_chunks(IMB_MGR *mgr, struct esp_sa *const sa[],
				       struct esp_buf buf[], uint16_t n, esp_jobs_chunk_fn chunk,
				       void *scratch)
{
	uint16_t passed = 0;

	for (uint16_t done = 0; done < n;) {
		uint16_t len = n - done < ESP_BURST_MAX ? n - done : ESP_BURST_MAX;

		passed += chunk(mgr, sa + done, buf + done, len, scratch);
		done += len;
	}
	return passed;
}

/* What fills the job of packet i of a chunk (its sa and buffer) from the
 * chunk's scratch. */
typedef void (*esp_jobs_fill_fn)(IMB_JOB *job, const struct esp_sa *sa, struct esp_buf *b,
				 void *scratch, uint8_t i);

/* Whether sa's packets skip the job manager: AES-GCM has a one-call API
 * (IMB_AES128_GCM_ENC and the like: encrypt or decrypt, then the tag) that
 * runs the same code as a GCM job without the job's validation, its copy
 * into the manager's queue (a memcpy: 2.4 % of gw1's samples in the chain
 * at 64 B) and the flush. */
static inline int esp_jobs_direct(const struct esp_sa *sa)
{
	return sa->cipher == ESP_CIPHER_AES_GCM && sa->integ == ESP_INTEG_AEAD;
}

/* Run the GCM job the fill function wrote into job (a struct of our own,
 * not the manager's) by the one-call API, with ctx as its working state:
 * the manager's function for the direction and key length, which is what
 * IMB_AES128_GCM_ENC and its siblings call. Every field it reads was set by
 * the fill, and the lengths and pointers were checked when the packet was
 * framed or parsed, as for a job. Returns 1 (completed). */
static inline uint8_t esp_jobs_gcm(IMB_MGR *mgr, const IMB_JOB *job, struct gcm_context_data *ctx)
{
	int enc = job->cipher_direction == IMB_DIR_ENCRYPT;
	aes_gcm_enc_dec_t run =
		job->key_len_in_bytes == 16   ? (enc ? mgr->gcm128_enc : mgr->gcm128_dec)
		: job->key_len_in_bytes == 24 ? (enc ? mgr->gcm192_enc : mgr->gcm192_dec)
					      : (enc ? mgr->gcm256_enc : mgr->gcm256_dec);

	run(job->enc_keys, ctx, job->dst, job->src + job->cipher_start_src_offset_in_bytes,
	    job->msg_len_to_cipher_in_bytes, job->iv, job->u.GCM.aad, job->u.GCM.aad_len_in_bytes,
	    job->auth_tag_output, job->auth_tag_output_len_in_bytes);
	return 1;
}

/* The jobs of the n_ready packets listed in ready (indices into sa and buf),
 * filled by fill, as one burst through the job manager: the algorithms
 * without a one-call API. completed[i] says how each ended. */
static inline void esp_jobs_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
				  const uint8_t ready[], uint16_t n_ready, esp_jobs_fill_fn fill,
				  void *scratch, uint8_t completed[])
{
	IMB_JOB *jobs[ESP_BURST_MAX];

	if (n_ready == 0)
		return;
	for (uint16_t k = 0; k < n_ready; k++) /* the library runs them as one batch */
		esp_prefetch_body(&buf[ready[k]]);
	esp_jobs_get(mgr, n_ready, jobs);
	for (uint16_t k = 0; k < n_ready; k++)
		fill(jobs[k], sa[ready[k]], &buf[ready[k]], scratch, ready[k]);
	esp_jobs_run(mgr, n_ready, jobs, completed);
}

/* The SA lines packet j of a chunk will read, unless the packet before it
 * has the same SA (a run of one tunnel asks once): step 1 the SA's hot
 * line; step 2, once that is there (a group later), the runtime slot's
 * line and the keys, GCM's into L1 for the bytes the packet will hash. */
static inline void esp_jobs_ahead(struct esp_sa *const sa[], const struct esp_buf buf[],
				  unsigned int j, int step, int inbound)
{
	const struct esp_sa *s = sa[j];

	if (j > 0 && s == sa[j - 1])
		return;
	if (step == 1) {
		ESP_PREFETCH_L2(s);
		return;
	}
	esp_sa_prefetch_runtime(s->rt, inbound);
	if (esp_jobs_direct(s))
		esp_sa_prefetch_gcm_l1(s, inbound ? esp_hashed_in(buf[j].len)
						  : esp_hashed_out(s, buf[j].len));
	else if (s->cipher == ESP_CIPHER_AES_CBC)
		esp_sa_prefetch_cbc_keys(s, inbound);
}

/* Packet j of the next group: step 2 of its lines, step 1 of those of the
 * packet a group after it. */
static inline void esp_jobs_ahead_next(struct esp_sa *const sa[], const struct esp_buf buf[],
				       unsigned int j, unsigned int n, int inbound)
{
	esp_jobs_ahead(sa, buf, j, 2, inbound);
	if (j + ESP_GROUP < n)
		esp_jobs_ahead(sa, buf, j + ESP_GROUP, 1, inbound);
}

/* What readies packet i of a chunk for its job (frames or checks it; it
 * may read buf[i + 1] to prefetch): 0, or -1 with it dropped. */
typedef int (*esp_jobs_prepare_fn)(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
				   uint16_t i, uint16_t n, void *scratch);

/* The jobs of a chunk of n packets, a group (ESP_GROUP) at a time: each
 * packet of the group readied by prepare, then those of GCM SAs ciphered
 * one by one by the one-call API (esp_jobs_direct) while the next groups'
 * SA lines are asked for (esp_jobs_ahead); the others' jobs run as one
 * burst after the last group. ready is scratch for their indices;
 * completed[i] says how each job ended (0 for a packet prepare dropped).
 * Inlined with constant functions, so the calls are direct. */
static inline void esp_jobs_groups(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
				   uint16_t n, int inbound, esp_jobs_prepare_fn prepare,
				   esp_jobs_fill_fn fill, void *scratch, uint8_t ready[],
				   uint8_t completed[])
{
	unsigned int ahead = ESP_GROUP, group;
	IMB_JOB direct = {0}; /* what a fill leaves alone stays defined */
	struct gcm_context_data ctx;
	uint8_t gcm[ESP_BURST_MAX];
	uint16_t n_ready = 0;
	int ciphered = 0;

	/* A chunk of one SA (one tunnel's burst) has its lines cached after
	 * the first packet: one group, nothing asked for ahead, where the
	 * groups cost a few cycles a packet (bench/esp-core, GCM-128 64 B,
	 * the best 5 of 10 interleaved runs: encrypt 93-99 cycles with this,
	 * 95-100 without, 90-95 before the groups; decrypt 97-104, 101-108,
	 * 97-100). */
	if (ahead > 0 && sa[n - 1] == sa[0]) {
		unsigned int i = 1;

		while (i < n && sa[i] == sa[0])
			i++;
		if (i == n)
			ahead = 0;
	}
	group = ahead > 0 ? ahead : ESP_BURST_MAX;
	for (unsigned int j = 0; j < n && j < 2 * ahead; j++)
		esp_jobs_ahead(sa, buf, j, 1, inbound);
	for (unsigned int j = 0; j < n && j < ahead; j++)
		esp_jobs_ahead(sa, buf, j, 2, inbound);
	for (unsigned int first = 0; first < n; first += group) {
		unsigned int end = n - first < group ? n : first + group;
		unsigned int next = end, next_end = n - end < group ? n : end + group;
		uint16_t n_gcm = 0;

		for (uint16_t i = (uint16_t)first; i < end; i++) {
			completed[i] = 0;
			buf[i].drop = ESP_NO_DROP;
			if (prepare(mgr, sa, buf, i, n, scratch) < 0)
				continue;
			if (esp_jobs_direct(sa[i]))
				gcm[n_gcm++] = (uint8_t)i;
			else
				ready[n_ready++] = (uint8_t)i;
		}
		for (uint16_t k = 0; k < n_gcm; k++) {
			uint8_t i = gcm[k];

			if (i + 2u < n) /* its body, as this one's is ciphered */
				esp_prefetch_body(&buf[i + 2]);
			if (ahead > 0 && next < next_end)
				esp_jobs_ahead_next(sa, buf, next++, n, inbound);
			fill(&direct, sa[i], &buf[i], scratch, i);
			completed[i] = esp_jobs_gcm(mgr, &direct, &ctx);
			ciphered = 1;
		}
		while (ahead > 0 && next < next_end) /* fewer GCM packets than a group */
			esp_jobs_ahead_next(sa, buf, next++, n, inbound);
	}
	if (ciphered) /* the last packet's GHASH state and keystream */
		explicit_bzero(&ctx, sizeof(ctx));
	esp_jobs_burst(mgr, sa, buf, ready, n_ready, fill, scratch, completed);
}

/* The HMAC half of a job. The ICV covers ESP header, IV and ciphertext (RFC
 * 4303 2.8): hashed_len bytes from the ESP header; with ESN also the 4 bytes
 * of seq_hi the caller put right behind them (RFC 4303 2.2.1). */
static inline void esp_jobs_hmac(IMB_JOB *job, const struct esp_sa *sa, unsigned int hashed_len)
{
	job->hash_alg = sa->integ == ESP_INTEG_HMAC_SHA1     ? IMB_AUTH_HMAC_SHA_1
			: sa->integ == ESP_INTEG_HMAC_SHA256 ? IMB_AUTH_HMAC_SHA_256
							     : IMB_AUTH_HMAC_SHA_512;
	job->hash_start_src_offset_in_bytes = 0;
	job->msg_len_to_hash_in_bytes = hashed_len + (sa->esn ? 4u : 0u);
	job->u.HMAC._hashed_auth_key_xor_ipad = sa->ipad_hash;
	job->u.HMAC._hashed_auth_key_xor_opad = sa->opad_hash;
}

/* AEAD with ESN: the AAD is SPI || seq_hi || seq_lo (RFC 4106 5, RFC 7634
 * 2.1), seq the 64-bit sequence number of the packet whose ESP header is esp. */
static inline void esp_jobs_esn_aad(uint8_t aad[12], const struct rte_esp_hdr *esp, uint64_t seq)
{
	memcpy(aad, &esp->spi, 4);
	write_be32(aad + 4, (uint32_t)(seq >> 32));
	memcpy(aad + 8, &esp->seq, 4);
}

/* The cipher half of a job, the same both ways. AEAD takes the 12-byte
 * nonce and authenticates the payload (payload_len bytes from payload_off)
 * with the AAD: SPI || seq from the ESP header, or with ESN aad
 * (esp_jobs_esn_aad). CBC takes its IV from the packet, right behind the
 * ESP header. NULL has neither. */
static inline void esp_jobs_cipher(IMB_JOB *job, const struct esp_sa *sa,
				   const struct rte_esp_hdr *esp, const uint8_t *nonce,
				   const uint8_t aad[12], unsigned int payload_off,
				   unsigned int payload_len)
{
	if (sa->integ == ESP_INTEG_AEAD) {
		const void *aad_ptr = sa->esn ? (const void *)aad : (const void *)esp;
		uint64_t aad_len = sa->esn ? 12 : ESP_HDR_LEN;

		job->iv = nonce;
		job->iv_len_in_bytes = 12;
		job->hash_start_src_offset_in_bytes = payload_off;
		job->msg_len_to_hash_in_bytes = payload_len;
		if (sa->cipher == ESP_CIPHER_AES_GCM) {
			job->cipher_mode = IMB_CIPHER_GCM;
			job->hash_alg = IMB_AUTH_AES_GMAC;
			job->enc_keys = &sa->keys.gcm.key;
			job->dec_keys = &sa->keys.gcm.key;
			job->u.GCM.aad = aad_ptr;
			job->u.GCM.aad_len_in_bytes = aad_len;
		} else {
			job->cipher_mode = IMB_CIPHER_CHACHA20_POLY1305;
			job->hash_alg = IMB_AUTH_CHACHA20_POLY1305;
			job->enc_keys = sa->keys.chacha.key;
			job->dec_keys = sa->keys.chacha.key;
			job->u.CHACHA20_POLY1305.aad = aad_ptr;
			job->u.CHACHA20_POLY1305.aad_len_in_bytes = aad_len;
		}
	} else if (sa->cipher == ESP_CIPHER_AES_CBC) {
		job->cipher_mode = IMB_CIPHER_CBC;
		job->enc_keys = sa->keys.cbc.enc_keys;
		job->dec_keys = sa->keys.cbc.dec_keys;
		job->iv = (const uint8_t *)(esp + 1);
		job->iv_len_in_bytes = 16;
	} else {
		job->cipher_mode = IMB_CIPHER_NULL;
		job->key_len_in_bytes = 0;
		job->iv_len_in_bytes = 0;
	}
}

#endif
