/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-bench's packet work: starting the two ports, answering and sending ARP,
 * and one trial: IPv4/UDP packets stamped with a sequence number and the TSC
 * sent on port A at a paced rate, counted and timed when they come back on
 * port B. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "bench.h"

#define NB_DESC 1024
/* Below a rate's gap between bursts, sleep rather than spin (the generator
 * shares the CPUs with the gateways it measures). */
#define IDLE_SLEEP_MIN_US 30
#define IDLE_SLEEP_MAX_US 200
/* When port A's ring is full (the gateway is a whole ring, 2^14 frames by
 * default, behind), sleep this long instead of retrying at once: the
 * retries took the CPU from the gateway processes sharing the generator's
 * CPU (at full speed in the chain, gw2 got half the CPU time it got at
 * twice the zero-loss rate, and its upstream gateway, held back, idled
 * 40 % of its CPU), and bounced the ring's lines between the CPUs. The
 * ring holds milliseconds of the gateway's work: the sleep costs none. */
#define FULL_RING_SLEEP_US 20
#define HEADERS_LEN                                                                                \
	(sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

static void pause_ms(unsigned int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int port_start(struct bench *b, uint16_t port, double connect_timeout)
{
	struct rte_eth_conf conf = {0};
	uint16_t nb_rxd = NB_DESC, nb_txd = NB_DESC;
	struct rte_eth_link link;
	uint64_t deadline = rte_get_tsc_cycles() + (uint64_t)(connect_timeout * (double)b->tsc_hz);
	int rc;

	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, nb_rxd, rte_eth_dev_socket_id(port), NULL,
					    b->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, nb_txd, rte_eth_dev_socket_id(port), NULL);
	if (rc != 0) {
		fprintf(stderr, "esgw-bench: port %u: setup: %s\n", port, rte_strerror(-rc));
		return -1;
	}
	/* A memif client cannot start before its server listens: retry. */
	while ((rc = rte_eth_dev_start(port)) != 0) {
		if (rte_get_tsc_cycles() > deadline) {
			fprintf(stderr, "esgw-bench: port %u: start: %s\n", port,
				rte_strerror(-rc));
			return -1;
		}
		pause_ms(100);
	}
	rte_eth_promiscuous_enable(port);
	/* memif reports link up once the peer has connected. */
	do {
		rte_eth_link_get_nowait(port, &link);
		if (link.link_status == RTE_ETH_LINK_UP)
			return 0;
		pause_ms(50);
	} while (rte_get_tsc_cycles() < deadline);
	fprintf(stderr, "esgw-bench: port %u: link still down after %.0f s (is the peer up?)\n",
		port, connect_timeout);
	return -1;
}

int bench_ports_start(struct bench *b, double connect_timeout)
{
	if (rte_eth_dev_count_avail() < 2) {
		fprintf(stderr, "esgw-bench: needs two ports (two --vdev), found %u\n",
			rte_eth_dev_count_avail());
		return -1;
	}
	if (port_start(b, BENCH_PORT_A, connect_timeout) < 0 ||
	    port_start(b, BENCH_PORT_B, connect_timeout) < 0)
		return -1;
	rte_eth_macaddr_get(BENCH_PORT_A, &b->mac_a);
	rte_eth_macaddr_get(BENCH_PORT_B, &b->mac_b);
	return 0;
}

/* memif handles its peer's disconnect on the EAL interrupt thread, ending
 * with the port's memory regions; a port closed meanwhile on this thread has
 * lost them (process_private is NULL) and that thread crashes on them (seen
 * once in a bench run: a segfault at 0x800, in memif's region cleanup, as
 * ipsec-secgw was stopped by --before-exit). So after stopping the peer,
 * wait for every link to go down (memif marks it down as it starts the
 * disconnect), then a little longer for the rest of the handler. */
void bench_ports_wait_down(double timeout)
{
	uint64_t deadline = rte_get_tsc_cycles() + (uint64_t)(timeout * rte_get_tsc_hz());
	struct rte_eth_link link;
	uint16_t port;
	int up;

	do {
		up = 0;
		RTE_ETH_FOREACH_DEV(port)
		{
			rte_eth_link_get_nowait(port, &link);
			up += link.link_status == RTE_ETH_LINK_UP;
		}
		pause_ms(up ? 20 : 100); /* down: the handler's remainder */
	} while (up && rte_get_tsc_cycles() < deadline);
	if (up)
		fprintf(stderr, "esgw-bench: %d link(s) still up %.0f s after --before-exit\n", up,
			timeout);
}

void bench_ports_stop(void)
{
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port)
	{
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);
	}
}

static void send_arp(struct bench *b, uint16_t port, uint16_t op,
		     const struct rte_ether_addr *dst_mac, uint32_t target_ip, uint32_t own_ip)
{
	const struct rte_ether_addr *own_mac = port == BENCH_PORT_A ? &b->mac_a : &b->mac_b;
	struct rte_mbuf *m = rte_pktmbuf_alloc(b->pool);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;

	if (m == NULL)
		return;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*arp));
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (dst_mac)
		rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	else
		memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	rte_ether_addr_copy(own_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(own_mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = own_ip;
	if (dst_mac)
		rte_ether_addr_copy(dst_mac, &arp->arp_data.arp_tha);
	else
		memset(&arp->arp_data.arp_tha, 0, sizeof(arp->arp_data.arp_tha));
	arp->arp_data.arp_tip = target_ip;
	if (rte_eth_tx_burst(port, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
	else if (op == RTE_ARP_OP_REPLY)
		b->arp_replies_sent++;
}

/* Port B stands for every destination host, so the far gateway resolves
 * each of them to it. */
static int is_own_address(const struct bench *b, uint16_t port, uint32_t ip)
{
	if (port == BENCH_PORT_A)
		return ip == b->addr_a;
	if (ip == b->addr_b)
		return 1;
	for (unsigned int i = 0; i < b->nb_dst; i++)
		if (ip == b->dst[i])
			return 1;
	return 0;
}

/* Answer requests for our addresses on this port; learn the gateway's MAC. */
static void handle_arp(struct bench *b, uint16_t port, struct rte_mbuf *m)
{
	const struct rte_arp_hdr *arp;

	if (m->data_len < sizeof(struct rte_ether_hdr) + sizeof(*arp))
		return;
	arp = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, sizeof(struct rte_ether_hdr));
	if (arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
	    is_own_address(b, port, arp->arp_data.arp_tip)) {
		/* Answer as the address asked for (send_arp's sender is ours). */
		send_arp(b, port, RTE_ARP_OP_REPLY, &arp->arp_data.arp_sha, arp->arp_data.arp_sip,
			 arp->arp_data.arp_tip);
		return;
	}
	if (port == BENCH_PORT_A && arp->arp_data.arp_sip == b->gateway_a &&
	    arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY)) {
		rte_ether_addr_copy(&arp->arp_data.arp_sha, &b->gateway_mac);
		b->gateway_mac_known = 1;
	}
}

static int expected_len(const struct bench *b, unsigned int len)
{
	for (unsigned int i = 0; i < b->nb_expect_len; i++)
		if (len == b->expect_len[i])
			return 1;
	return 0;
}

/* --expect-esp: what comes back on port B is the gateway's ESP, opaque to us.
 * A frame of the SA (its SPI, or any ESP) counts as received if its length is
 * one that the trial's packets must take (RFC 4303 padding to the block, the
 * algorithm's IV and ICV); its sequence number, in clear, shows reordering. */
static void count_esp(const struct bench *b, const struct rte_mbuf *m, struct trial_result *r,
		      uint32_t *max_seq)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const uint8_t *esp;
	unsigned int ihl;
	uint32_t spi, seq;

	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    m->data_len < sizeof(*eth) + sizeof(*ip) + BENCH_ESP_HDR_LEN) {
		r->foreign++;
		return;
	}
	ihl = (ip->version_ihl & 0xfu) * 4u;
	if (ip->next_proto_id != IPPROTO_ESP || ihl < sizeof(*ip) ||
	    m->data_len < sizeof(*eth) + ihl + BENCH_ESP_HDR_LEN) {
		r->foreign++;
		return;
	}
	esp = (const uint8_t *)ip + ihl;
	memcpy(&spi, esp, 4);
	memcpy(&seq, esp + 4, 4);
	seq = rte_be_to_cpu_32(seq);
	if (b->expect_spi != 0 && spi != b->expect_spi) {
		r->foreign++;
	} else if (!expected_len(b, m->data_len)) {
		r->wrong_length++;
	} else {
		if (seq < *max_seq)
			r->reordered++;
		else
			*max_seq = seq;
		r->received++;
	}
}

/* Receive on one port: ARP is answered, our packets are counted and timed,
 * anything else is counted as foreign. Returns the packets seen. */
static uint16_t poll_port(struct bench *b, uint16_t port, struct trial_result *r, uint32_t *max_seq)
{
	struct rte_mbuf *pkts[BENCH_BURST];
	uint16_t n = rte_eth_rx_burst(port, 0, pkts, BENCH_BURST);
	uint64_t now = rte_rdtsc();

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
		const struct rte_ipv4_hdr *ip;
		const struct rte_udp_hdr *udp;
		const struct bench_payload *pl;

		if (m->data_len < sizeof(*eth)) {
			r->foreign++;
		} else if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
			handle_arp(b, port, m);
		} else if (port == BENCH_PORT_B && b->expect_esp) {
			count_esp(b, m, r, max_seq);
		} else if (port == BENCH_PORT_B &&
			   eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
			   m->data_len >= HEADERS_LEN + sizeof(*pl)) {
			ip = (const struct rte_ipv4_hdr *)(eth + 1);
			udp = (const struct rte_udp_hdr *)(ip + 1);
			pl = (const struct bench_payload *)(udp + 1);
			if (ip->next_proto_id != IPPROTO_UDP ||
			    udp->dst_port != rte_cpu_to_be_16(BENCH_UDP_DST) ||
			    pl->magic != BENCH_MAGIC || pl->trial != b->trial_id) {
				r->foreign++;
			} else {
				if (pl->seq < *max_seq)
					r->reordered++;
				else
					*max_seq = pl->seq;
				if (r->received < BENCH_MAX_LATENCY_SAMPLES)
					b->latency[r->received] = (uint32_t)(now - pl->tsc);
				r->received++;
			}
		} else {
			r->foreign++;
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

/* Port B first and until it is empty (up to a few bursts): what the gateway
 * delivers must not wait in its ring behind our own transmission, or a
 * generator preempted for a moment would be counted as the gateway's loss.
 * Returns the packets seen on both ports. */
static unsigned int poll_ports(struct bench *b, struct trial_result *r, uint32_t *max_seq)
{
	unsigned int seen = 0, n;
	int bursts = 0;

	do {
		n = poll_port(b, BENCH_PORT_B, r, max_seq);
		seen += n;
	} while (n == BENCH_BURST && ++bursts < 8);
	return seen + poll_port(b, BENCH_PORT_A, r, max_seq);
}

/* The headers of every generated packet of one frame length and destination. */
static void make_headers(const struct bench *b, unsigned int frame, uint32_t dst,
			 uint8_t hdr[HEADERS_LEN])
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t ip_len = (uint16_t)(frame - BENCH_L2_OVERHEAD);

	rte_ether_addr_copy(&b->gateway_mac, &eth->dst_addr);
	rte_ether_addr_copy(&b->mac_a, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(ip_len);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = b->inner_src;
	ip->dst_addr = dst;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(BENCH_UDP_SRC);
	udp->dst_port = rte_cpu_to_be_16(BENCH_UDP_DST);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(ip_len - sizeof(*ip)));
	udp->dgram_cksum = 0; /* none: allowed for UDP over IPv4 */
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void latency_summary(const struct bench *b, struct trial_result *r)
{
	uint64_t n =
		r->received < BENCH_MAX_LATENCY_SAMPLES ? r->received : BENCH_MAX_LATENCY_SAMPLES;
	double us = 1e6 / (double)b->tsc_hz;

	r->latency_samples = n;
	if (n == 0)
		return;
	qsort(b->latency, n, sizeof(b->latency[0]), cmp_u32);
	r->latency_p50_us = b->latency[n / 2] * us;
	r->latency_p99_us = b->latency[(n * 99) / 100] * us;
	r->latency_max_us = b->latency[n - 1] * us;
}

/* Fills pkts with n new packets of the trial: headers, stamp, and for --esp-tx
 * the ESP around them. Returns 0, or -1 if the ESP could not be made. */
static int build_burst(struct bench *b, const struct bench_size *size,
		       uint8_t (*headers)[HEADERS_LEN], struct rte_mbuf **pkts,
		       unsigned int n, uint32_t *seq, unsigned int *next_frame)
{
	/* With ESP the inner packet's Ethernet header falls where the ESP
	 * header and IV go, which esp_tx_seal writes over afterwards. */
	unsigned int offset =
		b->esp_tx ? esp_tx_inner_offset(b->esp_tx) - sizeof(struct rte_ether_hdr) : 0;
	uint64_t now = rte_rdtsc();

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		unsigned int frame = size->frames[*next_frame];
		uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *) + offset;
		struct bench_payload *pl = (struct bench_payload *)(data + HEADERS_LEN);

		/* Only headers and stamp are written; the rest of the payload is
		 * whatever the buffer held, which costs nothing and matters to
		 * no one on the path. Destinations by sequence number: the
		 * spread is the same whatever the ports refuse. */
		memcpy(data, headers[*next_frame * b->nb_dst + *seq % b->nb_dst], HEADERS_LEN);
		pl->magic = BENCH_MAGIC;
		pl->trial = b->trial_id;
		pl->seq = (*seq)++;
		pl->tsc = now;
		m->data_len = m->pkt_len = offset + frame - RTE_ETHER_CRC_LEN;
		*next_frame = *next_frame + 1 == size->nb_frames ? 0 : *next_frame + 1;
	}
	if (b->esp_tx)
		return esp_tx_seal(b->esp_tx, &b->mac_a, &b->gateway_mac, pkts, n);
	return 0;
}

