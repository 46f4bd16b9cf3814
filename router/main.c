/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-router: the DPDK secondary that does ARP, ICMP and IPv4 forwarding, and
 * hands tunnel traffic to the crypto workers. Options, init, main loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_prefetch.h>

#include "backpressure.h"
#include "log.h"
#include "router.h"

#define ATTACH_TIMEOUT_MS 10000

static struct router router;

static int lookup_rings(struct router *r)
{
	char name[RTE_RING_NAMESIZE];

	r->router_in = rte_ring_lookup(ESGW_RING_ROUTER_IN);
	if (r->router_in == NULL) {
		ESGW_ERR("ring %s not found", ESGW_RING_ROUTER_IN);
		return -1;
	}
	for (uint32_t w = 0; w < r->dp.max_workers; w++) {
		snprintf(name, sizeof(name), ESGW_RING_CRYPTO_FMT, w);
		r->crypto_ring[w] = rte_ring_lookup(name);
		/* We are its one producer: drop a dead predecessor's half enqueue. */
		if (r->crypto_ring[w] != NULL)
			esgw_ring_producer_recover(r->crypto_ring[w]);
		snprintf(name, sizeof(name), ESGW_RING_DECRYPTED_FMT, w);
		r->decrypted_ring[w] = rte_ring_lookup(name);
		if (r->decrypted_ring[w] == NULL) {
			ESGW_ERR("ring %s not found", name);
			return -1;
		}
	}
	return 0;
}

/* The workers to poll: 0..N-1 for the N workers configured (every worker
 * with rings until the first push), then any above N that was polled before
 * and still has decrypted packets for us (a worker being stopped: ctld moved
 * its SAs away first, so once its ring is empty it adds nothing). The cost
 * of a round follows the workers in use, not --max-workers. */
static void router_workers_update(struct router *r)
{
	uint32_t count = r->tables->workers ? r->tables->workers : r->dp.max_workers;
	uint32_t n = 0;

	if (count > r->dp.max_workers)
		count = r->dp.max_workers;
	if (count != r->active_for) {
		uint16_t above[ESGW_MAX_WORKERS];
		uint32_t nb_above = 0;

		for (uint32_t i = 0; i < r->nb_active; i++)
			if (r->active[i] >= count)
				above[nb_above++] = r->active[i];
		for (uint32_t w = 0; w < count; w++)
			r->active[n++] = (uint16_t)w;
		memcpy(&r->active[n], above, nb_above * sizeof(above[0]));
		r->nb_active = n + nb_above;
		r->active_for = count;
	}
	/* Those above count: gone from the list once drained. */
	for (uint32_t i = count; i < r->nb_active;)
		if (rte_ring_count(r->decrypted_ring[r->active[i]]) == 0)
			r->active[i] = r->active[--r->nb_active];
		else
			i++;
}

/* Packets ahead of the one being routed whose headers are prefetched, whose
 * table lookups are prefetched (prefetch.c), whose routes' slots are, and
 * whose routes' targets are: each stage a few packets' work after the one
 * before it, so that its misses have been served when the next stage or
 * forward_input reads (with only two stages, at 10,000 tunnels the route
 * slot missed inside prefetch_targets: 50 cycles a packet at gw1). */
#define DATA_AHEAD 8
/* With the tables prefetched too (PREFETCH_MIN_TUNNELS), the headers go
 * further ahead: prefetch_lookups reads them, LOOKUPS_AHEAD packets ahead. */
#define TABLES_DATA_AHEAD 16
#define LOOKUPS_AHEAD 12
#define ROUTES_AHEAD 7
#define TARGETS_AHEAD 3

