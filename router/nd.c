/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 neighbor discovery (RFC 4861) for the gateway: answers solicitations
 * for its own addresses with advertisements, resolves next hops with
 * multicast solicitations, learns from solicitations to us from on-link
 * senders, and completes or updates entries from advertisements as RFC
 * 4861 7.2.5 says (never a new entry; without the override flag, never a
 * different link-layer address). The table, its bounds and the packets
 * waiting for resolution are neighbor.c's, shared with ARP. */
#include <string.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define ND_HOP_LIMIT 255 /* ND messages must arrive with 255: never routed */
#define ND_OPTION_SOURCE_LL 1
#define ND_OPTION_TARGET_LL 2
#define ND_FLAG_ROUTER 0x80
#define ND_FLAG_SOLICITED 0x40
#define ND_FLAG_OVERRIDE 0x20

/* A neighbor solicitation or advertisement (RFC 4861 4.3, 4.4) behind the
 * IPv6 header: the ICMPv6 type, code and checksum, the flags of an
 * advertisement (reserved in a solicitation), the target; options follow. */
struct nd_message {
	uint8_t type;
	uint8_t code;
	rte_be16_t checksum;
	uint8_t flags;
	uint8_t reserved[3];
	uint8_t target[16];
} __rte_packed;
#define ND_MESSAGE_LEN 24
_Static_assert(sizeof(struct nd_message) == ND_MESSAGE_LEN, "nd_message");

/* The source or target link-layer address option with an Ethernet address. */
struct nd_ll_option {
	uint8_t type;
	uint8_t len; /* in units of 8 bytes */
	uint8_t addr[RTE_ETHER_ADDR_LEN];
} __rte_packed;
_Static_assert(sizeof(struct nd_ll_option) == 8, "nd_ll_option");

/* An ND message (ICMPv6 header + target + one link-layer option) from us on
 * port: IPv6 header with hop limit 255, checksum, Ethernet header. */
static void send_nd(struct router *r, uint16_t port_id, uint8_t type, uint8_t flags,
		    const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16],
		    const struct rte_ether_addr *l2_dst)
{
	const struct router_port *port = &r->tables->ports[port_id];
	uint32_t icmp_len = ND_MESSAGE_LEN + sizeof(struct nd_ll_option);
	struct rte_mbuf *m = router_mbuf_alloc(r);
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip;
	struct nd_message *nd;
	struct nd_ll_option *ll;

	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, RTE_ETHER_HDR_LEN + IPV6_HDR_LEN +
								    icmp_len);
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	ip = (struct rte_ipv6_hdr *)(eth + 1);
	memset(ip, 0, IPV6_HDR_LEN + icmp_len);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)icmp_len);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = ND_HOP_LIMIT;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	nd = (struct nd_message *)(ip + 1);
	nd->type = type;
	nd->flags = flags;
	memcpy(nd->target, target, 16);
	ll = (struct nd_ll_option *)(nd + 1);
	ll->type = type == ND_NEIGHBOR_SOLICIT ? ND_OPTION_SOURCE_LL : ND_OPTION_TARGET_LL;
	ll->len = 1;
	memcpy(ll->addr, port->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	nd->checksum = rte_cpu_to_be_16(icmp6_checksum(ip, nd, icmp_len));
	eth->dst_addr = *l2_dst;
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	router_send_tx(r, port_id, m);
}

/* Multicast to the target's solicited-node group (RFC 4861 7.2.2). */
void nd_send_solicit(struct router *r, uint16_t port_id, const uint8_t target[16])
{
	uint8_t src[16], dst[16] = {0xff, 2, [11] = 1, [12] = 0xff};
	struct rte_ether_addr l2 = {{0x33, 0x33, 0xff, target[13], target[14], target[15]}};
	const struct router_port *port = &r->tables->ports[port_id];

	if (port->nb_addrs6 == 0)
		return; /* no source address on this link */
	memcpy(src, port->addrs6[0].addr, 16);
	for (uint32_t i = 0; i < port->nb_addrs6; i++)
		if (esgw_prefix6_match(port->addrs6[i].addr, target, port->addrs6[i].len))
			memcpy(src, port->addrs6[i].addr, 16);
	memcpy(dst + 13, target + 13, 3);
	r->ctr.nd_solicitations_sent++;
	send_nd(r, port_id, ND_NEIGHBOR_SOLICIT, 0, src, dst, target, &l2);
}

int nd_resolve(struct router *r, uint16_t port, const uint8_t nexthop[16], struct rte_mbuf *m,
	       struct rte_ether_addr *mac)
{
	return neighbor_resolve(r, 6, port, nexthop, m, mac);
}

/* On the link of port: one of its prefixes, or link-local (RFC 4291 2.5.6). */
static int on_port_link(const struct router_port *port, const uint8_t addr[16])
{
	if (addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80)
		return 1;
	for (uint32_t i = 0; i < port->nb_addrs6; i++)
		if (esgw_prefix6_match(port->addrs6[i].addr, addr, port->addrs6[i].len))
			return 1;
	return 0;
}

/* The link-layer address option of the given type in the options after the
 * ND message, or NULL. Options of length 0 make the message invalid. */
