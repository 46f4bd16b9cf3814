/* SPDX-License-Identifier: BSD-3-Clause */
/* Pure parsing and validation of the ARP, IPv4, ICMP and ESP headers the router
 * reads, and the checksum arithmetic it needs. No DPDK here: these take byte
 * pointers and lengths so that unit tests can feed them edge cases. */
#ifndef ESGW_ROUTER_HEADERS_H
#define ESGW_ROUTER_HEADERS_H

#include <stddef.h>
#include <stdint.h>

#include "byteorder.h"
#include "checksum.h"
#include "drops.h"

#define ETHER_HEADER_LEN 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806

#define ARP_MESSAGE_LEN 28 /* Ethernet/IPv4 ARP, without the Ethernet header */
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2

#define IPV4_MIN_HEADER_LEN 20
#define IPPROTO_ICMP_NUM 1
#define IPPROTO_ESP_NUM 50
#define IPPROTO_UDP_NUM 17
#define IPPROTO_TCP_NUM 6

#define ICMP_HEADER_LEN 8
#define ICMP_ECHO_REPLY 0
#define ICMP_DEST_UNREACHABLE 3
#define ICMP_ECHO_REQUEST 8
#define ICMP_TIME_EXCEEDED 11

#define ESP_MIN_HEADER_LEN 8 /* SPI + sequence number */

/* An Ethernet/IPv4 ARP message; addresses in host byte order. */
struct arp_message {
	uint16_t op;
	uint8_t sender_mac[6];
	uint32_t sender_ip;
	uint8_t target_mac[6];
	uint32_t target_ip;
};

/* Parse the ARP payload after the Ethernet header. Returns 0, or -1 if it is
 * truncated, not Ethernet/IPv4, or neither a request nor a reply. */
int arp_parse(const uint8_t *p, size_t len, struct arp_message *msg);
/* Write an ARP message (ARP_MESSAGE_LEN bytes) at p. */
void arp_write(uint8_t *p, const struct arp_message *msg);

/* Check an IPv4 header: version, header length, total length against
 * packet_len (bytes from the header to the end of the packet), checksum.
 * header_avail is how many contiguous bytes p points at. Returns 0 and the
 * total length, or -1 and the drop reason (MALFORMED, BAD_IP_CHECKSUM). */
int ipv4_check(const uint8_t *p, size_t header_avail, size_t packet_len, uint16_t *total_len,
	       enum esgw_drop *reason);
/* Decrement the TTL of a valid header with TTL > 1 and patch its checksum. */
void ipv4_decrement_ttl(uint8_t *ip);
/* Write a 20-byte IPv4 header without options, checksum filled in. */
void ipv4_write_header(uint8_t *p, uint16_t total_len, uint8_t ttl, uint8_t proto, uint32_t src,
		       uint32_t dst);

/* A first fragment or an unfragmented packet: only those carry the L4 header. */
static inline int ipv4_is_fragment(const uint8_t *ip)
{
	return (read_be16(ip + 6) & 0x3fff) != 0; /* MF or offset */
}

/* Addresses to which a router never sends an ICMP error and never forwards
 * from: 0/8, 127/8, multicast, class E and limited broadcast. */
int ipv4_is_martian_source(uint32_t addr);
/* Multicast or limited broadcast: never forwarded by a unicast router. */
int ipv4_is_multicast_or_broadcast(uint32_t addr);

/* The SPI of an ESP header, which needs at least ESP_MIN_HEADER_LEN bytes.
 * Returns 0, or -1 if truncated. Reserved SPIs are simply never found in the
 * SA table. */
int esp_parse_spi(const uint8_t *esp, size_t len, uint32_t *spi);

/* Whether an ICMP message may be answered with an ICMP error (RFC 1812
 * 4.3.2.7: never about an ICMP error). len is the ICMP message length. */
int icmp_is_error(const uint8_t *icmp, size_t len);

#endif
