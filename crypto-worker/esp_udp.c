/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP encapsulation of outbound ESP (RFC 3948) for SAs behind a NAT: a UDP
 * header between the outer IP header and the ESP header of a packet that
 * esp_encap.c has finished. Inbound, the router takes the UDP header out
 * before the packet reaches the worker, so decapsulation is unchanged. */
#include "esp.h"

#include <string.h>

int esp_udp_encap(const struct esp_sa *sa, struct esp_buf *b)
{
	unsigned int ip_len = esp_ip_outer_len(sa), udp_len = b->len - ip_len + UDP_HDR_LEN;
	uint8_t *ip = b->data - UDP_HDR_LEN;
	struct rte_udp_hdr *udp;

	if (b->headroom < UDP_HDR_LEN || b->len + UDP_HDR_LEN > UINT16_MAX)
		return -1;
	memmove(ip, b->data, ip_len);
	udp = (struct rte_udp_hdr *)(ip + ip_len);
	udp->src_port = rte_cpu_to_be_16(sa->udp_sport);
	udp->dst_port = rte_cpu_to_be_16(sa->udp_dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)udp_len);
	udp->dgram_cksum = 0;
	if (sa->outer_ipv6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)ip;
		uint16_t sum;

		ip6->proto = IPPROTO_UDP;
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)udp_len);
		/* RFC 8200 8.1: over IPv6 the UDP checksum is mandatory (RFC
		 * 6936's zero-checksum exception needs the peer to opt in). */
		sum = checksum_ipv6(ip6->src_addr, ip6->dst_addr, IPPROTO_UDP, udp, udp_len);
		udp->dgram_cksum = rte_cpu_to_be_16(sum == 0 ? 0xffff : sum);
	} else {
		struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)ip;

		/* RFC 3948 2.1: over IPv4 the checksum is zero (ESP has its ICV). */
		ip4->next_proto_id = IPPROTO_UDP;
		ip4->total_length = rte_cpu_to_be_16((uint16_t)(b->len + UDP_HDR_LEN));
		ip4->hdr_checksum = 0;
		ip4->hdr_checksum = rte_cpu_to_be_16(checksum_inet(ip4, IPV4_HDR_LEN));
	}
	b->data = ip;
	b->len = (uint16_t)(b->len + UDP_HDR_LEN);
	b->headroom = (uint16_t)(b->headroom - UDP_HDR_LEN);
	return 0;
}
