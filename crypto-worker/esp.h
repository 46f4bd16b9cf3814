/* SPDX-License-Identifier: BSD-3-Clause */
/* The ESP tunnel-mode core (RFC 4303, IPv4 or IPv6 inside and outside) of
 * the crypto worker: SA key schedules, sequence numbers (ESN), lifetimes and
 * the encap/decap burst functions. Plain C over flat buffers and
 * intel-ipsec-mb, with DPDK's header types but no DPDK call, so unit tests
 * and fuzz targets link it without an EAL. */
#ifndef ESGW_ESP_H
#define ESGW_ESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>
#include <rte_prefetch.h>

#include "drops.h"
#include "esp_algorithms.h"
#include "packet.h" /* header structs; byte order and checksums with them */
#include "shm.h"    /* struct esgw_sa_runtime; only its types are used here */

#define ESP_BURST_MAX ESGW_BURST
#define ESP_NO_DROP 0xff /* esp_buf.drop of a packet that passed */

#define ESP_TRAILER_LEN 2 /* pad length + next header */
/* The trailer's next header in tunnel mode (RFC 4303 2.6). */
#define ESP_NEXT_HEADER_IPV4 IPPROTO_IPIP /* 4 */
#define ESP_NEXT_HEADER_IPV6 IPPROTO_IPV6 /* 41 */
#define ESP_NEXT_HEADER_NONE IPPROTO_NONE /* 59: a TFC dummy packet */

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

/* SA lifetime limits (RFC 4301 4.4.2.1); 0 means no limit. */
struct esp_lifetime {
	uint64_t packets;
	uint64_t bytes;   /* inner packet bytes */
	uint64_t seconds; /* since the runtime slot was initialised */
};

/* What esp_sa_init needs; keys are copied into the key schedules, never kept. */
struct esp_sa_params {
	uint32_t spi;
	enum esp_alg alg;          /* sizes: common/esp_algorithms.h */
	const uint8_t *crypto_key; /* AEAD: key, or key || salt when salt_len is 0 */
	size_t crypto_key_len;
	const uint8_t *integ_key; /* HMAC key; none for AEAD */
	size_t integ_key_len;
	const uint8_t *salt; /* AEAD: 4 bytes unless inside crypto_key */
	size_t salt_len;
	bool esn; /* 64-bit sequence numbers, RFC 4303 2.2.1 */
	struct esp_lifetime soft, hard;
	uint32_t outer_src; /* network byte order; 0 for an inbound-only SA */
	uint32_t outer_dst;
	/* An IPv6 tunnel: outer addresses (16 bytes each), else NULL. */
	const uint8_t *outer6_src;
	const uint8_t *outer6_dst;
	/* UDP encapsulation (RFC 3948): local and peer port; 0, 0 for plain ESP. */
	uint16_t udp_sport, udp_dport;
	/* AEAD: IV = sequence number XOR iv_mask (esgw-ctld's Sa.iv_mask). */
	uint64_t iv_mask;
	struct esgw_sa_runtime *rt; /* seq_out, replay window, counters */
};

/* Worker-private state of one SA. Allocate with esp_sa_alloc (the key
 * schedules need 64-byte alignment), release with esp_sa_free, which wipes. */
