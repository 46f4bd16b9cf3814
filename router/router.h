/* SPDX-License-Identifier: BSD-3-Clause */
/* State of the esgw-router process shared by its files: the configuration
 * tables (rebuilt whole on every push and swapped in between bursts by the
 * data thread, so the fast path takes no locks), the ARP cache, the output
 * batches per ring, and the counters. */
#ifndef ESGW_ROUTER_H
#define ESGW_ROUTER_H

#include <stdint.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "addr.h"
#include "dp.h"
#include "fib.h"
#include "fib6.h"
#include "packet.h"

#define ROUTER_MAX_ADDRS ESGW_MAX_ADDRS_PER_INTERFACE
#define ROUTER_BATCH (2 * ESGW_BURST)
/* Control and rings wake the router; its timers (neighbor_timer,
 * reassembly_timer: every ROUTER_TIMER_US while it runs) need it sooner only
 * while a neighbour request waits for an answer or a datagram for its
 * fragments. Otherwise they only age entries (after 300 s: a second late is
 * nothing), so a resting router sleeps ROUTER_IDLE_TIMEOUT_US: 10 of its
 * wake-ups a second were the most of any resting process but rxtx's. */
#define ROUTER_TIMER_US 100000
#define ROUTER_IDLE_TIMEOUT_US 1000000
#define ROUTER_PAUSED_TIMEOUT_US 2000 /* waiting for room in a worker's ring */

/* An interface, indexed by its DPDK port id. */
struct router_port {
	int present;
	char name[64];
	struct rte_ether_addr mac;
	uint32_t mtu;
	uint32_t nb_addrs;
	struct {
		uint32_t addr; /* host byte order */
		uint8_t len;
	} addrs[ROUTER_MAX_ADDRS];
	struct rte_ring *tx_ring;
	uint32_t nb_addrs6; /* IPv6 addresses */
	struct {
		uint8_t addr[16];
		uint8_t len;
	} addrs6[ROUTER_MAX_ADDRS];
};

/* What a packet into or out of the tunnel reads comes first, in one cache
 * line: with thousands of tunnels each packet's tunnel is a miss. */
struct router_tunnel {
	uint32_t sa_out_slot;
	uint32_t worker; /* crypto worker of the outbound SA */
	uint32_t local, remote;
	/* Outer next hop, resolved from the FIB when the tables are built. */
	uint32_t outer_nexthop;
	uint16_t outer_port;
	uint8_t outer_resolved;
	/* IPv6 outer header: local6/remote6/outer_nexthop6 instead. */
	uint8_t outer_ipv6;
	/* ESP overhead of the outbound SA's algorithm (tunnel.c): the inner
	 * packet may have ((mtu - overhead_fixed) / block) * block - 2 bytes. */
	uint16_t overhead_fixed;
	uint8_t block_len;
	uint8_t local6[16], remote6[16], outer_nexthop6[16];
	char name[64];
} __attribute__((aligned(64)));

/* Inbound SA by SPI (open addressing): 32 bytes, so that in the table
 * (page-aligned: esgw_slot_table_alloc) an entry never spans two lines. */
struct router_sa_in {
	uint32_t spi;
	uint32_t slot;
	uint16_t worker;
	uint16_t udp_port;   /* RFC 3948: our UDP port it arrives on; 0: plain ESP */
	uint8_t remote_ipv6; /* an IPv6 tunnel: remote6, else remote */
	uint8_t used;
	union {
		uint32_t remote; /* outer source the SA's tunnel expects */
		uint8_t remote6[16];
	};
};
_Static_assert(sizeof(struct router_sa_in) == 32, "router_sa_in: two to a cache line");

#define ROUTER_NATT_PORTS_MAX ESGW_MAX_NATT_PORTS
struct spd_table;

/* What a change applied in place (config_delta.c) needs of the configuration
 * the tables hold: each SA by id, each tunnel by name and its inbound SAs,
 * how many SAs use each NAT-T port. Built with the tables, kept up to date by
 * each change. */
