/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum (common/checksum.h) against RFC 1071's definition,
 * word by word in big-endian order: every length from 0 to 80 at every
 * alignment of a 4-byte word, random and extreme bytes (all 0x00, all 0xff,
 * where the end-around carry decides), running sums carried in, a valid
 * header's checksum 0, and RFC 1071's own example. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "checksum.h"

/* RFC 1071 4.1, big-endian 16-bit words, the carries folded at the end. */
static uint16_t reference_inet(const uint8_t *p, size_t len, uint32_t sum)
{
	uint64_t acc = sum;

	for (; len >= 2; p += 2, len -= 2)
		acc += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		acc += (uint32_t)p[0] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)~acc;
}

static void test_lengths(const char *what, uint8_t (*fill)(unsigned int i))
{
	uint8_t buf[96];

	for (size_t align = 0; align < 4; align++)
		for (size_t len = 0; len + align <= 84; len++)
			for (uint32_t sum = 0; sum < 0x30000; sum += 0xffff) {
				uint8_t *p = buf + align;
				uint16_t carried;

				for (unsigned int i = 0; i < len; i++)
					p[i] = fill(i);
				CHECK(checksum_inet(p, len) == reference_inet(p, len, 0),
				      "%s: len %zu align %zu", what, len, align);
				carried = (uint16_t)~checksum_fold(checksum_sum(p, len, sum));
				CHECK(carried == reference_inet(p, len, sum),
				      "%s: len %zu align %zu sum %#x", what, len, align, sum);
			}
}

static uint8_t fill_zero(unsigned int i)
{
	(void)i;
	return 0;
}

static uint8_t fill_ones(unsigned int i)
{
	(void)i;
	return 0xff;
}

static uint8_t fill_random(unsigned int i)
{
	(void)i;
	return (uint8_t)rand();
}

/* An IPv4 header with its checksum stored sums to 0 (checked on receipt). */
static void test_header(void)
{
	uint8_t h[20] = {0x45, 0, 0,   84, 0x12, 0x34, 0x40, 0,  64,  1,
			 0,    0, 192, 0,  2,    1,    198,  51, 100, 7};
	uint16_t c = checksum_inet(h, sizeof(h));

	h[10] = (uint8_t)(c >> 8);
	h[11] = (uint8_t)c;
	CHECK(checksum_inet(h, sizeof(h)) == 0, "stored checksum %#x does not verify", c);
}

/* RFC 1071 3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2 (checksum 220d). */
static void test_rfc1071(void)
{
	static const uint8_t b[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};

	CHECK(checksum_fold(checksum_sum(b, sizeof(b), 0)) == 0xddf2, "RFC 1071 example: %#x",
	      checksum_fold(checksum_sum(b, sizeof(b), 0)));
	CHECK(checksum_inet(b, sizeof(b)) == 0x220d, "RFC 1071 example checksum");
}

int main(void)
{
	srand(1071);
	test_rfc1071();
	test_header();
	test_lengths("zeros", fill_zero);
	test_lengths("0xff", fill_ones);
	for (int round = 0; round < 50; round++)
		test_lengths("random", fill_random);
	return check_report("test_checksum");
}
