/* SPDX-License-Identifier: BSD-3-Clause */
/* Value checks shared by esgwctl and esgw-ctld. */
#include "validate.h"

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "esp_algorithms.h"
#include "replay.h"

/* The algorithms come from the table the crypto worker uses too. */
const char *esgw_algorithm_name(Esgw__Algorithm alg)
{
	const struct esp_alg_info *info = esp_alg_lookup((unsigned int)alg);

	return info ? info->name : NULL;
}

Esgw__Algorithm esgw_algorithm_parse(const char *name)
{
	const struct esp_alg_info *info = esp_alg_by_name(name);

	return info ? (Esgw__Algorithm)info->alg : ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED;
}

const char *esgw_algorithm_list(void)
{
	static char list[512];

	if (list[0] == '\0') {
		for (size_t i = 0; i < ESP_ALG_COUNT; i++) {
			if (i)
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
			strncat(list, esp_algorithms[i].name, sizeof(list) - strlen(list) - 1);
		}
	}
	return list;
}

/* Soft limits must come before hard ones, or the soft event is never seen. */
static int check_lifetimes(const Esgw__Sa *sa, char *err, size_t errlen)
{
	const Esgw__Lifetime *soft = sa->lifetime_soft, *hard = sa->lifetime_hard;
	static const char *what[] = {"bytes", "packets", "seconds"};

	if (soft == NULL || hard == NULL)
		return 0;
	for (int i = 0; i < 3; i++) {
		uint64_t s = i == 0 ? soft->bytes : i == 1 ? soft->packets : soft->seconds;
		uint64_t h = i == 0 ? hard->bytes : i == 1 ? hard->packets : hard->seconds;

		if (s != 0 && h != 0 && s >= h) {
			snprintf(err, errlen,
				 "lifetime-soft-%s %llu must be below lifetime-hard-%s %llu",
				 what[i], (unsigned long long)s, what[i], (unsigned long long)h);
			return -1;
		}
	}
	return 0;
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
			snprintf(err, errlen,
				 "%s '%s' has a character other than letters, digits "
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
	uint8_t addr6[16];

	if (esgw_parse_ipv4(s, &addr) < 0 && esgw_parse_ipv6(s, addr6) < 0) {
		snprintf(err, errlen, "%s '%.64s' is not an IPv4 or IPv6 address", what,
			 s ? s : "");
		return -1;
	}
	return 0;
}

int esgw_check_prefix(const char *s, const char *what, char *err, size_t errlen)
{
	struct esgw_addr a;

	if (esgw_addr_parse_prefix(s, &a) < 0) {
		snprintf(err, errlen, "%s '%.64s' is not a prefix A.B.C.D/LEN or X:X::X/LEN", what,
			 s ? s : "");
		return -1;
	}
	return 0;
}

/* The key, integrity key and salt lengths the SA's algorithm needs. */
static int check_key_lengths(const Esgw__Sa *sa, const struct esp_alg_info *info, char *err,
			     size_t errlen)
{
	size_t key = sa->crypto_key.len, integ = sa->integ_key.len, salt = sa->salt.len;

	if (info->salt_len != 0) {
		/* AEAD: key and salt apart, or key || salt (RFC 4106 8.1, RFC 7634 2) */
		if (integ != 0) {
			snprintf(err, errlen, "%s takes no integ-key", info->name);
			return -1;
		}
		if (!((key == info->key_len && salt == info->salt_len) ||
		      (key == (size_t)info->key_len + info->salt_len && salt == 0))) {
			snprintf(
				err, errlen,
				"%s needs a %u-byte crypto-key and a %u-byte salt, or a "
				"%u-byte crypto-key (key and salt); got %zu-byte key, %zu-byte salt",
				info->name, info->key_len, info->salt_len,
				info->key_len + info->salt_len, key, salt);
			return -1;
		}
	} else if (key != info->key_len || integ != info->integ_key_len || salt != 0) {
		if (info->key_len == 0)
			snprintf(err, errlen,
				 "%s takes no crypto-key; it needs a %u-byte "
				 "integ-key and no salt; got %zu, %zu and %zu bytes",
				 info->name, info->integ_key_len, key, integ, salt);
		else
			snprintf(err, errlen,
				 "%s needs a %u-byte crypto-key, a %u-byte integ-key and no salt; "
				 "got %zu, %zu and %zu bytes",
				 info->name, info->key_len, info->integ_key_len, key, integ, salt);
		return -1;
	}
	return 0;
}

int esgw_check_sa(const Esgw__Sa *sa, char *err, size_t errlen)
{
	const struct esp_alg_info *info;

	if (sa->id == 0) {
		snprintf(err, errlen, "SA id 0 is reserved: use 1 or more");
		return -1;
	}
	if (sa->spi < ESGW_MIN_SPI) {
		snprintf(err, errlen, "SPI %u is reserved (RFC 4303): use %u or more", sa->spi,
			 ESGW_MIN_SPI);
		return -1;
	}
	info = esp_alg_lookup((unsigned int)sa->algorithm);
	if (info == NULL) {
		snprintf(err, errlen, "unknown algorithm (use one of: %s)", esgw_algorithm_list());
		return -1;
	}
	if (check_key_lengths(sa, info, err, errlen) < 0 || check_lifetimes(sa, err, errlen) < 0)
		return -1;
	if (sa->udp_sport > 65535 || sa->udp_dport > 65535 ||
	    (!sa->udp_encap && (sa->udp_sport != 0 || sa->udp_dport != 0))) {
		snprintf(err, errlen, "UDP ports go with 'encap udp' and are 1..65535");
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

int esgw_check_neighbor(const Esgw__Neighbor *n, bool need_mac, char *err, size_t errlen)
{
	static const uint8_t zero[6];
	uint8_t mac[6];

	if (esgw_check_name(n->interface, "interface name", err, errlen) < 0 ||
	    esgw_check_address(n->address, "neighbor address", err, errlen) < 0)
		return -1;
	if (!need_mac)
		return 0;
	if (esgw_parse_mac(n->mac, mac) < 0) {
		snprintf(err, errlen, "'%.40s' is not a MAC address like 02:00:00:00:00:01",
			 n->mac ? n->mac : "");
		return -1;
	}
	if ((mac[0] & 1) || memcmp(mac, zero, 6) == 0) {
		snprintf(err, errlen, "MAC %s is multicast or zero: a neighbor needs a unicast one",
			 n->mac);
		return -1;
	}
	return 0;
}
