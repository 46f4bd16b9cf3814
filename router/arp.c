/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP: answers requests for the gateway's addresses on the port they arrive
 * on, learns from requests to us and from replies, resolves next hops with
 * broadcast requests while holding a few packets per unresolved next hop, and
 * ages entries out. */
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "addr.h"
#include "headers.h"
#include "router.h"

#define ARP_CACHE_ENTRIES 1024
#define ARP_BUCKETS 256
#define ARP_HOLD_MAX 4     /* packets queued per unresolved next hop */
#define ARP_REQUESTS_MAX 3 /* unanswered requests before giving up */
#define ARP_REACHABLE_S 300
#define ARP_REFRESH_S 240 /* re-ask when an entry this old is used */
#define ARP_FRAME_LEN (ETHER_HEADER_LEN + ARP_MESSAGE_LEN)

enum arp_state { ARP_FREE = 0, ARP_INCOMPLETE, ARP_REACHABLE };

struct arp_entry {
	uint32_t ip;
	uint16_t port;
	uint8_t state;
	uint8_t nb_held;
	uint8_t requests; /* sent while incomplete */
	int32_t next;     /* chain in a bucket, or the free list */
	struct rte_ether_addr mac;
	uint64_t expires;      /* REACHABLE: removed at this TSC */
	uint64_t refresh_at;   /* REACHABLE: re-ask when used after this */
	uint64_t next_request; /* no request before this TSC */
	struct rte_mbuf *held[ARP_HOLD_MAX];
};

static uint32_t bucket_of(uint32_t ip, uint16_t port)
{
	return ((ip ^ ((uint32_t)port << 24)) * 2654435761u) >> 24; /* 8 bits: ARP_BUCKETS */
}

int arp_cache_init(struct arp_cache *c)
{
	c->entries = calloc(ARP_CACHE_ENTRIES, sizeof(*c->entries));
	c->buckets = malloc(ARP_BUCKETS * sizeof(*c->buckets));
	if (c->entries == NULL || c->buckets == NULL) {
		free(c->entries);
		free(c->buckets);
		return -1;
	}
	for (int b = 0; b < ARP_BUCKETS; b++)
		c->buckets[b] = -1;
	for (int i = 0; i < ARP_CACHE_ENTRIES; i++)
		c->entries[i].next = i + 1 < ARP_CACHE_ENTRIES ? i + 1 : -1;
	c->free_list = 0;
	c->nb_used = 0;
	return 0;
}

static struct arp_entry *entry_find(struct arp_cache *c, uint16_t port, uint32_t ip)
{
	for (int32_t i = c->buckets[bucket_of(ip, port)]; i >= 0; i = c->entries[i].next)
		if (c->entries[i].ip == ip && c->entries[i].port == port)
			return &c->entries[i];
	return NULL;
}

static struct arp_entry *entry_create(struct arp_cache *c, uint16_t port, uint32_t ip)
{
	uint32_t b = bucket_of(ip, port);
	struct arp_entry *e;
	int32_t i = c->free_list;

	if (i < 0)
		return NULL;
	e = &c->entries[i];
	c->free_list = e->next;
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	e->port = port;
	e->next = c->buckets[b];
	c->buckets[b] = i;
	c->nb_used++;
	return e;
}

/* Remove an entry; its held packets are dropped as unresolved. */
static void entry_delete(struct router *r, struct arp_entry *e)
{
	struct arp_cache *c = &r->arp;
	int32_t idx = (int32_t)(e - c->entries);
	int32_t *link = &c->buckets[bucket_of(e->ip, e->port)];

	while (*link != idx)
		link = &c->entries[*link].next;
	*link = e->next;
	for (uint8_t h = 0; h < e->nb_held; h++)
		router_drop(r, e->held[h], ESGW_DROP_ARP_UNRESOLVED);
	e->state = ARP_FREE;
	e->nb_held = 0;
	e->next = c->free_list;
	c->free_list = idx;
	c->nb_used--;
}

void arp_cache_free(struct arp_cache *c)
{
	/* Held mbufs go back to the shared pool: other processes keep using it. */
	for (int i = 0; c->entries != NULL && i < ARP_CACHE_ENTRIES; i++)
		for (uint8_t h = 0; h < c->entries[i].nb_held; h++)
			rte_pktmbuf_free(c->entries[i].held[h]);
	free(c->entries);
	free(c->buckets);
	c->entries = NULL;
	c->buckets = NULL;
}

void arp_cache_prune(struct router *r, const struct router_tables *t)
{
	for (int i = 0; i < ARP_CACHE_ENTRIES; i++) {
		struct arp_entry *e = &r->arp.entries[i];

		if (e->state != ARP_FREE && !t->ports[e->port].present)
			entry_delete(r, e);
	}
}

/* The port address on the next hop's subnet: the source of our request. */
static uint32_t request_source(const struct router_port *port, uint32_t target)
{
	for (uint32_t i = 0; i < port->nb_addrs; i++)
		if (((port->addrs[i].addr ^ target) & esgw_prefix_mask(port->addrs[i].len)) == 0)
			return port->addrs[i].addr;
	/* No subnet: an ARP probe (sender 0.0.0.0) still gets an answer. */
	return port->nb_addrs ? port->addrs[0].addr : 0;
}