struct router_sa_conf {
	uint32_t id, slot, worker, spi, algorithm, udp_sport;
	uint8_t udp_encap, used;
};
struct router_tunnel_in {
	uint32_t n;
	uint32_t *spi, *slot;
};

struct router_tables {
	uint64_t generation;
	uint32_t workers; /* 0: not told, do not check */
	struct router_port ports[ESGW_MAX_PORTS];
	struct fib fib;
	struct fib6 fib6; /* IPv6 routes (fib6.c) */
	struct router_tunnel *tunnels;
	uint32_t nb_tunnels;
	struct router_sa_in *sa_in;
	uint32_t sa_in_mask;   /* table size - 1, a power of two minus one */
	struct spd_table *spd; /* NULL: no policies (spd.c) */
	/* Local ports of UDP-encapsulated SAs, 4500 always among them (natt.c). */
	uint16_t natt_ports[ROUTER_NATT_PORTS_MAX];
	uint32_t nb_natt_ports;
	/* By inbound SA slot: index + 1 of its tunnel, 0 for none (source_check.c);
	 * max_sas entries: the dataplane's --max-sas, every slot index below it. */
	uint32_t *sa_tunnel;
	uint32_t max_sas;
	/* For changes in place (config_delta.c); open addressing, linear probing. */
	struct router_sa_conf *sa_conf; /* by id */
	uint32_t sa_conf_mask, sa_conf_used;
	uint32_t *tunnel_by_name; /* index + 1 of the tunnel, 0: free */
	uint32_t tunnel_by_name_mask;
	struct router_tunnel_in *tunnel_in; /* by tunnel index */
	uint32_t tunnels_cap;               /* of tunnels and tunnel_in */
	uint32_t sa_in_used;
	uint32_t natt_refs[ROUTER_NATT_PORTS_MAX]; /* SAs using natt_ports[i] */
};

#define FOREACH_ROUTER_COUNTER(X)                                                                  \
	X(rx_packets)                                                                              \
	X(tx_packets)                                                                              \
	X(to_crypto)                                                                               \
	X(from_crypto)                                                                             \
	X(arp_requests_sent)                                                                       \
	X(arp_replies_sent)                                                                        \
	X(icmp_echo_replies)                                                                       \
	X(icmp_errors_sent)                                                                        \
	X(nd_solicitations_sent)                                                                   \
	X(nd_advertisements_sent)                                                                  \
	X(icmp6_echo_replies)                                                                      \
	X(icmp6_errors_sent)                                                                       \
	X(fragments_sent)                                                                          \
	X(datagrams_reassembled)                                                                   \
	X(natt_keepalive)                                                                          \
	X(punted)                                                                                  \
	X(reassembly_evicted)                                                                      \
	X(neighbor_held)                                                                           \
	X(neighbor_evicted)                                                                        \
	X(neighbor_unsolicited)                                                                    \
	X(neighbor_off_subnet)                                                                     \
	X(punted_ike)                                                                              \
	X(punted_neighbor)                                                                         \
	X(punted_tcp)                                                                              \
	X(punted_other)                                                                            \
	X(punt_policed_ike)                                                                        \
	X(punt_policed_neighbor)                                                                   \
	X(punt_policed_tcp)                                                                        \
	X(punt_policed_other)                                                                      \
	X(egress_entries_written)                                                                  \
	X(egress_invalidations)

struct router_counters {
#define ROUTER_COUNTER_FIELD(name) uint64_t name;
	FOREACH_ROUTER_COUNTER(ROUTER_COUNTER_FIELD)
#undef ROUTER_COUNTER_FIELD
	uint64_t drops[ESGW_DROP_MAX];
};

struct ring_batch {
	uint32_t n;
	struct rte_mbuf *pkts[ROUTER_BATCH];
};

