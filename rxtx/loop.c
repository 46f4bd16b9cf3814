/* SPDX-License-Identifier: BSD-3-Clause */
/* The forwarding loop: frames from the ports go to the router's input ring,
 * frames on the per-port TX rings go out of their port, punted frames go to
 * the host's TAPs and the host's frames out of their port (punt.c). Sleeps on
 * the rxtx doorbell when idle; a TX enqueue wakes it at once, a frame on an
 * af_packet port, a memif port or a TAP too (port_watch.c, memif_irq.c). A
 * port with no doorbell (a PCI NIC, a memif the driver does not let us put
 * in interrupt mode) is polled: every 50 us within 2 ms of the last packet
 * (esgw_dp_recent), every millisecond when quiet, and every 10 ms once they
 * have been quiet for ~100 ms. */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_prefetch.h>
#include <rte_ring_peek.h>

#include "backpressure.h"
#include "log.h"
#include "rxtx.h"

#define RXTX_CTL_EVERY 64 /* busy rounds between control socket polls */

/* Whether the router has room for more frames (backpressure.h): if not, the
 * ports are left alone until it has, and their own rings hold (or drop) what
 * arrives meanwhile, at no cost to the CPU the router needs. */
static int router_has_room(struct rxtx *rx)
{
	return esgw_ring_has_room(rx->router_in, ESGW_RING_IN_HIGH, &rx->dp.shared->room_router_in);
}

/* One RX burst from every port. Returns the number of frames received. */
static unsigned int rx_round(struct rxtx *rx)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	unsigned int total = 0, enqueued = 0;

	rx->paused = !router_has_room(rx);
	if (rx->paused) {
		rx->rx_paused++;
		return 0;
	}
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i];
		uint64_t called = rte_rdtsc(), now;
		uint16_t n = rte_eth_rx_burst(port, 0, pkts, ESGW_BURST);
		unsigned int sent;

		now = rte_rdtsc();
		rx->dp.cycles.driver_pending += now - called;
		if (n == 0)
			continue;
		/* Metadata lines no one touched since the mbufs were last
		 * freed: stores that miss one after another fill the store
		 * buffer; asked for together, their misses overlap. */
		for (uint16_t k = 0; k < n; k++)
			rte_prefetch0_write(esgw_meta(pkts[k]));
		for (uint16_t k = 0; k < n; k++) {
			struct esgw_meta *meta = esgw_meta(pkts[k]);

			meta->kind = ESGW_PKT_RX;
			meta->in_port = port;
			meta->timestamp = now;
		}
		sent = rte_ring_enqueue_burst(rx->router_in, (void **)pkts, n, NULL);
		/* Not enqueued: still ours, and the router is behind. */
		for (unsigned int k = sent; k < n; k++)
			esgw_drop(pkts[k], rx->drops, ESGW_DROP_RING_FULL);
		rx->rx_packets += n;
		enqueued += sent;
		total += n;
	}
	/* Once per round, not per port: one wake-up covers every burst. Rung
	 * now rather than at the end of the round: the transmit half of the
	 * round (a system call per burst on af_packet ports) would hold the
	 * router back, which measurably slows a TCP flow through the tunnel. */
	if (enqueued) {
		esgw_dp_wake(&rx->dp, &rx->dp.shared->db_router);
		esgw_doorbells_round(&rx->dp.bells, enqueued, rte_rdtsc());
	}
	return total;
}

/* The first two lines of each frame's data, which the port's transmit
 * function copies (memif) or hands on: written on another core (by a
 * worker, or the router), they would otherwise miss one frame after
 * another inside the PMD. The mbuf headers must be on their way already.
 * And each mbuf's second line (next, nb_segs' neighbours), which memif's
 * transmit reads as it frees the mbuf after the copy: no stage before
 * touches it, and with thousands of tunnels their state evicts it. */
static void prefetch_frames(struct rte_mbuf *const pkts[], unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		const char *data = rte_pktmbuf_mtod(pkts[k], const char *);

		rte_prefetch0(data);
		rte_prefetch0(data + RTE_CACHE_LINE_SIZE);
		rte_mbuf_prefetch_part2(pkts[k]);
	}
}

