/* SPDX-License-Identifier: BSD-3-Clause */
/* An ESP SA's private state: key validation against the algorithm table,
 * intel-ipsec-mb key schedules, lifetime checks, and wiping it all when the
 * SA goes away. */
#include "esp.h"

#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#define HMAC_BLOCK_MAX 128 /* SHA-512; SHA-1 and SHA-256 use 64 */

const char *esp_alg_name(enum esp_alg alg)
{
	const struct esp_alg_info *info = esp_alg_lookup(alg);

	return info ? info->name : "unknown";
}

/* SAs come from 2 MiB chunks the kernel backs with a transparent huge page
 * where it can (MADV_HUGEPAGE): with thousands of SAs touched round-robin,
 * each packet's SA would otherwise sit on another 4 KiB page, a TLB miss and
 * a page walk per packet (which stalls even the burst prefetch). A freed SA,
 * wiped, goes on a free list; chunks are never returned (their number
 * follows the most SAs held at once). One thread allocates: the worker's.
 * Under AddressSanitizer every SA is its own allocation, so that a use after
 * free is still caught. */
#define SA_CHUNK_BYTES (2u << 20)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SA_ASAN)
static struct esp_sa *sa_take(void)
{
	void *p = NULL;

	return posix_memalign(&p, 64, sizeof(struct esp_sa)) == 0 ? p : NULL;
}

static void sa_give_back(struct esp_sa *sa)
{
	free(sa);
}
#else
union sa_free {
	union sa_free *next;
	struct esp_sa sa;
};

static union sa_free *sa_free_list;

static struct esp_sa *sa_take(void)
{
	union sa_free *f = sa_free_list;

	if (f == NULL) {
		void *chunk = NULL;

		if (posix_memalign(&chunk, SA_CHUNK_BYTES, SA_CHUNK_BYTES) != 0)
			return NULL;
		(void)madvise(chunk, SA_CHUNK_BYTES, MADV_HUGEPAGE); /* a hint only */
		for (size_t i = SA_CHUNK_BYTES / sizeof(*f); i-- > 0;) {
			f = (union sa_free *)chunk + i;
			f->next = sa_free_list;
			sa_free_list = f;
		}
	}
	sa_free_list = f->next;
	return &f->sa;
}

static void sa_give_back(struct esp_sa *sa)
{
	union sa_free *f = (union sa_free *)sa;

	f->next = sa_free_list; /* the SA is wiped: only this pointer in it */
	sa_free_list = f;
}
#endif

struct esp_sa *esp_sa_alloc(void)
{
	struct esp_sa *sa = sa_take();

	if (sa != NULL)
		memset(sa, 0, sizeof(*sa));
	return sa;
}

void esp_sa_wipe(struct esp_sa *sa)
{
	explicit_bzero(sa, sizeof(*sa));
}

void esp_sa_free(struct esp_sa *sa)
{
	if (sa == NULL)
		return;
	esp_sa_wipe(sa);
	sa_give_back(sa);
}

/* HMAC (RFC 2104) hashes key ^ ipad and key ^ opad as the first block of the
 * inner and outer hash; intel-ipsec-mb takes the hash state after those
 * blocks so that it never sees the key itself. (1.3 has no imb_hmac_ipad_opad.)
 * Keys are never longer than the block here: their length is the output size. */
static void hmac_precompute(IMB_MGR *mgr, enum esp_integ integ, const uint8_t *key, size_t key_len,
			    uint8_t *ipad_hash, uint8_t *opad_hash)
{
	size_t block_len = integ == ESP_INTEG_HMAC_SHA512 ? 128 : 64;
	uint8_t block[HMAC_BLOCK_MAX];

	for (int pass = 0; pass < 2; pass++) {
		uint8_t *out = pass == 0 ? ipad_hash : opad_hash;

		memset(block, pass == 0 ? 0x36 : 0x5c, block_len);
		for (size_t i = 0; i < key_len; i++)
			block[i] ^= key[i];
		switch (integ) {
		case ESP_INTEG_HMAC_SHA1:
			IMB_SHA1_ONE_BLOCK(mgr, block, out);
			break;
		case ESP_INTEG_HMAC_SHA256:
			IMB_SHA256_ONE_BLOCK(mgr, block, out);
			break;
		default:
			IMB_SHA512_ONE_BLOCK(mgr, block, out);
			break;
		}
	}
	explicit_bzero(block, sizeof(block));
}

