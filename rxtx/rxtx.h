/* SPDX-License-Identifier: BSD-3-Clause */
/* State of esgw-rxtx, the DPDK primary, shared by its files: the objects it
 * created for the other processes, its ports, and its own counters. */
#ifndef ESGW_RXTX_H
#define ESGW_RXTX_H

#include <stdint.h>

#include <rte_mempool.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "dp.h"

struct rxtx {
	struct esgw_dp dp; /* first, so the control callbacks can get back to us */
	const struct rte_memzone *shared_mz;
	struct rte_ring *router_in;
	struct rte_ring *crypto[ESGW_MAX_WORKERS];
	struct rte_ring *tx[ESGW_MAX_PORTS]; /* from the router, indexed by port id */
	struct rte_ring *worker_tx[ESGW_MAX_WORKERS]; /* from crypto worker N, any port */
	struct rte_ring *decrypted[ESGW_MAX_WORKERS]; /* worker N -> router; created here */
	uint16_t ports[ESGW_MAX_PORTS];      /* port ids, nb_ports of them */
	uint16_t nb_ports;
	uint16_t nb_started; /* ports[0..nb_started-1] are started */
	/* Written only by the data thread, read by on_stats on the same thread. */
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t drops[ESGW_DROP_MAX];
};

/* rings.c: the mbuf pool, the shared table and the rings, in that order. */
int rxtx_shared_create(struct rxtx *rx);
void rxtx_shared_free(struct rxtx *rx);

/* ports.c: check that every --vdev/--allow device became a port, then
 * configure and start them all. */
int rxtx_ports_find(struct rxtx *rx);
int rxtx_ports_start(struct rxtx *rx);
void rxtx_ports_stop(struct rxtx *rx);
void rxtx_port_mac(uint16_t port_id, char *buf, size_t len);

/* loop.c: forward until SIGTERM. */
void rxtx_loop(struct rxtx *rx);

/* control.c: the DpConfig / DpStats handlers. */
int rxtx_on_config(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen);
void rxtx_on_stats(struct esgw_dp *dp, Esgw__DpStats *stats);

#endif