/* A burst from a crypto worker's ring. The worker wrote the frames on
 * another core: ask for every metadata line (out_port) and mbuf header (the
 * PMD's) at once rather than miss on them one by one. */
static unsigned int worker_ring_take(struct rte_ring *ring, struct rte_mbuf *pkts[ESGW_BURST])
{
	unsigned int n = rte_ring_dequeue_burst(ring, (void **)pkts, ESGW_BURST, NULL);

	for (unsigned int k = 0; k < n; k++) {
		rte_prefetch0(esgw_meta(pkts[k]));
		rte_prefetch0(pkts[k]);
	}
	return n;
}

/* One burst from a crypto worker's ring: frames for any port, each sent out
 * of its meta->out_port, in ring order per port. */
static unsigned int worker_tx_burst(struct rxtx *rx, unsigned int w)
{
	struct rte_ring *ring = rx->worker_tx[w];
	struct rte_mbuf *pkts[ESGW_BURST], *by_port[ESGW_MAX_PORTS][ESGW_BURST];
	uint16_t count[ESGW_MAX_PORTS] = {0};
	unsigned int n = worker_ring_take(ring, pkts);

	esgw_ring_room_made(&rx->dp, ring, ESGW_RING_LOW,
			    &esgw_shm_worker(rx->dp.shared, w)->room_worker_out,
			    &esgw_shm_worker(rx->dp.shared, w)->db);
	prefetch_frames(pkts, n);
	for (unsigned int k = 0; k < n; k++) {
		uint16_t port = esgw_meta(pkts[k])->out_port;

		if (port >= ESGW_MAX_PORTS || rx->tx[port] == NULL)
			esgw_drop(pkts[k], rx->drops, ESGW_DROP_TX_FAILED);
		else
			by_port[port][count[port]++] = pkts[k];
	}
	for (uint16_t port = 0; port < ESGW_MAX_PORTS; port++)
		if (count[port])
			rxtx_tx_send(rx, port, by_port[port], count[port]);
	return n;
}

/* How many of the n frames the router sent for a port may go now: the first
 * that waits for a crypto worker's frames to rxtx and all after it stay in
 * the ring. The worker sent that decrypted packet through the router after
 * sending others of its SA straight to us (crypto-worker/egress.c): it goes
 * once we have taken the worker's ring as far as it stood then
 * (esgw_meta.order_pos), which this round's worker bursts do. */
static unsigned int order_ready(struct rxtx *rx, struct rte_mbuf *const pkts[], unsigned int n)
{
	uint32_t polled = esgw_workers_polled(rx->dp.shared);

	for (unsigned int k = 0; k < n; k++) {
		const struct esgw_meta *meta = esgw_meta(pkts[k]);
		const struct rte_ring *ring;
		uint32_t pos = meta->order_pos;

		if (meta->order_worker == 0 || meta->order_worker > polled)
			continue;
		ring = rx->worker_tx[meta->order_worker - 1];
		if ((int32_t)(ring->cons.tail - pos) >= 0)
			continue; /* taken already */
		/* A place the ring never reached is no order of a live worker's. */
		if ((int32_t)(__atomic_load_n(&ring->prod.tail, __ATOMIC_ACQUIRE) - pos) < 0)
			continue;
		rx->tx_order_waits++;
		return k;
	}
	return n;
}

/* The frames ports refused last time (tx_hold.c), then one burst from every
 * port's TX ring (the router's) and from every crypto worker's ring, but
 * none for a port that still holds frames: none of the workers' while any
 * port does. Returns the number of frames sent or dequeued. */
static unsigned int tx_round(struct rxtx *rx)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	unsigned int total = rxtx_tx_hold_flush(rx);

	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i];
		unsigned int n;

		if (rx->hold[port].n > 0)
			continue;
		/* Peeked: what must wait for a worker's ring stays in the ring. */
		n = rte_ring_dequeue_burst_start(rx->tx[port], (void **)pkts, ESGW_BURST, NULL);
		if (n == 0)
			continue;
		for (unsigned int k = 0; k < n; k++) {
			rte_prefetch0(pkts[k]);
			rte_prefetch0(esgw_meta(pkts[k]));
		}
		n = order_ready(rx, pkts, n);
		rte_ring_dequeue_finish(rx->tx[port], n);
		if (n == 0)
			continue;
		esgw_ring_room_made(&rx->dp, rx->tx[port], ESGW_RING_LOW, &rx->dp.shared->room_tx,
				    &rx->dp.shared->db_router);
		prefetch_frames(pkts, n);
		rxtx_tx_send(rx, port, pkts, (uint16_t)n);
		total += n;
	}
	for (unsigned int w = 0; w < esgw_workers_polled(rx->dp.shared) && rx->nb_holding == 0; w++)
		if (rte_ring_count(rx->worker_tx[w]) != 0)
			total += worker_tx_burst(rx, w);
	return total;
}

