/* SPDX-License-Identifier: BSD-3-Clause */
/* The IP layers around ESP in tunnel mode: IPv4 or IPv6 inner packets (next
 * header 4 or 41, RFC 4303 2.6) and IPv4 or IPv6 outer headers (RFC 4301
 * 5.1.2), so that esp_encap.c and esp_decap.c stay free of address families. */
#include "esp.h"

#include <endian.h>
#include <string.h>

#define OUTER_TTL 64

int esp_ip_inner_parse(const uint8_t *p, unsigned int avail, unsigned int *len,
		       uint8_t *next_header)
{
	unsigned int total;

	if (avail < 1)
		return -1;
	switch (packet_ip_version(p)) {
	case 4:
		if (avail < IPV4_HDR_LEN)
			return -1;
		total = rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)p)->total_length);
		if (total < IPV4_HDR_LEN)
			return -1;
		*next_header = ESP_NEXT_HEADER_IPV4;
		break;
	case 6:
		if (avail < IPV6_HDR_LEN)
			return -1;
		total = IPV6_HDR_LEN +
			rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)p)->payload_len);
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
	/* IPv6's traffic class sits between the version and the flow label. */
	if (packet_ip_version(p) == 6)
		return (uint8_t)(rte_be_to_cpu_32(((const struct rte_ipv6_hdr *)p)->vtc_flow) >>
				 RTE_IPV6_HDR_TC_SHIFT);
	return ((const struct rte_ipv4_hdr *)p)->type_of_service;
}

/* RFC 1071 of the outer header from the values in registers rather than
 * reading back the bytes just stored (ten byte-pair loads that waited on store
 * forwarding); the checksum field itself counts as 0. */
static uint16_t outer_ipv4_checksum(const struct esp_sa *sa, uint8_t tos, unsigned int total_len,
				    uint16_t id)
{
	uint32_t src = be32toh(sa->outer_src), dst = be32toh(sa->outer_dst);
	uint32_t sum = (RTE_IPV4_VHL_DEF << 8 | tos) + (total_len & 0xffff) + id +
		       (OUTER_TTL << 8 | IPPROTO_ESP) + (src >> 16) + (src & 0xffff) + (dst >> 16) +
		       (dst & 0xffff);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void esp_ip_outer_write(struct esp_sa *sa, uint8_t *p, uint8_t tos, unsigned int total_len)
{
	uint16_t id;

	if (sa->outer_ipv6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;

		/* Version 6, the traffic class, flow label 0. */
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)tos << RTE_IPV6_HDR_TC_SHIFT);
		ip->payload_len = rte_cpu_to_be_16((uint16_t)(total_len - IPV6_HDR_LEN));
		ip->proto = IPPROTO_ESP;
		ip->hop_limits = OUTER_TTL;
		memcpy(ip->src_addr, sa->outer6_src, 16);
		memcpy(ip->dst_addr, sa->outer6_dst, 16);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;

		id = sa->ip_id++;
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		/* DSCP and ECN copied from the inner header (RFC 4301 5.1.2.1, RFC 6040) */
		ip->type_of_service = tos;
		ip->total_length = rte_cpu_to_be_16((uint16_t)total_len);
		ip->packet_id = rte_cpu_to_be_16(id);
		ip->fragment_offset = 0; /* no DF: the outer packet may be fragmented on the path */
		ip->time_to_live = OUTER_TTL;
		ip->next_proto_id = IPPROTO_ESP;
		ip->src_addr = sa->outer_src; /* network byte order already */
		ip->dst_addr = sa->outer_dst;
		ip->hdr_checksum = rte_cpu_to_be_16(outer_ipv4_checksum(sa, tos, total_len, id));
	}
}

int esp_ip_outer_parse(const uint8_t *p, unsigned int avail, unsigned int *header_len,
		       unsigned int *total_len)
{
	const struct rte_ipv4_hdr *ip4 = (const struct rte_ipv4_hdr *)p;
	unsigned int ihl, total;

	if (avail < 1)
		return -1;
	if (packet_ip_version(p) == 6) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)p;

		/* ESP right behind the fixed header: the router sends nothing
		 * else here (extension headers are refused before). */
		if (avail < IPV6_HDR_LEN || ip6->proto != IPPROTO_ESP)
			return -1;
		total = IPV6_HDR_LEN + rte_be_to_cpu_16(ip6->payload_len);
		if (total > avail)
			return -1;
		*header_len = IPV6_HDR_LEN;
		*total_len = total;
		return 0;
	}
	if (avail < IPV4_HDR_LEN || packet_ip_version(p) != 4)
		return -1;
	ihl = rte_ipv4_hdr_len(ip4);
	total = rte_be_to_cpu_16(ip4->total_length);
	if (ihl < IPV4_HDR_LEN || total < ihl || total > avail)
		return -1;
	if (ip4->next_proto_id != IPPROTO_ESP ||
	    (rte_be_to_cpu_16(ip4->fragment_offset) & IPV4_FRAGMENT_BITS) != 0)
		return -1;
	*header_len = ihl;
	*total_len = total;
	return 0;
}

int esp_ip_inner_check(const uint8_t *p, unsigned int avail, uint8_t next_header, unsigned int *len,
		       enum esgw_drop *reason)
{
	uint8_t own;

	*reason = ESGW_DROP_BAD_NEXT_HEADER;
	if (next_header != ESP_NEXT_HEADER_IPV4 && next_header != ESP_NEXT_HEADER_IPV6)
		return -1;
	/* The next header must agree with the packet's own version: a
	 * mismatch means a broken or hostile peer. */
	*reason = ESGW_DROP_MALFORMED;
	if (esp_ip_inner_parse(p, avail, len, &own) < 0 || own != next_header)
		return -1;
	return 0;
}
