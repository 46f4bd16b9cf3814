/* SPDX-License-Identifier: BSD-3-Clause */
/* ESP tunnel-mode encapsulation (RFC 4303 3.1.2): outer IPv4 or IPv6 header, ESP
 * header, IV, padding, trailer and ICV, encrypted in bursts through
 * intel-ipsec-mb's burst API. */
#include "esp.h"

#include <endian.h>
#include <string.h>

#include "esp_jobs.h"

/* Per-burst scratch that must outlive job submission until the flush. */
struct encap_scratch {
	uint8_t nonce[ESP_BURST_MAX][16]; /* AEAD: salt || IV, the 12-byte nonce */
	uint8_t aad[ESP_BURST_MAX][12];   /* AEAD with ESN: SPI || seq_hi || seq_lo */
	uint16_t inner_len[ESP_BURST_MAX];
	uint8_t completed[ESP_BURST_MAX];
	uint8_t ready[ESP_BURST_MAX]; /* indices of the packets that have a job */
	uint32_t now;                 /* esp_clock_seconds() at the chunk's start */
};

static int is_aead(const struct esp_sa *sa)
{
	return sa->integ == ESP_INTEG_AEAD;
}

/* HMAC with ESN: seq_hi goes into the ICV computation behind the payload
 * (RFC 4303 2.2.1) but not on the wire, so the tail needs 4 more bytes while
 * the job runs. */
static unsigned int esn_hmac_extra(const struct esp_sa *sa)
{
	return sa->esn && !is_aead(sa) ? 4u : 0u;
}

/* IV choice.
 * AEAD (RFC 4106 3.1, RFC 7634 2): the IV only has to be unique per key, never
 * repeat. It is the 64-bit sequence number XOR the SA's iv_mask, a random
 * value esgw-ctld draws once at sa add and keeps with the SA (Sa.iv_mask):
 * XOR with a constant is a bijection, so IVs are unique because sequence
 * numbers are (they survive worker restarts and moves in shared memory and
 * dataplane restarts through the durable floor, shm.h), and no rebuild of
 * the SA ever draws it again. The mask keeps IVs apart (but for chance) if
 * the same key is ever installed again with its sequence numbers restarted.
 * CBC (RFC 3602 2.3): the IV must be unpredictable to an attacker. It is
 * E_Kiv(nonce || seq) under a random per-SA AES-128 key Kiv, in the spirit of
 * NIST SP 800-38A appendix C (the forward cipher applied to a unique nonce):
 * unique because its input is, unpredictable without Kiv, one AES block
 * instead of a getrandom system call per packet, and the same for AES-128
 * and AES-256 SAs.
 * NULL (RFC 2410): no IV. */
static void make_iv(IMB_MGR *mgr, const struct esp_sa *sa, uint64_t seq, uint8_t *iv,
		    uint8_t nonce_out[16])
{
	/* Built in registers and stored once: reading back bytes just stored
	 * into the packet stalled the pipeline (store forwarding). */
	const uint64_t seq_be = htobe64(seq);

	if (is_aead(sa)) {
		const uint64_t v = seq_be ^ sa->iv_nonce;

		memcpy(iv, &v, 8);
		memcpy(nonce_out, sa->salt, 4);
		memcpy(nonce_out + 4, &v, 8);
	} else if (sa->cipher == ESP_CIPHER_AES_CBC) {
		static const uint8_t zero[16];
		const uint64_t block[2] = {sa->iv_nonce, seq_be};

		/* CFB of one zero block is E_K(block): one AES call, no job. */
		IMB_AES128_CFB_ONE(mgr, iv, zero, block, sa->keys.cbc.iv_keys, 16);
	}
}

/* Where an ESP packet goes in its buffer: the inner packet's length (without
 * Ethernet padding) and next header, the padding, the bytes in front of it
 * (outer IP header, ESP header, IV) and behind it (padding, trailer, ICV),
 * and the whole. */
struct encap_layout {
	unsigned int len, pad, head, tail, total;
	uint8_t next_header;
};

/* Whether a packet may be encrypted: a whole inner IPv4 or IPv6 packet, an
 * SA with tunnel endpoints and within its lifetime, room around the packet
 * in its buffer, a sequence number below the durable floor. Returns 0 with
 * its layout, or -1 with the packet dropped and left untouched. */
