/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP: answers requests for the gateway's addresses on the port they arrive
 * on, learns from requests to us from senders on the port's subnets,
 * completes its own resolutions from replies, and resolves next hops with
 * broadcast requests. The table, its bounds and the packets waiting for
 * resolution are neighbor.c's. */
#include <string.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define ARP_FRAME_LEN (RTE_ETHER_HDR_LEN + ARP_MESSAGE_LEN)

/* The port address on the next hop's subnet: the source of our request. */
static uint32_t request_source(const struct router_port *port, uint32_t target)
{
	for (uint32_t i = 0; i < port->nb_addrs; i++)
		if (((port->addrs[i].addr ^ target) & esgw_prefix_mask(port->addrs[i].len)) == 0)
			return port->addrs[i].addr;
	/* No subnet: an ARP probe (sender 0.0.0.0) still gets an answer. */
	return port->nb_addrs ? port->addrs[0].addr : 0;
}

void arp_send_request(struct router *r, uint16_t port_id, uint32_t target)
{
	const struct router_port *port = &r->tables->ports[port_id];
	struct rte_mbuf *m = router_mbuf_alloc(r);
	struct arp_message msg = {.op = ARP_OP_REQUEST,
				  .sender_ip = request_source(port, target),
				  .target_ip = target};
	struct rte_ether_hdr *eth;

	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, ARP_FRAME_LEN);
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	memcpy(msg.sender_mac, port->mac.addr_bytes, 6);
	headers_arp_write((struct rte_arp_hdr *)(eth + 1), &msg);
	r->ctr.arp_requests_sent++;
	router_send_tx(r, port_id, m);
}

static int is_port_address(const struct router_port *port, uint32_t ip)
{
	for (uint32_t i = 0; i < port->nb_addrs; i++)
		if (port->addrs[i].addr == ip)
			return 1;
	return 0;
}

static int on_port_subnet(const struct router_port *port, uint32_t ip)
{
	for (uint32_t i = 0; i < port->nb_addrs; i++)
		if (((port->addrs[i].addr ^ ip) & esgw_prefix_mask(port->addrs[i].len)) == 0)
			return 1;
	return 0;
}

void arp_input(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct router_port *port = &r->tables->ports[in_port];
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	struct arp_message msg, reply;
	int for_us, learnt = 0;
	uint8_t addr[16];

	if (rte_pktmbuf_data_len(m) < ARP_FRAME_LEN ||
	    headers_arp_parse(arp, rte_pktmbuf_data_len(m) - RTE_ETHER_HDR_LEN, &msg) < 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	for_us = is_port_address(port, msg.target_ip);
	/* A sender of 0.0.0.0 (a probe), one of our own addresses or a
	 * multicast MAC teaches nothing. A request to us from a sender on one
	 * of the port's subnets may create an entry (the sender is about to
	 * talk to us); everything else only refreshes entries that exist
	 * (RFC 826 merge), and a reply that finds none, or a static one, is
	 * counted as unsolicited: it never creates one. */
	if (msg.sender_ip != 0 && !(msg.sender_mac[0] & 1) &&
	    !is_port_address(port, msg.sender_ip)) {
		int on_subnet = on_port_subnet(port, msg.sender_ip);
		enum neighbor_how how = for_us && msg.op == ARP_OP_REQUEST && on_subnet
						? NEIGH_LEARN_CREATE
						: NEIGH_LEARN_UPDATE;

		neighbor_addr4(msg.sender_ip, addr);
		learnt = neighbor_learn(r, 4, in_port, addr, msg.sender_mac, how);
		if (for_us && msg.op == ARP_OP_REQUEST && !on_subnet)
			r->ctr.neighbor_off_subnet++;
	}
	if (for_us && msg.op == ARP_OP_REPLY && !learnt)
		r->ctr.neighbor_unsolicited++;
	if (!for_us) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US); /* someone else's request or reply */
		return;
	}
	if (msg.op != ARP_OP_REQUEST) {
		/* Learnt above; the host behind the punt TAP may have asked too. */
		punt_frame_to_host(r, m, in_port);
		return;
	}
	/* Answer in place: the request's buffer becomes the reply. */
	reply = (struct arp_message){
		.op = ARP_OP_REPLY, .sender_ip = msg.target_ip, .target_ip = msg.sender_ip};
	memcpy(reply.sender_mac, port->mac.addr_bytes, 6);
	memcpy(reply.target_mac, msg.sender_mac, 6);
	headers_arp_write(arp, &reply);
	memcpy(eth->dst_addr.addr_bytes, msg.sender_mac, 6);
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	r->ctr.arp_replies_sent++;
	router_send_tx(r, in_port, m);
}

int arp_resolve(struct router *r, uint16_t port, uint32_t nexthop, struct rte_mbuf *m,
		struct rte_ether_addr *mac)
{
	uint8_t addr[16];

	neighbor_addr4(nexthop, addr);
	return neighbor_resolve(r, 4, port, addr, m, mac);
}