/* A HANDOVER marker still to enqueue into worker from's ring (handover.c). */
struct router_handover {
	uint32_t slot;
	uint16_t from, to;
};

/* What the host is sent (punt.c), each class with its own budget. */
enum punt_class { PUNT_IKE, PUNT_NEIGHBOR, PUNT_TCP, PUNT_OTHER, PUNT_CLASSES };

/* A decrypted packet's way out, to be written down for its worker once the
 * round's packets are on their rings (egress.c). */
#define ROUTER_EGRESS_NOTES 64
struct egress_note {
	uint32_t slot;
	uint32_t src, dst; /* network order */
	uint16_t port;
	uint16_t worker;
	struct rte_ether_addr mac;
	uint64_t fresh_until;
};

struct router {
	struct esgw_dp dp; /* first: the control callbacks get &router.dp */
	struct rte_ring *router_in;
	struct rte_ring *crypto_ring[ESGW_MAX_WORKERS];
	struct rte_ring *decrypted_ring[ESGW_MAX_WORKERS]; /* from crypto worker N */
	struct router_tables *tables;
	struct rte_ring *punt_ring;   /* to the host's TAP via rxtx (punt.c); may be NULL */
	struct neighbor_table *neigh; /* ARP and ND (neighbor.c) */
	struct ring_batch tx[ESGW_MAX_PORTS];
	struct ring_batch crypto[ESGW_MAX_WORKERS];
	/* Workers whose crypto batch holds packets (ring_batch.c): the flush
	 * visits these, not every worker. */
	uint16_t crypto_queued[ESGW_MAX_WORKERS];
	uint32_t nb_crypto_queued;
	/* Workers whose decrypted ring the router polls (main.c): 0..N-1 for
	 * the configured N, then those above it until their ring is empty. */
	uint16_t active[ESGW_MAX_WORKERS];
	uint32_t nb_active;
	uint32_t active_for; /* the N the list was built for; 0: not yet */
	/* Backpressure (main.c): router_in waits while a worker's ring is full;
	 * since when that worker took nothing (TSC, 0: it did). */
	struct router_stall {
		uint64_t since;
		uint32_t tail;
	} stall[ESGW_MAX_WORKERS];
	bool paused;
	struct router_counters ctr;
	uint64_t hz;  /* TSC ticks per second */
	uint64_t now; /* TSC at the start of the current burst */
	uint64_t next_timer;  /* TSC of the next ARP timer run */
	uint64_t icmp_window; /* TSC second in which icmp_budget counts */
	uint32_t icmp_budget;
	uint64_t punt_window; /* TSC start of the window in which punt_budget counts */
	uint32_t punt_budget[PUNT_CLASSES];
	struct router_handover *handovers; /* markers the ring refused, dp.max_sas at most */
	uint32_t nb_handovers;
	struct reassembly_table *reasm; /* IPv4 and IPv6 fragments to us (reassembly.c) */
	/* egress.c: 1 + the worker whose decrypted ring is being polled (0: none),
	 * the notes of this round, and from the last resolution of a neighbour
	 * (neighbor_resolve) until when it may be written down (TSC). */
	uint32_t egress_from;
	uint32_t nb_egress_notes;
	struct egress_note egress_notes[ROUTER_EGRESS_NOTES];
	uint64_t neigh_fresh_until;
};

static inline struct router *router_of(struct esgw_dp *dp)
{
	return (struct router *)dp;
}

/* A packet the router makes (ARP, ND, ICMP errors): its metadata zeroed,
 * not what the mbuf carried last (a stale kind or SA slot would pass it off
 * as a worker's decrypted packet: egress.c, router_send_tx). */
static inline struct rte_mbuf *router_mbuf_alloc(struct router *r)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(r->dp.pool);

	if (m != NULL)
		memset(esgw_meta(m), 0, sizeof(struct esgw_meta));
	return m;
}