static int encap_admit(struct esp_sa *sa, struct esp_buf *b, uint32_t now, struct encap_layout *l)
{
	struct esgw_sa_runtime *rt = sa->rt;

	if (esp_ip_inner_parse(b->data, b->len, &l->len, &l->next_header) < 0) {
		esp_drop(sa, b, ESGW_DROP_MALFORMED);
		return -1;
	}
	if (!esp_sa_has_endpoints(sa)) {
		esp_drop(sa, b, ESGW_DROP_NO_SA); /* an inbound-only SA has no tunnel endpoints */
		return -1;
	}
	/* Counters include the earlier packets of this burst: a hard limit of
	 * N packets lets exactly N through. */
	if (esp_lifetime_due(sa, now) && esp_lifetime_check(sa, now)) {
		esp_drop(sa, b, ESGW_DROP_SA_EXPIRED);
		return -1;
	}
	l->pad = (0u - (l->len + ESP_TRAILER_LEN)) & (sa->block_len - 1u);
	l->head = esp_ip_outer_len(sa) + ESP_HDR_LEN + sa->iv_len;
	l->tail = l->pad + ESP_TRAILER_LEN + sa->icv_len;
	l->total = l->head + l->len + l->tail;
	if (l->total > UINT16_MAX || b->headroom < l->head ||
	    b->tailroom + (b->len - l->len) < l->tail + esn_hmac_extra(sa)) {
		esp_drop(sa, b, ESGW_DROP_TOO_BIG);
		return -1;
	}
	/* One compare: seq_out_max is below both the floor esgw-ctld made
	 * durable and the end of the number space. */
	if (__builtin_expect(rt->seq_out >= rt->seq_out_max, 0)) {
		/* Without ESN the SA stops at 2^32 - 1 (RFC 4303 3.3.3): never
		 * wrap. With ESN, at 2^64 - 1. Either way it must be rekeyed. */
		if (rt->seq_out >= (sa->esn ? UINT64_MAX : UINT32_MAX)) {
			rt->expired |= ESGW_SA_SEQ_EXHAUSTED;
			esp_drop(sa, b, ESGW_DROP_SEQ_OVERFLOW);
		} else {
			/* The next number is not durably reserved: hold (drop)
			 * rather than risk sending it twice after a restart. */
			esp_drop(sa, b, ESGW_DROP_SEQ_HOLD);
		}
		return -1;
	}
	return 0;
}

/* Write everything but the ciphertext and ICV around the inner packet of an
 * admitted packet with sequence number seq: padding and trailer behind it,
 * the outer IP header, the ESP header and the IV in front of it; with ESN
 * the AAD (AEAD) or seq_hi behind the trailer (HMAC). */
static void encap_frame(IMB_MGR *mgr, struct esp_sa *sa, struct esp_buf *b,
			const struct encap_layout *l, uint64_t seq, uint8_t nonce[16],
			uint8_t aad[12])
{
	uint8_t *trailer = b->data + l->len;
	struct rte_esp_hdr *esp;

	for (unsigned int i = 0; i < l->pad; i++)
		trailer[i] = (uint8_t)(i + 1); /* RFC 4303 2.4: 1, 2, 3, ... */
	trailer[l->pad] = (uint8_t)l->pad;
	trailer[l->pad + 1] = l->next_header;

	esp_ip_outer_write(sa, b->data - l->head, esp_ip_inner_tos(b->data), l->total);
	esp = (struct rte_esp_hdr *)(b->data - l->head + esp_ip_outer_len(sa));
	esp->spi = rte_cpu_to_be_32(sa->spi);
	esp->seq = rte_cpu_to_be_32((uint32_t)seq);
	make_iv(mgr, sa, seq, (uint8_t *)(esp + 1), nonce);
	if (sa->esn) {
		if (is_aead(sa))
			esp_jobs_esn_aad(aad, esp, seq);
		else /* hashed behind the payload, where the ICV goes after the job */
			write_be32(trailer + l->pad + ESP_TRAILER_LEN, (uint32_t)(seq >> 32));
	}
}

/* Build everything but the ciphertext and ICV; returns 0, or -1 with the
 * packet dropped and left untouched. */
static int encap_prepare(IMB_MGR *mgr, struct esp_sa *sa, struct esp_buf *b, uint32_t now,
			 uint8_t nonce[16], uint8_t aad[12], uint16_t *inner_len)
{
	struct encap_layout l;

	if (encap_admit(sa, b, now, &l) < 0)
		return -1;
	encap_frame(mgr, sa, b, &l, ++sa->rt->seq_out, nonce, aad);
	*inner_len = (uint16_t)l.len;
	/* Counted now, not after the job, so lifetimes see this burst's packets. */
	sa->rt->ctr.packets++;
	sa->rt->ctr.bytes += l.len;

	b->tailroom = (uint16_t)(b->tailroom + (b->len - l.len) - l.tail);
	b->headroom = (uint16_t)(b->headroom - l.head);
	b->data -= l.head;
	b->len = (uint16_t)l.total;
	return 0;
}

