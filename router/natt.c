/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP to a gateway address: ESP in UDP (RFC 3948) on the local ports of
 * UDP-encapsulated SAs (4500 unless configured otherwise), NAT keepalives on
 * those ports; IKE (UDP 500, and non-ESP-marked packets on the NAT-T ports)
 * and every other UDP port go to the host's stack (punt.c). */
#include <string.h>

#include "headers.h"
#include "router.h"

#define NATT_DEFAULT_PORT 4500 /* RFC 3948 */
#define IKE_PORT 500
#define NATT_KEEPALIVE_BYTE 0xff /* RFC 3948 2.3: a one-byte payload */
#define NON_ESP_MARKER_LEN 4     /* RFC 3948 2.2: four zero bytes where the SPI would be */

uint16_t natt_local_port(const Esgw__DpSa *sa)
{
	if (!sa->udp_encap)
		return 0;
	return sa->udp_sport != 0 && sa->udp_sport <= 65535 ? (uint16_t)sa->udp_sport
							    : NATT_DEFAULT_PORT;
}

void natt_ports_build(struct router_tables *t, const Esgw__DpConfig *cfg)
{
	/* 4500 always: IKE moves there (and wants the host) before any SA
	 * exists. */
	t->natt_ports[0] = NATT_DEFAULT_PORT;
	t->nb_natt_ports = 1;
	for (size_t i = 0; i < cfg->n_sas; i++) {
		uint16_t port = natt_local_port(cfg->sas[i]);
		uint32_t k;

		if (port == 0)
			continue;
		for (k = 0; k < t->nb_natt_ports && t->natt_ports[k] != port; k++)
			;
		if (k == t->nb_natt_ports && k < ROUTER_NATT_PORTS_MAX)
			t->natt_ports[t->nb_natt_ports++] = port;
	}
}

static int is_natt_port(const struct router_tables *t, uint16_t port)
{
	for (uint32_t k = 0; k < t->nb_natt_ports; k++)
		if (t->natt_ports[k] == port)
			return 1;
	return 0;
}

/* Take the UDP header out, so the crypto worker sees the plain ESP packet
 * the SA's ICV covers (RFC 3948 3.2: the UDP header is not part of it). The
 * UDP checksum is not verified: the ESP ICV covers all the worker uses. */
static void strip_udp(struct rte_mbuf *m, int is_ip6, size_t hlen)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);

	memmove(ip + UDP_HDR_LEN, ip, hlen);
	rte_pktmbuf_adj(m, UDP_HDR_LEN);
	ip += UDP_HDR_LEN;
	if (is_ip6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)ip;

		ip6->payload_len = rte_cpu_to_be_16(
			(uint16_t)(rte_be_to_cpu_16(ip6->payload_len) - UDP_HDR_LEN));
		ip6->proto = IPPROTO_ESP;
	} else {
		struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)ip;

		ip4->total_length = rte_cpu_to_be_16(
			(uint16_t)(rte_be_to_cpu_16(ip4->total_length) - UDP_HDR_LEN));
		ip4->next_proto_id = IPPROTO_ESP;
		ip4->hdr_checksum = 0;
		ip4->hdr_checksum = rte_cpu_to_be_16(checksum_inet(ip4, hlen));
	}
}

/* What UDP to local port dport carries (RFC 3948 2.2, 2.3): 1 for ESP, which
 * goes on to its SA; 0 when m is consumed (IKE punted to the host, keepalive
 * absorbed, other ports punted, malformed dropped). */
static int natt_payload_is_esp(struct router *r, struct rte_mbuf *m, uint16_t dport,
			       const uint8_t *payload, size_t payload_len)
{
	if (dport == IKE_PORT) {
		punt_ike_to_host(r, m);
		return 0;
	}
	if (!is_natt_port(r->tables, dport)) { /* any other UDP service: the host's */
		punt_to_host(r, m);
		return 0;
	}
	if (payload_len == 1 && payload[0] == NATT_KEEPALIVE_BYTE) {
		/* It did its job (kept the peer's NAT mapping open) by arriving:
		 * absorbed, not lost, so a counter rather than a drop reason. */
		r->ctr.natt_keepalive++;
		rte_pktmbuf_free(m);
		return 0;
	}
	if (payload_len < NON_ESP_MARKER_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return 0;
	}
	if (read_be32(payload) == 0) { /* non-ESP marker: IKE on the NAT-T port */
		punt_ike_to_host(r, m);
		return 0;
	}
	return 1;
}

void natt_input(struct router *r, struct rte_mbuf *m, int is_ip6)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t hlen = packet_ip_header_len(ip, is_ip6);
	const struct rte_udp_hdr *udp;
	uint16_t dport, udp_len, ip_payload;

	if (rte_pktmbuf_data_len(m) < hlen + UDP_HDR_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	udp = (const struct rte_udp_hdr *)(ip + hlen);
	dport = rte_be_to_cpu_16(udp->dst_port);
	udp_len = rte_be_to_cpu_16(udp->dgram_len);
	/* The IP payload, to which forward.c trimmed the packet: IPv6's
	 * payload length (UDP right behind the fixed header: local.c sends
	 * nothing else here), IPv4's total length without its header. */
	ip_payload = is_ip6 ? rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)ip)->payload_len)
			    : (uint16_t)(rte_be_to_cpu_16(
						 ((const struct rte_ipv4_hdr *)ip)->total_length) -
					 hlen);
	if (udp_len < UDP_HDR_LEN || udp_len != ip_payload ||
	    rte_pktmbuf_data_len(m) < hlen + udp_len) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (!natt_payload_is_esp(r, m, dport, (const uint8_t *)(udp + 1), udp_len - UDP_HDR_LEN))
		return;
	strip_udp(m, is_ip6, hlen);
	dispatch_decrypt(r, m, is_ip6, dport);
}