static int __attribute__((format(printf, 4, 5)))
fail(struct esp_sa *sa, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	esp_sa_wipe(sa);
	return -1;
}

/* Key, salt and integrity key lengths against the table; on success *salt
 * points at the salt (the params' own, or the tail of a key || salt). */
static int check_keys(struct esp_sa *sa, const struct esp_alg_info *info,
		      const struct esp_sa_params *p, const uint8_t **salt, char *err, size_t errlen)
{
	*salt = p->salt;
	if (info->salt_len != 0) {
		if (p->crypto_key_len == (size_t)info->key_len + info->salt_len && p->salt_len == 0)
			*salt = p->crypto_key + info->key_len; /* key || salt, RFC 4106 8.1 */
		else if (p->crypto_key_len != info->key_len || p->salt_len != info->salt_len)
			return fail(
				sa, err, errlen,
				"%s needs a %zu-byte crypto key and a 4-byte salt (or %zu bytes: "
				"key and salt)",
				info->name, (size_t)info->key_len,
				(size_t)info->key_len + info->salt_len);
	} else {
		if (p->crypto_key_len != info->key_len)
			return fail(sa, err, errlen, "%s needs a %zu-byte crypto key, not %zu",
				    info->name, (size_t)info->key_len, p->crypto_key_len);
		if (p->salt_len != 0)
			return fail(sa, err, errlen, "%s takes no salt", info->name);
	}
	if (p->integ_key_len != info->integ_key_len)
		return fail(sa, err, errlen, "%s needs a %zu-byte integrity key, not %zu",
			    info->name, (size_t)info->integ_key_len, p->integ_key_len);
	return 0;
}

/* gcm_key_data: 240 bytes of round keys, then the hash keys. The VAES code
 * (AVX-512 with VAES and VPCLMULQDQ) has H^48..H^1 at 240..1007, the others
 * H^8..H^1 at 240..367. */
#define GHASH_KEYS_AT 240

unsigned int esp_ghash_h1 = GHASH_KEYS_AT + 16 * 7, esp_ghash_powers = 8;

static void ghash_lines_set(const IMB_MGR *mgr)
{
	const uint64_t vaes = IMB_FEATURE_VAES | IMB_FEATURE_VPCLMULQDQ;
	bool is_vaes = mgr->used_arch == IMB_ARCH_AVX512 && (mgr->features & vaes) == vaes;

	esp_ghash_powers = is_vaes ? 48 : 8;
	esp_ghash_h1 = is_vaes ? ESP_GHASH_VAES_END - 16 : GHASH_KEYS_AT + 16 * 7;
}

_Static_assert(offsetof(struct gcm_key_data, ghash_keys) == GHASH_KEYS_AT &&
		       GHASH_KEYS_AT + sizeof(((struct gcm_key_data *)0)->ghash_keys) ==
			       ESP_GHASH_VAES_END,
	       "intel-ipsec-mb's gcm_key_data layout changed: check esp_ghash_h1");
_Static_assert(sizeof(((struct gcm_key_data *)0)->ghash_keys) == 16 * 48,
	       "intel-ipsec-mb's gcm_key_data layout changed: check esp_ghash_h1");

static void build_key_schedules(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_alg_info *info,
				const struct esp_sa_params *p)
{
	switch (info->cipher) {
	case ESP_CIPHER_AES_GCM:
		ghash_lines_set(mgr);
		if (info->key_len == 16)
			IMB_AES128_GCM_PRE(mgr, p->crypto_key, &sa->keys.gcm.key);
		else
			IMB_AES256_GCM_PRE(mgr, p->crypto_key, &sa->keys.gcm.key);
		break;
	case ESP_CIPHER_CHACHA20_POLY1305:
		memcpy(sa->keys.chacha.key, p->crypto_key, 32);
		break;
	case ESP_CIPHER_AES_CBC:
		if (info->key_len == 16)
			IMB_AES_KEYEXP_128(mgr, p->crypto_key, sa->keys.cbc.enc_keys,
					   sa->keys.cbc.dec_keys);
		else
			IMB_AES_KEYEXP_256(mgr, p->crypto_key, sa->keys.cbc.enc_keys,
					   sa->keys.cbc.dec_keys);
		break;
	default:
		break; /* NULL: nothing to expand */
	}
	if (info->integ != ESP_INTEG_AEAD)
		hmac_precompute(mgr, info->integ, p->integ_key, p->integ_key_len, sa->ipad_hash,
				sa->opad_hash);
}

