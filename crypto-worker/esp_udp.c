/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP encapsulation of outbound ESP (RFC 3948) for SAs behind a NAT: a UDP
 * header between the outer IP header and the ESP header of a packet that
 * esp_encap.c has finished. Inbound, the router takes the UDP header out
 * before the packet reaches the worker, so decapsulation is unchanged. */
#include "esp.h"

#include <string.h>

#define UDP_HEADER_LEN 8
#define IPPROTO_UDP_NUMBER 17

/* RFC 8200 8.1: over IPv6 the UDP checksum is mandatory (RFC 6936's
 * zero-checksum exception needs the peer to opt in). */
static uint16_t udp6_checksum(const uint8_t *ip6, const uint8_t *udp, uint16_t udp_len)
{
	uint16_t sum = checksum_ipv6(ip6 + 8, ip6 + 24, IPPROTO_UDP_NUMBER, udp, udp_len);

	return sum == 0 ? 0xffff : sum;
}

int esp_udp_encap(const struct esp_sa *sa, struct esp_buf *b)
{
	unsigned int ip_len = esp_ip_outer_len(sa), udp_len = b->len - ip_len + UDP_HEADER_LEN;
	uint8_t *ip = b->data - UDP_HEADER_LEN, *udp;

	if (b->headroom < UDP_HEADER_LEN || b->len + UDP_HEADER_LEN > UINT16_MAX)
		return -1;
	memmove(ip, b->data, ip_len);
	udp = ip + ip_len;
	write_be16(udp, sa->udp_sport);
	write_be16(udp + 2, sa->udp_dport);
	write_be16(udp + 4, (uint16_t)udp_len);
	write_be16(udp + 6, 0);
	if (sa->outer_ipv6) {
		ip[6] = IPPROTO_UDP_NUMBER;
		write_be16(ip + 4, (uint16_t)udp_len);
		write_be16(udp + 6, udp6_checksum(ip, udp, (uint16_t)udp_len));
	} else {
		/* RFC 3948 2.1: over IPv4 the checksum is zero (ESP has its ICV). */
		ip[9] = IPPROTO_UDP_NUMBER;
		write_be16(ip + 2, (uint16_t)(b->len + UDP_HEADER_LEN));
		write_be16(ip + 10, 0);
		write_be16(ip + 10, checksum_inet(ip, ESP_IPV4_HDR_LEN));
	}
	b->data = ip;
	b->len = (uint16_t)(b->len + UDP_HEADER_LEN);
	b->headroom = (uint16_t)(b->headroom - UDP_HEADER_LEN);
	return 0;
}
