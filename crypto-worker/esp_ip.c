/* SPDX-License-Identifier: BSD-3-Clause */
/* The IP layers around ESP in tunnel mode: IPv4 or IPv6 inner packets (next
 * header 4 or 41, RFC 4303 2.6) and IPv4 or IPv6 outer headers (RFC 4301
 * 5.1.2), so that esp_encap.c and esp_decap.c stay free of address families. */
#include "esp.h"

#include <endian.h>
#include <string.h>

#define OUTER_TTL 64
#define IPPROTO_ESP_NUMBER 50
#define IPV4_MF_AND_OFFSET 0x3fff

int esp_ip_inner_parse(const uint8_t *p, unsigned int avail, unsigned int *len,
		       uint8_t *next_header)
{
	unsigned int total;

	if (avail < 1)
		return -1;
	switch (p[0] >> 4) {
	case 4:
		if (avail < ESP_IPV4_HDR_LEN)
			return -1;
		total = read_be16(p + 2);
		if (total < ESP_IPV4_HDR_LEN)
			return -1;
		*next_header = ESP_NEXT_HEADER_IPV4;
		break;
	case 6:
		if (avail < ESP_IPV6_HDR_LEN)
			return -1;
		total = ESP_IPV6_HDR_LEN + read_be16(p + 4);
		*next_header = ESP_NEXT_HEADER_IPV6;
		break;
	default:
		return -1;
	}
	if (total > avail)
		return -1;
	*len = total;
	return 0;
}

uint8_t esp_ip_inner_tos(const uint8_t *p)
{
	/* IPv6 traffic class straddles the first two bytes. */
	return (p[0] >> 4) == 6 ? (uint8_t)(p[0] << 4 | p[1] >> 4) : p[1];
}

/* RFC 1071 of the outer header from the values in registers rather than
 * reading back the bytes just stored (ten byte-pair loads that waited on store
 * forwarding); the checksum field itself counts as 0. */
static uint16_t outer_ipv4_checksum(const struct esp_sa *sa, uint8_t tos, unsigned int total_len,
				    uint16_t id)
{
	uint32_t src = be32toh(sa->outer_src), dst = be32toh(sa->outer_dst);
	uint32_t sum = (0x45u << 8 | tos) + (total_len & 0xffff) + id +
		       (OUTER_TTL << 8 | IPPROTO_ESP_NUMBER) + (src >> 16) + (src & 0xffff) +
		       (dst >> 16) + (dst & 0xffff);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void esp_ip_outer_write(struct esp_sa *sa, uint8_t *ip, uint8_t tos, unsigned int total_len)
{
	uint16_t id;

	if (sa->outer_ipv6) {
		ip[0] = (uint8_t)(0x60 | tos >> 4);
		ip[1] = (uint8_t)(tos << 4); /* flow label 0 */
		ip[2] = 0;
		ip[3] = 0;
		write_be16(ip + 4, (uint16_t)(total_len - ESP_IPV6_HDR_LEN));
		ip[6] = IPPROTO_ESP_NUMBER;
		ip[7] = OUTER_TTL;
		memcpy(ip + 8, sa->outer6_src, 16);
		memcpy(ip + 24, sa->outer6_dst, 16);
		return;
	}
	id = sa->ip_id++;
	ip[0] = 0x45;
	ip[1] = tos; /* DSCP and ECN copied from the inner header (RFC 4301 5.1.2.1, RFC 6040) */
	write_be16(ip + 2, (uint16_t)total_len);
	write_be16(ip + 4, id);
	write_be16(ip + 6, 0); /* no DF: the outer packet may be fragmented on the path */
	ip[8] = OUTER_TTL;
	ip[9] = IPPROTO_ESP_NUMBER;
	memcpy(ip + 12, &sa->outer_src, 4);
	memcpy(ip + 16, &sa->outer_dst, 4);
	write_be16(ip + 10, outer_ipv4_checksum(sa, tos, total_len, id));
}

int esp_ip_outer_parse(const uint8_t *ip, unsigned int avail, unsigned int *header_len,
		       unsigned int *total_len)
{
	unsigned int ihl, total;

	if (avail < 1)
		return -1;
	if ((ip[0] >> 4) == 6) {
		/* ESP right behind the fixed header: the router sends nothing
		 * else here (extension headers are refused before). */
		if (avail < ESP_IPV6_HDR_LEN || ip[6] != IPPROTO_ESP_NUMBER)
			return -1;
		total = ESP_IPV6_HDR_LEN + read_be16(ip + 4);
		if (total > avail)
			return -1;
		*header_len = ESP_IPV6_HDR_LEN;
		*total_len = total;
		return 0;
	}
	if (avail < ESP_IPV4_HDR_LEN || (ip[0] >> 4) != 4)
		return -1;
	ihl = (ip[0] & 0x0fu) * 4u;
	total = read_be16(ip + 2);
	if (ihl < ESP_IPV4_HDR_LEN || total < ihl || total > avail)
		return -1;
	if (ip[9] != IPPROTO_ESP_NUMBER || (read_be16(ip + 6) & IPV4_MF_AND_OFFSET) != 0)
		return -1;
	*header_len = ihl;
	*total_len = total;
	return 0;
}

int esp_ip_inner_check(const uint8_t *p, unsigned int avail, uint8_t next_header, unsigned int *len,
		       enum esgw_drop *reason)
{
	unsigned int total;

	*reason = ESGW_DROP_BAD_NEXT_HEADER;
	if (next_header != ESP_NEXT_HEADER_IPV4 && next_header != ESP_NEXT_HEADER_IPV6)
		return -1;
	*reason = ESGW_DROP_MALFORMED;
	/* The next header must agree with the packet's own version: a
	 * mismatch means a broken or hostile peer. */
	if (next_header == ESP_NEXT_HEADER_IPV4) {
		if (avail < ESP_IPV4_HDR_LEN || (p[0] >> 4) != 4)
			return -1;
		total = read_be16(p + 2);
		if (total < ESP_IPV4_HDR_LEN)
			return -1;
	} else {
		if (avail < ESP_IPV6_HDR_LEN || (p[0] >> 4) != 6)
			return -1;
		total = ESP_IPV6_HDR_LEN + read_be16(p + 4);
	}
	if (total > avail)
		return -1;
	*len = total;
	return 0;
}
