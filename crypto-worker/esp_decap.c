/* SPDX-License-Identifier: BSD-3-Clause */
/* ESP tunnel-mode decapsulation (RFC 4303 3.4): length checks, ESN high-bit
 * inference and anti-replay before decrypting, ICV verification, lifetime and
 * window update only for authentic packets, then padding and next-header
 * checks. Bursts go through intel-ipsec-mb's burst API. */
#include "esp.h"

#include <string.h>

#include "esp_jobs.h"
#include "replay.h"

struct decap_scratch {
	uint8_t nonce[ESP_BURST_MAX][16];
	uint8_t aad[ESP_BURST_MAX][12];                       /* AEAD with ESN */
	uint8_t icv[ESP_BURST_MAX][ESP_ALG_ICV_MAX];          /* computed over the packet */
	uint8_t received_icv[ESP_BURST_MAX][ESP_ALG_ICV_MAX]; /* as it came */
	uint16_t outer_len[ESP_BURST_MAX];                    /* outer IPv4 header length */
	uint16_t payload_len[ESP_BURST_MAX];
	uint64_t seq[ESP_BURST_MAX]; /* with the inferred high bits under ESN */
	uint8_t completed[ESP_BURST_MAX];
	uint8_t ready[ESP_BURST_MAX]; /* indices of the packets that have a job */
};

/* Constant time, so that the time to reject a forged ICV says nothing about
 * how many of its bytes were right. Eight bytes at a time, then four: every
 * ICV length (12, 16, 32) is a multiple of 4; the GCM and HMAC-SHA1-96
 * lengths, the usual ones, unrolled (the loop cost a few cycles a packet). */
static inline uint64_t icv_diff8(const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	return x ^ y;
}

static inline uint64_t icv_diff4(const uint8_t *a, const uint8_t *b)
{
	uint32_t x, y;

	memcpy(&x, a, 4);
	memcpy(&y, b, 4);
	return x ^ y;
}

static int icv_equal(const uint8_t *a, const uint8_t *b, unsigned int len)
{
	uint64_t diff = 0;
	unsigned int i = 0;

	if (len == 16)
		return (icv_diff8(a, b) | icv_diff8(a + 8, b + 8)) == 0;
	if (len == 12)
		return (icv_diff8(a, b) | icv_diff4(a + 8, b + 8)) == 0;
	for (; i + 8 <= len; i += 8)
		diff |= icv_diff8(a + i, b + i);
	for (; i + 4 <= len; i += 4)
		diff |= icv_diff4(a + i, b + i);
	for (; i < len; i++)
		diff |= (uint64_t)(a[i] ^ b[i]);
	return diff == 0;
}

/* With ESN and HMAC, seq_hi is hashed where the ICV sits (decap_fill_job), so
 * the received ICV is kept aside; otherwise it is compared in the packet. */
static int icv_kept_aside(const struct esp_sa *sa)
{
	return sa->esn && sa->integ != ESP_INTEG_AEAD;
}

/* Header and length checks plus the first replay check, all before any crypto
 * work is spent on the packet. Returns 0, or -1 with the packet dropped. */
static int decap_check(const struct esp_sa *sa, struct esp_buf *b, uint16_t *outer_len,
		       uint16_t *payload_len, uint64_t *seq, enum esgw_drop *reason)
{
	const uint8_t *ip = b->data;
	unsigned int ihl, total, esp_len, payload;
	const struct rte_esp_hdr *esp;

	*reason = ESGW_DROP_MALFORMED;
	/* IPv4 or IPv6 outside. A fragment cannot be authenticated alone: the
	 * router reassembles before it sends ESP here. */
	if (esp_ip_outer_parse(ip, b->len, &ihl, &total) < 0)
		return -1;
	esp_len = total - ihl;
	if (esp_len < ESP_HDR_LEN + (unsigned int)sa->iv_len + sa->icv_len)
		return -1;
	payload = esp_len - ESP_HDR_LEN - sa->iv_len - sa->icv_len;
	/* Whole cipher blocks, and at least the 2-byte trailer (RFC 4303 2.4).
	 * Every block_len is a power of two (esp_algorithms.h): a mask, not
	 * a division per packet. */
	if (payload < ESP_TRAILER_LEN || (payload & (sa->block_len - 1u)) != 0)
		return -1;
	esp = (const struct rte_esp_hdr *)(ip + ihl);
	if (rte_be_to_cpu_32(esp->spi) != sa->spi) {
		*reason = ESGW_DROP_NO_SA;
		return -1;
	}
	if (sa->rt->expired & ESGW_SA_HARD_EXPIRED) {
		*reason = ESGW_DROP_SA_EXPIRED;
		return -1;
	}
	/* ESN: the high half is inferred from the window (RFC 4303 A2.2);
	 * the ICV, which covers it, then confirms the guess. */
	*seq = sa->esn ? replay_esn_infer(&sa->rt->replay, rte_be_to_cpu_32(esp->seq))
		       : rte_be_to_cpu_32(esp->seq);
	if (!replay_check(&sa->rt->replay, *seq)) {
		*reason = ESGW_DROP_REPLAY;
		return -1;
	}
	*outer_len = (uint16_t)ihl;
	*payload_len = (uint16_t)payload;
	b->tailroom = (uint16_t)(b->tailroom + (b->len - total)); /* L2 padding */
	b->len = (uint16_t)total;
	return 0;
}