/* Called after the doorbell announced our sleep: anything on a TX ring that
 * tx_round would take, or room again in the router's ring after a pause? */
static int tx_pending(void *arg)
{
	struct rxtx *rx = arg;

	if (rx->dp.shared->room_router_in.wanted &&
	    rte_ring_count(rx->router_in) < ESGW_RING_IN_HIGH)
		return 1;
	for (uint16_t i = 0; i < rx->nb_ports; i++)
		if (rx->hold[rx->ports[i]].n == 0 && rte_ring_count(rx->tx[rx->ports[i]]) != 0)
			return 1;
	for (unsigned int w = 0; w < esgw_workers_polled(rx->dp.shared) && rx->nb_holding == 0; w++)
		if (rte_ring_count(rx->worker_tx[w]) != 0)
			return 1;
	return rx->punt != NULL && rte_ring_count(rx->punt) != 0;
}

/* How long to sleep: briefly after recent traffic on a port without a
 * socket to watch (esgw_dp_recent), else by how long the ports were quiet. */
static unsigned int sleep_timeout_us(const struct rxtx *rx, unsigned int sleeps)
{
	if (rx->nb_holding > 0) /* nothing tells us when a port has room */
		return ESGW_RECENT_TIMEOUT_US;
	/* A memif peer's eventfd wakes rxtx only after the peer's write, which
	 * these polls beat while a flow lasts. */
	if (!rx->watch_sockets_all && !rx->paused && esgw_dp_recent(&rx->dp))
		return ESGW_RECENT_TIMEOUT_US;
	if (rx->watch_all)
		return RXTX_WATCHED_TIMEOUT_US;
	return sleeps < RXTX_DEEP_IDLE_AFTER ? RXTX_IDLE_TIMEOUT_US : RXTX_DEEP_IDLE_TIMEOUT_US;
}

void rxtx_loop(struct rxtx *rx)
{
	unsigned int idle = 0, iter = 0, sleeps = 0;

	while (!esgw_dp_quit) {
		uint64_t begin = rte_rdtsc();
		/* Punts, and the host's frames from the TAPs every TAP_POLL_US
		 * (punt.c). */
		unsigned int n = rx_round(rx) + tx_round(rx) + rxtx_punt_round(rx);

		esgw_dp_round_end(&rx->dp, begin, n);
		if (n) {
			if (rx->memif_unmasked)
				rxtx_memif_irq_mask(rx);
			idle = 0;
			sleeps = 0;
			if ((++iter & (RXTX_CTL_EVERY - 1)) == 0)
				esgw_dp_ctl_poll(&rx->dp);
			continue;
		}
		if (++idle < ESGW_IDLE_SPINS)
			continue;
		if (!rx->memif_unmasked && !rx->paused && !rx->dp.busy_poll &&
		    sleep_timeout_us(rx, sleeps) > ESGW_RECENT_TIMEOUT_US) {
			/* A long sleep: memif peers write the rings' eventfds
			 * from now on; one more round takes what came before
			 * (memif_irq.c). */
			rxtx_memif_irq_unmask(rx);
			continue;
		}
		rxtx_port_watch_update(rx); /* memif eventfds only while unmasked */
		if (sleeps < RXTX_DEEP_IDLE_AFTER)
			sleeps = rx->watch_all ? RXTX_DEEP_IDLE_AFTER : sleeps + 1;
		/* A frame on a port wakes us too (port_watch.c). */
		rxtx_port_watch_sleep(rx, sleep_timeout_us(rx, sleeps), tx_pending);
		if (rx->memif_unmasked)
			rxtx_memif_irq_mask(rx);
		if (rx->dp.busy_poll)
			idle = 0; /* no sleep happened */
	}
}