int bench_trial(struct bench *b, const struct bench_size *size, double rate, double seconds,
		double drain_seconds, struct trial_result *r)
{
	/* By frame of the pattern, then destination: nb_frames * nb_dst. */
	static uint8_t headers[BENCH_MAX_PATTERN * BENCH_MAX_DST][HEADERS_LEN];
	/* Packets made but refused by the port (its ring is full): sent first,
	 * in order, before new ones are made, so that a refusal costs no
	 * rebuild (nor, with ESP, a sequence number out of order). */
	struct rte_mbuf *pending[BENCH_BURST];
	unsigned int nb_pending = 0, first_pending = 0;
	uint64_t hz = b->tsc_hz, start, end, drain_end, now;
	uint32_t max_seq = 0, seq = 0;
	unsigned int next_frame = 0;

	memset(r, 0, sizeof(*r));
	r->rate_asked = rate;
	b->trial_id++;
	for (unsigned int i = 0; i < size->nb_frames; i++)
		for (unsigned int d = 0; d < b->nb_dst; d++)
			make_headers(b, size->frames[i], b->dst[d], headers[i * b->nb_dst + d]);
	b->nb_expect_len = 0;
	if (b->expect_esp)
		for (unsigned int i = 0; i < size->nb_frames; i++)
			b->expect_len[b->nb_expect_len++] =
				esp_frame_len(b->expect_alg, size->frames[i] - BENCH_L2_OVERHEAD);

	proc_sample_take(b->watch, b->nb_watch, r->proc_before);
	start = rte_rdtsc();
	end = start + (uint64_t)(seconds * (double)hz);
	for (now = start; now < end; now = rte_rdtsc()) {
		uint64_t due = BENCH_BURST;
		uint16_t sent;

		if (rate > 0) {
			double owed = (double)(now - start) * rate / (double)hz - (double)r->sent;

			due = owed < BENCH_BURST ? (uint64_t)owed : BENCH_BURST;
		}
		if (poll_ports(b, r, &max_seq) == 0 && due == 0) {
			/* Nothing to do until the next packet is due: give the CPU to
			 * the gateways sharing it instead of spinning. */
			double wait_us = ((double)(r->sent + 1) / rate -
					  (double)(now - start) / (double)hz) *
					 1e6;

			if (wait_us > IDLE_SLEEP_MIN_US)
				rte_delay_us_sleep(wait_us < IDLE_SLEEP_MAX_US
							   ? (unsigned int)wait_us
							   : IDLE_SLEEP_MAX_US);
			continue;
		}
		if (due == 0)
			continue;
		if (nb_pending == 0) {
			if (rte_pktmbuf_alloc_bulk(b->pool, pending, (unsigned int)due) != 0)
				continue; /* all mbufs in flight: the port will free some */
			if (build_burst(b, size, headers, pending, (unsigned int)due, &seq,
					&next_frame) < 0) {
				rte_pktmbuf_free_bulk(pending, (unsigned int)due);
				r->failed = 1;
				break;
			}
			nb_pending = (unsigned int)due;
			first_pending = 0;
		}
		sent = rte_eth_tx_burst(BENCH_PORT_A, 0, pending + first_pending,
					(uint16_t)nb_pending);
		r->tx_refused += nb_pending - sent;
		r->sent += sent;
		nb_pending -= sent;
		first_pending += sent;
		if (sent == 0)
			rte_delay_us_sleep(FULL_RING_SLEEP_US);
	}
	if (nb_pending > 0)
		rte_pktmbuf_free_bulk(pending + first_pending, nb_pending);
	r->seconds = (double)(now - start) / (double)hz;
	r->proc_packets = r->received;
	proc_sample_take(b->watch, b->nb_watch, r->proc_after);
	/* Packets still inside the gateways count as delivered if they arrive
	 * before the drain ends. */
	drain_end = now + (uint64_t)(drain_seconds * (double)hz);
	while (r->received < r->sent && rte_rdtsc() < drain_end) {
		if (poll_ports(b, r, &max_seq) == 0)
			rte_pause();
	}
	r->offered_pps = (double)r->sent / r->seconds;
	r->delivered_pps = (double)r->received / r->seconds;
	r->loss_pct =
		r->sent ? 100.0 * (double)(r->sent > r->received ? r->sent - r->received : 0) /
				  (double)r->sent
			: 0;
	latency_summary(b, r);
	return r->failed ? -1 : 0;
}

int bench_warm_up(struct bench *b, const struct bench_size *size, double timeout)
{
	uint64_t deadline = rte_get_tsc_cycles() + (uint64_t)(timeout * (double)b->tsc_hz);
	struct trial_result r;
	uint32_t max_seq = 0;

	while (!b->gateway_mac_known) {
		if (rte_get_tsc_cycles() > deadline) {
			fprintf(stderr, "esgw-bench: no ARP reply from the gateway on port A\n");
			return -1;
		}
		send_arp(b, BENCH_PORT_A, RTE_ARP_OP_REQUEST, NULL, b->gateway_a, b->addr_a);
		for (int i = 0; i < 20; i++) {
			memset(&r, 0, sizeof(r));
			poll_port(b, BENCH_PORT_A, &r, &max_seq);
			poll_port(b, BENCH_PORT_B, &r, &max_seq);
			pause_ms(10);
		}
	}
	/* Slow trickles until packets come through: the far gateway resolves
	 * our port B address by ARP on the first packets and drops them. */
	while (rte_get_tsc_cycles() < deadline) {
		bench_trial(b, size, 1000, 0.1, 0.2, &r);
		if (r.received > 0 && r.received == r.sent)
			return 0;
	}
	fprintf(stderr,
		"esgw-bench: nothing came back on port B within %.0f s "
		"(%" PRIu64 " sent, %" PRIu64 " received in the last try)\n",
		timeout, r.sent, r.received);
	return -1;
}
