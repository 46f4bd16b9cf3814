/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing and formatting of IPv4 and IPv6 addresses, prefixes, MACs and hex
 * keys, and struct esgw_addr, the binary form of an address of either family. */
#include "addr.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int esgw_parse_ipv4(const char *s, uint32_t *addr)
{
	struct in_addr in;

	if (s == NULL || inet_pton(AF_INET, s, &in) != 1)
		return -1;
	*addr = ntohl(in.s_addr);
	return 0;
}

/* "ADDR/LEN" or "ADDR": the address text into buf, the length (max when
 * there is none, at most max) into *plen. */
static int prefix_split(const char *s, char *buf, size_t size, uint32_t max, uint32_t *plen)
{
	const char *slash;

	if (s == NULL || strlen(s) >= size)
		return -1;
	strcpy(buf, s);
	*plen = max;
	slash = strchr(s, '/');
	if (slash == NULL)
		return 0;
	buf[slash - s] = '\0';
	return esgw_parse_u32(slash + 1, max, plen);
}

int esgw_parse_prefix(const char *s, uint32_t *addr, uint8_t *len)
{
	char buf[32];
	uint32_t plen;

	if (prefix_split(s, buf, sizeof(buf), 32, &plen) < 0 || esgw_parse_ipv4(buf, addr) < 0)
		return -1;
	*len = (uint8_t)plen;
	return 0;
}

int esgw_parse_ipv6(const char *s, uint8_t addr[16])
{
	struct in6_addr in;

	if (s == NULL || inet_pton(AF_INET6, s, &in) != 1)
		return -1;
	memcpy(addr, in.s6_addr, 16);
	return 0;
}

int esgw_parse_prefix6(const char *s, uint8_t addr[16], uint8_t *len)
{
	char buf[64];
	uint32_t plen;

	if (prefix_split(s, buf, sizeof(buf), 128, &plen) < 0 || esgw_parse_ipv6(buf, addr) < 0)
		return -1;
	*len = (uint8_t)plen;
	return 0;
}

int esgw_prefix6_match(const uint8_t a[16], const uint8_t b[16], uint8_t len)
{
	unsigned int bytes = len / 8, bits = len % 8;

	if (len > 128)
		return 0;
	if (memcmp(a, b, bytes) != 0)
		return 0;
	return bits == 0 || ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - bits))) == 0;
}

void esgw_prefix6_clear_host(uint8_t addr[16], uint8_t len)
{
	for (unsigned int i = 0; i < 16; i++) {
		if (len >= 8 * (i + 1))
			continue;
		addr[i] &= len > 8 * i ? (uint8_t)(0xff << (8 - (len - 8 * i))) : 0;
	}
}

char *esgw_fmt_ipv6(const uint8_t addr[16], char *buf)
{
	if (inet_ntop(AF_INET6, addr, buf, ESGW_IPV6_STRLEN) == NULL)
		strcpy(buf, "?");
	return buf;
}

int esgw_is_ipv6_text(const char *s)
{
	return s != NULL && strchr(s, ':') != NULL;
}

uint32_t esgw_prefix_mask(uint8_t len)
{
	return len == 0 ? 0 : len >= 32 ? 0xffffffffu : ~((1u << (32 - len)) - 1);
}

char *esgw_fmt_ipv4(uint32_t addr, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
		 addr & 0xff);
	return buf;
}

char *esgw_fmt_mac(const uint8_t mac[6], char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
	return buf;
}

int esgw_addr_parse(const char *s, struct esgw_addr *a)
{
	uint32_t ip;

	memset(a, 0, sizeof(*a));
	if (esgw_is_ipv6_text(s)) {
		a->family = 6;
		return esgw_parse_prefix6(s, a->bytes, &a->len);
	}
	a->family = 4;
	if (esgw_parse_prefix(s, &ip, &a->len) < 0)
		return -1;
	ip = htonl(ip);
	memcpy(a->bytes, &ip, 4);
	return 0;
}

int esgw_addr_parse_prefix(const char *s, struct esgw_addr *a)
{
	if (s == NULL || strchr(s, '/') == NULL) {
		memset(a, 0, sizeof(*a));
		return -1;
	}
	return esgw_addr_parse(s, a);
}

int esgw_addr_from_bytes(struct esgw_addr *a, const uint8_t *bytes, size_t n, uint32_t len)
{
	memset(a, 0, sizeof(*a));
	if ((n != 4 && n != 16) || bytes == NULL || len > 8 * n)
		return -1;
	a->family = n == 4 ? 4 : 6;
	a->len = (uint8_t)len;
	memcpy(a->bytes, bytes, n);
	return 0;
}

size_t esgw_addr_size(const struct esgw_addr *a)
{
	return a->family == 4 ? 4 : 16;
}

uint32_t esgw_addr_ipv4(const struct esgw_addr *a)
{
	uint32_t ip;

	if (a->family != 4)
		return 0;
	memcpy(&ip, a->bytes, 4);
	return ntohl(ip);
}

void esgw_addr_clear_host(struct esgw_addr *a)
{
	/* Network byte order: an IPv4 prefix clears like the first 4 bytes of
	 * an IPv6 one, and the other 12 are zero. */
	esgw_prefix6_clear_host(a->bytes, a->len);
}

char *esgw_addr_format(const struct esgw_addr *a, int with_len, char *buf)
{
	char text[ESGW_IPV6_STRLEN];

	if (a->family == 4)
		esgw_fmt_ipv4(esgw_addr_ipv4(a), text);
	else
		esgw_fmt_ipv6(a->bytes, text);
	if (with_len)
		snprintf(buf, ESGW_ADDR_STRLEN, "%s/%u", text, a->len);
	else
		snprintf(buf, ESGW_ADDR_STRLEN, "%s", text);
	return buf;
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int esgw_parse_mac(const char *s, uint8_t mac[6])
{
	if (s == NULL)
		return -1;
	for (int i = 0; i < 6; i++, s += 3) {
		int hi = hex_digit((unsigned char)s[0]),
		    lo = hi < 0 ? -1 : hex_digit((unsigned char)s[1]);

		if (lo < 0 || s[2] != (i == 5 ? '\0' : ':'))
			return -1;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int esgw_parse_hex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n, i;

	if (s == NULL)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	n = strlen(s);
	if (n == 0 || n % 2 != 0 || n / 2 > max)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hex_digit((unsigned char)s[2 * i]),
		    lo = hex_digit((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

int esgw_parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}