/* Its job for packet i of the chunk (esp_jobs_fill_fn), inlined into the
 * burst loop like the code it was: one call per packet saved. */
static __rte_always_inline void decap_fill_job(IMB_JOB *job, const struct esp_sa *sa,
					       struct esp_buf *b, void *scratch, uint8_t index)
{
	struct decap_scratch *s = scratch;
	unsigned int payload_len = s->payload_len[index];
	uint64_t seq = s->seq[index];
	struct rte_esp_hdr *esp = (struct rte_esp_hdr *)(b->data + s->outer_len[index]);
	unsigned int payload_off = ESP_HDR_LEN + sa->iv_len;
	uint8_t *icv = (uint8_t *)esp + payload_off + payload_len;

	if (icv_kept_aside(sa))
		memcpy(s->received_icv[index], icv, sa->icv_len);
	job->cipher_direction = IMB_DIR_DECRYPT;
	job->chain_order = IMB_ORDER_HASH_CIPHER;
	job->key_len_in_bytes = sa->key_len;
	job->src = (const uint8_t *)esp;
	job->dst = (uint8_t *)esp + payload_off;
	job->cipher_start_src_offset_in_bytes = payload_off;
	job->msg_len_to_cipher_in_bytes = payload_len;
	job->auth_tag_output = s->icv[index];
	job->auth_tag_output_len_in_bytes = sa->icv_len;
	job->user_data = (void *)(uintptr_t)index;
	if (sa->integ == ESP_INTEG_AEAD) {
		/* The nonce: salt || the IV that follows the ESP header. */
		memcpy(s->nonce[index], sa->salt, 4);
		memcpy(s->nonce[index] + 4, esp + 1, 8);
		if (sa->esn)
			esp_jobs_esn_aad(s->aad[index], esp, seq);
	} else {
		if (sa->esn)
			write_be32(icv, (uint32_t)(seq >> 32));
		esp_jobs_hmac(job, sa, payload_off + payload_len);
	}
	esp_jobs_cipher(job, sa, esp, s->nonce[index], s->aad[index], payload_off, payload_len);
}

/* After decryption: the trailer, the padding and the inner header. The
 * replay window has already moved: the packet is authentic, only its
 * contents are refused. Returns 0 or the drop reason's -1. */
static int decap_finish(const struct esp_sa *sa, struct esp_buf *b, unsigned int outer_len,
			unsigned int payload_len, enum esgw_drop *reason)
{
	uint8_t *payload = b->data + outer_len + ESP_HDR_LEN + sa->iv_len;
	unsigned int pad = payload[payload_len - 2], next_header = payload[payload_len - 1];
	unsigned int inner_len, inner_total, head;

	*reason = ESGW_DROP_BAD_PADDING;
	if (pad + ESP_TRAILER_LEN > payload_len)
		return -1;
	/* RFC 4303 2.4: the default padding is 1, 2, 3, ... and a receiver
	 * checks it; a mismatch is a sign of a wrong key or a broken peer. */
	for (unsigned int i = 0; i < pad; i++)
		if (payload[payload_len - 2 - pad + i] != (uint8_t)(i + 1))
			return -1;
	if (next_header == ESP_NEXT_HEADER_NONE) {
		*reason = ESGW_DROP_TFC_DUMMY;
		return -1;
	}
	inner_len = payload_len - ESP_TRAILER_LEN - pad;
	if (esp_ip_inner_check(payload, inner_len, (uint8_t)next_header, &inner_total, reason) < 0)
		return -1;
	/* Bytes between the inner packet and the padding are TFC padding. */
	head = outer_len + ESP_HDR_LEN + sa->iv_len;
	b->headroom = (uint16_t)(b->headroom + head);
	b->tailroom = (uint16_t)(b->tailroom + (b->len - head - inner_total));
	b->data = payload;
	b->len = (uint16_t)inner_total;
	return 0;
}

