/* SPDX-License-Identifier: BSD-3-Clause */
/* Value checks shared by esgwctl and esgw-ctld. */
#include "validate.h"

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "replay.h"

static const struct {
	Esgw__Algorithm alg;
	const char *name;
} algorithms[] = {
	{ESGW__ALGORITHM__ALGORITHM_AES_GCM_128, "aes-gcm-128"},
	{ESGW__ALGORITHM__ALGORITHM_AES_CBC_128_HMAC_SHA1_96, "aes-cbc-128-sha1-96"},
};

const char *esgw_algorithm_name(Esgw__Algorithm alg)
{
	for (size_t i = 0; i < sizeof(algorithms) / sizeof(algorithms[0]); i++)
		if (algorithms[i].alg == alg)
			return algorithms[i].name;
	return NULL;
}

Esgw__Algorithm esgw_algorithm_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(algorithms) / sizeof(algorithms[0]); i++)
		if (strcmp(algorithms[i].name, name) == 0)
			return algorithms[i].alg;
	return ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED;
}

int esgw_check_name(const char *name, const char *what, char *err, size_t errlen)
{
	if (name == NULL || name[0] == '\0') {
		snprintf(err, errlen, "%s is empty", what);
		return -1;
	}
	if (strlen(name) > ESGW_NAME_MAX) {
		snprintf(err, errlen, "%s '%.40s...' is longer than %d characters", what, name,
			 ESGW_NAME_MAX);
		return -1;
	}
	/* Names appear in CLI tables and JSON: keep them to printable, space-free text. */
	for (const char *p = name; *p; p++) {
		if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\' || *p == ',') {
			snprintf(err, errlen, "%s '%s' has a character other than letters, digits "
					      "and punctuation",
				 what, name);
			return -1;
		}
	}
	return 0;
}

int esgw_check_address(const char *s, const char *what, char *err, size_t errlen)
{
	uint32_t addr;

	if (esgw_parse_ipv4(s, &addr) < 0) {
		snprintf(err, errlen, "%s '%.64s' is not an IPv4 address", what, s ? s : "");
		return -1;
	}
	return 0;
}

int esgw_check_prefix(const char *s, const char *what, char *err, size_t errlen)
{
	uint32_t addr;
	uint8_t len;

	if (esgw_parse_prefix(s, &addr, &len) < 0 || strchr(s, '/') == NULL) {
		snprintf(err, errlen, "%s '%.64s' is not an IPv4 prefix A.B.C.D/LEN", what,
			 s ? s : "");
		return -1;
	}
	return 0;
}

int esgw_check_sa(const Esgw__Sa *sa, char *err, size_t errlen)
{
	size_t key = sa->crypto_key.len, integ = sa->integ_key.len, salt = sa->salt.len;

	if (sa->id == 0) {
		snprintf(err, errlen, "SA id 0 is reserved: use 1 or more");
		return -1;
	}
	if (sa->spi < ESGW_MIN_SPI) {
		snprintf(err, errlen, "SPI %u is reserved (RFC 4303): use %u or more", sa->spi,
			 ESGW_MIN_SPI);
		return -1;
	}
	switch (sa->algorithm) {
	case ESGW__ALGORITHM__ALGORITHM_AES_GCM_128:
		if (integ != 0) {
			snprintf(err, errlen, "aes-gcm-128 takes no integ-key");
			return -1;
		}
		if (!((key == ESGW_GCM_KEY_LEN && salt == ESGW_GCM_SALT_LEN) ||
		      (key == ESGW_GCM_KEY_LEN + ESGW_GCM_SALT_LEN && salt == 0))) {
			snprintf(err, errlen,
				 "aes-gcm-128 needs a 16-byte crypto-key and a 4-byte salt, or a "
				 "20-byte crypto-key (key and salt); got %zu-byte key, %zu-byte salt",
				 key, salt);
			return -1;
		}
		break;
	case ESGW__ALGORITHM__ALGORITHM_AES_CBC_128_HMAC_SHA1_96:
		if (key != ESGW_CBC_KEY_LEN || integ != ESGW_SHA1_KEY_LEN || salt != 0) {
			snprintf(err, errlen,
				 "aes-cbc-128-sha1-96 needs a 16-byte crypto-key, a 20-byte integ-key "
				 "and no salt; got %zu, %zu and %zu bytes",
				 key, integ, salt);
			return -1;
		}
		break;
	default:
		snprintf(err, errlen, "unknown algorithm (use aes-gcm-128 or aes-cbc-128-sha1-96)");
		return -1;
	}
	if (sa->replay_window != 0 &&
	    (sa->replay_window < 64 || sa->replay_window > REPLAY_WINDOW_MAX)) {
		snprintf(err, errlen, "replay-window %u is out of range 64..%u", sa->replay_window,
			 REPLAY_WINDOW_MAX);
		return -1;
	}
	return 0;
}

char *esgw_devargs_device(const char *devargs, char *buf, size_t len)
{
	size_t n = strcspn(devargs, ",");

	if (n >= len)
		n = len - 1;
	memcpy(buf, devargs, n);
	buf[n] = '\0';
	return buf;
}
