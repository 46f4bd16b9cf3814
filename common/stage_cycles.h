/* SPDX-License-Identifier: BSD-3-Clause */
/* What one dataplane stage costs: TSC cycles spent in rounds that handled
 * packets, the packets they handled, and (crypto workers) the same split by
 * encrypt and decrypt. Written only by the process's data thread and read by
 * its stats answer on the same thread, so plain (never atomic) counters. */
#ifndef ESGW_STAGE_CYCLES_H
#define ESGW_STAGE_CYCLES_H

#include <stdint.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

struct esgw_stage_cycles {
	uint64_t start_tsc;    /* main loop start: loop cycles = now - start_tsc */
	uint64_t busy_cycles;  /* rounds that handled >= 1 packet, whole round */
	uint64_t busy_packets; /* packets handled in those rounds */
	uint64_t encrypt_cycles;
	uint64_t encrypt_packets;
	uint64_t decrypt_cycles;
	uint64_t decrypt_packets;
	/* Parts of the busy cycles, to tell the process's own work from what it
	 * calls: rxtx, the ports' receive and transmit functions (the driver:
	 * memif's copies in the benchmark); crypto workers, the ESP core
	 * (esp_encap_burst / esp_decap_burst, intel-ipsec-mb included). */
	uint64_t driver_cycles;
	uint64_t driver_pending; /* this round's driver cycles, counted if it is busy */
	uint64_t esp_cycles;
	/* The ESP core on a dedicated core: one burst in ESGW_ESP_SAMPLE_EVERY
	 * timed again with the thread's context switches read around it
	 * (getrusage), counted only if it kept its CPU throughout. esp_cycles
	 * counts wall time, which on a shared CPU includes the slices of the
	 * processes that preempted the worker inside a burst. */
	uint64_t esp_sample_cycles;
	uint64_t esp_sample_packets;
	uint64_t esp_sample_switched; /* sampled bursts left out: switched out inside */
	/* Hand-offs: the idle sleeps that waited on the doorbell, and the
	 * producers this process woke because it made room in their ring. */
	uint64_t sleeps;
	uint64_t room_wakes;
	/* Traffic in and out, for rates (rxtx uses its port counters instead). */
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
};

static inline void esgw_stage_start(struct esgw_stage_cycles *s)
{
	s->start_tsc = rte_rdtsc();
}

/* A round that began at TSC begin handled n packets. Empty rounds (the idle
 * spin before sleeping) are not work and cost one rdtsc only. */
static inline void esgw_stage_round(struct esgw_stage_cycles *s, uint64_t begin, unsigned int n)
{
	uint64_t driver = s->driver_pending;

	s->driver_pending = 0;
	if (n == 0)
		return;
	s->busy_cycles += rte_rdtsc() - begin;
	s->busy_packets += n;
	s->driver_cycles += driver;
}

static inline void esgw_stage_encrypt(struct esgw_stage_cycles *s, uint64_t begin, unsigned int n)
{
	s->encrypt_cycles += rte_rdtsc() - begin;
	s->encrypt_packets += n;
}

static inline void esgw_stage_decrypt(struct esgw_stage_cycles *s, uint64_t begin, unsigned int n)
{
	s->decrypt_cycles += rte_rdtsc() - begin;
	s->decrypt_packets += n;
}

/* Bytes of n mbufs. pkt_len is in the mbuf's first cache line, which the
 * caller has touched already: no extra cache miss. */
static inline uint64_t esgw_burst_bytes(struct rte_mbuf *const pkts[], unsigned int n)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	return bytes;
}

#endif