/* One burst from one input ring; returns how many packets it took. */
static unsigned int router_poll_ring(struct router *r, struct rte_ring *ring)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	struct router_ahead ahead[ESGW_BURST];
	unsigned int n = rte_ring_dequeue_burst(ring, (void **)pkts, ESGW_BURST, NULL);
	unsigned int data_ahead;
	bool tables;

	/* Written on another core (rxtx, a worker): ask for every mbuf's header
	 * and metadata line at once instead of missing on them one by one. */
	for (unsigned int i = 0; i < n; i++) {
		rte_prefetch0(pkts[i]);
		rte_prefetch0(esgw_meta(pkts[i]));
	}
	r->dp.cycles.rx_packets += n;
	r->dp.cycles.rx_bytes += esgw_burst_bytes(pkts, n);
	/* The headers too, data_ahead packets ahead: one packet ahead, a miss
	 * from another core (hundreds of cycles) outlasts one packet's work. */
	tables = r->tables != NULL && r->tables->nb_tunnels >= PREFETCH_MIN_TUNNELS;
	data_ahead = tables ? TABLES_DATA_AHEAD : DATA_AHEAD;
	for (unsigned int i = 0; i < n && i < data_ahead; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	if (!tables) {
		for (unsigned int i = 0; i < n; i++) {
			if (i + DATA_AHEAD < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + DATA_AHEAD], void *));
			forward_input(r, pkts[i]);
		}
		return n;
	}
	for (unsigned int i = 0; i < n && i < LOOKUPS_AHEAD; i++)
		prefetch_lookups(r, pkts[i], &ahead[i]);
	for (unsigned int i = 0; i < n && i < ROUTES_AHEAD; i++)
		prefetch_routes(r, &ahead[i]);
	for (unsigned int i = 0; i < n && i < TARGETS_AHEAD; i++)
		prefetch_targets(r, &ahead[i]);
	for (unsigned int i = 0; i < n; i++) {
		if (i + TABLES_DATA_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + TABLES_DATA_AHEAD], void *));
		if (i + LOOKUPS_AHEAD < n)
			prefetch_lookups(r, pkts[i + LOOKUPS_AHEAD], &ahead[i + LOOKUPS_AHEAD]);
		if (i + ROUTES_AHEAD < n)
			prefetch_routes(r, &ahead[i + ROUTES_AHEAD]);
		if (i + TARGETS_AHEAD < n)
			prefetch_targets(r, &ahead[i + TARGETS_AHEAD]);
		forward_input(r, pkts[i]);
	}
	return n;
}

/* Whether every crypto worker's ring has room for what router_in may bring
 * (backpressure.h); if not, router_in waits and rxtx, once it is full too,
 * leaves the ports alone. A worker that takes nothing from its full ring for
 * ROUTER_STALL_MS (killed, or restarted and not configured yet) holds the
 * other workers' tunnels up no longer: its packets are dropped at its ring
 * (ring_full) until it takes them again. Not sooner: a worker on a busy
 * shared CPU can wait that long for it (at 10 ms the chain at full load lost
 * tens of thousands of packets a second to workers merely preempted). */
#define ROUTER_STALL_MS 100
static int crypto_rings_have_room(struct router *r, uint64_t now)
{
	/* Workers above the configured count are not fed: only 0..count-1. */
	for (uint32_t i = 0; i < r->nb_active && i < r->active_for; i++) {
		uint32_t w = r->active[i];
		struct rte_ring *ring = r->crypto_ring[w];
		struct router_stall *st = &r->stall[w];
		uint32_t tail;

		if (ring == NULL ||
		    esgw_ring_has_room(ring, ESGW_RING_HIGH, &esgw_shm_worker(r->dp.shared, w)->room_crypto)) {
			st->since = 0;
			continue;
		}
		tail = __atomic_load_n(&ring->cons.tail, __ATOMIC_RELAXED);
		if (st->since == 0 || tail != st->tail) {
			st->since = now;
			st->tail = tail;
			return 0;
		}
		if (now - st->since < r->hz / 1000 * ROUTER_STALL_MS)
			return 0;
	}
	return 1;
}

/* Whether every port's TX ring has room for what a round may bring
 * (backpressure.h): if not, neither router_in nor the workers' decrypted
 * rings are taken until rxtx has drained it to ESGW_RING_LOW, so the packets
 * wait in the rings before us (and, once those are full, in the ports' own
 * rings) instead of being routed only to be dropped at the full TX ring
 * while rxtx waits for the CPU. */
static int tx_rings_have_room(struct router *r)
{
	const struct router_tables *t = r->tables;

	for (uint16_t p = 0; p < ESGW_MAX_PORTS; p++)
		if (t->ports[p].tx_ring != NULL &&
		    !esgw_ring_has_room(t->ports[p].tx_ring, ESGW_RING_HIGH, &r->dp.shared->room_tx))
			return 0;
	return 1;
}

/* One burst from router_in (rxtx), if the workers have room, and from each
 * crypto worker's ring of decrypted packets, if the ports' TX rings have;
 * returns how many packets it took in all. */
