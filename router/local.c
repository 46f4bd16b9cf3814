/* SPDX-License-Identifier: BSD-3-Clause */
/* Packets addressed to the gateway itself, either family, past forward.c's
 * checks. A fragment is reassembled first (reassembly.c: fragmented ESP from
 * a peer with a small path MTU). Then by protocol: ICMP and ICMPv6 (echo,
 * neighbor discovery, errors) go to icmp.c and icmp6.c, ESP to the worker of
 * its SA (dispatch.c), UDP to natt.c (ESP in UDP, NAT keepalives, IKE), and
 * everything else (TCP to sshd, other protocols) to the host's stack
 * (punt.c). To a group of ours (IPv6 multicast) only ICMPv6 is taken: the
 * host must not answer a link's multicast for the gateway either. */
#include "headers.h"
#include "router.h"

void local_input(struct router *r, struct rte_mbuf *m, int is_ip6, int to_multicast)
{
	const void *ip = rte_pktmbuf_mtod(m, const void *);
	uint8_t proto = packet_ip_proto(ip, is_ip6);

	if (!to_multicast && (is_ip6 ? proto == IPPROTO_FRAGMENT : headers_ipv4_is_fragment(ip))) {
		m = is_ip6 ? reassembly6_input(r, m) : reassembly_input(r, m);
		if (m == NULL)
			return; /* held until complete, or dropped */
		ip = rte_pktmbuf_mtod(m, const void *);
		proto = packet_ip_proto(ip, is_ip6);
	}
	if (proto == (is_ip6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP)) {
		if (is_ip6)
			icmp6_input_local(r, m, to_multicast);
		else
			icmp_input_local(r, m);
		return;
	}
	if (to_multicast) {
		router_drop(r, m,
			    proto == IPPROTO_ESP || proto == IPPROTO_UDP
				    ? ESGW_DROP_NOT_FOR_US
				    : ESGW_DROP_UNSUPPORTED_PROTOCOL);
		return;
	}
	switch (proto) {
	case IPPROTO_ESP:
		dispatch_decrypt(r, m, is_ip6, 0);
		break;
	case IPPROTO_UDP: /* ESP in UDP, NAT keepalives, IKE (natt.c) */
		natt_input(r, m, is_ip6);
		break;
	default: /* TCP (SSH to the gateway) and the rest: the host's stack */
		punt_to_host(r, m);
		break;
	}
}
