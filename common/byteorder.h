/* SPDX-License-Identifier: BSD-3-Clause */
/* The one set of byte-order helpers for byte strings: big-endian loads and
 * stores at any alignment (addresses in a table, words a checksum sums, a
 * field past a variable-length header). Header fields are read through the
 * structs of packet.h with rte_byteorder's conversions instead. No DPDK here:
 * the control path and the unit tests use these too. */
#ifndef ESGW_BYTEORDER_H
#define ESGW_BYTEORDER_H

#include <stdint.h>

static inline uint16_t read_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t read_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void write_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void write_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif
