/* SPDX-License-Identifier: BSD-3-Clause */
/* The ESP tunnel-mode core (RFC 4303, IPv4 in IPv4) of the crypto worker: SA
 * key schedules and the encap/decap burst functions. Plain C over flat buffers
 * and intel-ipsec-mb, no DPDK calls, so unit tests and fuzz targets link it
 * without an EAL. */
#ifndef ESGW_ESP_H
#define ESGW_ESP_H

#include <stddef.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>

#include "drops.h"
#include "shm.h" /* struct esgw_sa_runtime; only its types are used here */

/* Values match esgw.Algorithm in proto/esgw.proto. */
enum esp_alg {
	ESP_ALG_AES_GCM_128 = 1,             /* RFC 4106, 8-byte IV, 16-byte ICV */
	ESP_ALG_AES_CBC_128_HMAC_SHA1_96 = 2, /* RFC 3602 + RFC 2404 */
};

#define ESP_BURST_MAX ESGW_BURST
#define ESP_NO_DROP 0xff /* esp_buf.drop of a packet that passed */

#define ESP_IPV4_HDR_LEN 20
#define ESP_HDR_LEN 8    /* SPI + sequence number */
#define ESP_TRAILER_LEN 2 /* pad length + next header */
#define ESP_NEXT_HEADER_IPV4 4
#define ESP_NEXT_HEADER_NONE 59 /* TFC dummy packet, RFC 4303 2.6 */


/* One packet as the ESP core sees it: a contiguous buffer with room around it.
 * Encap moves data back and grows len (using headroom and tailroom); decap
 * moves data forward and shrinks len. The caller maps the change onto its own
 * buffer type (the worker onto an mbuf's data_off/data_len). */
struct esp_buf {
	uint8_t *data;
	uint16_t len;
	uint16_t headroom;
	uint16_t tailroom;
	uint8_t drop; /* ESP_NO_DROP, or the enum esgw_drop reason it was dropped for */
	uint8_t reserved;
};

/* What esp_sa_init needs; keys are copied into the key schedules, never kept. */
struct esp_sa_params {
	uint32_t spi;
	enum esp_alg alg;
	const uint8_t *crypto_key; /* GCM: 16 bytes, or 20 = key || salt; CBC: 16 */
	size_t crypto_key_len;
	const uint8_t *integ_key; /* CBC: 20-byte HMAC-SHA1 key; GCM: none */
	size_t integ_key_len;
	const uint8_t *salt; /* GCM: 4 bytes unless inside crypto_key */
	size_t salt_len;
	uint32_t outer_src; /* network byte order; 0 for an inbound-only SA */
	uint32_t outer_dst;
	struct esgw_sa_runtime *rt; /* seq_out, replay window, counters */
};

/* Worker-private hot state of one SA. Allocate with esp_sa_alloc (the key
 * schedules need 64-byte alignment), release with esp_sa_free, which wipes. */
struct esp_sa {
	/* read for every packet */
	struct esgw_sa_runtime *rt;
	uint32_t spi;    /* host byte order */
	uint8_t alg;     /* enum esp_alg */
	uint8_t iv_len;  /* bytes of IV on the wire: GCM 8, CBC 16 */
	uint8_t icv_len; /* GCM 16, HMAC-SHA1-96 12 */
	uint8_t block_len; /* payload alignment: GCM 4 (RFC 4303 2.4), CBC 16 */
	uint32_t outer_src; /* network byte order */
	uint32_t outer_dst;
	uint16_t ip_id;     /* next outer IPv4 identification */
	uint8_t salt[4];    /* GCM nonce prefix, RFC 4106 4 */
	uint64_t iv_nonce;  /* random per init, mixed into every IV (esp_encap.c) */
	/* key schedules */
	union {
		struct {
			struct gcm_key_data key;
		} gcm;
		struct {
			uint8_t enc_keys[16 * 11] __attribute__((aligned(16)));
			uint8_t dec_keys[16 * 11] __attribute__((aligned(16)));
			/* SHA1 state after one block of key ^ ipad / key ^ opad */
			uint8_t ipad_hash[32] __attribute__((aligned(16)));
			uint8_t opad_hash[32] __attribute__((aligned(16)));
		} cbc;
	} keys;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct esp_sa) % 64 == 0, "esp_sa must fill whole cache lines");
_Static_assert(offsetof(struct esp_sa, keys) <= 64, "hot SA fields must fit one cache line");

struct esp_sa *esp_sa_alloc(void);
/* Wipes and frees; NULL is fine. */
void esp_sa_free(struct esp_sa *sa);
/* Validate params and build the key schedules. Returns 0, or -1 with a reason
 * (never containing key bytes) in err and sa left wiped. */
int esp_sa_init(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_sa_params *params, char *err,
		size_t errlen);
/* Zero the key schedules and every other secret (explicit_bzero). */
void esp_sa_wipe(struct esp_sa *sa);
const char *esp_alg_name(enum esp_alg alg);

/* Encapsulate n (any number) inner IPv4 packets, buf[i] with sa[i]. Returns
 * the number that passed; the others have buf[i].drop set and were counted in
 * their SA's rt->ctr.drops. Buffers are left as they were for dropped ones. */
uint16_t esp_encap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			 uint16_t n);
/* Decapsulate n outer IPv4 + ESP packets. Passed ones are left holding the
 * inner IPv4 packet (its total length, without TFC padding). */
uint16_t esp_decap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[],
			 uint16_t n);

/* Count one dropped packet in its SA and mark its buffer. */
static inline void esp_drop(struct esp_sa *sa, struct esp_buf *buf, enum esgw_drop reason)
{
	buf->drop = (uint8_t)reason;
	sa->rt->ctr.drops[reason]++;
}

/* RFC 1071 checksum of an IPv4 header (ihl_bytes a multiple of 4). */
static inline uint16_t esp_ipv4_checksum(const uint8_t *hdr, unsigned int ihl_bytes)
{
	uint32_t sum = 0;

	for (unsigned int i = 0; i < ihl_bytes; i += 2)
		sum += (uint32_t)hdr[i] << 8 | hdr[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum; /* host order: store big-endian */
}

static inline void esp_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void esp_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t esp_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t esp_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif
