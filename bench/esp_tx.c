/* SPDX-License-Identifier: BSD-3-Clause */
/* Valid ESP from esgw-bench for a gateway's decrypt direction (see esp_tx.h). */
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "esp_tx.h"

#define OUTER_LEN (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr))
#define NEXT_HEADER_IPV4 4
#define SEQ_MAX 0xffffffffull /* no ESN: the SA ends at 2^32 - 1 */

struct esp_tx {
	struct bench_keys keys; /* first: aligned as the key schedules need */
	IMB_MGR *mgr;
	enum bench_alg alg;
	const struct esp_alg_info *info;
	uint32_t spi, src, dst;
	uint64_t seq; /* the next one to use */
	uint16_t ip_id;
};

struct esp_tx *esp_tx_create(const struct esp_tx_config *cfg)
{
	struct esp_tx *tx = aligned_alloc(64, sizeof(*tx));

	if (tx == NULL)
		return NULL;
	memset(tx, 0, sizeof(*tx));
	tx->mgr = alloc_mb_mgr(0);
	if (tx->mgr == NULL) {
		free(tx);
		return NULL;
	}
	init_mb_mgr_auto(tx->mgr, NULL);
	if (imb_get_errno(tx->mgr) != 0) {
		esp_tx_free(tx);
		return NULL;
	}
	bench_keys_init(tx->mgr, cfg->cipher_key, cfg->integ_key, cfg->salt, &tx->keys);
	tx->alg = cfg->alg;
	tx->info = bench_alg_info(cfg->alg);
	tx->spi = rte_cpu_to_be_32(cfg->spi);
	tx->src = cfg->src;
	tx->dst = cfg->dst;
	tx->seq = cfg->first_seq ? cfg->first_seq : 1;
	return tx;
}

void esp_tx_free(struct esp_tx *tx)
{
	if (tx == NULL)
		return;
	free_mb_mgr(tx->mgr);
	/* Test keys, but freed memory holds no key schedule all the same. */
	memset(&tx->keys, 0, sizeof(tx->keys));
	free(tx);
}

unsigned int esp_tx_inner_offset(const struct esp_tx *tx)
{
	return (unsigned int)OUTER_LEN + BENCH_ESP_HDR_LEN + tx->info->iv_len;
}

uint64_t esp_tx_next_seq(const struct esp_tx *tx)
{
	return tx->seq;
}

unsigned int esp_frame_len(enum bench_alg alg, unsigned int inner)
{
	const struct esp_alg_info *info = bench_alg_info(alg);

	return (unsigned int)OUTER_LEN + BENCH_ESP_HDR_LEN + info->iv_len +
	       bench_esp_payload_len(info, inner) + info->icv_len;
}

/* Everything but the crypto for one packet; returns the ESP layout for the job. */
static void frame_one(struct esp_tx *tx, const struct rte_ether_addr *src_mac,
		      const struct rte_ether_addr *dst_mac, struct rte_mbuf *m,
		      struct bench_esp_buf *buf)
{
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
	unsigned int offset = esp_tx_inner_offset(tx);
	unsigned int inner = m->data_len - offset;
	unsigned int payload = bench_esp_payload_len(tx->info, inner);
	unsigned int pad = payload - inner - BENCH_ESP_TRAILER_LEN;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)data;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint8_t *esp = (uint8_t *)(ip + 1), *trailer = data + offset + inner;
	uint32_t seq = rte_cpu_to_be_32((uint32_t)tx->seq);
	uint64_t iv = rte_cpu_to_be_64(tx->seq);

	/* RFC 4303 2.4: the default padding bytes 1, 2, 3... */
	for (unsigned int i = 0; i < pad; i++)
		trailer[i] = (uint8_t)(i + 1);
	trailer[pad] = (uint8_t)pad;
	trailer[pad + 1] = NEXT_HEADER_IPV4;
	rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length =
		rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + BENCH_ESP_HDR_LEN + tx->info->iv_len +
					    payload + tx->info->icv_len));
	ip->packet_id = rte_cpu_to_be_16(tx->ip_id++);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_ESP;
	ip->src_addr = tx->src;
	ip->dst_addr = tx->dst;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(esp, &tx->spi, 4);
	memcpy(esp + 4, &seq, 4);
	/* The IV need not be secret, only unique under the key (GCM) or
	 * unpredictable enough for a test (CBC): the 64-bit sequence count,
	 * which the state file keeps growing across runs. */
	memset(esp + BENCH_ESP_HDR_LEN, 0x5a, tx->info->iv_len);
	memcpy(esp + BENCH_ESP_HDR_LEN, &iv, sizeof(iv));
	m->data_len = m->pkt_len = (uint32_t)(OUTER_LEN + BENCH_ESP_HDR_LEN + tx->info->iv_len +
					      payload + tx->info->icv_len);
	buf->esp = esp;
	buf->plain_out = NULL;
	buf->iv_len = tx->info->iv_len;
	buf->icv_len = tx->info->icv_len;
	buf->payload_len = payload;
	tx->seq++;
}

int esp_tx_seal(struct esp_tx *tx, const struct rte_ether_addr *src_mac,
		const struct rte_ether_addr *dst_mac, struct rte_mbuf **m, unsigned int n)
{
	struct bench_esp_buf bufs[BENCH_ESP_MAX_BURST], *ptrs[BENCH_ESP_MAX_BURST];
	struct bench_esp_counts failed = {0};

	if (n > BENCH_ESP_MAX_BURST || tx->seq + n - 1 > SEQ_MAX)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		frame_one(tx, src_mac, dst_mac, m[i], &bufs[i]);
		ptrs[i] = &bufs[i];
	}
	bench_esp_burst(tx->mgr, tx->alg, 0, &tx->keys, ptrs, n, &failed);
	return failed.errors ? -1 : 0;
}
