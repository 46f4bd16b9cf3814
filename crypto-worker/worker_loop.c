/* SPDX-License-Identifier: BSD-3-Clause */
/* The crypto worker's data path: dequeue a burst from esgw.crypto.N, encrypt
 * or decrypt it with the ESP core, hand encrypted frames to the port's TX
 * ring and decrypted packets to rxtx (egress.c) or back to the router,
 * sleep when idle.
 * mbuf ownership: ours from the dequeue until an enqueue succeeds; every
 * other path frees it through esgw_drop with a reason. */
#include <sys/resource.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include "backpressure.h"
#include "log.h"
#include "worker.h"

/* The worker has no timers (lifetimes are checked per packet and when
 * configured); control, its rings and a hand-over's old owner ring its
 * doorbell. The timeout is only a safety net: at 100 ms it was 10 of a
 * resting gateway's ~176 wake-ups a second per worker, each ~50 us of CPU
 * on a VM. */
#define IDLE_TIMEOUT_US 1000000
#define CTL_POLL_EVERY 64      /* busy bursts between control socket polls */
/* ESP-core calls between two timed on a dedicated core's terms
 * (stage_cycles.h esp_sample_*): two getrusage calls cost about 1,800
 * cycles, under one per packet at this rate. */
#define ESP_SAMPLE_EVERY 64

int crypto_worker_rings_attach(struct crypto_worker *w)
{
	char name[RTE_RING_NAMESIZE];

	if (w->id >= w->dp.max_workers) {
		ESGW_ERR("worker %u: esgw-rxtx made rings for workers 0..%u only (its --max-workers, "
			 "esgw-ctld's --max-workers)",
			 w->id, w->dp.max_workers - 1);
		return -1;
	}
	snprintf(name, sizeof(name), ESGW_RING_CRYPTO_FMT, w->id);
	w->ring_in = rte_ring_lookup(name);
	if (w->ring_in == NULL) {
		ESGW_ERR("ring %s not found", name);
		return -1;
	}
	/* Our own output rings: one producer each (shm.h). A predecessor killed
	 * inside an enqueue may have reserved slots it never filled: drop them. */
	snprintf(name, sizeof(name), ESGW_RING_DECRYPTED_FMT, w->id);
	w->ring_dec = rte_ring_lookup(name);
	snprintf(name, sizeof(name), ESGW_RING_WORKER_TX_FMT, w->id);
	w->ring_wtx = rte_ring_lookup(name);
	if (w->ring_dec == NULL || w->ring_wtx == NULL) {
		ESGW_ERR("output rings of worker %u not found", w->id);
		return -1;
	}
	esgw_ring_producer_recover(w->ring_dec);
	esgw_ring_producer_recover(w->ring_wtx);
	esgw_worker_started(w->dp.shared, w->id); /* rxtx polls wtx.N from now on */
	return 0;
}

/* Drop a packet whose SA is known: counted for the worker and for the SA. */
static void drop_sa_packet(struct crypto_worker *w, struct rte_mbuf *m, struct esp_sa *sa,
			   enum esgw_drop reason)
{
	esgw_sa_count_drop(sa->rt, reason);
	esgw_drop(m, w->drops, reason);
}

static void buf_from_mbuf(struct esp_buf *b, struct rte_mbuf *m)
{
	b->data = rte_pktmbuf_mtod(m, uint8_t *);
	b->len = rte_pktmbuf_data_len(m);
	b->headroom = rte_pktmbuf_headroom(m);
	b->tailroom = rte_pktmbuf_tailroom(m);
	b->drop = ESP_NO_DROP;
}

/* Carry what the ESP core did to the buffer over to the mbuf. The mbuf is one
 * segment (make_contiguous), so data_off, data_len and pkt_len say it all:
 * set directly, they avoid rte_pktmbuf_append's walk to the last segment,
 * which reads m->next in the mbuf's second cache line (a miss per packet). */
