/* SPDX-License-Identifier: BSD-3-Clause */
/* The punt path: what is addressed to the gateway but not served by the
 * router goes, as an Ethernet frame, on the ring ESGW_RING_PUNT to rxtx,
 * which writes it to the TAP interface of the port (rxtx/punt.c). The TAP
 * has the port's MAC, IPv4 addresses and MTU, so the host's own stack
 * answers: an IKE daemon bound to UDP 500/4500, sshd, anything listening.
 *
 * What is punted: every IPv4 or IPv6 packet unicast to one of the gateway's
 * addresses that the router does not consume itself. The router consumes
 * ESP, ESP in UDP and NAT keepalives on the NAT-T ports, ICMP and ICMPv6
 * echo requests, ARP and neighbor discovery; everything else (UDP 500,
 * non-ESP-marked packets on the NAT-T ports, other UDP, TCP, other
 * protocols and IPv6 extension headers, ICMP(v6) other than echo requests)
 * goes to the host. Punting rather than dropping unknown ports and protocols makes
 * the gateway behave like a host: a closed port gets a TCP reset or an ICMP
 * port unreachable from the host's stack, a ping from the gateway's shell
 * gets its echo replies, and access is governed where operators expect it,
 * by the host's firewall on the esgw-* interfaces. Broadcast and multicast
 * are never punted (the host must not answer a LAN's broadcasts for a
 * gateway that does not).
 *
 * ARP: the TAP shares the port's MAC and addresses, so the host's ARP
 * requests (sent through the TAP and out of the port) get replies addressed
 * to the gateway, which arrive at the router like replies to its own
 * requests. The router learns from them as always and then hands the frame
 * to the host too (punt_frame_to_host): a Linux host takes a reply only for
 * a neighbour it asked about, so copies of replies to the router's own
 * requests change nothing there. Requests are not copied: the router
 * answers them, and a second answer from the host would only repeat it.
 * IPv6 neighbor discovery works the same way (nd.c copies unicast neighbor
 * advertisements; solicitations stay with the router).
 *
 * Rate: writing to a TAP is a system call per frame in rxtx, the process
 * that also polls the ports. A flood to the gateway's addresses must not
 * take the dataplane down with it, so punts are limited per PUNT_WINDOW_MS
 * (~25k frames/s in all, far below what would starve rxtx), and each class
 * has its own budget so that a flood of one class never starves another:
 * IKE (UDP 500 and non-ESP-marked NAT-T: what keeps the tunnels up) first,
 * then the copies of ARP replies and neighbor advertisements, then TCP (SSH
 * to the gateway), then everything else (other UDP, other protocols, ICMP
 * for the host). The excess of a class is dropped as punt_policed and
 * counted per class (punt_policed_<class>; punted_<class> for what went).
 * Until rxtx has created the ring, punts are dropped as punted_no_host (and
 * ARP copies simply freed: the router used them). */
#include <string.h>

#include <rte_ether.h>

#include "headers.h"
#include "log.h"
#include "router.h"

#define PUNT_WINDOW_MS 10

/* Frames per window and class: IKE 6400/s, neighbour copies 3200/s, TCP
 * 6400/s, the rest 9600/s. */
static const uint32_t punt_per_window[PUNT_CLASSES] = {
	[PUNT_IKE] = 64, [PUNT_NEIGHBOR] = 32, [PUNT_TCP] = 64, [PUNT_OTHER] = 96};

void punt_ring_lookup(struct router *r)
{
	if (r->punt_ring != NULL)
		return;
	r->punt_ring = rte_ring_lookup(ESGW_RING_PUNT);
	if (r->punt_ring != NULL) {
		esgw_ring_producer_recover(r->punt_ring); /* we are its one producer */
		ESGW_INFO("punting to the host through ring %s", ESGW_RING_PUNT);
	}
}

static int punt_rate_allows(struct router *r, enum punt_class c)
{
	if (r->now - r->punt_window >= r->hz / 1000 * PUNT_WINDOW_MS) {
		r->punt_window = r->now;
		memcpy(r->punt_budget, punt_per_window, sizeof(r->punt_budget));
	}
	if (r->punt_budget[c] == 0) {
		uint64_t *policed[PUNT_CLASSES] = {
			&r->ctr.punt_policed_ike, &r->ctr.punt_policed_neighbor,
			&r->ctr.punt_policed_tcp, &r->ctr.punt_policed_other};

		(*policed[c])++;
		return 0;
	}
	r->punt_budget[c]--;
	return 1;
}

