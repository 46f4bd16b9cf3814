/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-bench as the far end of a tunnel: turns the inner packets a trial
 * builds into valid ESP (RFC 4303 tunnel mode over IPv4, one SA, sequence
 * numbers that only grow, also across runs through a state file), so that a
 * gateway's decrypt direction can be measured on its own. */
#ifndef ESGW_BENCH_ESP_TX_H
#define ESGW_BENCH_ESP_TX_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "esp_jobs.h"

struct esp_tx_config {
	enum bench_alg alg;
	uint32_t spi;
	uint32_t src, dst; /* outer addresses, network byte order */
	uint8_t cipher_key[16], integ_key[20], salt[4];
	uint64_t first_seq; /* 1 unless a previous run used some */
};

struct esp_tx;

struct esp_tx *esp_tx_create(const struct esp_tx_config *cfg);
void esp_tx_free(struct esp_tx *tx);
/* Where the inner IP packet starts in the frame: Ethernet, outer IPv4, ESP
 * header and IV come before it. */
unsigned int esp_tx_inner_offset(const struct esp_tx *tx);
/* Each m holds an inner packet at esp_tx_inner_offset() and data_len covers it.
 * Adds padding and trailer, the Ethernet, outer IPv4 and ESP headers and the
 * IV, encrypts in one burst and appends the ICV. Returns 0, or -1 when the
 * sequence numbers are used up or the crypto failed (nothing may be sent). */
int esp_tx_seal(struct esp_tx *tx, const struct rte_ether_addr *src_mac,
		const struct rte_ether_addr *dst_mac, struct rte_mbuf **m, unsigned int n);
/* The next sequence number the SA would use (for the state file). */
uint64_t esp_tx_next_seq(const struct esp_tx *tx);
/* The ESP frame length (no FCS) that carries an inner packet of inner bytes
 * with alg: what a gateway's encrypt direction must deliver. */
unsigned int esp_frame_len(enum bench_alg alg, unsigned int inner);

#endif