static const uint8_t *find_ll_option(const uint8_t *opt, uint32_t len, uint8_t type, int *bad)
{
	*bad = 0;
	while (len >= 2) {
		uint32_t olen = (uint32_t)opt[1] * 8;

		if (olen == 0 || olen > len) {
			*bad = 1;
			return NULL;
		}
		if (opt[0] == type && olen >= 8)
			return opt + 2;
		opt += olen;
		len -= olen;
	}
	return NULL;
}

/* The host behind the punt TAP shares the port's MAC and IPv6 addresses and
 * resolves its own neighbours (to answer a TCP peer, say): its solicitations
 * leave through the port, and the advertisements that answer them come back
 * unicast to the port's MAC, here. So a unicast advertisement, after the
 * router has learnt from it, is copied to the host as a frame, as ARP replies
 * are (punt.c): Linux takes an advertisement only for a neighbour it is
 * resolving, so copies of answers to the router's own solicitations change
 * nothing there. Multicast (unsolicited) advertisements are not copied: the
 * host does not need them to resolve, and the router already used them. */
static void advert_to_host(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct rte_ether_hdr *eth;

	if (esgw_meta(m)->kind != ESGW_PKT_RX ||
	    rte_pktmbuf_prepend(m, RTE_ETHER_HDR_LEN) == NULL) {
		rte_pktmbuf_free(m); /* consumed by the router: not a drop */
		return;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *); /* the header as received */
	if (!rte_is_same_ether_addr(&eth->dst_addr, &r->tables->ports[in_port].mac)) {
		rte_pktmbuf_free(m);
		return;
	}
	punt_frame_to_host(r, m, in_port);
}

static int is_port_address(const struct router_port *port, const uint8_t addr[16])
{
	for (uint32_t i = 0; i < port->nb_addrs6; i++)
		if (memcmp(port->addrs6[i].addr, addr, 16) == 0)
			return 1;
	return 0;
}

/* A solicitation for one of our addresses (nd_input checked it; ll: its
 * source link-layer address, NULL if none): learn the solicitor if it is on
 * the link, then answer, to the solicitor or, during its duplicate address
 * detection (source ::), to all nodes. Consumes m. */
static void solicit_answer(struct router *r, struct rte_mbuf *m, uint16_t in_port,
			   const uint8_t *ll)
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1}, unspecified[16];
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);
	const struct nd_message *nd = (const struct nd_message *)(ip + 1);
	int src_unspecified = memcmp(ip->src_addr, unspecified, 16) == 0;
	struct rte_ether_addr l2 = {{0x33, 0x33, 0, 0, 0, 1}};
	uint8_t dst[16], tgt[16];

	if (!src_unspecified && ll != NULL && !(ll[0] & 1)) {
		if (on_port_link(&r->tables->ports[in_port], ip->src_addr))
			neighbor_learn(r, 6, in_port, ip->src_addr, ll, NEIGH_LEARN_CREATE);
		else
			r->ctr.neighbor_off_subnet++; /* answered, not learnt */
	}
	memcpy(tgt, nd->target, 16);
	if (src_unspecified) {
		memcpy(dst, all_nodes, 16);
	} else {
		memcpy(dst, ip->src_addr, 16);
		if (ll != NULL)
			memcpy(l2.addr_bytes, ll, 6);
		else /* the frame's source: the Ethernet header is still in front */
			l2 = ((const struct rte_ether_hdr *)ip - 1)->src_addr;
	}
	rte_pktmbuf_free(m);
	r->ctr.nd_advertisements_sent++;
	send_nd(r, in_port, ND_NEIGHBOR_ADVERT,
		ND_FLAG_ROUTER | ND_FLAG_OVERRIDE | (src_unspecified ? 0 : ND_FLAG_SOLICITED), tgt,
		dst, tgt, &l2);
}

void nd_input(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);
	const struct nd_message *nd = (const struct nd_message *)(ip + 1);
	uint32_t len = rte_pktmbuf_data_len(m) - IPV6_HDR_LEN;
	static const uint8_t unspecified[16];
	const uint8_t *ll;
	int bad;

	/* RFC 4861 7.1: hop limit 255 (not routed), code 0, whole message. */
	if (ip->hop_limits != ND_HOP_LIMIT || nd->code != 0 || len < ND_MESSAGE_LEN ||
	    nd->target[0] == 0xff) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	ll = find_ll_option(
		(const uint8_t *)(nd + 1), len - ND_MESSAGE_LEN,
		nd->type == ND_NEIGHBOR_SOLICIT ? ND_OPTION_SOURCE_LL : ND_OPTION_TARGET_LL, &bad);
	if (bad || (ll != NULL && memcmp(ip->src_addr, unspecified, 16) == 0)) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (nd->type == ND_NEIGHBOR_ADVERT) {
		/* Only what we asked for: unsolicited advertisements update an
		 * entry but never create one, and without the override flag
		 * never change its link-layer address (RFC 4861 7.2.5). */
		if (ll == NULL || (ll[0] & 1) ||
		    !neighbor_learn(r, 6, in_port, nd->target, ll,
				    nd->flags & ND_FLAG_OVERRIDE ? NEIGH_LEARN_UPDATE
								 : NEIGH_LEARN_NO_OVERRIDE))
			r->ctr.neighbor_unsolicited++;
		advert_to_host(r, m, in_port);
		return;
	}
	if (!is_port_address(&r->tables->ports[in_port], nd->target)) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US); /* someone else's neighbor */
		return;
	}
	solicit_answer(r, m, in_port, ll);
}