void esp_sa_set_iv_secrets(IMB_MGR *mgr, struct esp_sa *sa, const uint8_t nonce[8],
			   const uint8_t iv_key[16])
{
	uint8_t unused_dec[16 * 11] __attribute__((aligned(16)));

	memcpy(&sa->iv_nonce, nonce, 8);
	if (sa->cipher == ESP_CIPHER_AES_CBC)
		IMB_AES_KEYEXP_128(mgr, iv_key, sa->keys.cbc.iv_keys, unused_dec);
	explicit_bzero(unused_dec, sizeof(unused_dec));
}

/* The parameters every SA needs before its keys are looked at: a runtime
 * slot, an SPI that may go on the wire, key pointers for key lengths, a
 * known algorithm. 0, or -1 with err and sa wiped. */
static int check_params(struct esp_sa *sa, const struct esp_alg_info *info,
			const struct esp_sa_params *p, char *err, size_t errlen)
{
	if (p->rt == NULL)
		return fail(sa, err, errlen, "SA has no runtime slot");
	if (p->spi == 0)
		return fail(sa, err, errlen, "SPI 0 must not be sent on the wire (RFC 4303 2.1)");
	if ((p->crypto_key == NULL && p->crypto_key_len != 0) ||
	    (p->integ_key == NULL && p->integ_key_len != 0) ||
	    (p->salt == NULL && p->salt_len != 0))
		return fail(sa, err, errlen, "key material missing");
	if (info == NULL)
		return fail(sa, err, errlen, "unsupported ESP algorithm %d", (int)p->alg);
	return 0;
}

/* The tunnel's and the lifetimes' part of the parameters, and the runtime
 * slot. */
static void take_tunnel(struct esp_sa *sa, const struct esp_sa_params *p)
{
	sa->spi = p->spi;
	sa->outer_src = p->outer_src;
	sa->outer_dst = p->outer_dst;
	if (p->outer6_src != NULL && p->outer6_dst != NULL) {
		sa->outer_ipv6 = 1;
		memcpy(sa->outer6_src, p->outer6_src, 16);
		memcpy(sa->outer6_dst, p->outer6_dst, 16);
	}
	sa->udp_sport = p->udp_sport;
	sa->udp_dport = p->udp_dport;
	sa->udp_encap = p->udp_dport != 0;
	sa->rt = p->rt;
	sa->soft = p->soft;
	sa->hard = p->hard;
	/* Zero thresholds: the first packet arms them from the runtime state,
	 * which the worker may reset after this call (a new SA in the slot). */
	sa->check_packets = 0;
	sa->check_bytes = 0;
	sa->check_time = 0;
}

int esp_sa_init(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_sa_params *p, char *err,
		size_t errlen)
{
	const struct esp_alg_info *info = esp_alg_lookup(p->alg);
	uint8_t random[8 + 2 + 16];
	const uint8_t *salt;

	esp_sa_wipe(sa);
	if (check_params(sa, info, p, err, errlen) < 0 ||
	    check_keys(sa, info, p, &salt, err, errlen) < 0)
		return -1;
	build_key_schedules(mgr, sa, info, p);
	if (info->salt_len)
		memcpy(sa->salt, salt, ESP_ALG_SALT_LEN);
	sa->alg = (uint8_t)info->alg;
	sa->cipher = info->cipher;
	sa->integ = info->integ;
	sa->key_len = info->key_len;
	sa->iv_len = info->iv_len;
	sa->icv_len = info->icv_len;
	sa->block_len = info->block_len;
	sa->esn = p->esn;
	/* CBC IVs only have to be unpredictable: they are encrypted under a
	 * random key of their own (esp_encap.c), drawn again on every init. AEAD
	 * IVs must never repeat for the key: the sequence number XOR the SA's
	 * mask, which esgw-ctld drew once at sa add and keeps with the SA, so a
	 * rebuild (configuration push, restart, move) changes nothing. */
	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random))
		return fail(sa, err, errlen, "getrandom failed");
	memcpy(&sa->ip_id, random + 8, sizeof(sa->ip_id));
	esp_sa_set_iv_secrets(mgr, sa, random, random + 10);
	explicit_bzero(random, sizeof(random));
	if (info->integ == ESP_INTEG_AEAD)
		sa->iv_nonce = htobe64(p->iv_mask);
	take_tunnel(sa, p);
	return 0;
}

