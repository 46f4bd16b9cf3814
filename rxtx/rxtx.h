/* SPDX-License-Identifier: BSD-3-Clause */
/* State of esgw-rxtx, the DPDK primary, shared by its files: the objects it
 * created for the other processes, its ports, and its own counters. */
#ifndef ESGW_RXTX_H
#define ESGW_RXTX_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "dp.h"

/* How long a sleeping rxtx sleeps (loop.c). Ports without a doorbell
 * (port_watch.c) are polled: every millisecond when quiet, since a timed
 * wake-up costs ~35 us of CPU on a VM (timer, two context switches), 1 ms
 * sleeps alone would be ~3.5% of a core for a gateway with no traffic; after
 * RXTX_DEEP_IDLE_AFTER quiet sleeps (~100 ms) every 10 ms, the longest the
 * first frame of the next burst may wait there (~0.4% of a core). When every
 * port and TAP has a doorbell, the timed wake-up is only a safety net (a memif
 * peer may miss the flag, memif_irq.c): every RXTX_WATCHED_TIMEOUT_US. */
#define RXTX_IDLE_TIMEOUT_US 1000
#define RXTX_DEEP_IDLE_TIMEOUT_US 10000
#define RXTX_DEEP_IDLE_AFTER 100
#define RXTX_WATCHED_TIMEOUT_US 100000

/* tx_hold.c: frames a port refused, to be sent before any new one to it. */
struct rxtx_tx_hold {
	struct rte_mbuf *pkts[ESGW_BURST];
	uint16_t first, n; /* held: pkts[first .. first + n - 1] */
	bool stalled;      /* took nothing for RXTX_TX_STALL_MS: drops, holds nothing */
	uint64_t since;    /* TSC: its last frame taken, or the refusal that began the hold */
	uint64_t retry;    /* TSC: not asked again before (RXTX_TX_RETRY_US) */
};

/* What a file descriptor the port watcher waits on is (port_watch.c). */
enum { RXTX_WATCH_SOCKET, RXTX_WATCH_MEMIF, RXTX_WATCH_TAP };

struct rxtx {
	struct esgw_dp dp; /* first, so the control callbacks can get back to us */
	const struct rte_memzone *shared_mz;
	struct rte_ring *router_in;
	struct rte_ring *crypto[ESGW_MAX_WORKERS];
	struct rte_ring *tx[ESGW_MAX_PORTS];          /* from the router, indexed by port id */
	struct rte_ring *worker_tx[ESGW_MAX_WORKERS]; /* from crypto worker N, any port */
	struct rte_ring *decrypted[ESGW_MAX_WORKERS]; /* worker N -> router; created here */
	uint16_t ports[ESGW_MAX_PORTS];               /* port ids, nb_ports of them */
	uint16_t nb_ports;
	uint16_t nb_started; /* ports[0..nb_started-1] are started */
	/* Written only by the data thread, read by on_stats on the same thread. */
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t rx_paused; /* rounds that left the ports alone: the router's ring was full */
	bool paused;        /* this round did */
	uint64_t drops[ESGW_DROP_MAX];
	struct rxtx_tx_hold hold[ESGW_MAX_PORTS]; /* tx_hold.c, by port id */
	uint16_t nb_holding;                      /* ports with held frames */
	uint64_t tx_stall_cycles;                 /* RXTX_TX_STALL_MS in TSC cycles */
	uint64_t tx_retry_cycles;                 /* RXTX_TX_RETRY_US in TSC cycles */
	uint64_t tx_held;                         /* frames a port refused, held */
	uint64_t tx_order_waits; /* a routed decrypted frame waited for its worker's ring (loop.c) */
	uint64_t tx_stalls;                       /* a port's hold given up (tx_hold.c) */
	/* kernel_drops.c: AF_PACKET sockets of each port and their drops. */
#define RXTX_KDROP_FDS 4
	int kdrop_fd[ESGW_MAX_PORTS][RXTX_KDROP_FDS];
	uint8_t kdrop_nfd[ESGW_MAX_PORTS];
	uint64_t kernel_drops[ESGW_MAX_PORTS];
	/* memif_irq.c: memif Rx rings in interrupt mode while the data thread
	 * sleeps (by port id; queue NULL: not memif, or not understood). */
	struct rxtx_memif_irq {
		const void *dev; /* the driver's struct rte_eth_dev */
		void *queue;     /* its Rx queue */
		uint16_t *flags; /* the ring's flags word, while unmasked */
		int fd;          /* the ring's eventfd, or -1 */
		bool down;       /* no peer connected at the last unmask */
	} memif_irq[ESGW_MAX_PORTS];
	bool memif_unmasked; /* since the last rxtx_memif_irq_mask */

