/* SPDX-License-Identifier: BSD-3-Clause */
/* The one table of ESP algorithms esgw supports: CLI names, key, salt, IV and
 * ICV sizes. esgwctl and esgw-ctld validate against it, the crypto worker
 * builds its key schedules from it, so a name or a key length is defined once. */
#ifndef ESGW_ESP_ALGORITHMS_H
#define ESGW_ESP_ALGORITHMS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Values match esgw.Algorithm in proto/esgw.proto. */
enum esp_alg {
	ESP_ALG_AES_GCM_128 = 1,
	ESP_ALG_AES_CBC_128_HMAC_SHA1_96 = 2,
	ESP_ALG_AES_GCM_256 = 3,
	ESP_ALG_AES_CBC_256_HMAC_SHA1_96 = 4,
	ESP_ALG_AES_CBC_128_HMAC_SHA256_128 = 5,
	ESP_ALG_AES_CBC_256_HMAC_SHA256_128 = 6,
	ESP_ALG_AES_CBC_128_HMAC_SHA512_256 = 7,
	ESP_ALG_AES_CBC_256_HMAC_SHA512_256 = 8,
	ESP_ALG_CHACHA20_POLY1305 = 9,
	ESP_ALG_NULL_HMAC_SHA1_96 = 10,
	ESP_ALG_NULL_HMAC_SHA256_128 = 11,
	ESP_ALG_NULL_HMAC_SHA512_256 = 12,
};

enum esp_cipher {
	ESP_CIPHER_NULL = 1,          /* RFC 2410: integrity only, for debugging */
	ESP_CIPHER_AES_CBC,           /* RFC 3602 */
	ESP_CIPHER_AES_GCM,           /* RFC 4106, AEAD */
	ESP_CIPHER_CHACHA20_POLY1305, /* RFC 7634, AEAD */
};

enum esp_integ {
	ESP_INTEG_AEAD = 1,    /* the cipher authenticates */
	ESP_INTEG_HMAC_SHA1,   /* RFC 2404, 96-bit ICV */
	ESP_INTEG_HMAC_SHA256, /* RFC 4868, 128-bit ICV */
	ESP_INTEG_HMAC_SHA512, /* RFC 4868, 256-bit ICV */
};

struct esp_alg_info {
	enum esp_alg alg;
	const char *name;      /* CLI and JSON name */
	uint8_t cipher;        /* enum esp_cipher */
	uint8_t integ;         /* enum esp_integ */
	uint8_t key_len;       /* cipher key bytes, without the salt */
	uint8_t salt_len;      /* AEAD nonce salt, RFC 4106 4 / RFC 7634 2 */
	uint8_t integ_key_len; /* HMAC key bytes: the hash's output size (RFC 2404, 4868) */
	uint8_t iv_len;        /* bytes of IV on the wire */
	uint8_t icv_len;
	uint8_t block_len; /* payload alignment: the cipher block, at least 4 (RFC 4303 2.4) */
};

#define ESP_ALG_KEY_MAX 32
#define ESP_ALG_INTEG_KEY_MAX 64
#define ESP_ALG_ICV_MAX 32
#define ESP_ALG_SALT_LEN 4

static const struct esp_alg_info esp_algorithms[] = {
	{ESP_ALG_AES_GCM_128, "aes-gcm-128", ESP_CIPHER_AES_GCM, ESP_INTEG_AEAD, 16, 4, 0, 8, 16,
	 4},
	{ESP_ALG_AES_GCM_256, "aes-gcm-256", ESP_CIPHER_AES_GCM, ESP_INTEG_AEAD, 32, 4, 0, 8, 16,
	 4},
	{ESP_ALG_AES_CBC_128_HMAC_SHA1_96, "aes-cbc-128-sha1-96", ESP_CIPHER_AES_CBC,
	 ESP_INTEG_HMAC_SHA1, 16, 0, 20, 16, 12, 16},
	{ESP_ALG_AES_CBC_256_HMAC_SHA1_96, "aes-cbc-256-sha1-96", ESP_CIPHER_AES_CBC,
	 ESP_INTEG_HMAC_SHA1, 32, 0, 20, 16, 12, 16},
	{ESP_ALG_AES_CBC_128_HMAC_SHA256_128, "aes-cbc-128-sha256-128", ESP_CIPHER_AES_CBC,
	 ESP_INTEG_HMAC_SHA256, 16, 0, 32, 16, 16, 16},
	{ESP_ALG_AES_CBC_256_HMAC_SHA256_128, "aes-cbc-256-sha256-128", ESP_CIPHER_AES_CBC,
	 ESP_INTEG_HMAC_SHA256, 32, 0, 32, 16, 16, 16},
	{ESP_ALG_AES_CBC_128_HMAC_SHA512_256, "aes-cbc-128-sha512-256", ESP_CIPHER_AES_CBC,
	 ESP_INTEG_HMAC_SHA512, 16, 0, 64, 16, 32, 16},
	{ESP_ALG_AES_CBC_256_HMAC_SHA512_256, "aes-cbc-256-sha512-256", ESP_CIPHER_AES_CBC,
	 ESP_INTEG_HMAC_SHA512, 32, 0, 64, 16, 32, 16},
	{ESP_ALG_CHACHA20_POLY1305, "chacha20-poly1305", ESP_CIPHER_CHACHA20_POLY1305,
	 ESP_INTEG_AEAD, 32, 4, 0, 8, 16, 4},
	{ESP_ALG_NULL_HMAC_SHA1_96, "null-sha1-96", ESP_CIPHER_NULL, ESP_INTEG_HMAC_SHA1, 0, 0, 20,
	 0, 12, 4},
	{ESP_ALG_NULL_HMAC_SHA256_128, "null-sha256-128", ESP_CIPHER_NULL, ESP_INTEG_HMAC_SHA256, 0,
	 0, 32, 0, 16, 4},
	{ESP_ALG_NULL_HMAC_SHA512_256, "null-sha512-256", ESP_CIPHER_NULL, ESP_INTEG_HMAC_SHA512, 0,
	 0, 64, 0, 32, 4},
};

#define ESP_ALG_COUNT (sizeof(esp_algorithms) / sizeof(esp_algorithms[0]))

/* NULL when esgw does not support alg. */
static inline const struct esp_alg_info *esp_alg_lookup(unsigned int alg)
{
	for (size_t i = 0; i < ESP_ALG_COUNT; i++)
		if ((unsigned int)esp_algorithms[i].alg == alg)
			return &esp_algorithms[i];
	return NULL;
}

static inline const struct esp_alg_info *esp_alg_by_name(const char *name)
{
	for (size_t i = 0; i < ESP_ALG_COUNT; i++)
		if (strcmp(esp_algorithms[i].name, name) == 0)
			return &esp_algorithms[i];
	return NULL;
}

#endif