static inline void router_drop(struct router *r, struct rte_mbuf *m, enum esgw_drop reason)
{
	esgw_drop(m, r->ctr.drops, reason);
}

/* egress.c: decrypted packets' ways out, for their workers to send the
 * next ones of the same addresses straight to rxtx. egress_invalidate: what
 * was written down no longer holds (tables, neighbours, our start);
 * egress_note: m (a decrypted IPv4 packet, its Ethernet header on) goes out
 * of port to mac; egress_publish: after router_flush, writes the notes. */
void egress_invalidate(struct router *r);
void egress_note(struct router *r, struct rte_mbuf *m, uint16_t port, const struct rte_ether_addr *mac);
void egress_publish(struct router *r);

/* config.c */
int router_config_apply(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen);
/* Empty tables for max_sas SA runtime slots; NULL: out of memory. */
struct router_tables *router_tables_new(uint32_t max_sas);
void router_tables_free(struct router_tables *t);
/* config_tunnel.c: the SPI table's lookup. */
const struct router_sa_in *router_sa_in_lookup(const struct router_tables *t, uint32_t spi);
/* config_delta.c: a DpConfigDelta applied to r->tables in place; 1 (nothing
 * changed) for a change it leaves to a whole push. */
int router_config_delta(struct esgw_dp *dp, const Esgw__DpConfigDelta *d, char *err,
			size_t errlen);
/* The SA of id in t's kept configuration, as the DpSa fields the tunnels
 * use (into buf), or NULL. */
const Esgw__DpSa *router_sa_conf_find(const struct router_tables *t, uint32_t id, Esgw__DpSa *buf);
/* What changes in place keep beside the tables, from cfg (a whole push). */
int config_delta_index(struct router_tables *t, const Esgw__DpConfig *cfg);
/* How many SAs use each of t->natt_ports (after natt_ports_build). */
void config_delta_natt_refs(struct router_tables *t);
/* config_tunnel.c, for changes: tunnel tc added at the end (its SAs from the
 * kept configuration), the tunnel at index removed (the last one moves into
 * its place), or the tunnel at index replaced by tc of the same name (a
 * rekey: its SAs switched; its number, and so the routes into it, kept).
 * 0, or -1 with err. */
int config_tunnel_add(struct router_tables *t, const Esgw__DpTunnel *tc, char *err, size_t errlen);
/* The index of the tunnel called name, or -1. */
int config_tunnel_find(const struct router_tables *t, const char *name);
void config_tunnel_remove(struct router_tables *t, uint32_t index);
int config_tunnel_replace(struct router_tables *t, uint32_t index, const Esgw__DpTunnel *tc,
			  char *err, size_t errlen);
/* The outer next hop of the tunnels (of prefix's family) whose remote is in
 * prefix looked up again (a route of that prefix came or went). */
void config_tunnel_resolve_in(struct router_tables *t, const struct esgw_addr *prefix);
/* Slot i of an open-addressing table (linear probing) of mask + 1 entries of
 * size bytes emptied, the entries after it moved back where their home
 * (home_of) allows, so that lookups stop at the first empty entry still. */
void probe_remove(void *table, size_t size, uint32_t mask, uint32_t i,
		  uint32_t (*home_of)(const void *entry), int (*used)(const void *entry));
/* The hash of those tables' 32-bit keys (SPIs, SA ids): Knuth's
 * multiplicative hash, which spreads sequential keys. */
static inline uint32_t probe_hash(uint32_t key)
{
	return key * 2654435761u;
}
/* config.c: the gateway address to use as source toward dst (ICMP it originates). */
uint32_t router_source_address(const struct router_tables *t, uint32_t dst);

/* ring_batch.c: queue for a ring; flushed when full and at the end of a burst. */
void router_send_tx(struct router *r, uint16_t port, struct rte_mbuf *frame);
void router_send_crypto(struct router *r, uint32_t worker, struct rte_mbuf *m);
void router_flush(struct router *r);

