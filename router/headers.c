/* SPDX-License-Identifier: BSD-3-Clause */
/* Header parsing, validation and checksum arithmetic for the router. */
#include "headers.h"

#include <string.h>

int arp_parse(const uint8_t *p, size_t len, struct arp_message *msg)
{
	if (len < ARP_MESSAGE_LEN)
		return -1;
	/* hardware Ethernet (1), protocol IPv4, 6-byte and 4-byte addresses */
	if (read_be16(p) != 1 || read_be16(p + 2) != ETHERTYPE_IPV4 || p[4] != 6 || p[5] != 4)
		return -1;
	msg->op = read_be16(p + 6);
	if (msg->op != ARP_OP_REQUEST && msg->op != ARP_OP_REPLY)
		return -1;
	memcpy(msg->sender_mac, p + 8, 6);
	msg->sender_ip = read_be32(p + 14);
	memcpy(msg->target_mac, p + 18, 6);
	msg->target_ip = read_be32(p + 24);
	return 0;
}

void arp_write(uint8_t *p, const struct arp_message *msg)
{
	write_be16(p, 1);
	write_be16(p + 2, ETHERTYPE_IPV4);
	p[4] = 6;
	p[5] = 4;
	write_be16(p + 6, msg->op);
	memcpy(p + 8, msg->sender_mac, 6);
	write_be32(p + 14, msg->sender_ip);
	memcpy(p + 18, msg->target_mac, 6);
	write_be32(p + 24, msg->target_ip);
}

int ipv4_check(const uint8_t *p, size_t header_avail, size_t packet_len, uint16_t *total_len,
	       enum esgw_drop *reason)
{
	size_t ihl;

	*reason = ESGW_DROP_MALFORMED;
	if (header_avail < IPV4_MIN_HEADER_LEN || packet_len < IPV4_MIN_HEADER_LEN)
		return -1;
	if ((p[0] >> 4) != 4)
		return -1;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	if (ihl < IPV4_MIN_HEADER_LEN || ihl > header_avail)
		return -1;
	*total_len = read_be16(p + 2);
	/* Shorter than its header, or longer than what arrived. Longer frames
	 * are fine: Ethernet pads short packets, the caller trims. */
	if (*total_len < ihl || *total_len > packet_len)
		return -1;
	if (checksum_inet(p, ihl) != 0) {
		*reason = ESGW_DROP_BAD_IP_CHECKSUM;
		return -1;
	}
	return 0;
}

void ipv4_decrement_ttl(uint8_t *ip)
{
	uint16_t old_word = read_be16(ip + 8); /* TTL and protocol share a word */
	uint16_t new_word = (uint16_t)(old_word - 0x0100);

	ip[8]--;
	write_be16(ip + 10, checksum_adjust(read_be16(ip + 10), old_word, new_word));
}

void ipv4_write_header(uint8_t *p, uint16_t total_len, uint8_t ttl, uint8_t proto, uint32_t src,
		       uint32_t dst)
{
	p[0] = 0x45;
	p[1] = 0;
	write_be16(p + 2, total_len);
	write_be16(p + 4, 0); /* id: unfragmented, DF set */
	write_be16(p + 6, 0x4000);
	p[8] = ttl;
	p[9] = proto;
	write_be16(p + 10, 0);
	write_be32(p + 12, src);
	write_be32(p + 16, dst);
	write_be16(p + 10, checksum_inet(p, IPV4_MIN_HEADER_LEN));
}

int ipv4_is_martian_source(uint32_t addr)
{
	uint8_t first = addr >> 24;

	return first == 0 || first == 127 || first >= 224;
}

int ipv4_is_multicast_or_broadcast(uint32_t addr)
{
	return (addr >> 28) == 0xe || addr == 0xffffffffu;
}

int esp_parse_spi(const uint8_t *esp, size_t len, uint32_t *spi)
{
	if (len < ESP_MIN_HEADER_LEN)
		return -1;
	*spi = read_be32(esp);
	return 0;
}

int icmp_is_error(const uint8_t *icmp, size_t len)
{
	if (len < 1)
		return 1; /* unknown: be conservative and stay silent */
	switch (icmp[0]) {
	case ICMP_ECHO_REPLY:
	case ICMP_ECHO_REQUEST:
	case 13: /* timestamp */
	case 14:
		return 0;
	default:
		return 1;
	}
}
