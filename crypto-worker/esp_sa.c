/* SPDX-License-Identifier: BSD-3-Clause */
/* An ESP SA's private state: key validation, intel-ipsec-mb key schedules,
 * and wiping them when the SA goes away. */
#include "esp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define AES128_KEY_LEN 16
#define GCM_SALT_LEN 4
#define HMAC_SHA1_KEY_LEN 20
#define SHA1_BLOCK_LEN 64

const char *esp_alg_name(enum esp_alg alg)
{
	switch (alg) {
	case ESP_ALG_AES_GCM_128:
		return "aes-gcm-128";
	case ESP_ALG_AES_CBC_128_HMAC_SHA1_96:
		return "aes-cbc-128-sha1-96";
	}
	return "unknown";
}

struct esp_sa *esp_sa_alloc(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, sizeof(struct esp_sa)) != 0)
		return NULL;
	memset(p, 0, sizeof(struct esp_sa));
	return p;
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
	free(sa);
}

/* HMAC (RFC 2104) hashes key ^ ipad and key ^ opad as the first block of the
 * inner and outer hash; intel-ipsec-mb takes the SHA1 state after those blocks
 * so that it never sees the key itself. (1.3 has no imb_hmac_ipad_opad.) */
static void hmac_sha1_precompute(IMB_MGR *mgr, const uint8_t *key, size_t key_len,
				 uint8_t *ipad_hash, uint8_t *opad_hash)
{
	uint8_t block[SHA1_BLOCK_LEN];

	memset(block, 0x36, sizeof(block));
	for (size_t i = 0; i < key_len; i++)
		block[i] ^= key[i];
	IMB_SHA1_ONE_BLOCK(mgr, block, ipad_hash);
	memset(block, 0x5c, sizeof(block));
	for (size_t i = 0; i < key_len; i++)
		block[i] ^= key[i];
	IMB_SHA1_ONE_BLOCK(mgr, block, opad_hash);
	explicit_bzero(block, sizeof(block));
}

static int fail(struct esp_sa *sa, char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	esp_sa_wipe(sa);
	return -1;
}

static int init_gcm(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_sa_params *p, char *err,
		    size_t errlen)
{
	const uint8_t *salt = p->salt;

	if (p->crypto_key_len == AES128_KEY_LEN + GCM_SALT_LEN && p->salt_len == 0)
		salt = p->crypto_key + AES128_KEY_LEN; /* key || salt, as RFC 4106 8.1 keying */
	else if (p->crypto_key_len != AES128_KEY_LEN)
		return fail(sa, err, errlen,
			    "aes-gcm-128 needs a 16-byte crypto key (or 20 bytes: key and salt)");
	else if (p->salt_len != GCM_SALT_LEN)
		return fail(sa, err, errlen, "aes-gcm-128 needs a 4-byte salt");
	if (p->integ_key_len != 0)
		return fail(sa, err, errlen, "aes-gcm-128 takes no integrity key");
	IMB_AES128_GCM_PRE(mgr, p->crypto_key, &sa->keys.gcm.key);
	memcpy(sa->salt, salt, GCM_SALT_LEN);
	sa->iv_len = 8;
	sa->icv_len = 16;
	sa->block_len = 4;
	return 0;
}

static int init_cbc_sha1(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_sa_params *p,
			 char *err, size_t errlen)
{
	if (p->crypto_key_len != AES128_KEY_LEN)
		return fail(sa, err, errlen, "aes-cbc-128-sha1-96 needs a 16-byte crypto key");
	if (p->integ_key_len != HMAC_SHA1_KEY_LEN)
		return fail(sa, err, errlen,
			    "aes-cbc-128-sha1-96 needs a 20-byte integrity key (RFC 2404)");
	if (p->salt_len != 0)
		return fail(sa, err, errlen, "aes-cbc-128-sha1-96 takes no salt");
	IMB_AES_KEYEXP_128(mgr, p->crypto_key, sa->keys.cbc.enc_keys, sa->keys.cbc.dec_keys);
	hmac_sha1_precompute(mgr, p->integ_key, p->integ_key_len, sa->keys.cbc.ipad_hash,
			     sa->keys.cbc.opad_hash);
	sa->iv_len = 16;
	sa->icv_len = 12;
	sa->block_len = 16;
	return 0;
}

int esp_sa_init(IMB_MGR *mgr, struct esp_sa *sa, const struct esp_sa_params *p, char *err,
		size_t errlen)
{
	uint8_t random[10];
	int rc;

	esp_sa_wipe(sa);
	if (p->rt == NULL)
		return fail(sa, err, errlen, "SA has no runtime slot");
	if (p->spi == 0)
		return fail(sa, err, errlen, "SPI 0 must not be sent on the wire (RFC 4303 2.1)");
	if (p->crypto_key == NULL && p->crypto_key_len != 0)
		return fail(sa, err, errlen, "crypto key missing");
	if (p->integ_key == NULL && p->integ_key_len != 0)
		return fail(sa, err, errlen, "integrity key missing");
	if (p->salt == NULL && p->salt_len != 0)
		return fail(sa, err, errlen, "salt missing");
	switch (p->alg) {
	case ESP_ALG_AES_GCM_128:
		rc = init_gcm(mgr, sa, p, err, errlen);
		break;
	case ESP_ALG_AES_CBC_128_HMAC_SHA1_96:
		rc = init_cbc_sha1(mgr, sa, p, err, errlen);
		break;
	default:
		return fail(sa, err, errlen, "unsupported ESP algorithm");
	}
	if (rc < 0)
		return rc;
	/* The IV nonce keeps IVs of this key distinct even if the sequence
	 * numbers restart (a runtime slot re-initialised for a re-added SA). */
	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random))
		return fail(sa, err, errlen, "getrandom failed");
	memcpy(&sa->iv_nonce, random, sizeof(sa->iv_nonce));
	memcpy(&sa->ip_id, random + 8, sizeof(sa->ip_id));
	explicit_bzero(random, sizeof(random));
	sa->alg = (uint8_t)p->alg;
	sa->spi = p->spi;
	sa->outer_src = p->outer_src;
	sa->outer_dst = p->outer_dst;
	sa->rt = p->rt;
	return 0;
}
