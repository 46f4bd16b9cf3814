/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing and formatting of the textual values in the API and CLI: IPv4
 * addresses and prefixes, MAC addresses, hex key strings. Pure functions; every
 * parser returns 0 on success or -1 on bad input. */
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
/* Formats "aa:bb:cc:dd:ee:ff" into buf (at least 18 bytes), returns buf. */
char *esgw_fmt_mac(const uint8_t mac[6], char *buf);
/* Hex string (optional 0x prefix) into at most max bytes; sets *len. */
int esgw_parse_hex(const char *s, uint8_t *out, size_t max, size_t *len);
/* Unsigned decimal or 0x-hex number no larger than max. */
int esgw_parse_u32(const char *s, uint32_t max, uint32_t *out);

#endif