/* forward.c: both IP families, from the input rings to a port or a tunnel */
/* Whatever arrives on the router's input rings: a frame from a port (kind
 * RX) or a decrypted IPv4 or IPv6 packet (kind DECRYPTED): validated, then
 * delivered locally (local.c) or forwarded with its TTL or hop limit
 * decremented. Consumes m. The fuzz target's entry too. */
void forward_input(struct router *r, struct rte_mbuf *m);
/* Route and send an IPv4 or IPv6 packet without L2 whose TTL or hop limit
 * is final (forwarded after decrement, originated by the gateway, or held
 * for ARP or ND until now). Consumes m. */
void forward_output(struct router *r, struct rte_mbuf *m);

/* prefetch.c: the table entries forward_input will read for m, asked of
 * the cache ahead of it in a burst: _lookups first (the FIB index, the SPI
 * table), _routes a few packets later (the routes' slots the index names),
 * _targets a few packets after that (the tunnels they lead to). Hints
 * only: m is not changed nor trusted. */
struct router_ahead {
	uint32_t dst, src; /* host byte order, if ipv4 */
	uint32_t dst_slot; /* the FIB index's slot of dst (0: none), from _routes */
	uint32_t sa_slot;  /* a decrypted packet's SA, else UINT32_MAX */
	uint8_t ipv4;      /* an IPv4 packet: the rest is set */
};
void prefetch_lookups(const struct router *r, struct rte_mbuf *m, struct router_ahead *a);
void prefetch_routes(const struct router *r, struct router_ahead *a);
void prefetch_targets(const struct router *r, const struct router_ahead *a);
/* Below this many tunnels the tables stay in the cache of their own accord
 * and asking ahead is only work (the FIB probed twice, the header read
 * early): the burst loop does not call them. */
#define PREFETCH_MIN_TUNNELS 64

/* local.c: an IPv4 or IPv6 packet (no L2) to one of the gateway's addresses,
 * or (to_multicast, IPv6) to a group of a port of ours, past forward.c's
 * checks: reassembled if a fragment, then to ICMP, ICMPv6, ESP, ESP in UDP,
 * or the host's stack. Consumes m. */
void local_input(struct router *r, struct rte_mbuf *m, int is_ip6, int to_multicast);

/* The parts of the tables config.c has the other files build, in this
 * order, each 0 or -1 with err. config_fib.c: t->fib and t->fib6 from the
 * ports' addresses and cfg's routes. */
int config_fib_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen);
/* config_tunnel.c: t->tunnels (with their outer next hop, from the FIBs) and
 * the SPI table. */
int config_tunnel_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err,
			size_t errlen);
/* config.c, for the builders: NULL or -1 where the id or name is unknown. */
int router_port_by_name(const struct router_tables *t, const char *name);
int router_tunnel_by_name(const Esgw__DpConfig *cfg, const char *name);
const Esgw__DpSa *router_sa_by_id(const Esgw__DpConfig *cfg, uint32_t id);

/* neighbor.c: the neighbour table of ARP and ND */
int neighbor_table_init(struct router *r);
void neighbor_table_free(struct router *r);
/* An IPv4 address (host order) as a neighbour table address: big-endian
 * in the first four bytes, the rest zero. Written as two 8-byte words, the
 * width neighbor.c reads a key with: a wider load over narrower stores
 * would wait for them to reach the cache (a failed store-to-load forward,
 * twice per packet routed to a port). */
static inline void neighbor_addr4(uint32_t ip, uint8_t addr[16])
{
	uint8_t be[4];
	uint64_t word = 0;

	write_be32(be, ip);
	memcpy(&word, be, 4); /* the first four bytes of the first word */
	memcpy(addr, &word, 8);
	word = 0;
	memcpy(addr + 8, &word, 8);
}
/* MAC of addr (family 4 or 6) on port: 1 with mac filled, or 0 after
 * holding m (a request or solicitation is sent) or dropping it
 * (ARP_UNRESOLVED). Held packets go through forward_output again once
 * resolved. */