/* Its job for packet i of the chunk (esp_jobs_fill_fn), inlined into the
 * burst loop like the code it was: one call per packet saved. */
static __rte_always_inline void encap_fill_job(IMB_JOB *job, const struct esp_sa *sa,
					       struct esp_buf *b, void *scratch, uint8_t i)
{
	const struct encap_scratch *s = scratch;
	const struct rte_esp_hdr *esp =
		(const struct rte_esp_hdr *)(b->data + esp_ip_outer_len(sa));
	unsigned int esp_len = b->len - esp_ip_outer_len(sa);
	unsigned int payload_off = ESP_HDR_LEN + sa->iv_len;
	unsigned int payload_len = esp_len - payload_off - sa->icv_len;
	uint8_t *payload = (uint8_t *)esp + payload_off;

	job->cipher_direction = IMB_DIR_ENCRYPT;
	job->chain_order = IMB_ORDER_CIPHER_HASH;
	job->key_len_in_bytes = sa->key_len;
	job->src = (const uint8_t *)esp;
	job->dst = payload;
	job->cipher_start_src_offset_in_bytes = payload_off;
	job->msg_len_to_cipher_in_bytes = payload_len;
	job->auth_tag_output = payload + payload_len;
	job->auth_tag_output_len_in_bytes = sa->icv_len;
	job->user_data = (void *)(uintptr_t)i;
	if (!is_aead(sa)) {
		esp_jobs_hmac(job, sa, payload_off + payload_len);
		/* ESN: seq_hi sits behind the payload; the ICV goes behind it
		 * until encap_chunk moves it into place. */
		job->auth_tag_output = payload + payload_len + esn_hmac_extra(sa);
	}
	esp_jobs_cipher(job, sa, esp, s->nonce[i], s->aad[i], payload_off, payload_len);
}

/* After its job: the ICV into place (HMAC with ESN), the UDP header
 * (NAT-T). 0 if packet i is ready to send, or -1 with it dropped and
 * uncounted again. */
static int encap_finish(struct esp_sa *sa, struct esp_buf *b, const struct encap_scratch *s,
			uint16_t i)
{
	unsigned int extra = esn_hmac_extra(sa);
	enum esgw_drop reason;

	if (!s->completed[i]) {
		reason = ESGW_DROP_CRYPTO_ERROR;
		goto drop;
	}
	if (extra) {
		uint8_t *icv = b->data + b->len - sa->icv_len;

		memmove(icv, icv + extra, sa->icv_len);
	}
	if (sa->udp_encap && esp_udp_encap(sa, b) < 0) {
		reason = ESGW_DROP_TOO_BIG;
		goto drop;
	}
	return 0;
drop:
	sa->rt->ctr.packets--;
	sa->rt->ctr.bytes -= s->inner_len[i];
	esp_drop(sa, b, reason);
	return -1;
}

/* Frame packet i of a chunk (esp_jobs_prepare_fn). */
static int encap_prepare_one(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			     uint16_t i, uint16_t n, void *scratch)
{
	struct encap_scratch *s = scratch;

	/* The next packet's inner header and the line its outer headers go
	 * into, likely last written by another core. */
	if (i + 1 < n) {
		__builtin_prefetch(buf[i + 1].data);
		__builtin_prefetch(buf[i + 1].data - 64, 1);
	}
	return encap_prepare(mgr, sa[i], &buf[i], s->now, s->nonce[i], s->aad[i], &s->inner_len[i]);
}

static uint16_t encap_chunk(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			    uint16_t n, void *scratch)
{
	struct encap_scratch *s = scratch;
	uint16_t passed = 0;

	s->now = esp_clock_seconds();
	esp_jobs_groups(mgr, sa, buf, n, 0, encap_prepare_one, encap_fill_job, s, s->ready,
			s->completed);
	for (uint16_t i = 0; i < n; i++)
		if (buf[i].drop == ESP_NO_DROP && encap_finish(sa[i], &buf[i], s, i) == 0)
			passed++;
	return passed;
}

uint16_t esp_encap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[], uint16_t n)
{
	struct encap_scratch scratch;

	return esp_jobs_chunks(mgr, sa, buf, n, encap_chunk, &scratch);
}
