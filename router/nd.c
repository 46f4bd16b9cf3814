/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 neighbor discovery (RFC 4861) for the gateway: answers solicitations
 * for its own addresses with advertisements, resolves next hops with
 * multicast solicitations while holding a few packets per neighbor, learns
 * from advertisements and from solicitations to us, and ages entries out. The
 * neighbor table is small and searched linearly: a gateway has few on-link
 * IPv6 neighbors (its LAN hosts and its WAN next hop). */
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define ND_ENTRIES 256
#define ND_HOLD_MAX 4
#define ND_SOLICITS_MAX 3 /* RFC 4861 10: MAX_MULTICAST_SOLICIT */
#define ND_REACHABLE_S 300
#define ND_REFRESH_S 240
#define ND_HOP_LIMIT 255  /* ND messages must arrive with 255: never routed */
#define ND_MESSAGE_LEN 24 /* type .. target address */
#define ND_OPTION_SOURCE_LL 1
#define ND_OPTION_TARGET_LL 2
#define ND_FLAG_ROUTER 0x80
#define ND_FLAG_SOLICITED 0x40
#define ND_FLAG_OVERRIDE 0x20

enum nd_state { ND_FREE = 0, ND_INCOMPLETE, ND_REACHABLE };

struct nd_entry {
	uint8_t addr[16];
	uint16_t port;
	uint8_t state;
	uint8_t nb_held;
	uint8_t solicits;
	struct rte_ether_addr mac;
	uint64_t expires, refresh_at, next_solicit;
	struct rte_mbuf *held[ND_HOLD_MAX];
};

struct nd_cache {
	struct nd_entry entries[ND_ENTRIES];
	uint32_t nb_used;
};

struct nd_cache *nd_cache_alloc(void)
{
	return calloc(1, sizeof(struct nd_cache));
}

static struct nd_entry *entry_find(struct nd_cache *c, uint16_t port, const uint8_t addr[16])
{
	for (int i = 0; i < ND_ENTRIES; i++)
		if (c->entries[i].state != ND_FREE && c->entries[i].port == port &&
		    memcmp(c->entries[i].addr, addr, 16) == 0)
			return &c->entries[i];
	return NULL;
}

static struct nd_entry *entry_create(struct nd_cache *c, uint16_t port, const uint8_t addr[16])
{
	for (int i = 0; i < ND_ENTRIES; i++) {
		struct nd_entry *e = &c->entries[i];

		if (e->state != ND_FREE)
			continue;
		memset(e, 0, sizeof(*e));
		memcpy(e->addr, addr, 16);
		e->port = port;
		e->state = ND_INCOMPLETE;
		c->nb_used++;
		return e;
	}
	return NULL;
}

static void entry_delete(struct router *r, struct nd_entry *e)
{
	for (uint8_t h = 0; h < e->nb_held; h++)
		router_drop(r, e->held[h], ESGW_DROP_ARP_UNRESOLVED);
	e->nb_held = 0;
	e->state = ND_FREE;
	r->nd->nb_used--;
}

void nd_prune(struct router *r, const struct router_tables *t)
{
	for (int i = 0; r->nd != NULL && i < ND_ENTRIES; i++)
		if (r->nd->entries[i].state != ND_FREE && !t->ports[r->nd->entries[i].port].present)
			entry_delete(r, &r->nd->entries[i]);
}

/* An ND message (ICMPv6 header + target + one link-layer option) from us on
 * port: IPv6 header with hop limit 255, checksum, Ethernet header. */
static void send_nd(struct router *r, uint16_t port_id, uint8_t type, uint8_t flags,
		    const uint8_t src[16], const uint8_t dst[16], const uint8_t target[16],
		    const struct rte_ether_addr *l2_dst)
{
	const struct router_port *port = &r->tables->ports[port_id];
	uint32_t icmp_len = ND_MESSAGE_LEN + 8;
	struct rte_mbuf *m = rte_pktmbuf_alloc(r->dp.pool);
	struct rte_ether_hdr *eth;
	uint8_t *ip, *icmp;

	if (m == NULL) {
		r->ctr.drops[ESGW_DROP_NO_MBUF]++;
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, ETHER_HEADER_LEN + IPV6_HEADER_LEN +
								    icmp_len);
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	ip = (uint8_t *)(eth + 1);
	memset(ip, 0, IPV6_HEADER_LEN + icmp_len);
	ip[0] = 0x60;
	write_be16(ip + 4, (uint16_t)icmp_len);
	ip[6] = IPPROTO_ICMPV6_NUM;
	ip[7] = ND_HOP_LIMIT;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	icmp = ip + IPV6_HEADER_LEN;
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ND_NEIGHBOR_SOLICIT ? ND_OPTION_SOURCE_LL : ND_OPTION_TARGET_LL;
	icmp[25] = 1; /* in units of 8 bytes */
	memcpy(icmp + 26, port->mac.addr_bytes, 6);
	write_be16(icmp + 2, icmp6_checksum(ip, icmp, icmp_len));
	eth->dst_addr = *l2_dst;
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	router_send_tx(r, port_id, m);
}

/* Multicast to the target's solicited-node group (RFC 4861 7.2.2). */
static void send_solicit(struct router *r, uint16_t port_id, const uint8_t target[16])
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

static void release_held(struct router *r, struct nd_entry *e)
{
	struct rte_mbuf *held[ND_HOLD_MAX];
	uint8_t n = e->nb_held;

	memcpy(held, e->held, n * sizeof(held[0]));
	e->nb_held = 0;
	for (uint8_t h = 0; h < n; h++)
		router_output_ip(r, held[h]); /* by version: IPv6 or IPv4 into an IPv6 tunnel */
}