/* m is a complete frame for the TAP of port. */
static void punt_enqueue(struct router *r, struct rte_mbuf *m, uint16_t port, enum punt_class c)
{
	uint64_t *punted[PUNT_CLASSES] = {&r->ctr.punted_ike, &r->ctr.punted_neighbor,
					  &r->ctr.punted_tcp, &r->ctr.punted_other};
	struct esgw_meta *meta = esgw_meta(m);

	meta->kind = ESGW_PKT_RX;
	meta->in_port = port;
	if (rte_ring_enqueue(r->punt_ring, m) != 0) {
		router_drop(r, m, ESGW_DROP_RING_FULL);
		return;
	}
	r->ctr.punted++;
	(*punted[c])++;
	/* Rung with the round's other doorbells once the round is over. */
	esgw_dp_wake(&r->dp, &r->dp.shared->db_rxtx);
}

/* The port that owns the destination of IP packet ip, if it is an address
 * of ours (not a broadcast: that is not the host's to answer); -1 if not. */
static int local_port(const struct router_tables *t, const void *ip, int is_ip6)
{
	if (is_ip6) {
		const struct fib6_route *rt =
			fib6_lookup(&t->fib6, ((const struct rte_ipv6_hdr *)ip)->dst_addr);

		return rt != NULL && rt->kind == FIB_LOCAL ? rt->port : -1;
	} else {
		const struct fib_route *rt = fib_lookup(
			&t->fib, rte_be_to_cpu_32(((const struct rte_ipv4_hdr *)ip)->dst_addr));

		return rt != NULL && rt->kind == FIB_LOCAL ? rt->port : -1;
	}
}

static void punt_packet(struct router *r, struct rte_mbuf *m, enum punt_class c)
{
	struct esgw_meta *meta = esgw_meta(m);
	int is_ip6 = packet_ip_version(rte_pktmbuf_mtod(m, const void *)) == 6;
	int owner = local_port(r->tables, rte_pktmbuf_mtod(m, const void *), is_ip6);
	const struct router_port *port;
	struct rte_ether_hdr *eth;
	uint16_t port_id;
	int received;

	if (owner < 0) {
		router_drop(r, m, ESGW_DROP_UNSUPPORTED_PROTOCOL);
		return;
	}
	if (r->punt_ring == NULL) {
		router_drop(r, m, ESGW_DROP_PUNTED_NO_HOST);
		return;
	}
	if (!punt_rate_allows(r, c)) {
		router_drop(r, m, ESGW_DROP_PUNT_POLICED);
		return;
	}
	/* Received frames go to the TAP of the port they came in on (the
	 * host's reverse path check sees the interface the sender is on);
	 * decrypted packets to the TAP of the port that owns the address. */
	received = meta->kind == ESGW_PKT_RX && meta->in_port < ESGW_MAX_PORTS &&
		   r->tables->ports[meta->in_port].present;
	port_id = received ? meta->in_port : (uint16_t)owner;
	port = &r->tables->ports[port_id];
	/* A received frame's Ethernet header is still in the headroom (forward.c
	 * only stripped it); the destination MAC and type are rewritten anyway,
	 * so a packet reassembled or decrypted here carries the right ones. */
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN);
	if (eth == NULL) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	rte_ether_addr_copy(&port->mac, &eth->dst_addr);
	if (!received)
		rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(is_ip6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	punt_enqueue(r, m, port_id, c);
}

void punt_to_host(struct router *r, struct rte_mbuf *m)
{
	const void *ip = rte_pktmbuf_mtod(m, const void *);
	uint8_t proto = packet_ip_proto(ip, packet_ip_version(ip) == 6);

	punt_packet(r, m, proto == IPPROTO_TCP ? PUNT_TCP : PUNT_OTHER);
}

void punt_ike_to_host(struct router *r, struct rte_mbuf *m)
{
	punt_packet(r, m, PUNT_IKE);
}

void punt_frame_to_host(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	if (r->punt_ring == NULL || !punt_rate_allows(r, PUNT_NEIGHBOR)) {
		rte_pktmbuf_free(m); /* consumed by the router already: not a drop */
		return;
	}
	punt_enqueue(r, m, in_port, PUNT_NEIGHBOR);
}
