/* SPDX-License-Identifier: BSD-3-Clause */
/* ESP tunnel-mode encapsulation (RFC 4303 3.1.2): outer IPv4 header, ESP
 * header, IV, padding, trailer and ICV, encrypted in bursts through the
 * intel-ipsec-mb job manager. */
#include "esp.h"

#include <string.h>

#include "esp_jobs.h"

#define OUTER_TTL 64
#define IPPROTO_ESP_NUMBER 50

/* Per-burst scratch that must outlive job submission until the flush. */
struct encap_scratch {
	uint8_t gcm_iv[ESP_BURST_MAX][16]; /* salt || IV, the 12-byte GCM nonce */
	uint16_t inner_len[ESP_BURST_MAX];
	uint8_t completed[ESP_BURST_MAX];
};

static void put_seq_be64(uint8_t out[8], uint64_t seq)
{
	for (int i = 7; i >= 0; i--, seq >>= 8)
		out[i] = (uint8_t)seq;
}

/* IV choice.
 * GCM (RFC 4106 3.1): the IV only has to be unique per key, never repeat. It is
 * the 64-bit sequence number XOR a random per-SA nonce: unique because seq
 * never repeats for one SA (it survives worker restarts in shared memory), and
 * the nonce keeps IVs apart if the same key is ever installed again with its
 * sequence numbers restarted.
 * CBC (RFC 3602 2.3): the IV must be unpredictable to an attacker. It is
 * E_K(nonce || seq), the method NIST SP 800-38A appendix C recommends (the
 * forward cipher under the same key applied to a unique nonce): unique
 * because its input is, unpredictable without the key, and it costs one AES
 * block instead of a getrandom system call per packet. */
static void make_iv(IMB_MGR *mgr, const struct esp_sa *sa, uint64_t seq, uint8_t *iv,
		    uint8_t gcm_nonce[16])
{
	uint8_t seq_be[8];

	put_seq_be64(seq_be, seq);
	if (sa->alg == ESP_ALG_AES_GCM_128) {
		const uint8_t *nonce = (const uint8_t *)&sa->iv_nonce;

		for (int i = 0; i < 8; i++)
			iv[i] = seq_be[i] ^ nonce[i];
		memcpy(gcm_nonce, sa->salt, 4);
		memcpy(gcm_nonce + 4, iv, 8);
	} else {
		static const uint8_t zero[16];
		uint8_t block[16];

		memcpy(block, &sa->iv_nonce, 8);
		memcpy(block + 8, seq_be, 8);
		/* CFB of one zero block is E_K(block): one AES call, no job. */
		IMB_AES128_CFB_ONE(mgr, iv, zero, block, sa->keys.cbc.enc_keys, 16);
	}
}

static void write_outer_ipv4(const struct esp_sa *sa, uint8_t *ip, uint8_t tos, uint16_t total_len,
			     uint16_t id)
{
	ip[0] = 0x45;
	ip[1] = tos; /* DSCP and ECN copied from the inner header (RFC 4301 5.1.2.1, RFC 6040) */
	esp_put_be16(ip + 2, total_len);
	esp_put_be16(ip + 4, id);
	esp_put_be16(ip + 6, 0); /* no DF: the outer packet may be fragmented on the path */
	ip[8] = OUTER_TTL;
	ip[9] = IPPROTO_ESP_NUMBER;
	esp_put_be16(ip + 10, 0);
	memcpy(ip + 12, &sa->outer_src, 4);
	memcpy(ip + 16, &sa->outer_dst, 4);
	esp_put_be16(ip + 10, esp_ipv4_checksum(ip, ESP_IPV4_HDR_LEN));
}

/* Build everything but the ciphertext and ICV; returns 0, or -1 with the
 * packet dropped and left untouched. */
static int encap_prepare(IMB_MGR *mgr, struct esp_sa *sa, struct esp_buf *b, uint8_t gcm_nonce[16],
			 uint16_t *inner_len)
{
	struct esgw_sa_runtime *rt = sa->rt;
	unsigned int len = b->len, pad, payload_len, head, tail, total;
	uint8_t *trailer, *esp;
	uint64_t seq;

	if (len < ESP_IPV4_HDR_LEN || (b->data[0] >> 4) != 4) {
		esp_drop(sa, b, ESGW_DROP_MALFORMED);
		return -1;
	}
	if (esp_get_be16(b->data + 2) < ESP_IPV4_HDR_LEN || esp_get_be16(b->data + 2) > len) {
		esp_drop(sa, b, ESGW_DROP_MALFORMED);
		return -1;
	}
	/* Ethernet minimum-frame padding is not part of the packet. */
	len = esp_get_be16(b->data + 2);
	if (sa->outer_dst == 0) {
		esp_drop(sa, b, ESGW_DROP_NO_SA); /* an inbound-only SA has no tunnel endpoints */
		return -1;
	}
	pad = (0u - (len + ESP_TRAILER_LEN)) & (sa->block_len - 1u);
	payload_len = len + pad + ESP_TRAILER_LEN;
	head = ESP_IPV4_HDR_LEN + ESP_HDR_LEN + sa->iv_len;
	tail = pad + ESP_TRAILER_LEN + sa->icv_len;
	total = head + payload_len + sa->icv_len;
	if (total > UINT16_MAX || b->headroom < head || b->tailroom + (b->len - len) < tail) {
		esp_drop(sa, b, ESGW_DROP_TOO_BIG);
		return -1;
	}
	/* Without ESN the SA stops at 2^32 - 1 (RFC 4303 3.3.3): never wrap. */
	if (rt->seq_out >= UINT32_MAX) {
		esp_drop(sa, b, ESGW_DROP_SEQ_OVERFLOW);
		return -1;
	}
	seq = ++rt->seq_out;

	trailer = b->data + len;
	for (unsigned int i = 0; i < pad; i++)
		trailer[i] = (uint8_t)(i + 1); /* RFC 4303 2.4: 1, 2, 3, ... */
	trailer[pad] = (uint8_t)pad;
	trailer[pad + 1] = ESP_NEXT_HEADER_IPV4;

	*inner_len = (uint16_t)len;
	write_outer_ipv4(sa, b->data - head, b->data[1], (uint16_t)total, sa->ip_id++);
	esp = b->data - head + ESP_IPV4_HDR_LEN;
	esp_put_be32(esp, sa->spi);
	esp_put_be32(esp + 4, (uint32_t)seq);
	make_iv(mgr, sa, seq, esp + ESP_HDR_LEN, gcm_nonce);

	b->tailroom = (uint16_t)(b->tailroom + (b->len - len) - tail);
	b->headroom = (uint16_t)(b->headroom - head);
	b->data -= head;
	b->len = (uint16_t)total;
	return 0;
}