int neighbor_resolve(struct router *r, uint8_t family, uint16_t port, const uint8_t addr[16],
		     struct rte_mbuf *m, struct rte_ether_addr *mac);
enum neighbor_how {
	NEIGH_LEARN_CREATE,      /* a request to us from an on-link sender: may create */
	NEIGH_LEARN_UPDATE,      /* a reply, an advertisement with override: existing only */
	NEIGH_LEARN_NO_OVERRIDE, /* an advertisement without override: never a new MAC */
};
/* What a message says of addr on port; 1 if an entry was made or changed. */
int neighbor_learn(struct router *r, uint8_t family, uint16_t port, const uint8_t addr[16],
		   const uint8_t mac[6], enum neighbor_how how);
void neighbor_timer(struct router *r, uint64_t now);
/* Whether an entry waits for an answer (its next request is due within a
 * second): the router then sleeps no longer than its timer period. */
int neighbor_waiting(const struct router *r);
/* Drop entries (and held packets) of ports not present in t. */
void neighbor_prune(struct router *r, const struct router_tables *t);
/* Static neighbours of cfg: refused (-1, err) if one is not valid, or
 * there are too many; made permanent by _apply (after the tables swap). */
int neighbor_static_check(const struct router_tables *t, const Esgw__DpConfig *cfg, char *err,
			  size_t errlen);
void neighbor_static_apply(struct router *r, const Esgw__DpConfig *cfg);
struct neighbor_gauges {
	uint32_t entries, incomplete, permanent, held;
};
void neighbor_gauges(const struct router *r, struct neighbor_gauges *g);
/* Every entry, for a stats query that asks (memory from esgw_dp_stats_alloc). */
Esgw__NeighborInfo **neighbor_list(struct router *r, size_t *n);

/* arp.c */
void arp_input(struct router *r, struct rte_mbuf *m, uint16_t in_port);
void arp_send_request(struct router *r, uint16_t port_id, uint32_t target);
/* MAC of nexthop on port: returns 1 with mac filled, or 0 after holding m
 * (resolution started) or dropping it (ARP_UNRESOLVED). m is an IPv4 packet
 * without L2; when the reply arrives it goes through forward_output again. */
int arp_resolve(struct router *r, uint16_t port, uint32_t nexthop, struct rte_mbuf *m,
		struct rte_ether_addr *mac);

/* icmp.c */
/* An ICMP packet to a gateway address: answers echo requests. Consumes m. */
void icmp_input_local(struct router *r, struct rte_mbuf *m);
/* Send an ICMP error about orig (an IPv4 packet without L2, header as
 * received); orig is not consumed. Rate limited. */
void icmp_send_error(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code);

/* dispatch.c: ESP to and from the crypto workers, both families */
/* ESP to a gateway address (IPv4 or IPv6 packet without L2, ESP right
 * behind the IP header): to the worker of its inbound SA. udp_port: the
 * local port it arrived on in UDP (natt.c has taken the UDP header out), 0
 * for plain ESP; only an SA encapsulated that way takes it. Consumes m. */
void dispatch_decrypt(struct router *r, struct rte_mbuf *m, int is_ip6, uint16_t udp_port);
/* An inner packet (TTL final) into tunnel t, to be encrypted with SA slot
 * sa_slot on worker (the tunnel's outbound SA, or a policy's): the outer
 * next hop by ARP or ND for t's family, then to the worker. Consumes m. */
void dispatch_encrypt(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t,
		      uint32_t sa_slot, uint32_t worker);

/* tunnel.c */
/* Send into tunnel t after checking the inner MTU: too big IPv6 gets
 * ICMPv6 packet too big, too big IPv4 goes to frag_ipv4. Consumes m. */
