/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing and formatting of the textual values in the API and CLI: IPv4 and
 * IPv6 addresses and prefixes, MAC addresses, hex key strings; and struct
 * esgw_addr, an address or prefix of either family in the binary form the
 * internal configuration channel carries (proto/dataplane.proto). Pure
 * functions; every parser returns 0 on success or -1 on bad input. */
#ifndef ESGW_ADDR_H
#define ESGW_ADDR_H

#include <stddef.h>
#include <stdint.h>

/* Addresses are host byte order uint32_t throughout the control path. */
int esgw_parse_ipv4(const char *s, uint32_t *addr);
/* "10.0.0.1/24" -> addr 10.0.0.1, len 24. A bare address means /32. */
int esgw_parse_prefix(const char *s, uint32_t *addr, uint8_t *len);
uint32_t esgw_prefix_mask(uint8_t len);
/* Formats into buf (at least 16 bytes), returns buf. */
char *esgw_fmt_ipv4(uint32_t addr, char *buf);

/* IPv6: addresses are 16 bytes in network byte order. */
#define ESGW_IPV6_STRLEN 46 /* INET6_ADDRSTRLEN */
int esgw_parse_ipv6(const char *s, uint8_t addr[16]);
/* "2001:db8::1/64" -> addr, len 64. A bare address means /128. */
int esgw_parse_prefix6(const char *s, uint8_t addr[16], uint8_t *len);
/* Whether a and b agree on their first len bits. */
int esgw_prefix6_match(const uint8_t a[16], const uint8_t b[16], uint8_t len);
/* Clears the bits of addr beyond len. */
void esgw_prefix6_clear_host(uint8_t addr[16], uint8_t len);
/* Formats (RFC 5952 form, as inet_ntop) into buf (ESGW_IPV6_STRLEN bytes). */
char *esgw_fmt_ipv6(const uint8_t addr[16], char *buf);
/* Whether s is written as an IPv6 address or prefix (contains ':'). */
int esgw_is_ipv6_text(const char *s);
/* "aa:bb:cc:dd:ee:ff" (hex digits in either case) into mac. */
int esgw_parse_mac(const char *s, uint8_t mac[6]);
/* Formats "aa:bb:cc:dd:ee:ff" into buf (at least 18 bytes), returns buf. */
char *esgw_fmt_mac(const uint8_t mac[6], char *buf);
/* An IPv4 or IPv6 address or prefix in binary: 4 or 16 bytes in network
 * byte order and a prefix length, as dataplane.proto's DpPrefix and address
 * fields carry them (the family follows from the byte count). */
struct esgw_addr {
	uint8_t family;    /* 4 or 6 */
	uint8_t len;       /* prefix length: 0..32 or 0..128; an address has the whole */
	uint8_t bytes[16]; /* an IPv4 address in the first 4, the rest zero */
};
#define ESGW_ADDR_STRLEN (ESGW_IPV6_STRLEN + 4) /* an IPv6 prefix with "/128" */
/* "10.0.0.1", "10.0.0.0/24", "2001:db8::1", "2001:db8::/32": either family,
 * with or without a length (none: the whole). */
int esgw_addr_parse(const char *s, struct esgw_addr *a);
/* The same with the length required: "ADDR/LEN" only. */
int esgw_addr_parse_prefix(const char *s, struct esgw_addr *a);
/* From n bytes (4: IPv4, 16: IPv6) and a prefix length no longer than the
 * family's; -1 for any other byte count or a longer length. */
int esgw_addr_from_bytes(struct esgw_addr *a, const uint8_t *bytes, size_t n, uint32_t len);
/* The number of address bytes: 4 or 16. */
size_t esgw_addr_size(const struct esgw_addr *a);
/* An IPv4 address in host byte order (0 for IPv6). */
uint32_t esgw_addr_ipv4(const struct esgw_addr *a);
/* Clears the bits beyond the prefix length. */
void esgw_addr_clear_host(struct esgw_addr *a);
/* Canonical text (inet_ntop's, RFC 5952 for IPv6) into buf of
 * ESGW_ADDR_STRLEN bytes, with "/LEN" when with_len; returns buf. */
char *esgw_addr_format(const struct esgw_addr *a, int with_len, char *buf);
/* Hex string (optional 0x prefix) into at most max bytes; sets *len. */
int esgw_parse_hex(const char *s, uint8_t *out, size_t max, size_t *len);
/* Unsigned decimal or 0x-hex number no larger than max. */
int esgw_parse_u32(const char *s, uint32_t max, uint32_t *out);

#endif