static int mbuf_from_buf(struct rte_mbuf *m, const struct esp_buf *b)
{
	const uint8_t *start = (const uint8_t *)m->buf_addr;

	if (unlikely(b->data < start || b->data + b->len > start + m->buf_len))
		return -1;
	m->data_off = (uint16_t)(b->data - start);
	m->data_len = b->len;
	m->pkt_len = b->len;
	return 0;
}

/* The packets' lines, asked for before the ESP core starts on the first.
 * First the lines it touches first: the packet's first line and (encrypt)
 * the headroom line just before it, where the outer header, ESP header and
 * IV go, and the lines past the plaintext, where the trailer and ICV go
 * (esp_prefetch_tail), or (decrypt) the second line, where the payload
 * starts; writing a line that is not cached stalls the first read of it
 * (the IV is read back into the nonce). The tail lines took the ESP core's
 * encrypt cycles per packet (kept its CPU, bench/run.sh settings A and B,
 * two interleaved rounds each) at GCM-128 from 152-155 to 120 at 64 B (one
 * round slowed throughout by the host left out) and from 341-346 to
 * 288-302 at 1400 B, CBC-SHA1 from 290-295 to 272-273 and from 900-906 to
 * 851-865. Then the rest of every packet, for writing (the cipher
 * works in place), last written by another core (rxtx's copy from the
 * port, the router): at 1400 B this raised the delivered rate in 11 of 12
 * interleaved bench/run.sh comparisons of settings A and B, by 7 % on
 * average, against the hardware prefetcher following the cipher alone. */
static void prefetch_packets(struct esp_buf bufs[], uint16_t n, int encrypt)
{
	for (uint16_t i = 0; i < n; i++) {
		rte_prefetch0(bufs[i].data);
		if (encrypt) {
			rte_prefetch0(bufs[i].data - RTE_CACHE_LINE_SIZE);
			esp_prefetch_tail(&bufs[i]);
		} else {
			rte_prefetch0(bufs[i].data + RTE_CACHE_LINE_SIZE);
		}
	}
	/* At most ESP_PREFETCH_BODIES of bodies ahead: a burst of 1400 B
	 * packets (45 KB) does not fit the 32 KB L1, so the first bodies
	 * would be evicted before the cipher reaches them; the GCM loop
	 * (esp_jobs_groups) prefetches the later ones two packets ahead, the
	 * job path all of its own at once. */
	for (uint32_t i = 0, bytes = 0; i < n && bytes < ESP_PREFETCH_BODIES; bytes += bufs[i].len, i++)
		esp_prefetch_body(&bufs[i]);
}

/* The calling thread's context switches so far, voluntary and not; -1 if
 * unknown. */
static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Run the ESP core over a burst, its prefetches included in its time. */
static void crypto_burst(struct crypto_worker *w, struct esp_sa *sa[], struct esp_buf bufs[],
			 uint16_t n, int encrypt)
{
	struct esgw_stage_cycles *c = &w->dp.cycles;
	bool sampled = ++w->esp_bursts % ESP_SAMPLE_EVERY == 0;
	long switches = sampled ? thread_switches() : 0;
	uint64_t begin = rte_rdtsc(), cycles;

	prefetch_packets(bufs, n, encrypt);
	if (encrypt)
		esp_encap_burst(w->mgr, sa, bufs, n);
	else
		esp_decap_burst(w->mgr, sa, bufs, n);
	cycles = rte_rdtsc() - begin;
	c->esp_cycles += cycles;
	if (unlikely(sampled)) {
		if (switches >= 0 && thread_switches() == switches) {
			c->esp_sample_cycles += cycles;
			c->esp_sample_packets += n;
		} else {
			c->esp_sample_switched++;
		}
	}
}

/* The ESP core works on one contiguous buffer. */
static int make_contiguous(struct rte_mbuf *m)
{
	return m->nb_segs == 1 ? 0 : rte_pktmbuf_linearize(m);
}