void tunnel_output(struct router *r, struct rte_mbuf *m, const struct router_tunnel *t);
/* The largest inner packet t carries without exceeding its port's MTU. */
uint32_t tunnel_inner_mtu(const struct router *r, const struct router_tunnel *t);
/* Fill the ESP overhead fields of t from the algorithm of its outbound SA. */
void tunnel_set_overhead(struct router_tunnel *t, unsigned int algorithm);

/* frag.c: an IPv4 packet over mtu: DF -> ICMP fragmentation needed (RFC
 * 1191) and a TOO_BIG drop; else fragments that go through forward_output.
 * Consumes m. */
void frag_ipv4(struct router *r, struct rte_mbuf *m, uint32_t mtu);

/* spd.c: policies (SPD) */
/* Build t->spd from cfg->policies (after the tunnels). 0, or -1 with err. */
int spd_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen);
void spd_free(struct spd_table *spd);
/* An IPv4 packet (no L2) about to be sent by route: if a policy matches, do
 * what it says (protect, drop) and return 1 with m consumed; 0 if the packet
 * goes on by its route (bypass or no policy matched). */
int spd_output(struct router *r, struct rte_mbuf *m);
/* A decrypted packet: 0 if it may go on, -1 if it matches no protect policy
 * of the SA it arrived on (dropped, POLICY_MISMATCH). */
int spd_inbound_check(struct router *r, struct rte_mbuf *m);
/* Whether the decrypted packets of inbound SA slot are checked against
 * protect policies (its tunnel has some). */
int spd_inbound_checked(const struct router_tables *t, uint32_t slot);
/* A packet that arrived in clear, to be forwarded: -1 (dropped:
 * POLICY_CLEARTEXT, POLICY_DISCARD) if the first policy it matches in
 * reverse protects or discards, else 0. */
int spd_cleartext_check(struct router *r, struct rte_mbuf *m);

/* source_check.c: what the source checks need to know of a packet. */
struct source_route {
	int32_t src_tunnel; /* the tunnel its source routes into, -1: none */
	int32_t dst_tunnel; /* the tunnel its destination routes into, -1: none */
	uint8_t martian;    /* a source no host can have */
	uint8_t local;      /* addressed to the gateway itself */
	uint8_t ipv6;
};
/* Martians, cleartext a tunnel or policy covers, the reverse path of
 * decrypted packets: 0 if m may go on, else -1 with m dropped. */
int source_check(struct router *r, struct rte_mbuf *m, const struct source_route *s);

/* natt.c: UDP to a gateway address, IPv4 or IPv6 (UDP right behind the
 * fixed header): RFC 3948 ESP in UDP, NAT keepalives, IKE. Consumes m. */
void natt_input(struct router *r, struct rte_mbuf *m, int is_ip6);
/* Collect the local UDP encapsulation ports of cfg's SAs into t. */
void natt_ports_build(struct router_tables *t, const Esgw__DpConfig *cfg);
/* The local port an inbound SA takes ESP-in-UDP on; 0 for plain ESP. */
uint16_t natt_local_port(const Esgw__DpSa *sa);

/* punt.c: hand an IPv4 or IPv6 packet to one of the gateway's addresses (L2
 * stripped; of a received frame still in the headroom) to the host's own
 * stack through rxtx and a TAP. Consumes m. */
void punt_to_host(struct router *r, struct rte_mbuf *m);
/* The same for IKE (UDP 500, non-ESP-marked NAT-T), with the IKE budget. */
void punt_ike_to_host(struct router *r, struct rte_mbuf *m);
/* A copy for the host of a frame the router consumed itself (an ARP reply
 * or a unicast neighbor advertisement): the host may have asked through the
 * TAP too.
 * Consumes m. */
void punt_frame_to_host(struct router *r, struct rte_mbuf *m, uint16_t in_port);
void punt_ring_lookup(struct router *r);