/* After its job, in packet order so that the window sees the sequence
 * numbers as sent: the ICV, the replay check again, the lifetime; then the
 * window moves and the payload is checked. 0 if packet i passed (b holds
 * the inner packet), or -1 with it dropped. */
static int decap_verify(struct esp_sa *a, struct esp_buf *b, const struct decap_scratch *s,
			uint16_t i, uint32_t now)
{
	const uint8_t *received;
	enum esgw_drop reason;

	if (!s->completed[i]) {
		esp_drop(a, b, ESGW_DROP_CRYPTO_ERROR);
		return -1;
	}
	received = icv_kept_aside(a) ? s->received_icv[i]
				     : b->data + s->outer_len[i] + ESP_HDR_LEN + a->iv_len +
					       s->payload_len[i];
	if (!icv_equal(received, s->icv[i], a->icv_len)) {
		esp_drop(a, b, ESGW_DROP_AUTH_FAILED); /* the window does not move */
		return -1;
	}
	/* Again: an earlier packet of this burst may have carried the same seq. */
	if (!replay_check(&a->rt->replay, s->seq[i])) {
		esp_drop(a, b, ESGW_DROP_REPLAY);
		return -1;
	}
	/* Only authentic packets count towards a lifetime, so forgeries
	 * cannot expire an SA. */
	if (esp_lifetime_due(a, now) && esp_lifetime_check(a, now)) {
		esp_drop(a, b, ESGW_DROP_SA_EXPIRED);
		return -1;
	}
	replay_update(&a->rt->replay, s->seq[i]);
	if (decap_finish(a, b, s->outer_len[i], s->payload_len[i], &reason) < 0) {
		esp_drop(a, b, reason);
		return -1;
	}
	a->rt->ctr.packets++;
	a->rt->ctr.bytes += b->len;
	return 0;
}

/* Check packet i of a chunk (esp_jobs_prepare_fn). */
static int decap_prepare_one(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			     uint16_t i, uint16_t n, void *scratch)
{
	struct decap_scratch *s = scratch;
	struct esp_buf *b = &buf[i];
	enum esgw_drop reason;

	(void)mgr;
	/* The next packet's headers and its tail (ICV, trailer), likely
	 * written by another core: a 64-byte packet's ESP spans two lines,
	 * and the job would wait for the second one. */
	if (i + 1 < n) {
		__builtin_prefetch(buf[i + 1].data);
		__builtin_prefetch(buf[i + 1].data + buf[i + 1].len - 1);
	}
	if (decap_check(sa[i], b, &s->outer_len[i], &s->payload_len[i], &s->seq[i], &reason) < 0) {
		esp_drop(sa[i], b, reason);
		return -1;
	}
	return 0;
}

static uint16_t decap_chunk(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			    uint16_t n, void *scratch)
{
	struct decap_scratch *s = scratch;
	uint32_t now = esp_clock_seconds();
	uint16_t passed = 0;

	esp_jobs_groups(mgr, sa, buf, n, 1, decap_prepare_one, decap_fill_job, s, s->ready,
			s->completed);
	/* In packet order, after every job: the window sees the numbers as
	 * sent. */
	for (uint16_t i = 0; i < n; i++)
		if (buf[i].drop == ESP_NO_DROP && decap_verify(sa[i], &buf[i], s, i, now) == 0)
			passed++;
	return passed;
}

uint16_t esp_decap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[], uint16_t n)
{
	struct decap_scratch scratch;

	return esp_jobs_chunks(mgr, sa, buf, n, decap_chunk, &scratch);
}