struct esp_sa {
	/* read for every packet: one cache line */
	struct esgw_sa_runtime *rt;
	uint32_t spi;    /* host byte order */
	uint8_t alg;     /* enum esp_alg */
	uint8_t cipher;  /* enum esp_cipher */
	uint8_t integ;   /* enum esp_integ */
	uint8_t key_len; /* cipher key bytes, as the job wants them */
	uint8_t iv_len;  /* bytes of IV on the wire: AEAD 8, CBC 16, NULL 0 */
	uint8_t icv_len;
	uint8_t block_len;  /* payload alignment */
	uint8_t esn;        /* 1: the high 32 bits of seq count in the ICV (RFC 4303 2.2.1) */
	uint32_t outer_src; /* network byte order */
	uint32_t outer_dst;
	uint8_t salt[4]; /* AEAD nonce prefix, RFC 4106 4 / RFC 7634 2 */
	uint16_t ip_id;  /* next outer IPv4 identification */
	/* Read for every packet, so here rather than by what they describe:
	 * an IPv6 tunnel (outer6_src/dst below), RFC 3948 UDP encapsulation
	 * (udp_sport/dport below). */
	uint8_t outer_ipv6;
	uint8_t udp_encap;
	/* A packet takes the lifetime slow path (esp_lifetime_check) once a
	 * counter or the clock reaches one of these; 0 sends every packet there. */
	uint32_t check_time; /* CLOCK_MONOTONIC seconds */
	/* Mixed into every IV (esp_encap.c), big-endian: AEAD, the SA's iv_mask
	 * (as long-lived as the key); CBC, random per init. */
	uint64_t iv_nonce;
	uint64_t check_packets;
	uint64_t check_bytes;
	/* key schedules */
	union {
		struct {
			struct gcm_key_data key;
		} gcm;
		struct {
			uint8_t key[32];
		} chacha;
		struct {
			uint8_t enc_keys[16 * 15] __attribute__((aligned(16)));
			uint8_t dec_keys[16 * 15] __attribute__((aligned(16)));
			/* AES-128 schedule of a random per-SA key that makes CBC IVs */
			uint8_t iv_keys[16 * 11] __attribute__((aligned(16)));
		} cbc;
	} keys;
	/* HMAC: hash state after one block of key ^ ipad / key ^ opad */
	uint8_t ipad_hash[64] __attribute__((aligned(16)));
	uint8_t opad_hash[64] __attribute__((aligned(16)));
	/* cold: read only on the lifetime slow path */
	struct esp_lifetime soft, hard;
	/* IPv6 tunnel endpoints (esp_ip.c); outer_ipv6 says they are used.
	 * Apart from the hot line: IPv6 tunnels pay one more cache line. */
	uint8_t outer6_src[16];
	uint8_t outer6_dst[16];
	/* RFC 3948 UDP encapsulation (esp_udp.c), if udp_encap: the ports.
	 * Cold: NAT-T SAs pay a second cache line per packet. */
	uint16_t udp_sport, udp_dport;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct esp_sa) % 64 == 0, "esp_sa must fill whole cache lines");
_Static_assert(offsetof(struct esp_sa, keys) <= 64, "hot SA fields must fit one cache line");

/* esgw_sa_runtime.expired bits are in shm.h: ESGW_SA_SOFT_EXPIRED, ... */

struct esp_sa *esp_sa_alloc(void);
/* Wipes and frees; NULL is fine. */
void esp_sa_free(struct esp_sa *sa);
/* Validate params and build the key schedules. Returns 0, or -1 with a reason
 * (never containing key bytes) in err and sa left wiped. */
int esp_sa_init(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_sa_params *params, char *err,
		size_t errlen);
/* A rekey switches a tunnel's outbound SA away from old (tunnel set): the
 * workers get the new configuration before the router, so for a moment the
 * router still sends old packets. fresh, the same SA rebuilt without tunnel
 * endpoints, keeps old's so that those packets still go out instead of being
 * dropped. No-op unless both are the same SA (SPI). */
void esp_sa_keep_endpoints(struct esp_sa *fresh, const struct esp_sa *old);
/* Zero the key schedules and every other secret (explicit_bzero). */
void esp_sa_wipe(struct esp_sa *sa);
const char *esp_alg_name(enum esp_alg alg);
/* Tests and the fuzz target: fix the secrets IVs are made from, so that
 * esgw's output can be compared with a reference byte for byte. */
void esp_sa_set_iv_secrets(IMB_MGR *mgr, struct esp_sa *sa, const uint8_t nonce[8],
			   const uint8_t iv_key[16]);

/* Raise the SA's outbound limit to below floor, a sequence-number floor
 * esgw-ctld has made durable (DpSa.seq_limit): rt->seq_out_max becomes
 * floor - 1, capped by the number space; it never goes down. Only the owner
 * of the runtime slot calls it. */
void esp_seq_limit_raise(struct esp_sa *sa, uint64_t floor);

/* CLOCK_MONOTONIC in whole seconds: the same clock in every process. */
uint32_t esp_clock_seconds(void);
/* The lifetime slow path: marks soft and hard expiry in sa->rt->expired
 * (soft once; the control daemon turns the bit into an event) and re-arms
 * the check thresholds. Returns non-zero if the SA is hard-expired. */
int esp_lifetime_check(struct esp_sa *sa, uint32_t now);

/* Whether a packet with these counters must take the lifetime slow path. */
static inline int esp_lifetime_due(const struct esp_sa *sa, uint32_t now)
{
	return sa->rt->ctr.packets >= sa->check_packets || sa->rt->ctr.bytes >= sa->check_bytes ||
	       now >= sa->check_time;
}

