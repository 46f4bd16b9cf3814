/* SPDX-License-Identifier: BSD-3-Clause */
/* Pure parsing and validation of the ARP, IPv4, ICMP and ESP headers the router
 * reads, over the header structs of common/packet.h, and the ICMP, ICMPv6 and
 * ND numbers it speaks. DPDK's header types only, no DPDK call: these take
 * header pointers and lengths so that unit tests can feed them edge cases. */
#ifndef ESGW_ROUTER_HEADERS_H
#define ESGW_ROUTER_HEADERS_H

#include <stddef.h>
#include <stdint.h>

#include "drops.h"
#include "packet.h"

#define ARP_MESSAGE_LEN 28 /* Ethernet/IPv4 ARP, without the Ethernet header */
#define ARP_OP_REQUEST RTE_ARP_OP_REQUEST
#define ARP_OP_REPLY RTE_ARP_OP_REPLY
_Static_assert(sizeof(struct rte_arp_hdr) == ARP_MESSAGE_LEN, "rte_arp_hdr");

#define ICMP_ECHO_REPLY 0
#define ICMP_DEST_UNREACHABLE 3
#define ICMP_ECHO_REQUEST 8
#define ICMP_TIME_EXCEEDED 11

#define ICMP6_DEST_UNREACHABLE 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ND_NEIGHBOR_SOLICIT 135
#define ND_NEIGHBOR_ADVERT 136
#define IPV6_MIN_MTU 1280

/* An Ethernet/IPv4 ARP message; addresses in host byte order. */
struct arp_message {
	uint16_t op;
	uint8_t sender_mac[6];
	uint32_t sender_ip;
	uint8_t target_mac[6];
	uint32_t target_ip;
};

/* Parse the ARP payload after the Ethernet header (len bytes). Returns 0, or
 * -1 if it is truncated, not Ethernet/IPv4, or neither a request nor a reply. */
int headers_arp_parse(const struct rte_arp_hdr *arp, size_t len, struct arp_message *msg);
/* Write an ARP message (ARP_MESSAGE_LEN bytes) at arp. */
void headers_arp_write(struct rte_arp_hdr *arp, const struct arp_message *msg);

/* Check an IPv4 header: version, header length, total length against
 * packet_len (bytes from the header to the end of the packet), checksum.
 * header_avail is how many contiguous bytes ip points at. Returns 0 and the
 * total length, or -1 and the drop reason (MALFORMED, BAD_IP_CHECKSUM). */
int headers_ipv4_check(const struct rte_ipv4_hdr *ip, size_t header_avail, size_t packet_len,
		       uint16_t *total_len, enum esgw_drop *reason);
/* Decrement the TTL of a valid header with TTL > 1 and patch its checksum. */
void headers_ipv4_decrement_ttl(struct rte_ipv4_hdr *ip);
/* Write a 20-byte IPv4 header without options, checksum filled in. */
void headers_ipv4_write(struct rte_ipv4_hdr *ip, uint16_t total_len, uint8_t ttl, uint8_t proto,
			uint32_t src, uint32_t dst);

/* A fragment (more follow, or not the first): only a first fragment or an
 * unfragmented packet carries the L4 header. */
static inline int headers_ipv4_is_fragment(const struct rte_ipv4_hdr *ip)
{
	return (rte_be_to_cpu_16(ip->fragment_offset) & IPV4_FRAGMENT_BITS) != 0;
}

/* Addresses to which a router never sends an ICMP error and never forwards
 * from: 0/8, 127/8, multicast, class E and limited broadcast. */
int headers_ipv4_martian_source(uint32_t addr);
/* Multicast or limited broadcast: never forwarded by a unicast router. */
int headers_ipv4_multicast_or_broadcast(uint32_t addr);

/* The SPI of an ESP header of len bytes, which needs at least ESP_HDR_LEN.
 * Returns 0, or -1 if truncated. Reserved SPIs are simply never found in the
 * SA table. */
int headers_esp_spi(const struct rte_esp_hdr *esp, size_t len, uint32_t *spi);

/* Whether an ICMP message may be answered with an ICMP error (RFC 1812
 * 4.3.2.7: never about an ICMP error). len is the ICMP message length. */
int headers_icmp_is_error(const struct rte_icmp_hdr *icmp, size_t len);

#endif