static void send_request(struct router *r, uint16_t port_id, uint32_t target)
{
	const struct router_port *port = &r->tables->ports[port_id];
	struct rte_mbuf *m = rte_pktmbuf_alloc(r->dp.pool);
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
	arp_write((uint8_t *)(eth + 1), &msg);
	r->ctr.arp_requests_sent++;
	router_send_tx(r, port_id, m);
}

/* Now resolved: send what waited, through the full output path again since
 * the configuration may have changed meanwhile. */
static void release_held(struct router *r, struct arp_entry *e)
{
	struct rte_mbuf *held[ARP_HOLD_MAX];
	uint8_t n = e->nb_held;

	memcpy(held, e->held, n * sizeof(held[0]));
	e->nb_held = 0;
	for (uint8_t h = 0; h < n; h++)
		router_output_ip(r, held[h]);
}

static void learn(struct router *r, struct arp_entry *e, const uint8_t mac[6])
{
	memcpy(e->mac.addr_bytes, mac, 6);
	e->state = ARP_REACHABLE;
	e->requests = 0;
	e->expires = r->now + ARP_REACHABLE_S * r->hz;
	e->refresh_at = r->now + ARP_REFRESH_S * r->hz;
	e->next_request = 0;
	release_held(r, e);
}

static int is_port_address(const struct router_port *port, uint32_t ip)
{
	for (uint32_t i = 0; i < port->nb_addrs; i++)
		if (port->addrs[i].addr == ip)
			return 1;
	return 0;
}

void arp_input(struct router *r, struct rte_mbuf *m, uint16_t in_port)
{
	const struct router_port *port = &r->tables->ports[in_port];
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	uint8_t *payload = (uint8_t *)(eth + 1);
	struct arp_message msg, reply;
	struct arp_entry *e;
	int for_us;

	if (rte_pktmbuf_data_len(m) < ARP_FRAME_LEN ||
	    arp_parse(payload, rte_pktmbuf_data_len(m) - ETHER_HEADER_LEN, &msg) < 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return;
	}
	for_us = is_port_address(port, msg.target_ip);
	/* RFC 826 merge: refresh what we know; add the sender only when it is
	 * talking to us, so a LAN's broadcast chatter does not fill the cache. A
	 * sender of 0.0.0.0 (a probe) or a multicast MAC teaches nothing. */
	if (msg.sender_ip != 0 && !(msg.sender_mac[0] & 1) &&
	    !is_port_address(port, msg.sender_ip)) {
		e = entry_find(&r->arp, in_port, msg.sender_ip);
		if (e == NULL && for_us)
			e = entry_create(&r->arp, in_port, msg.sender_ip);
		if (e != NULL)
			learn(r, e, msg.sender_mac);
	}
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
	arp_write(payload, &reply);
	memcpy(eth->dst_addr.addr_bytes, msg.sender_mac, 6);
	rte_ether_addr_copy(&port->mac, &eth->src_addr);
	r->ctr.arp_replies_sent++;
	router_send_tx(r, in_port, m);
}

int arp_resolve(struct router *r, uint16_t port, uint32_t nexthop, struct rte_mbuf *m,
		struct rte_ether_addr *mac)
{
	struct arp_entry *e = entry_find(&r->arp, port, nexthop);

	if (e != NULL && e->state == ARP_REACHABLE) {
		if (r->now >= e->refresh_at && r->now >= e->next_request) {
			e->next_request = r->now + r->hz;
			send_request(r, port, nexthop);
		}
		*mac = e->mac;
		return 1;
	}
	if (e == NULL) {
		e = entry_create(&r->arp, port, nexthop);
		if (e == NULL) { /* cache full of live entries */
			router_drop(r, m, ESGW_DROP_ARP_UNRESOLVED);
			return 0;
		}
		e->state = ARP_INCOMPLETE;
		e->requests = 1;
		e->next_request = r->now + r->hz;
		send_request(r, port, nexthop);
	}
	if (e->nb_held == ARP_HOLD_MAX)
		router_drop(r, m, ESGW_DROP_ARP_UNRESOLVED);
	else
		e->held[e->nb_held++] = m;
	return 0;
}

void arp_timer(struct router *r, uint64_t now)
{
	/* The router's other neighbor and fragment timers run at the same
	 * pace; main.c knows only this one. */
	nd_timer(r, now);
	reassembly_timer(r, now);
	if (r->arp.nb_used == 0)
		return;
	for (int i = 0; i < ARP_CACHE_ENTRIES; i++) {
		struct arp_entry *e = &r->arp.entries[i];

		if (e->state == ARP_REACHABLE && now >= e->expires) {
			entry_delete(r, e);
		} else if (e->state == ARP_INCOMPLETE && now >= e->next_request) {
			if (e->requests >= ARP_REQUESTS_MAX) {
				entry_delete(r, e);
				continue;
			}
			e->requests++;
			e->next_request = now + r->hz;
			send_request(r, e->port, e->ip);
		}
	}
}