static void encrypt_burst(struct crypto_worker *w, struct rte_mbuf *pkts[], struct esp_sa *sa[],
			  uint16_t n)
{
	struct rte_mbuf *out[ESGW_BURST];
	struct esp_buf bufs[ESGW_BURST];
	uint16_t inner_len[ESGW_BURST];
	unsigned int count = 0, k;
	uint64_t bytes;

	for (uint16_t i = 0; i < n; i++)
		buf_from_mbuf(&bufs[i], pkts[i]);
	/* The inner bytes, counted once encrypted (dropped ones are not). */
	for (uint16_t i = 0; i < n; i++)
		inner_len[i] = bufs[i].len >= 6 ? packet_ip_total_len(bufs[i].data) : 0;
	crypto_burst(w, sa, bufs, n, 1);

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct esgw_meta *meta = esgw_meta(m);
		struct rte_ether_hdr *eth;

		if (bufs[i].drop != ESP_NO_DROP) {
			esgw_drop(m, w->drops, bufs[i].drop); /* the SA counted it already */
			continue;
		}
		w->packets_encrypted++;
		w->bytes += inner_len[i];
		if (mbuf_from_buf(m, &bufs[i]) < 0 ||
		    (eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(*eth))) == NULL) {
			drop_sa_packet(w, m, sa[i], ESGW_DROP_TOO_BIG);
			continue;
		}
		if (meta->out_port >= ESGW_MAX_PORTS) {
			drop_sa_packet(w, m, sa[i], ESGW_DROP_TX_FAILED);
			continue;
		}
		rte_ether_addr_copy(&meta->dst_mac, &eth->dst_addr);
		rte_ether_addr_copy(&meta->src_mac, &eth->src_addr);
		eth->ether_type =
			rte_cpu_to_be_16(packet_ip_version(eth + 1) == 6 ? RTE_ETHER_TYPE_IPV6
									 : RTE_ETHER_TYPE_IPV4);
		meta->kind = ESGW_PKT_TX;
		out[count++] = m;
	}
	if (count == 0)
		return;
	/* One ring of our own to rxtx for every port; rxtx sends each frame out
	 * of meta->out_port. Sizes before the enqueue: after it rxtx owns them. */
	bytes = esgw_burst_bytes(out, count);
	k = rte_ring_enqueue_burst(w->ring_wtx, (void **)out, count, NULL);
	w->dp.cycles.tx_packets += k;
	w->dp.cycles.tx_bytes += bytes - esgw_burst_bytes(out + k, count - k);
	for (unsigned int i = k; i < count; i++)
		drop_sa_packet(w, out[i], w->sa[esgw_meta(out[i])->sa_slot], ESGW_DROP_RING_FULL);
	if (k)
		esgw_dp_wake(&w->dp, &w->dp.shared->db_rxtx);
}

/* n packets of SAs sa onto one of our output rings, its consumer's doorbell
 * rung; what the ring refuses is dropped. Returns the number enqueued. */
static unsigned int output_burst(struct crypto_worker *w, struct rte_ring *ring,
				 struct rte_mbuf *pkts[], struct esp_sa *sa[], unsigned int n,
				 struct esgw_doorbell *db)
{
	uint64_t bytes = esgw_burst_bytes(pkts, n); /* after the enqueue they are not ours */
	unsigned int k = rte_ring_enqueue_burst(ring, (void **)pkts, n, NULL);

	w->dp.cycles.tx_packets += k;
	w->dp.cycles.tx_bytes += bytes - esgw_burst_bytes(pkts + k, n - k);
	for (unsigned int i = k; i < n; i++)
		drop_sa_packet(w, pkts[i], sa[i], ESGW_DROP_RING_FULL);
	if (k)
		esgw_dp_wake(&w->dp, db);
	return k;
}

/* Decrypted packets to rxtx (egress.c) first, then to the router, each
 * routed one stamped with where our ring to rxtx stands after the direct
 * ones (shm.h esgw_meta.order_pos): rxtx sends it after them. */
static void decrypt_burst(struct crypto_worker *w, struct rte_mbuf *pkts[], struct esp_sa *sa[],
			  uint16_t n)
{
	struct rte_mbuf *out[ESGW_BURST], *direct[ESGW_BURST];
	struct esp_sa *out_sa[ESGW_BURST], *direct_sa[ESGW_BURST];
	struct esp_buf bufs[ESGW_BURST];
	uint32_t epoch = __atomic_load_n(&w->dp.shared->egress_epoch, __ATOMIC_ACQUIRE);
	uint32_t dec_pos = w->ring_dec->prod.tail; /* ours alone to move */
	uint64_t now = epoch != 0 ? rte_rdtsc() : 0;
	unsigned int count = 0, n_direct = 0;

	for (uint16_t i = 0; i < n; i++)
		buf_from_mbuf(&bufs[i], pkts[i]);
	crypto_burst(w, sa, bufs, n, 0);

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct esgw_meta *meta = esgw_meta(m);

		if (bufs[i].drop != ESP_NO_DROP) {
			esgw_drop(m, w->drops, bufs[i].drop);
			continue;
		}
		w->packets_decrypted++;
		w->bytes += bufs[i].len;
		if (mbuf_from_buf(m, &bufs[i]) < 0) {
			drop_sa_packet(w, m, sa[i], ESGW_DROP_MALFORMED);
			continue;
		}
		if (egress_direct(w, m, meta->sa_slot, epoch, now)) {
			direct_sa[n_direct] = sa[i];
			direct[n_direct++] = m;
			continue;
		}
		/* Before the next packet of the SA is looked at: none goes
		 * direct until the router has taken this one. */
		egress_routed(w, meta->sa_slot, dec_pos + count + 1);
		meta->kind = ESGW_PKT_DECRYPTED;
		meta->order_worker = (uint16_t)(w->id + 1);
		out_sa[count] = sa[i];
		out[count++] = m;
	}
	if (n_direct)
		w->decrypted_direct += output_burst(w, w->ring_wtx, direct, direct_sa, n_direct,
						    &w->dp.shared->db_rxtx);
	if (count == 0)
		return;
	for (unsigned int i = 0; i < count; i++)
		esgw_meta(out[i])->order_pos = w->ring_wtx->prod.tail;
	output_burst(w, w->ring_dec, out, out_sa, count, &w->dp.shared->db_router);
}

/* Whole-burst prefetch of what each packet's SA costs (esp.h): with
 * thousands of SAs round-robin every one is a miss in each of its lines, so
 * ask for them before the first is needed, in passes whose misses overlap:
 * the packet's first line and the SA pointers and standby marks by slot,
 * then where a decrypted packet may go (egress.c). The SA's own lines (hot
 * line, runtime slot, key schedule) the ESP core asks for a group of
 * packets ahead (ESP_GROUP); only a build with ESP_GROUP 0 asks for them
 * here (esp_sa_prefetch_hot, and esp_sa_prefetch_keys in prefetch_keys
 * once the burst is sorted, which gives the hot lines time to arrive). */
static void prefetch_sas(struct crypto_worker *w, struct rte_mbuf *pkts[], unsigned int n)
{
	struct esp_sa *sa[ESGW_BURST];

	for (unsigned int i = 0; i < n; i++) {
		const struct esgw_meta *meta = esgw_meta(pkts[i]);
		uint32_t slot = meta->sa_slot;

		/* The packet's first line too: encrypt_burst reads its length
		 * before crypto_burst's prefetch_packets. */
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
		if (slot < w->dp.max_sas) {
			rte_prefetch0(&w->sa[slot]);
			if (unlikely(w->nb_standby != 0))
				rte_prefetch0(&w->parking[slot]);
			if (meta->kind == ESGW_PKT_DECRYPT) /* for prefetch_egress */
				rte_prefetch0(&w->egress[slot]);
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct esgw_meta *meta = esgw_meta(pkts[i]);
		uint32_t slot = meta->sa_slot;

		sa[i] = slot < w->dp.max_sas ? w->sa[slot] : NULL;
		/* ESP's second line: where the payload starts and, up to a
		 * 128-byte packet, the ICV the ESP core verifies first. */
		if (meta->kind == ESGW_PKT_DECRYPT)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i], uint8_t *) + RTE_CACHE_LINE_SIZE);
		/* Once per run of packets of one SA (a burst of one tunnel
		 * asks once). */
		if (sa[i] == NULL || (i > 0 && sa[i] == sa[i - 1]))
			continue;
		esp_sa_prefetch_hot(sa[i], &w->dp.shared->sa[slot], meta->kind == ESGW_PKT_DECRYPT);
	}
}