static void learn(struct router *r, struct nd_entry *e, const uint8_t mac[6])
{
	memcpy(e->mac.addr_bytes, mac, 6);
	e->state = ND_REACHABLE;
	e->solicits = 0;
	e->expires = r->now + ND_REACHABLE_S * r->hz;
	e->refresh_at = r->now + ND_REFRESH_S * r->hz;
	e->next_solicit = 0;
	release_held(r, e);
}

int nd_resolve(struct router *r, uint16_t port, const uint8_t nexthop[16], struct rte_mbuf *m,
	       struct rte_ether_addr *mac)
{
	struct nd_entry *e = entry_find(r->nd, port, nexthop);

	if (e != NULL && e->state == ND_REACHABLE) {
		if (r->now >= e->refresh_at && r->now >= e->next_solicit) {
			e->next_solicit = r->now + r->hz;
			send_solicit(r, port, nexthop);
		}
		*mac = e->mac;
		return 1;
	}
	if (e == NULL) {
		e = entry_create(r->nd, port, nexthop);
		if (e == NULL) {
			router_drop(r, m, ESGW_DROP_ARP_UNRESOLVED);
			return 0;
		}
		e->solicits = 1;
		e->next_solicit = r->now + r->hz;
		send_solicit(r, port, nexthop);
	}
	if (e->nb_held == ND_HOLD_MAX)
		router_drop(r, m, ESGW_DROP_ARP_UNRESOLVED);
	else
		e->held[e->nb_held++] = m;
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

	if (esgw_meta(m)->kind != ESGW_PKT_RX || rte_pktmbuf_prepend(m, ETHER_HEADER_LEN) == NULL) {
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

void nd_input(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct router_port *port = &r->tables->ports[in_port];
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *icmp = ip + IPV6_HEADER_LEN, *target = icmp + 8, *ll;
	uint32_t len = rte_pktmbuf_data_len(m) - IPV6_HEADER_LEN;
	static const uint8_t unspecified[16];
	int src_unspecified = memcmp(ip + 8, unspecified, 16) == 0, bad;
	struct nd_entry *e;

	/* RFC 4861 7.1: hop limit 255 (not routed), code 0, whole message. */
	if (ip[7] != ND_HOP_LIMIT || icmp[1] != 0 || len < ND_MESSAGE_LEN || target[0] == 0xff) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	ll = find_ll_option(
		icmp + ND_MESSAGE_LEN, len - ND_MESSAGE_LEN,
		icmp[0] == ND_NEIGHBOR_SOLICIT ? ND_OPTION_SOURCE_LL : ND_OPTION_TARGET_LL, &bad);
	if (bad || (src_unspecified && ll != NULL)) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	if (icmp[0] == ND_NEIGHBOR_ADVERT) {
		/* Only what we asked for: unsolicited advertisements update an
		 * entry but never create one (RFC 4861 7.2.5). */
		e = entry_find(r->nd, in_port, target);
		if (e != NULL && ll != NULL && !(ll[0] & 1))
			learn(r, e, ll);
		advert_to_host(r, m, in_port);
		return;
	}
	if (!ipv6_is_port_address(port, target)) {
		router_drop(r, m, ESGW_DROP_NOT_FOR_US); /* someone else's neighbor */
		return;
	}
	if (!src_unspecified && ll != NULL && !(ll[0] & 1)) {
		e = entry_find(r->nd, in_port, ip + 8);
		if (e == NULL)
			e = entry_create(r->nd, in_port, ip + 8);
		if (e != NULL)
			learn(r, e, ll);
	}
	{
		/* Answer: to the solicitor, or to all nodes during its DAD. */
		static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
		struct rte_ether_addr l2 = {{0x33, 0x33, 0, 0, 0, 1}};
		uint8_t dst[16], tgt[16];

		memcpy(tgt, target, 16);
		if (src_unspecified) {
			memcpy(dst, all_nodes, 16);
		} else {
			memcpy(dst, ip + 8, 16);
			if (ll != NULL)
				memcpy(l2.addr_bytes, ll, 6);
			else /* the frame's source: the Ethernet header is still in front */
				memcpy(l2.addr_bytes, (const uint8_t *)ip - ETHER_HEADER_LEN + 6,
				       6);
		}
		rte_pktmbuf_free(m);
		r->ctr.nd_advertisements_sent++;
		send_nd(r, in_port, ND_NEIGHBOR_ADVERT,
			ND_FLAG_ROUTER | ND_FLAG_OVERRIDE |
				(src_unspecified ? 0 : ND_FLAG_SOLICITED),
			tgt, dst, tgt, &l2);
	}
}

void nd_timer(struct router *r, uint64_t now)
{
	if (r->nd == NULL || r->nd->nb_used == 0)
		return;
	for (int i = 0; i < ND_ENTRIES; i++) {
		struct nd_entry *e = &r->nd->entries[i];

		if (e->state == ND_REACHABLE && now >= e->expires) {
			entry_delete(r, e);
		} else if (e->state == ND_INCOMPLETE && now >= e->next_solicit) {
			if (e->solicits >= ND_SOLICITS_MAX) {
				entry_delete(r, e);
				continue;
			}
			e->solicits++;
			e->next_solicit = now + r->hz;
			send_solicit(r, e->port, e->addr);
		}
	}
}
