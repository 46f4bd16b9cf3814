/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum (RFC 1071) every header of ours needs: over bytes, as
 * an update after one word changed (RFC 1624), and over an IPv6 upper-layer
 * message with its pseudo-header (RFC 8200 8.1). Values are in host order, to
 * be stored big-endian. No DPDK here: the router's header checks and the
 * worker's ESP core share it, and the unit tests link it alone. */
#ifndef ESGW_CHECKSUM_H
#define ESGW_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "byteorder.h"

/* The 32-bit sum of the big-endian 16-bit words of len bytes, added to sum;
 * an odd last byte counts as the high half of a word. Summed four bytes at a
 * time in the CPU's own order and byte-swapped once at the end (RFC 1071
 * 2(B): the one's complement sum does not depend on the byte order), which
 * is what returns: a folded value congruent to the big-endian sum, so the
 * checksum made of it is the same. Loads of any alignment (memcpy). */
static inline uint32_t checksum_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	uint64_t acc = 0;
	uint32_t word;
	uint16_t half;

	for (; len >= 4; p += 4, len -= 4) {
		memcpy(&word, p, 4);
		acc += word;
	}
	if (len >= 2) {
		memcpy(&half, p, 2);
		acc += half;
		p += 2;
		len -= 2;
	}
	if (len) {
		half = 0;
		memcpy(&half, p, 1); /* the high half of a big-endian word */
		acc += half;
	}
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	half = (uint16_t)acc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	half = __builtin_bswap16(half);
#endif
	return sum + half;
}

static inline uint16_t checksum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The checksum of len bytes: the value to store in a checksum field that was
 * 0 while summed; 0 over a header whose stored checksum is right. */
static inline uint16_t checksum_inet(const void *p, size_t len)
{
	return (uint16_t)~checksum_fold(checksum_sum(p, len, 0));
}

/* RFC 1624 eqn. 3: the checksum after one 16-bit word changed. */
static inline uint16_t checksum_adjust(uint16_t checksum, uint16_t old_word, uint16_t new_word)
{
	/* HC' = ~(~HC + ~m + m') — unlike RFC 1141's shortcut this never
	 * produces 0xffff from a valid header. */
	uint32_t sum = (uint16_t)~checksum + (uint32_t)(uint16_t)~old_word + new_word;

	return (uint16_t)~checksum_fold(sum);
}

/* A router's hop on the IPv4 header at ip: its TTL (byte 8) one less and
 * its header checksum (bytes 10-11) adjusted to match; TTL and protocol
 * share a word of the checksum. The caller checked the TTL is above 1. */
static inline void checksum_ipv4_ttl_decrement(uint8_t *ip)
{
	uint16_t old_word = (uint16_t)(ip[8] << 8 | ip[9]);
	uint16_t sum = checksum_adjust(read_be16(ip + 10), old_word, (uint16_t)(old_word - 0x0100));

	ip[8]--;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
}

/* The checksum of an upper-layer message of len bytes (its checksum field
 * counted as it is: 0 when computing one) between IPv6 addresses src and dst,
 * next header proto: pseudo-header and message. */
static inline uint16_t checksum_ipv6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto,
				     const void *msg, uint32_t len)
{
	uint32_t sum = checksum_sum(src, 16, 0);

	sum = checksum_sum(dst, 16, sum);
	sum += len >> 16;
	sum += len & 0xffff;
	sum += proto;
	return (uint16_t)~checksum_fold(checksum_sum(msg, len, sum));
}

#endif
