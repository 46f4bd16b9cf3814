/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-bench internals: the generator's ports and addresses, one trial's
 * counters, and the functions main.c strings together into a rate search. */
#ifndef ESGW_BENCH_H
#define ESGW_BENCH_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

#include "esp_tx.h"
#include "proc_stats.h"
#include "sizes.h"

#define BENCH_BURST 32
#define BENCH_PORT_A 0 /* traffic leaves here, towards the first gateway's LAN */
#define BENCH_PORT_B 1 /* and comes back here, from the second gateway's LAN */
#define BENCH_MAGIC 0xe5b7
#define BENCH_UDP_SRC 4000
#define BENCH_UDP_DST 5000
#define BENCH_MAX_LATENCY_SAMPLES (1u << 21)
/* Destinations the packets cycle through, so that several tunnels (and so
 * several crypto workers) carry one trial: a --dst list of up to
 * BENCH_MAX_DST_LIST, or --dst-count of them (a hub's tunnels). */
#define BENCH_MAX_DST_LIST 4
#define BENCH_MAX_DST 20000

/* What the generator puts after the UDP header: 16 bytes, so that a 64-byte
 * frame (46-byte IPv4 packet) still carries it. */
struct bench_payload {
	uint16_t magic;
	uint16_t trial;
	uint32_t seq;
	uint64_t tsc; /* TSC at transmit */
} __attribute__((packed));

struct bench {
	struct rte_mempool *pool;
	uint64_t tsc_hz;
	/* Host addresses (network byte order) the generator answers ARP for. */
	uint32_t addr_a, addr_b;
	uint32_t gateway_a;          /* next hop on port A, resolved by ARP */
	uint32_t inner_src;          /* source of the generated packets (addr_a unless ESP) */
	uint32_t dst[BENCH_MAX_DST]; /* destinations of the generated packets, in turn */
	unsigned int nb_dst;
	/* Port A sends ESP from addr_a to gateway_a carrying the packets
	 * (--esp-tx), instead of the packets themselves. */
	struct esp_tx *esp_tx;
	/* Port B counts ESP frames of the length the gateway must make of the
	 * trial's packets (--expect-esp), instead of the packets themselves. */
	int expect_esp;
	enum bench_alg expect_alg;
	uint32_t expect_spi; /* network byte order; 0: any */
	unsigned int expect_len[BENCH_MAX_PATTERN], nb_expect_len;
	/* Processes whose CPU time and context switches each trial reports. */
	struct proc_watch watch[BENCH_MAX_WATCH];
	unsigned int nb_watch;
	struct rte_ether_addr mac_a, mac_b, gateway_mac;
	int gateway_mac_known;
	uint16_t trial_id;
	uint64_t arp_replies_sent;
	uint32_t *latency; /* TSC cycles, one per received packet up to the cap */
};

struct trial_result {
	double rate_asked; /* packets per second, 0 = as fast as the port takes them */
	double seconds;    /* of transmission */
	uint64_t sent, tx_refused, received, foreign, reordered;
	uint64_t wrong_length; /* --expect-esp: ESP of the SA, but not the length due */
	double offered_pps, delivered_pps, loss_pct;
	double latency_p50_us, latency_p99_us, latency_max_us;
	uint64_t latency_samples;
	/* The watched processes over the transmission: the samples at its start
	 * and end, and the packets received in between. */
	struct proc_sample proc_before[BENCH_MAX_WATCH], proc_after[BENCH_MAX_WATCH];
	uint64_t proc_packets;
	int failed; /* the generator could not make its packets (ESP) */
};

int bench_ports_start(struct bench *b, double connect_timeout);
/* After --before-exit stopped the memif peer: wait (up to timeout seconds)
 * until its disconnect has been handled, before bench_ports_stop. */
void bench_ports_wait_down(double timeout);
void bench_ports_stop(void);
/* Resolve the gateway's MAC on port A (unless given) and send packets until
 * one comes back on port B, so that both gateways have resolved their ARP
 * before anything is measured. */
int bench_warm_up(struct bench *b, const struct bench_size *size, double timeout);
int bench_trial(struct bench *b, const struct bench_size *size, double rate, double seconds,
		double drain_seconds, struct trial_result *r);

#endif