/* Ask for the cache lines one packet of an SA reads, before the burst
 * needs them: with thousands of SAs each packet's SA misses in every line.
 * Into L2, not L1: a burst's SA lines alone would fill the 32 KiB L1 and
 * push out the packets'. The ESP core asks for them itself, a group of
 * packets ahead (ESP_GROUP, esp_jobs_groups); only a build with ESP_GROUP
 * 0 leaves them to the crypto worker's two passes over the whole burst:
 * esp_sa_prefetch_hot needs only the addresses (rt, the runtime slot, is
 * known from the packet's slot without reading sa): the hot line, and of
 * the slot the line outbound packets use (sequence numbers) or inbound ones
 * (expiry bits and the head of the window, whose 64-packet default fits in
 * it) and the counters. esp_sa_prefetch_keys, once the hot line is there,
 * the key schedule the packet uses: the round keys of its direction (11 of
 * 16 bytes for AES-128: 3 lines), for GCM the hash keys, for CBC the IV key
 * and the HMAC states. */
#define ESP_PREFETCH_L2(p) rte_prefetch1(p) /* inline asm: never optimised away */

/* Bytes of packet bodies the crypto worker prefetches before a burst (their
 * first lines always); the GCM loop (esp_jobs_groups) takes the later ones
 * two packets ahead. */
#define ESP_PREFETCH_BODIES (12 * 1024)

/* For writing, every line of the bytes from from up to to (from may be
 * mid-line). */
static inline void esp_prefetch_write(const uint8_t *from, const uint8_t *to)
{
	for (uintptr_t line = (uintptr_t)from & ~(uintptr_t)63; line < (uintptr_t)to; line += 64)
		rte_prefetch0_write((const void *)line);
}

/* The body of b past its first two lines (which are prefetched on their
 * own), for writing: the cipher works in place. The lines are the
 * buffer's, not 64-byte steps from data, which is mid-line (after an
 * Ethernet header): steps missed the last line of one packet in four. */
static inline void esp_prefetch_body(const struct esp_buf *b)
{
	esp_prefetch_write(b->data + 2 * RTE_CACHE_LINE_SIZE, b->data + b->len);
}

/* The most bytes encapsulation writes past the plaintext: padding to a
 * block of up to 16 bytes, the trailer and the longest ICV. */
#define ESP_TAIL_MAX (15 + ESP_TRAILER_LEN + ESP_ALG_ICV_MAX)

/* For writing, the lines encapsulation adds past the plaintext of b (the
 * trailer, padding and ICV), up to ESP_TAIL_MAX bytes, without reading the
 * SA (with thousands of tunnels its line is not there yet): one or two
 * lines. The buffers come from a pool cycled through deep rings, so these
 * lines were last written long ago and no longer cached: the ICV's store
 * missed in every 64-byte packet, whose tag falls past the plaintext's
 * line. */
static inline void esp_prefetch_tail(const struct esp_buf *b)
{
	esp_prefetch_write(b->data + b->len, b->data + b->len + ESP_TAIL_MAX);
}

/* Where the GCM code intel-ipsec-mb runs in this process keeps the hash keys
 * in gcm_key_data (64-byte aligned in esp_sa): H^k at esp_ghash_h1 -
 * 16 (k - 1) for k up to esp_ghash_powers. The VAES code (AVX-512 with VAES
 * and VPCLMULQDQ) has H^48..H^1 at the end (bytes 240..1007), the others
 * H^8..H^1 right after the round keys (240..367). n blocks are hashed with
 * H^min(n, powers)..H^1 (the AAD and the lengths with H^1), so a 64-byte
 * packet (3 blocks) reads one line of them and a 1400-byte one three (the
 * VAES code twelve). esp_sa_init sets them from the manager's architecture. */
extern unsigned int esp_ghash_h1, esp_ghash_powers;
#define ESP_GHASH_VAES_END (16 * 63) /* H^k at 16 * (63 - k) */