/* handover.c */
/* Its tables by SA slot (dp.max_sas each), at start: 0, or -1 out of memory. */
int router_handover_init(struct router *r);
/* Between bursts, before new tables replace old: a marker into the old
 * worker's ring for every SA whose worker changes. */
void router_handover_begin(struct router *r, const struct router_tables *old,
			   const struct router_tables *new);
/* Enqueue the markers a full ring or an empty pool refused before. */
void router_handover_retry(struct router *r);
/* A change applied in place (config_delta.c) moved the SA in slot from
 * worker from to worker to: a marker into from's ring (sent at once, or
 * retried). */
void router_handover_moved(struct router *r, uint32_t slot, uint32_t from, uint32_t to);

/* stats.c */
void router_stats(struct esgw_dp *dp, Esgw__DpStats *stats);

/* nd.c */
/* MAC of nexthop on port: 1 with mac filled, or 0 after holding m (a
 * solicitation is sent) or dropping it (ARP_UNRESOLVED). Held packets go
 * through forward_output again once the advertisement arrives. */
int nd_resolve(struct router *r, uint16_t port, const uint8_t nexthop[16], struct rte_mbuf *m,
	       struct rte_ether_addr *mac);
/* A neighbor solicitation or advertisement to us (m: IPv6 packet, icmp at
 * offset IPV6_HDR_LEN, checksum verified). Consumes m. */
void nd_input(struct router *r, struct rte_mbuf *m, uint16_t in_port);
/* A solicitation for target out of port (neighbor.c resolving). */
void nd_send_solicit(struct router *r, uint16_t port_id, const uint8_t target[16]);

/* icmp.c (and for icmp6.c) */
/* ICMP errors and ICMPv6 errors share one budget per second. */
int icmp_rate_allows(struct router *r);
/* icmp_send_error with the second word of the ICMP header set to rest
 * (type 3 code 4: the next-hop MTU in its low 16 bits, RFC 1191). */
void icmp_send_error_rest(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
			  uint32_t rest);

/* icmp6.c */
/* ICMPv6 to a gateway address or to ff02::1 / a solicited-node group. */
void icmp6_input_local(struct router *r, struct rte_mbuf *m, int to_multicast);
/* An ICMPv6 error about orig (not consumed; RFC 4443 2.4 rules; rate
 * limited with the ICMP errors). param: MTU or pointer, else 0. */
void icmp6_send_error(struct router *r, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t param);
/* The ICMPv6 checksum (RFC 4443 2.3) of the message at icmp (len bytes)
 * in the IPv6 packet ip, its checksum field counted as 0. */
uint16_t icmp6_checksum(const struct rte_ipv6_hdr *ip, const void *icmp, uint32_t len);

/* reassembly.c: IPv4 and IPv6 fragments addressed to the gateway */
/* Allocate the table once (on the first configuration). 0, or -1. */
int reassembly_init(struct router *r);
/* Free the table and the fragments it holds (at exit). */
void reassembly_table_free(struct router *r);
/* An IPv4 fragment to a gateway address: returns the whole datagram (one
 * contiguous mbuf) when this fragment completed it, else NULL (held, or
 * dropped with a reason). Consumes m either way. */
struct rte_mbuf *reassembly_input(struct router *r, struct rte_mbuf *m);
/* The same for an IPv6 packet to a gateway address whose fixed header is
 * followed by a fragment header (RFC 8200 4.5): the whole datagram comes out
 * without the fragment header. */
struct rte_mbuf *reassembly6_input(struct router *r, struct rte_mbuf *m);
/* Drop datagrams older than the reassembly timeout. */
void reassembly_timer(struct router *r, uint64_t now);
/* Whether a datagram is being reassembled (and will time out). */
int reassembly_waiting(const struct router *r);
/* Fragments held (mbufs), for the router's stats. */
unsigned int reassembly_mbufs_held(const struct router *r);

#endif