static void encap_fill_job(IMB_JOB *job, const struct esp_sa *sa, struct esp_buf *b,
			   const uint8_t gcm_nonce[16], uintptr_t index)
{
	uint8_t *esp = b->data + ESP_IPV4_HDR_LEN;
	unsigned int esp_len = b->len - ESP_IPV4_HDR_LEN;
	unsigned int payload_off = ESP_HDR_LEN + sa->iv_len;
	unsigned int payload_len = esp_len - payload_off - sa->icv_len;

	job->cipher_direction = IMB_DIR_ENCRYPT;
	job->chain_order = IMB_ORDER_CIPHER_HASH;
	job->key_len_in_bytes = IMB_KEY_128_BYTES;
	job->src = esp;
	job->dst = esp + payload_off;
	job->cipher_start_src_offset_in_bytes = payload_off;
	job->msg_len_to_cipher_in_bytes = payload_len;
	job->auth_tag_output = esp + payload_off + payload_len;
	job->auth_tag_output_len_in_bytes = sa->icv_len;
	job->user_data = (void *)index;
	if (sa->alg == ESP_ALG_AES_GCM_128) {
		job->cipher_mode = IMB_CIPHER_GCM;
		job->hash_alg = IMB_AUTH_AES_GMAC;
		job->enc_keys = &sa->keys.gcm.key;
		job->dec_keys = &sa->keys.gcm.key;
		job->iv = gcm_nonce;
		job->iv_len_in_bytes = 12;
		job->hash_start_src_offset_in_bytes = payload_off;
		job->msg_len_to_hash_in_bytes = payload_len;
		job->u.GCM.aad = esp; /* SPI || seq, RFC 4106 5 */
		job->u.GCM.aad_len_in_bytes = ESP_HDR_LEN;
	} else {
		job->cipher_mode = IMB_CIPHER_CBC;
		job->hash_alg = IMB_AUTH_HMAC_SHA_1;
		job->enc_keys = sa->keys.cbc.enc_keys;
		job->dec_keys = sa->keys.cbc.dec_keys;
		job->iv = esp + ESP_HDR_LEN;
		job->iv_len_in_bytes = 16;
		/* RFC 4303 2.8: the ICV covers ESP header, IV and ciphertext. */
		job->hash_start_src_offset_in_bytes = 0;
		job->msg_len_to_hash_in_bytes = payload_off + payload_len;
		job->u.HMAC._hashed_auth_key_xor_ipad = sa->keys.cbc.ipad_hash;
		job->u.HMAC._hashed_auth_key_xor_opad = sa->keys.cbc.opad_hash;
	}
}

static uint16_t encap_chunk(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			    uint16_t n, struct encap_scratch *s)
{
	uint16_t passed = 0;

	for (uint16_t i = 0; i < n; i++) {
		s->completed[i] = 0;
		buf[i].drop = ESP_NO_DROP;
		if (encap_prepare(mgr, sa[i], &buf[i], s->gcm_iv[i], &s->inner_len[i]) < 0)
			continue;
		encap_fill_job(IMB_GET_NEXT_JOB(mgr), sa[i], &buf[i], s->gcm_iv[i], i);
		esp_jobs_submit(mgr, s->completed);
	}
	esp_jobs_flush(mgr, s->completed);

	for (uint16_t i = 0; i < n; i++) {
		struct esgw_sa_runtime *rt = sa[i]->rt;

		if (buf[i].drop != ESP_NO_DROP)
			continue;
		if (!s->completed[i]) {
			esp_drop(sa[i], &buf[i], ESGW_DROP_CRYPTO_ERROR);
			continue;
		}
		rt->ctr.packets++;
		rt->ctr.bytes += s->inner_len[i];
		passed++;
	}
	return passed;
}

uint16_t esp_encap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[], uint16_t n)
{
	struct encap_scratch scratch;
	uint16_t passed = 0;

	for (uint16_t done = 0; done < n;) {
		uint16_t chunk = n - done < ESP_BURST_MAX ? n - done : ESP_BURST_MAX;

		passed += encap_chunk(mgr, sa + done, buf + done, chunk, &scratch);
		done += chunk;
	}
	return passed;
}