/* Packets the ESP core readies for their jobs (frames or checks) and then,
 * AES-GCM, ciphers, at a time (esp_jobs_groups): while it ciphers the GCM
 * packets of one group it asks for the runtime slot's line and the keys of
 * the next group's (GCM's into L1, for the bytes the packet will hash) and
 * for the hot lines of the group after, a packet's worth per packet
 * ciphered, so that these misses overlap the cipher's work. Before, the
 * crypto worker asked for them all in passes over the whole burst, which
 * stalled at the core's few dozen outstanding misses: in the chain with
 * 10,000 tunnels (bench/run.sh setting S) a fifth of each worker's time.
 * Groups, not each packet framed and ciphered in turn: alternating the
 * framing code with the cipher's cost 20 cycles a packet with one SA
 * (GCM-128, 64 B). Measured with bench/esp-core --sas (GCM-128 encrypt,
 * cycles per packet, 3 interleaved runs each; before: the whole-burst
 * passes and the GCM keys 8 packets ahead in the cipher loop): 100,000 SAs
 * 64 B 104-115 against 122-132, 1400 B 269-270 against 288-300; one SA 64 B
 * 94-105 against 88-91, 1400 B 222-225 against 212-221 (groups of 4 and 16:
 * bench/RESULTS-scale.md). A build may set it (-Dc_args=
 * -DESP_GROUP=N; 0: the whole chunk one group, its lines asked for by the
 * worker's whole-burst passes). */
#ifndef ESP_GROUP
#define ESP_GROUP 8
#endif
/* Bytes of an AES key schedule the cipher reads: 11, 13 or 15 round keys of
 * 16 bytes for 128, 192 or 256-bit keys. */
static inline unsigned int esp_round_key_bytes(const struct esp_sa *sa)
{
	return 16u * (sa->key_len / 4u + 7u);
}

/* The offset in gcm_key_data of the first line of hash keys a packet of
 * hashed bytes reads; the last is esp_ghash_h1's. */
static inline unsigned int esp_ghash_first_line(unsigned int hashed)
{
	unsigned int n = (hashed + 15) / 16;

	n = n < 1 ? 1 : n > esp_ghash_powers ? esp_ghash_powers : n;
	return (esp_ghash_h1 - 16 * (n - 1)) & ~63u;
}

static inline void esp_sa_prefetch_gcm_l1(const struct esp_sa *sa, unsigned int hashed)
{
	const uint8_t *k = (const uint8_t *)&sa->keys.gcm.key;
	unsigned int round_keys = esp_round_key_bytes(sa);

	for (unsigned int off = 0; off < round_keys; off += 64)
		rte_prefetch0(k + off);
	for (unsigned int off = esp_ghash_first_line(hashed); off <= esp_ghash_h1; off += 64)
		rte_prefetch0(k + off);
}

/* The runtime slot's lines a packet reads (rt + 64 holds the window's
 * head; the counters are in line 0). */
static inline void esp_sa_prefetch_runtime(const struct esgw_sa_runtime *rt, int inbound)
{
	ESP_PREFETCH_L2((const uint8_t *)rt + (inbound ? 64 : 0));
	if (inbound)
		ESP_PREFETCH_L2(&rt->ctr);
}

static inline void esp_sa_prefetch_hot(const struct esp_sa *sa, const struct esgw_sa_runtime *rt,
				       int inbound)
{
	if (ESP_GROUP > 0)
		return; /* the ESP core's, a group ahead */
	esp_sa_prefetch_runtime(rt, inbound);
	ESP_PREFETCH_L2(sa);
}

/* The bytes an ICV covers: of an outbound packet of len bytes of sa, the
 * payload it becomes (a trailer, then padding to the SA's block, a power
 * of two: 4 bytes for GCM, so a 64-byte frame's 46-byte packet hashes 48
 * bytes, 3 blocks, one line of hash keys, where a bound of 15 bytes of
 * padding asked for a second line every packet); an upper bound of an
 * inbound one's (it has around them at least an outer IPv4 header, the
 * ESP header and the IV and ICV of GCM, the algorithm whose keys depend on
 * the length). */
static inline unsigned int esp_hashed_out(const struct esp_sa *sa, unsigned int len)
{
	return (len + ESP_TRAILER_LEN + sa->block_len - 1u) & ~(sa->block_len - 1u);
}

static inline unsigned int esp_hashed_in(unsigned int len)
{
	return len > 20 + 8 + 8 + 16 ? len - (20 + 8 + 8 + 16) : 0;
}

/* Into L2 every line of the len bytes at p (which may start mid-line). */
static inline void esp_prefetch_l2_bytes(const void *p, unsigned int len)
{
	uintptr_t line = (uintptr_t)p & ~(uintptr_t)63;

	for (; line < (uintptr_t)p + len; line += 64)
		ESP_PREFETCH_L2((const void *)line);
}

/* A CBC SA's round keys of the direction, its IV key (outbound) and HMAC
 * states. */
