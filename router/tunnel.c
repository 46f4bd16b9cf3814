/* SPDX-License-Identifier: BSD-3-Clause */
/* Output into a tunnel with its MTU. A tunnel's inner MTU is its port's MTU
 * minus the ESP overhead of its outbound SA's algorithm. Too big IPv6 gets
 * ICMPv6 "packet too big" (routers never fragment IPv6); too big IPv4 goes to
 * frag.c (fragmented before encryption, or ICMP "fragmentation needed" with
 * DF). */
#include "esp_algorithms.h"
#include "headers.h"
#include "router.h"

#define ESP_TRAILER 2 /* pad length + next header */

void tunnel_set_overhead(struct router_tunnel *t, unsigned int algorithm)
{
	const struct esp_alg_info *info = esp_alg_lookup(algorithm);
	unsigned int outer = t->outer_ipv6 ? IPV6_HDR_LEN : IPV4_HDR_LEN;

	/* Unknown algorithm: the worst case of the table (CBC, SHA-512). */
	t->overhead_fixed = (uint16_t)(outer + ESP_HDR_LEN + (info ? info->iv_len : 16) +
				       (info ? info->icv_len : 32));
	t->block_len = info ? info->block_len : 16;
}

uint32_t tunnel_inner_mtu(const struct router *r, const struct router_tunnel *t)
{
	uint32_t mtu, room;

	if (!t->outer_resolved)
		return UINT32_MAX; /* dropped as no_route further on */
	mtu = r->tables->ports[t->outer_port].mtu;
	if (mtu < t->overhead_fixed + t->block_len)
		return 0;
	/* Padding rounds inner + trailer up to the block: the largest inner
	 * packet is one whole number of blocks minus the trailer. Blocks are
	 * powers of two (esp_algorithms.h): a mask, not a division per packet. */
	room = (mtu - t->overhead_fixed) & ~((uint32_t)t->block_len - 1u);
	return room - ESP_TRAILER;
}

void tunnel_output(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t)
{
	uint32_t mtu = tunnel_inner_mtu(r, t);

	if (rte_pktmbuf_pkt_len(m) <= mtu) {
		dispatch_encrypt(r, m, t, t->sa_out_slot, t->worker);
		return;
	}
	if (packet_ip_version(rte_pktmbuf_mtod(m, const void *)) == 6) {
		/* IPv6 links carry at least 1280 bytes (RFC 8200 5); a WAN whose
		 * MTU leaves less inside the tunnel is misconfigured. */
		icmp6_send_error(r, m, ICMP6_PACKET_TOO_BIG, 0,
				 mtu < IPV6_MIN_MTU ? IPV6_MIN_MTU : mtu);
		router_drop(r, m, ESGW_DROP_TOO_BIG);
		return;
	}
	frag_ipv4(r, m, mtu);
}
