/* SPDX-License-Identifier: BSD-3-Clause */
/* Hands ESP to the crypto workers: inbound packets by SPI to the worker owning
 * the inbound SA, packets routed into a tunnel to the worker owning its
 * outbound SA, with the outer L2 header already resolved. */
#include "headers.h"
#include "router.h"

/* A worker that the configuration does not run, or whose ring never appeared. */
static int worker_missing(const struct router *r, uint32_t worker)
{
	return r->crypto_ring[worker] == NULL ||
	       (r->tables->workers != 0 && worker >= r->tables->workers);
}

/* udp_port: the local UDP port the ESP arrived on (RFC 3948), 0 for plain
 * ESP. An SA takes only the encapsulation it was configured with. */
static void esp_input(struct router *r, struct rte_mbuf *m, uint16_t in_port, uint16_t udp_port)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	const struct router_sa_in *sa;
	struct esgw_meta *meta;
	uint32_t spi;

	if (rte_pktmbuf_data_len(m) < ihl ||
	    esp_parse_spi(ip + ihl, rte_pktmbuf_data_len(m) - ihl, &spi) < 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	sa = router_sa_in_lookup(r->tables, spi);
	/* An SA belongs to one peer: ESP from elsewhere with its SPI is not
	 * worth a decryption attempt. */
	if (sa == NULL || sa->remote != read_be32(ip + 12) || sa->udp_port != udp_port) {
		router_drop(r, m, ESGW_DROP_NO_SA);
		return;
	}
	if (worker_missing(r, sa->worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_DECRYPT;
	meta->sa_slot = sa->slot;
	meta->in_port = in_port;
	router_send_crypto(r, sa->worker, m);
}

void esp_input_local(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	esp_input(r, m, in_port, 0);
}

void esp_input_udp(struct router *r, struct rte_mbuf *m, uint16_t in_port, uint16_t udp_port)
{
	esp_input(r, m, in_port, udp_port);
}

void esp_output_tunnel(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t)
{
	esp_output_sa(r, m, t, t->sa_out_slot, t->worker);
}

void esp_output_sa(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t,
		   uint32_t sa_slot, uint32_t worker)
{
	struct rte_ether_addr mac;
	struct esgw_meta *meta;

	if (worker_missing(r, worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	if (!t->outer_resolved) {
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	if (!arp_resolve(r, t->outer_port, t->outer_nexthop, m, &mac))
		return; /* held: comes back through router_output_ip when resolved */
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_ENCRYPT;
	meta->sa_slot = sa_slot;
	meta->out_port = t->outer_port;
	meta->dst_mac = mac;
	meta->src_mac = r->tables->ports[t->outer_port].mac;
	router_send_crypto(r, worker, m);
}

/* udp_port: the local UDP port the ESP arrived on (RFC 3948), 0 for plain
 * ESP. An SA takes only the encapsulation it was configured with. */
static void esp6_input(struct router *r, struct rte_mbuf *m, uint16_t udp_port)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct router_sa_in *sa;
	struct esgw_meta *meta;
	uint32_t spi;

	if (esp_parse_spi(ip + IPV6_HEADER_LEN, rte_pktmbuf_data_len(m) - IPV6_HEADER_LEN, &spi) <
	    0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	sa = router_sa_in_lookup(r->tables, spi);
	/* One peer per SA: ESP from another source is not worth decrypting. */
	if (sa == NULL || !sa->remote_ipv6 || memcmp(sa->remote6, ip + 8, 16) != 0 ||
	    sa->udp_port != udp_port) {
		router_drop(r, m, ESGW_DROP_NO_SA);
		return;
	}
	if (worker_missing(r, sa->worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_DECRYPT;
	meta->sa_slot = sa->slot;
	router_send_crypto(r, sa->worker, m);
}

void esp6_input_udp(struct router *r, struct rte_mbuf *m, uint16_t udp_port)
{
	esp6_input(r, m, udp_port);
}

void esp6_output_tunnel(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t)
{
	struct rte_ether_addr mac;
	struct esgw_meta *meta;

	if (worker_missing(r, t->worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	if (!t->outer_resolved) {
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	if (!nd_resolve(r, t->outer_port, t->outer_nexthop6, m, &mac))
		return; /* held: comes back through router_output_ip when resolved */
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_ENCRYPT;
	meta->sa_slot = t->sa_out_slot;
	meta->out_port = t->outer_port;
	meta->dst_mac = mac;
	meta->src_mac = r->tables->ports[t->outer_port].mac;
	router_send_crypto(r, t->worker, m);
}
