/* SPDX-License-Identifier: BSD-3-Clause */
/* Hands ESP to the crypto workers, both IP families: inbound packets by SPI
 * to the worker owning the inbound SA (dispatch_decrypt), and packets routed
 * into a tunnel or protected by a policy to the worker owning the outbound
 * SA (dispatch_encrypt), with the outer L2 header already resolved. */
#include <string.h>

#include "headers.h"
#include "router.h"

/* A worker that the configuration does not run, or whose ring never appeared. */
static int worker_missing(const struct router *r, uint32_t worker)
{
	return r->crypto_ring[worker] == NULL ||
	       (r->tables->workers != 0 && worker >= r->tables->workers);
}

/* Whether ESP for sa came from the SA's peer: the outer source of IP header
 * ip is the remote end of the SA's tunnel. */
static int from_peer(const struct router_sa_in *sa, const void *ip, int is_ip6)
{
	if (is_ip6)
		return sa->remote_ipv6 &&
		       memcmp(sa->remote6, ((const struct rte_ipv6_hdr *)ip)->src_addr, 16) == 0;
	return !sa->remote_ipv6 &&
	       sa->remote == rte_be_to_cpu_32(((const struct rte_ipv4_hdr *)ip)->src_addr);
}

void dispatch_decrypt(struct router *r, struct rte_mbuf *m, int is_ip6, uint16_t udp_port)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t hlen = packet_ip_header_len(ip, is_ip6);
	const struct router_sa_in *sa;
	struct esgw_meta *meta;
	uint32_t spi;

	if (rte_pktmbuf_data_len(m) < hlen ||
	    headers_esp_spi((const struct rte_esp_hdr *)(ip + hlen), rte_pktmbuf_data_len(m) - hlen,
			    &spi) < 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	sa = router_sa_in_lookup(r->tables, spi);
	/* An SA belongs to one peer: ESP from elsewhere with its SPI is not
	 * worth a decryption attempt. And it takes only the encapsulation it
	 * was configured with (RFC 3948 or plain ESP). */
	if (sa == NULL || !from_peer(sa, ip, is_ip6) || sa->udp_port != udp_port) {
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

void dispatch_encrypt(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t,
		      uint32_t sa_slot, uint32_t worker)
{
	struct rte_ether_addr mac;
	struct esgw_meta *meta;
	int resolved;

	if (worker_missing(r, worker)) {
		router_drop(r, m, ESGW_DROP_NO_WORKER);
		return;
	}
	if (!t->outer_resolved) {
		router_drop(r, m, ESGW_DROP_NO_ROUTE);
		return;
	}
	resolved = t->outer_ipv6 ? nd_resolve(r, t->outer_port, t->outer_nexthop6, m, &mac)
				 : arp_resolve(r, t->outer_port, t->outer_nexthop, m, &mac);
	if (!resolved)
		return; /* held: comes back through forward_output when resolved */
	meta = esgw_meta(m);
	meta->kind = ESGW_PKT_ENCRYPT;
	meta->sa_slot = sa_slot;
	meta->out_port = t->outer_port;
	meta->dst_mac = mac;
	meta->src_mac = r->tables->ports[t->outer_port].mac;
	router_send_crypto(r, worker, m);
}