	/* port_watch.c: what the sleeping data thread waits on besides its
	 * doorbell's FIFO: those sockets, memif rings' eventfds and the TAPs. */
#define RXTX_WATCH_MAX (ESGW_MAX_PORTS * (RXTX_KDROP_FDS + 2))
	int watch_fd[RXTX_WATCH_MAX];
	uint8_t watch_kind[RXTX_WATCH_MAX]; /* RXTX_WATCH_SOCKET, _MEMIF or _TAP */
	unsigned int watch_nfd;
	/* The doorbell FIFO: sleeps in ppoll() on it and the set (-1: on the futex). */
	int watch_bell_fd;
	bool watch_all;                /* every port and TAP is watched: no timed poll needed */
	bool watch_sockets_all;        /* every port by a kernel socket (af_packet) */
	volatile uint32_t tap_ready;   /* a TAP was readable: poll the TAPs now (punt.c) */
	uint64_t port_wakeups;         /* sleeps a port or TAP ended */
	uint64_t memif_wakeups;        /* of those, by a memif ring's eventfd */
	/* punt.c: frames the router punts to the host's stack (ring esgw.punt)
	 * and, per dataplane port, the TAP interface that hands them over. */
	struct rte_ring *punt;
	bool has_tap[ESGW_MAX_PORTS];      /* by dataplane port id */
	uint16_t tap[ESGW_MAX_PORTS];      /* its TAP's port id */
	char tap_name[ESGW_MAX_PORTS][16]; /* its TAP's Linux name */
	int tap_fd[ESGW_MAX_PORTS];        /* its TAP's queue, for the watcher, or -1 */
	uint64_t next_tap_poll;            /* TSC: TAPs are polled at most this often */
	uint64_t punt_tx;                  /* frames written to a TAP */
	uint64_t punt_rx;                  /* frames the host sent, out of their port */
};

/* tx_hold.c: send n frames out of a port; what it refuses is held (sent
 * first by rxtx_tx_hold_flush) or, if the port stalled, dropped. */
void rxtx_tx_hold_init(struct rxtx *rx);
void rxtx_tx_send(struct rxtx *rx, uint16_t port, struct rte_mbuf **pkts, uint16_t n);
unsigned int rxtx_tx_hold_flush(struct rxtx *rx); /* returns the frames sent */
void rxtx_tx_hold_release(struct rxtx *rx);       /* at exit: held frames dropped */

/* rings.c: the mbuf pool, the shared table and the rings, in that order. */
int rxtx_shared_create(struct rxtx *rx);
void rxtx_shared_free(struct rxtx *rx);

/* ports.c: check that every --vdev/--allow device became a port, then
 * configure and start them all. */
int rxtx_ports_find(struct rxtx *rx);
int rxtx_ports_start(struct rxtx *rx);
void rxtx_ports_stop(struct rxtx *rx);
void rxtx_port_mac(uint16_t port_id, char *buf, size_t len);

/* memif_irq.c: find the memif ports (at start); before a sleep, ask their
 * peers to write the rings' eventfds (returns how many), after it stop them. */
void rxtx_memif_irq_find(struct rxtx *rx);
unsigned int rxtx_memif_irq_unmask(struct rxtx *rx);
void rxtx_memif_irq_mask(struct rxtx *rx);

/* port_watch.c: the data thread sleeps in ppoll() on its doorbell's FIFO and
 * on every port's kernel socket, memif ring eventfd and TAP (the set updated
 * before each sleep), so a frame on a port wakes it directly. */
void rxtx_port_watch_start(struct rxtx *rx);
void rxtx_port_watch_update(struct rxtx *rx);
/* Sleep (esgw_dp_idle) until rung, a watched descriptor is readable (not
 * while paused) or timeout_us passes. */
void rxtx_port_watch_sleep(struct rxtx *rx, unsigned int timeout_us, int (*has_work)(void *arg));
/* kernel_drops.c: drops in af_packet's kernel ring, which the driver hides. */
void rxtx_kernel_drops_find(struct rxtx *rx);
void rxtx_kernel_drops_poll(struct rxtx *rx);

/* ports.c: configure one RX and one TX queue, start, and (for the
 * dataplane ports) take every frame; rx_intr: give the Rx queue a file
 * descriptor to wait on (TAPs). */
int rxtx_port_start(struct rxtx *rx, uint16_t port, const char *name, bool promiscuous,
		    bool rx_intr);

/* punt.c: a TAP per configured interface, with the interface's MAC, IPv4
 * addresses and MTU; frames between the TAPs, the punt ring and the ports. */
int rxtx_punt_configure(struct rxtx *rx, const Esgw__DpConfig *cfg);
unsigned int rxtx_punt_round(struct rxtx *rx);
void rxtx_punt_stop(struct rxtx *rx);
/* host_addr.c: make the Linux interface's IPv4 addresses and MTU those of ifc. */
int rxtx_host_addr_sync(const char *ifname, int ifindex, const Esgw__DpInterface *ifc);

/* loop.c: forward until SIGTERM. */
void rxtx_loop(struct rxtx *rx);

/* control.c: the DpConfig / DpStats handlers. */
int rxtx_on_config(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen);
void rxtx_on_stats(struct esgw_dp *dp, Esgw__DpStats *stats);

#endif
