/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames a port's transmit ring refused, kept and sent first on the next
 * rounds instead of dropped.
 *
 * A port whose ring is full is behind: its peer (the next gateway, a
 * memif peer on a shared CPU) takes frames more slowly than we make them.
 * Dropping them there throws away the work of every stage (the encryption
 * included) and keeps the whole gateway taking input at full speed for
 * nothing. Held instead, they stop rxtx from taking more of the rings that
 * feed the port: those fill, their producers pause (backpressure.h), and
 * in the end rxtx leaves its input ports alone, so the excess waits or is
 * dropped in the input port's ring, at no CPU cost, and the gateway uses
 * the CPU only for frames the slow port will take.
 *
 * Order: a port's held frames go before any new frame to it. No new frame
 * is taken for a port that holds some (its router ring is left alone, and
 * the workers' rings, which carry frames for any port, while any port holds
 * some), so a hold never needs more than one burst.
 *
 * A port that takes nothing for RXTX_TX_STALL_MS (its peer gone, or stuck)
 * loses its held frames (tx_failed) and holds no more until it takes a
 * frame again: a dead port must not hold up the others. */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "rxtx.h"

#define RXTX_TX_STALL_MS 10
/* A port that refused frames is asked again no sooner than this: each try
 * reads the ring's consumer index, which its peer, on another CPU, writes;
 * tries in a tight loop would take that line from the peer as it drains. */
#define RXTX_TX_RETRY_US 20

void rxtx_tx_hold_init(struct rxtx *rx)
{
	rx->tx_stall_cycles = rte_get_tsc_hz() / 1000 * RXTX_TX_STALL_MS;
	rx->tx_retry_cycles = rte_get_tsc_hz() / 1000000 * RXTX_TX_RETRY_US;
}

static uint16_t port_tx(struct rxtx *rx, uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t called = rte_rdtsc();
	uint16_t sent = rte_eth_tx_burst(port, 0, pkts, n);
	uint64_t now = rte_rdtsc();

	rx->dp.cycles.driver_pending += now - called;
	rx->tx_packets += sent;
	if (sent > 0) {
		rx->hold[port].since = now;
		rx->hold[port].stalled = false;
	}
	if (sent < n)
		rx->hold[port].retry = now + rx->tx_retry_cycles;
	return sent;
}

static void hold_drop(struct rxtx *rx, struct rxtx_tx_hold *h)
{
	for (uint16_t k = 0; k < h->n; k++)
		esgw_drop(h->pkts[h->first + k], rx->drops, ESGW_DROP_TX_FAILED);
	h->n = 0;
	h->first = 0;
	rx->nb_holding--;
}

void rxtx_tx_send(struct rxtx *rx, uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	struct rxtx_tx_hold *h = &rx->hold[port];
	uint16_t sent = port_tx(rx, port, pkts, n);

	if (sent == n)
		return;
	if (h->stalled || h->n > 0) { /* h->n: not reached, see the top */
		for (uint16_t k = sent; k < n; k++)
			esgw_drop(pkts[k], rx->drops, ESGW_DROP_TX_FAILED);
		return;
	}
	if (sent == 0)
		h->since = rte_rdtsc(); /* the stall is timed from here */
	h->n = (uint16_t)(n - sent);
	h->first = 0;
	memcpy(h->pkts, pkts + sent, h->n * sizeof(*pkts));
	rx->nb_holding++;
	rx->tx_held += h->n;
}

unsigned int rxtx_tx_hold_flush(struct rxtx *rx)
{
	uint64_t now = rte_rdtsc();
	unsigned int total = 0;

	for (uint16_t i = 0; i < rx->nb_ports && rx->nb_holding > 0; i++) {
		uint16_t port = rx->ports[i];
		struct rxtx_tx_hold *h = &rx->hold[port];
		uint16_t sent;

		if (h->n == 0 || now < h->retry)
			continue;
		sent = port_tx(rx, port, h->pkts + h->first, h->n);
		total += sent;
		h->first += sent;
		h->n -= sent;
		if (h->n == 0) {
			h->first = 0;
			rx->nb_holding--;
		} else if (sent == 0 && rte_rdtsc() - h->since > rx->tx_stall_cycles) {
			h->stalled = true;
			rx->tx_stalls++;
			hold_drop(rx, h);
		}
	}
	return total;
}

void rxtx_tx_hold_release(struct rxtx *rx)
{
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		struct rxtx_tx_hold *h = &rx->hold[rx->ports[i]];

		if (h->n > 0)
			hold_drop(rx, h);
	}
}