void esp_sa_keep_endpoints(struct esp_sa *fresh, const struct esp_sa *old)
{
	if (fresh == NULL || old == NULL || fresh->spi != old->spi || esp_sa_has_endpoints(fresh))
		return;
	fresh->outer_src = old->outer_src;
	fresh->outer_dst = old->outer_dst;
	fresh->outer_ipv6 = old->outer_ipv6;
	memcpy(fresh->outer6_src, old->outer6_src, 16);
	memcpy(fresh->outer6_dst, old->outer6_dst, 16);
	fresh->ip_id = old->ip_id;
}

void esp_seq_limit_raise(struct esp_sa *sa, uint64_t floor)
{
	uint64_t space_end = sa->esn ? UINT64_MAX : UINT32_MAX;
	/* UINT64_MAX: the whole space (nothing can follow its last number). */
	uint64_t max = floor == UINT64_MAX ? UINT64_MAX : floor > 0 ? floor - 1 : 0;

	if (max > space_end)
		max = space_end;
	if (max > sa->rt->seq_out_max)
		sa->rt->seq_out_max = max;
}

uint32_t esp_clock_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)ts.tv_sec;
}

static int reached(uint64_t value, uint64_t limit)
{
	return limit != 0 && value >= limit;
}

/* The lower of two limits, 0 standing for none. */
static uint64_t next_limit(uint64_t soft, uint64_t hard, int soft_done)
{
	if (soft_done || soft == 0)
		return hard ? hard : UINT64_MAX;
	return hard && hard < soft ? hard : soft;
}

int esp_lifetime_check(struct esp_sa *sa, uint32_t now)
{
	struct esgw_sa_runtime *rt = sa->rt;
	uint64_t age, deadline;

	if (rt->installed_at == 0 || rt->installed_at > now)
		rt->installed_at = now; /* a slot the worker did not stamp */
	age = now - rt->installed_at;
	if (reached(rt->ctr.packets, sa->hard.packets) || reached(rt->ctr.bytes, sa->hard.bytes) ||
	    reached(age, sa->hard.seconds))
		rt->expired |= ESGW_SA_SOFT_EXPIRED | ESGW_SA_HARD_EXPIRED;
	else if (reached(rt->ctr.packets, sa->soft.packets) ||
		 reached(rt->ctr.bytes, sa->soft.bytes) || reached(age, sa->soft.seconds))
		rt->expired |= ESGW_SA_SOFT_EXPIRED;
	if (rt->expired & ESGW_SA_HARD_EXPIRED) {
		/* Every packet comes here and is dropped. */
		sa->check_packets = sa->check_bytes = 0;
		sa->check_time = 0;
		return 1;
	}
	sa->check_packets =
		next_limit(sa->soft.packets, sa->hard.packets, rt->expired & ESGW_SA_SOFT_EXPIRED);
	sa->check_bytes =
		next_limit(sa->soft.bytes, sa->hard.bytes, rt->expired & ESGW_SA_SOFT_EXPIRED);
	deadline =
		next_limit(sa->soft.seconds, sa->hard.seconds, rt->expired & ESGW_SA_SOFT_EXPIRED);
	deadline = deadline == UINT64_MAX ? UINT64_MAX : rt->installed_at + deadline;
	sa->check_time = deadline > UINT32_MAX ? UINT32_MAX : (uint32_t)deadline;
	return 0;
}