/* Where the burst's decrypted packets may go (egress.c), once the worker's
 * own state of their SAs (prefetch_sas) is there: which way of the SA's
 * entries a packet takes is known only once it is decrypted, so the ways
 * the SA went direct by since its last routed packet (an SA's packets are
 * mostly between the same two addresses: one line, not both), or both
 * while it has none. Before the ESP core, whose work their misses overlap;
 * one pass of at most a line a packet, where both ways of every packet
 * before the core's own prefetches left it waiting for miss buffers (half
 * of esp_decap_burst's samples in the chain with 10,000 tunnels). */
static void prefetch_egress(struct crypto_worker *w, struct rte_mbuf *const pkts[], unsigned int n)
{
	uint32_t last = UINT32_MAX;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t slot = esgw_meta(pkts[i])->sa_slot, asked = 0;
		const struct worker_egress *st;

		if (slot == last || slot >= w->dp.max_sas)
			continue;
		last = slot;
		st = &w->egress[slot];
		for (uint32_t way = 0; way < ESGW_EGRESS_WAYS; way++)
			if (st->ok_seq[way] != 0) {
				rte_prefetch0(esgw_egress_at(w->dp.shared, slot, way));
				asked++;
			}
		for (uint32_t way = 0; asked == 0 && way < ESGW_EGRESS_WAYS; way++)
			rte_prefetch0(esgw_egress_at(w->dp.shared, slot, way));
	}
}

static void prefetch_keys(struct esp_sa *const sa[], struct rte_mbuf *const pkts[], unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (i == 0 || sa[i] != sa[i - 1]) {
			unsigned int len = rte_pktmbuf_data_len(pkts[i]);
			int inbound = esgw_meta(pkts[i])->kind == ESGW_PKT_DECRYPT;

			esp_sa_prefetch_keys(
				sa[i], inbound ? esp_hashed_in(len) : esp_hashed_out(sa[i], len),
				inbound);
		}
}

void crypto_worker_process(struct crypto_worker *w, struct rte_mbuf *pkts[], unsigned int n)
{
	struct rte_mbuf *enc[ESGW_BURST], *dec[ESGW_BURST], *markers[ESGW_BURST];
	struct esp_sa *enc_sa[ESGW_BURST], *dec_sa[ESGW_BURST];
	uint16_t n_enc = 0, n_dec = 0, n_markers = 0;

	prefetch_sas(w, pkts, n);
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct esgw_meta *meta = esgw_meta(m);
		struct esp_sa *sa = meta->sa_slot < w->dp.max_sas ? w->sa[meta->sa_slot] : NULL;

		/* Parked slots are in the standby list: none, no look. */
		if (unlikely(w->nb_standby != 0 && sa != NULL && w->parking[meta->sa_slot] != NULL)) {
			handover_park(w, m); /* standby: markers too, in order */
			continue;
		}
		if (unlikely(meta->kind == ESGW_PKT_HANDOVER)) {
			/* Released below, once the packets ahead of it are out. No
			 * packet of its SA can follow it here: the router sends the
			 * SA's packets elsewhere from the marker on. */
			markers[n_markers++] = m;
			continue;
		}
		if (sa == NULL) {
			/* The router's view and ours differ for a moment around a
			 * configuration change (an SA moved or deleted). */
			esgw_drop(m, w->drops, ESGW_DROP_NO_SA);
			continue;
		}
		crypto_worker_sa_changed(w, meta->sa_slot); /* counted whatever comes next */
		if (make_contiguous(m) < 0) {
			drop_sa_packet(w, m, sa, ESGW_DROP_MALFORMED);
			continue;
		}
		if (meta->kind == ESGW_PKT_ENCRYPT) {
			enc_sa[n_enc] = sa;
			enc[n_enc++] = m;
		} else if (meta->kind == ESGW_PKT_DECRYPT) {
			dec_sa[n_dec] = sa;
			dec[n_dec++] = m;
		} else {
			ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "packet of kind %u on a crypto ring",
					     meta->kind);
			drop_sa_packet(w, m, sa, ESGW_DROP_MALFORMED);
		}
	}
	if (n_enc)
		prefetch_keys(enc_sa, enc, n_enc);
	if (n_dec) {
		prefetch_keys(dec_sa, dec, n_dec);
		prefetch_egress(w, dec, n_dec);
	}
	if (n_enc) {
		uint64_t begin = rte_rdtsc();

		encrypt_burst(w, enc, enc_sa, n_enc);
		esgw_stage_encrypt(&w->dp.cycles, begin, n_enc);
	}
	if (n_dec) {
		uint64_t begin = rte_rdtsc();

		decrypt_burst(w, dec, dec_sa, n_dec);
		esgw_stage_decrypt(&w->dp.cycles, begin, n_dec);
	}
	for (uint16_t i = 0; i < n_markers; i++)
		handover_release(w, markers[i]);
}