static inline void esp_sa_prefetch_cbc_keys(const struct esp_sa *sa, int inbound)
{
	esp_prefetch_l2_bytes(inbound ? sa->keys.cbc.dec_keys : sa->keys.cbc.enc_keys,
			      esp_round_key_bytes(sa)); /* dec_keys starts mid-line */
	if (!inbound)
		esp_prefetch_l2_bytes(sa->keys.cbc.iv_keys, sizeof(sa->keys.cbc.iv_keys));
	ESP_PREFETCH_L2(sa->ipad_hash);
	ESP_PREFETCH_L2(sa->opad_hash);
}

/* hashed: esp_hashed_out or esp_hashed_in of the packet (fewer bytes only
 * ask for fewer lines). */
static inline void esp_sa_prefetch_keys(const struct esp_sa *sa, unsigned int hashed, int inbound)
{
	if (ESP_GROUP > 0)
		return; /* the ESP core's, a group ahead */
	if (sa->cipher == ESP_CIPHER_AES_GCM) {
		const uint8_t *k = (const uint8_t *)&sa->keys.gcm.key;

		esp_prefetch_l2_bytes(k, esp_round_key_bytes(sa));
		for (unsigned int off = esp_ghash_first_line(hashed); off <= esp_ghash_h1;
		     off += 64)
			ESP_PREFETCH_L2(k + off);
	} else if (sa->cipher == ESP_CIPHER_AES_CBC) {
		esp_sa_prefetch_cbc_keys(sa, inbound);
	}
}

/* Encapsulate n (any number) inner IPv4 packets, buf[i] with sa[i]. Returns
 * the number that passed; the others have buf[i].drop set and were counted in
 * their SA's rt->drops. Buffers are left as they were for dropped ones. */
uint16_t esp_encap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[], uint16_t n);
/* Decapsulate n outer IPv4 + ESP packets. Passed ones are left holding the
 * inner IPv4 packet (its total length, without TFC padding). */
uint16_t esp_decap_burst(IMB_MGR *mgr, struct esp_sa *const sa[], struct esp_buf buf[], uint16_t n);

/* esp_ip.c: the IP layers around ESP, IPv4 or IPv6 inside and outside. */
/* Bytes of the outer IP header the SA writes: 20 (IPv4) or 40 (IPv6). */
static inline unsigned int esp_ip_outer_len(const struct esp_sa *sa)
{
	return sa->outer_ipv6 ? IPV6_HDR_LEN : IPV4_HDR_LEN;
}
/* Whether the SA has tunnel endpoints (an inbound-only SA has none). */
static inline int esp_sa_has_endpoints(const struct esp_sa *sa)
{
	return sa->outer_dst != 0 || sa->outer_ipv6;
}
/* An inner packet to encrypt: its length from its own header (without
 * Ethernet padding) and the ESP next header value (4 or 41). Returns 0, or
 * -1 if it is neither a whole IPv4 nor a whole IPv6 packet. */
int esp_ip_inner_parse(const uint8_t *p, unsigned int avail, unsigned int *len,
		       uint8_t *next_header);
/* DSCP and ECN of the inner packet, copied to the outer header. */
uint8_t esp_ip_inner_tos(const uint8_t *p);
/* Write the outer IPv4 or IPv6 header (esp_ip_outer_len bytes) of a packet of
 * total_len bytes; IPv4 takes the next identification of the SA. */
void esp_ip_outer_write(struct esp_sa *sa, uint8_t *ip, uint8_t tos, unsigned int total_len);
/* An outer packet to decrypt: the length of its IP header (where ESP
 * starts) and of the whole packet. Returns -1 if it is not an unfragmented
 * IPv4 or IPv6 packet whose next protocol is ESP. */
int esp_ip_outer_parse(const uint8_t *ip, unsigned int avail, unsigned int *header_len,
		       unsigned int *total_len);
/* A decrypted inner packet of at most avail bytes with the trailer's next
 * header: its length from its own header (TFC padding follows it). Returns
 * 0, or -1 with the reason (BAD_NEXT_HEADER, MALFORMED). */
int esp_ip_inner_check(const uint8_t *p, unsigned int avail, uint8_t next_header, unsigned int *len,
		       enum esgw_drop *reason);

/* esp_udp.c: put a UDP header (sa's ports) between the outer IP header and
 * the ESP header of a finished packet. Returns 0, or -1 without headroom. */
int esp_udp_encap(const struct esp_sa *sa, struct esp_buf *b);

/* Count one dropped packet in its SA and mark its buffer. */
static inline void esp_drop(struct esp_sa *sa, struct esp_buf *buf, enum esgw_drop reason)
{
	buf->drop = (uint8_t)reason;
	esgw_sa_count_drop(sa->rt, reason);
}

#endif
