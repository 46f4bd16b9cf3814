/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet vocabulary of the dataplane: the header structs are DPDK's
 * (struct rte_ether_hdr, rte_arp_hdr, rte_ipv4_hdr, rte_ipv6_hdr and its
 * fragment header rte_ipv6_fragment_ext, rte_udp_hdr, rte_icmp_hdr for ICMP
 * and ICMPv6 alike, rte_esp_hdr), the protocol numbers netinet/in.h's
 * (IPPROTO_ESP, IPPROTO_UDP, ...), and this file adds their lengths and the
 * helpers both IP families need. The structs are packed, so a pointer to
 * one may sit at any byte of a packet; their fields are big-endian, read
 * with rte_be_to_cpu_16() and friends (byte strings at any offset:
 * byteorder.h). Header types only: no DPDK call is made through this file,
 * so the ESP core and the router's header checks stay EAL-free. */
#ifndef ESGW_PACKET_H
#define ESGW_PACKET_H

#include <stdint.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_esp.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "byteorder.h"
#include "checksum.h"

/* The fixed part of each header (IPv4 without options, ICMP and ICMPv6 with
 * their second word), as constants for array sizes and offsets. */
#define IPV4_HDR_LEN 20
#define IPV6_HDR_LEN 40
#define IPV6_FRAG_HDR_LEN 8
#define UDP_HDR_LEN 8
#define ICMP_HDR_LEN 8
#define ESP_HDR_LEN 8 /* SPI and sequence number */

_Static_assert(sizeof(struct rte_ipv4_hdr) == IPV4_HDR_LEN, "rte_ipv4_hdr");
_Static_assert(sizeof(struct rte_ipv6_hdr) == IPV6_HDR_LEN, "rte_ipv6_hdr");
_Static_assert(sizeof(struct rte_ipv6_fragment_ext) == IPV6_FRAG_HDR_LEN, "rte_ipv6_fragment_ext");
_Static_assert(sizeof(struct rte_udp_hdr) == UDP_HDR_LEN, "rte_udp_hdr");
_Static_assert(sizeof(struct rte_icmp_hdr) == ICMP_HDR_LEN, "rte_icmp_hdr");
_Static_assert(sizeof(struct rte_esp_hdr) == ESP_HDR_LEN, "rte_esp_hdr");
_Static_assert(sizeof(struct rte_ether_hdr) == RTE_ETHER_HDR_LEN, "rte_ether_hdr");

/* The IPv4 flags and offset word: a fragment (more fragments, or not the
 * first) has one of these set. */
#define IPV4_FRAGMENT_BITS (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)

/* 4 or 6 for an IP header of either family (the first nibble of both). */
static inline unsigned int packet_ip_version(const void *ip)
{
	return *(const uint8_t *)ip >> 4;
}

/* The bytes an IP header of either family takes before its payload (IPv6:
 * the fixed header; the caller has checked the version and, for IPv4, that
 * the header length is in the buffer). */
static inline unsigned int packet_ip_header_len(const void *ip, int is_ip6)
{
	return is_ip6 ? IPV6_HDR_LEN : rte_ipv4_hdr_len((const struct rte_ipv4_hdr *)ip);
}

/* The length an IP packet of either family says it has (IPv6: the fixed
 * header and its payload length); the caller has its first 6 bytes. */
static inline unsigned int packet_ip_total_len(const void *ip)
{
	if (packet_ip_version(ip) == 6)
		return IPV6_HDR_LEN +
		       rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)ip)->payload_len);
	return rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)ip)->total_length);
}

/* The next protocol of an IP header of either family (IPv6: the fixed
 * header's next header). */
static inline uint8_t packet_ip_proto(const void *ip, int is_ip6)
{
	return is_ip6 ? ((const struct rte_ipv6_hdr *)ip)->proto
		      : ((const struct rte_ipv4_hdr *)ip)->next_proto_id;
}

#endif
