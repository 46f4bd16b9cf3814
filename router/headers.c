/* SPDX-License-Identifier: BSD-3-Clause */
/* Header parsing and validation for the router. */
#include "headers.h"

#include <string.h>

int headers_arp_parse(const struct rte_arp_hdr *arp, size_t len, struct arp_message *msg)
{
	if (len < ARP_MESSAGE_LEN)
		return -1;
	/* hardware Ethernet, protocol IPv4, 6-byte and 4-byte addresses */
	if (rte_be_to_cpu_16(arp->arp_hardware) != RTE_ARP_HRD_ETHER ||
	    rte_be_to_cpu_16(arp->arp_protocol) != RTE_ETHER_TYPE_IPV4 ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		return -1;
	msg->op = rte_be_to_cpu_16(arp->arp_opcode);
	if (msg->op != ARP_OP_REQUEST && msg->op != ARP_OP_REPLY)
		return -1;
	memcpy(msg->sender_mac, arp->arp_data.arp_sha.addr_bytes, 6);
	msg->sender_ip = rte_be_to_cpu_32(arp->arp_data.arp_sip);
	memcpy(msg->target_mac, arp->arp_data.arp_tha.addr_bytes, 6);
	msg->target_ip = rte_be_to_cpu_32(arp->arp_data.arp_tip);
	return 0;
}

void headers_arp_write(struct rte_arp_hdr *arp, const struct arp_message *msg)
{
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(msg->op);
	memcpy(arp->arp_data.arp_sha.addr_bytes, msg->sender_mac, 6);
	arp->arp_data.arp_sip = rte_cpu_to_be_32(msg->sender_ip);
	memcpy(arp->arp_data.arp_tha.addr_bytes, msg->target_mac, 6);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(msg->target_ip);
}

int headers_ipv4_check(const struct rte_ipv4_hdr *ip, size_t header_avail, size_t packet_len,
		       uint16_t *total_len, enum esgw_drop *reason)
{
	size_t ihl;

	*reason = ESGW_DROP_MALFORMED;
	if (header_avail < IPV4_HDR_LEN || packet_len < IPV4_HDR_LEN)
		return -1;
	if (packet_ip_version(ip) != 4)
		return -1;
	ihl = rte_ipv4_hdr_len(ip);
	if (ihl < IPV4_HDR_LEN || ihl > header_avail)
		return -1;
	*total_len = rte_be_to_cpu_16(ip->total_length);
	/* Shorter than its header, or longer than what arrived. Longer frames
	 * are fine: Ethernet pads short packets, the caller trims. */
	if (*total_len < ihl || *total_len > packet_len)
		return -1;
	if (checksum_inet(ip, ihl) != 0) {
		*reason = ESGW_DROP_BAD_IP_CHECKSUM;
		return -1;
	}
	return 0;
}

void headers_ipv4_decrement_ttl(struct rte_ipv4_hdr *ip)
{
	checksum_ipv4_ttl_decrement((uint8_t *)ip);
}

void headers_ipv4_write(struct rte_ipv4_hdr *ip, uint16_t total_len, uint8_t ttl, uint8_t proto,
			uint32_t src, uint32_t dst)
{
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(total_len);
	ip->packet_id = 0; /* unfragmented, DF set */
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = ttl;
	ip->next_proto_id = proto;
	ip->hdr_checksum = 0;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_cpu_to_be_16(checksum_inet(ip, IPV4_HDR_LEN));
}

int headers_ipv4_martian_source(uint32_t addr)
{
	uint8_t first = addr >> 24;

	return first == 0 || first == 127 || first >= 224;
}

int headers_ipv4_multicast_or_broadcast(uint32_t addr)
{
	return (addr >> 28) == 0xe || addr == 0xffffffffu;
}

int headers_esp_spi(const struct rte_esp_hdr *esp, size_t len, uint32_t *spi)
{
	if (len < ESP_HDR_LEN)
		return -1;
	*spi = rte_be_to_cpu_32(esp->spi);
	return 0;
}

int headers_icmp_is_error(const struct rte_icmp_hdr *icmp, size_t len)
{
	if (len < 1)
		return 1; /* unknown: be conservative and stay silent */
	switch (icmp->icmp_type) {
	case ICMP_ECHO_REPLY:
	case ICMP_ECHO_REQUEST:
	case 13: /* timestamp */
	case 14:
		return 0;
	default:
		return 1;
	}
}