/* Whether both output rings have room for a burst (backpressure.h): if not,
 * the input ring waits, and the router, once it is full, holds router_in. */
static int outputs_have_room(struct crypto_worker *w)
{
	struct esgw_room *room = &esgw_shm_worker(w->dp.shared, w->id)->room_worker_out;

	return esgw_ring_has_room(w->ring_wtx, ESGW_RING_HIGH, room) &&
	       esgw_ring_has_room(w->ring_dec, ESGW_RING_HIGH, room);
}

/* One burst from the input ring; returns how many packets it held. */
static unsigned int process_burst(struct crypto_worker *w)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	unsigned int n;

	/* A (re)started worker leaves its ring alone until it knows its SAs:
	 * what waits there is processed then instead of dropped as no_sa. */
	if (unlikely(w->dp.generation == 0))
		return 0;
	if (unlikely(!outputs_have_room(w)))
		return 0;
	n = rte_ring_dequeue_burst(w->ring_in, (void **)pkts, ESGW_BURST, NULL);
	esgw_ring_room_made(&w->dp, w->ring_in, ESGW_RING_LOW, &esgw_shm_worker(w->dp.shared, w->id)->room_crypto,
			    &w->dp.shared->db_router);
	/* The router wrote these mbufs on another core: fetch the header line
	 * and the metadata line of all of them at once rather than one miss
	 * after another in crypto_worker_process. */
	for (unsigned int i = 0; i < n; i++) {
		rte_prefetch0(pkts[i]);
		rte_prefetch0(esgw_meta(pkts[i]));
	}
	w->dp.cycles.rx_packets += n;
	w->dp.cycles.rx_bytes += esgw_burst_bytes(pkts, n);
	crypto_worker_process(w, pkts, n);
	return n;
}

static int has_work(void *arg)
{
	struct crypto_worker *w = arg;

	if (w->dp.generation == 0)
		return 0;
	return (rte_ring_count(w->ring_in) != 0 && outputs_have_room(w)) || handover_ready(w);
}

void crypto_worker_run(struct crypto_worker *w)
{
	unsigned int idle = 0, busy = 0;

	while (!esgw_dp_quit) {
		uint64_t begin = rte_rdtsc();
		unsigned int handled;

		if (unlikely(w->nb_standby != 0))
			handover_poll(w);
		handled = process_burst(w);

		esgw_dp_round_end(&w->dp, begin, handled);
		if (handled) {
			idle = 0;
			if (++busy % CTL_POLL_EVERY == 0)
				esgw_dp_ctl_poll(&w->dp);
			continue;
		}
		if (++idle < ESGW_IDLE_SPINS) {
			rte_pause();
			continue;
		}
		esgw_dp_idle(&w->dp, &esgw_shm_worker(w->dp.shared, w->id)->db, IDLE_TIMEOUT_US, has_work, w);
	}
}
