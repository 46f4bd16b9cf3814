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
#define UDP_HEADER_LEN 8
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
 * the SA's ICV covers (RFC 3948 3.2: the UDP header is not part of it). */
static void strip_udp(struct rte_mbuf *m, size_t ihl)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);

	memmove(ip + UDP_HEADER_LEN, ip, ihl);
	rte_pktmbuf_adj(m, UDP_HEADER_LEN);
	ip += UDP_HEADER_LEN;
	write_be16(ip + 2, (uint16_t)(read_be16(ip + 2) - UDP_HEADER_LEN));
	ip[9] = IPPROTO_ESP_NUM;
	write_be16(ip + 10, 0);
	write_be16(ip + 10, checksum_inet(ip, ihl));
}

/* What UDP to local port dport carries (RFC 3948 2.2, 2.3): 1 for ESP, which
 * goes on to its SA; 0 when m is consumed (IKE punted to the host, keepalive
 * absorbed, other ports punted, malformed dropped). Shared by IPv4 and IPv6. */
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

void udp_input_local(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *), *udp;
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	uint16_t dport, udp_len;

	if (rte_pktmbuf_data_len(m) < ihl + UDP_HEADER_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	udp = ip + ihl;
	dport = read_be16(udp + 2);
	udp_len = read_be16(udp + 4);
	/* input_ip trimmed the packet to its IPv4 total length. */
	if (udp_len < UDP_HEADER_LEN || udp_len != read_be16(ip + 2) - ihl ||
	    rte_pktmbuf_data_len(m) < ihl + udp_len) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (!natt_payload_is_esp(r, m, dport, udp + UDP_HEADER_LEN, udp_len - UDP_HEADER_LEN))
		return;
	strip_udp(m, ihl);
	esp_input_udp(r, m, in_port, dport);
}

void udp6_input_local(struct router *r, struct rte_mbuf *m)
{
	uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *);
	const uint8_t *udp = ip + IPV6_HEADER_LEN;
	uint16_t dport, udp_len;

	if (rte_pktmbuf_data_len(m) < IPV6_HEADER_LEN + UDP_HEADER_LEN) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	dport = read_be16(udp + 2);
	udp_len = read_be16(udp + 4);
	/* UDP right behind the fixed header (ipv6.c sends nothing else here),
	 * and ipv6_input trimmed the packet to its payload length. */
	if (udp_len < UDP_HEADER_LEN || udp_len != read_be16(ip + 4) ||
	    rte_pktmbuf_data_len(m) < IPV6_HEADER_LEN + (size_t)udp_len) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (!natt_payload_is_esp(r, m, dport, udp + UDP_HEADER_LEN, udp_len - UDP_HEADER_LEN))
		return;
	/* The UDP checksum is not verified, as over IPv4: the ESP ICV covers
	 * all the worker will use. Take the UDP header out (RFC 3948 3.2). */
	memmove(ip + UDP_HEADER_LEN, ip, IPV6_HEADER_LEN);
	rte_pktmbuf_adj(m, UDP_HEADER_LEN);
	ip += UDP_HEADER_LEN;
	write_be16(ip + 4, (uint16_t)(udp_len - UDP_HEADER_LEN));
	ip[6] = IPPROTO_ESP_NUM;
	esp6_input_udp(r, m, dport);
}