static unsigned int router_poll(struct router *r)
{
	unsigned int n = 0;

	r->now = rte_rdtsc();
	router_workers_update(r);
	r->paused = !tx_rings_have_room(r);
	if (r->paused)
		goto timers;
	r->paused = !crypto_rings_have_room(r, r->now);
	if (!r->paused) {
		n = router_poll_ring(r, r->router_in);
		esgw_ring_room_made(&r->dp, r->router_in, ESGW_RING_IN_LOW,
				    &r->dp.shared->room_router_in, &r->dp.shared->db_rxtx);
	}
	for (uint32_t i = 0; i < r->nb_active; i++) {
		uint32_t w = r->active[i];

		if (rte_ring_count(r->decrypted_ring[w]) != 0) {
			r->egress_from = w + 1;
			n += router_poll_ring(r, r->decrypted_ring[w]);
			r->egress_from = 0;
			esgw_ring_room_made(&r->dp, r->decrypted_ring[w], ESGW_RING_LOW,
					    &esgw_shm_worker(r->dp.shared, w)->room_worker_out,
					    &esgw_shm_worker(r->dp.shared, w)->db);
		}
	}
timers:
	if (r->now >= r->next_timer) {
		neighbor_timer(r, r->now);
		reassembly_timer(r, r->now);
		r->next_timer = r->now + r->hz / 1000000 * ROUTER_TIMER_US;
	}
	router_flush(r);
	if (r->nb_egress_notes)
		egress_publish(r); /* after the flush: the rings' tails cover the round */
	return n;
}

static int has_work(void *arg)
{
	struct router *r = arg;

	if (!tx_rings_have_room(r))
		return 0;
	if (rte_ring_count(r->router_in) != 0 && crypto_rings_have_room(r, rte_rdtsc()))
		return 1;
	for (uint32_t i = 0; i < r->nb_active; i++)
		if (rte_ring_count(r->decrypted_ring[r->active[i]]) != 0)
			return 1;
	return 0;
}

static unsigned int idle_timeout_us(const struct router *r)
{
	if (r->paused)
		return ROUTER_PAUSED_TIMEOUT_US;
	if (neighbor_waiting(r) || reassembly_waiting(r))
		return ROUTER_TIMER_US;
	return ROUTER_IDLE_TIMEOUT_US;
}

int main(int argc, char **argv)
{
	struct router *r = &router;
	unsigned int idle = 0, iter = 0;
	int n, rc = 1;

	esgw_log_init("esgw-router");
	n = esgw_dp_eal_init(argc, argv);
	r->dp.role = "router";
	if (esgw_dp_args_parse(&r->dp, argc - n, argv + n, 0) < 0)
		goto out_eal;
	r->dp.listen_fd = r->dp.conn_fd = -1;
	r->dp.on_config = router_config_apply;
	r->dp.on_config_delta = router_config_delta;
	r->dp.on_stats = router_stats;
	r->hz = rte_get_tsc_hz();

	if (esgw_dp_attach(&r->dp, ATTACH_TIMEOUT_MS) < 0 || lookup_rings(r) < 0)
		goto out_eal;
	r->tables = router_tables_new(r->dp.max_sas); /* empty until the first push */
	if (r->tables == NULL || router_handover_init(r) < 0 || neighbor_table_init(r) < 0) {
		ESGW_ERR("out of memory");
		goto out_tables;
	}
	/* What a predecessor wrote down was decided with tables we do not have. */
	egress_invalidate(r);
	if (esgw_dp_ctl_open(&r->dp, "router") < 0)
		goto out_arp;
	ESGW_INFO("ready, control socket %s", r->dp.sock_path);

	while (!esgw_dp_quit) {
		uint64_t begin = rte_rdtsc();
		unsigned int handled = router_poll(r);

		esgw_dp_round_end(&r->dp, begin, handled);
		if (handled) {
			idle = 0;
			if ((++iter & 63) == 0)
				esgw_dp_ctl_poll(&r->dp);
			continue;
		}
		if (++idle < ESGW_IDLE_SPINS)
			continue;
		/* Paused: a worker's wake-up ends it, or the timeout, which also
		 * lets a worker that stopped taking packets be found out. */
		esgw_dp_idle(&r->dp, &r->dp.shared->db_router, idle_timeout_us(r), has_work, r);
	}
	rc = 0;
	ESGW_INFO("stopping");
	esgw_dp_ctl_close(&r->dp);
out_arp:
	neighbor_table_free(r);
	reassembly_table_free(r);
out_tables:
	router_tables_free(r->tables);
out_eal:
	rte_eal_cleanup();
	return rc;
}
