/* SPDX-License-Identifier: BSD-3-Clause */
/* State of one esgw-crypto process: its SAs (by runtime slot), rings and
 * counters, shared by main.c, worker_loop.c and worker_config.c. */
#ifndef ESGW_CRYPTO_WORKER_H
#define ESGW_CRYPTO_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>
#include <rte_ring.h>

#include "dp.h"
#include "esp.h"

/* Packets of an SA in standby (handover.c), in the order they arrived; one
 * place more than packets may use, kept for a hand-over marker. */
#define HANDOVER_PARK_MAX ESGW_RING_SIZE
struct sa_parking {
	uint32_t standby_index; /* its slot's place in crypto_worker.standby */
	uint32_t count;
	struct rte_mbuf *pkts[HANDOVER_PARK_MAX + 1];
};

/* Where decrypted packets of an SA may go straight to rxtx (egress.c), by
 * slot: where esgw.dec stood after its last packet sent through the router
 * (known: slow_pos is set), and the entries whose order was checked since. */
struct worker_egress {
	uint32_t slow_pos;
	uint32_t ok_seq[ESGW_EGRESS_WAYS];
	uint32_t known;
};

struct crypto_worker {
	struct esgw_dp dp; /* first: the dp callbacks get &worker->dp */
	unsigned int id;
	IMB_MGR *mgr;
	struct rte_ring *ring_in;  /* esgw.crypto.<id>, from the router */
	struct rte_ring *ring_dec; /* esgw.dec.<id>: decrypted packets to the router */
	struct rte_ring *ring_wtx; /* esgw.wtx.<id>: encrypted frames to rxtx */
	/* Other workers' output rings, for hand-over ordering (handover.c). */
	struct rte_ring *peer_dec[ESGW_MAX_WORKERS];
	struct rte_ring *peer_wtx[ESGW_MAX_WORKERS];
	/* By runtime slot, dp.max_sas of each (crypto_worker_tables_alloc). */
	struct esp_sa **sa;     /* NULL: not ours */
	uint32_t *sa_id;        /* configuration id, for stats */
	uint64_t *sa_instance;  /* DpSa.instance */
	/* The DpSa each SA was built from, packed without what changes on
	 * every push (the hand-over flags, the sequence limit): a push with the
	 * same bytes keeps the SA's key schedule (worker_config.c). Holds keys:
	 * wiped when freed. */
	struct sa_built {
		uint8_t *bytes;
		size_t len;
	} *sa_built;
	/* The highest sequence-number floor esgw-ctld pushed for the SA
	 * (DpSa.seq_limit, DpSeqLimits): applied to the runtime slot whenever
	 * it is ours (crypto_worker_seq_limit_apply). */
	uint64_t *seq_limit;
	/* Non-NULL: the SA is ours but in standby, its runtime slot still owned
	 * by the worker handing it over (handover.c). */
	struct sa_parking **parking;
	/* Bitmaps by slot (64 a word): the SAs whose statistics changed since
	 * the last answer that listed only those (esgw-ctld's 1 s sampler:
	 * DpStatsQuery.sa_changed), and those with a time limit, which the
	 * stats answer checks even when nothing else changed. */
	uint64_t *sa_changed;
	uint64_t *sa_timed;
	struct worker_egress *egress; /* egress.c */
	struct rte_ring *port_tx[ESGW_MAX_PORTS]; /* rxtx's esgw.tx.P, for egress.c */
	uint32_t *standby; /* the slots in standby, in no order: handover_poll's */
	uint32_t nb_standby;
	/* Counters of this worker; the per-SA ones are in shared memory. */
	uint64_t packets_encrypted;
	uint64_t packets_decrypted;
	uint64_t decrypted_direct; /* of them, sent straight to rxtx (egress.c) */
	uint64_t bytes;
	uint64_t drops[ESGW_DROP_MAX];
	uint32_t esp_bursts; /* ESP-core calls, for the sampling (worker_loop.c) */
};

static inline bool crypto_worker_slot_bit(const uint64_t *map, uint32_t slot)
{
	return (map[slot >> 6] >> (slot & 63)) & 1;
}

static inline void crypto_worker_slot_set(uint64_t *map, uint32_t slot, bool on)
{
	if (on)
		map[slot >> 6] |= 1ull << (slot & 63);
	else
		map[slot >> 6] &= ~(1ull << (slot & 63));
}

/* Its packets, drops, sequence numbers, limit, expiry or owner changed. */
static inline void crypto_worker_sa_changed(struct crypto_worker *w, uint32_t slot)
{
	crypto_worker_slot_set(w->sa_changed, slot, true);
}

/* worker_loop.c */
int crypto_worker_rings_attach(struct crypto_worker *w);
void crypto_worker_run(struct crypto_worker *w);

/* Encrypt or decrypt n packets in order: from the ring, or parked. */
void crypto_worker_process(struct crypto_worker *w, struct rte_mbuf *pkts[], unsigned int n);

/* egress.c: whether decrypted packet m of the SA in slot went to rxtx's
 * way (then a frame for meta->out_port, TTL taken off) under the router's
 * egress epoch at TSC now; if not, it is unchanged for the router.
 * egress_routed: a packet of the SA in slot goes to the router, after
 * which esgw.dec stands at pos. */
bool egress_direct(struct crypto_worker *w, struct rte_mbuf *m, uint32_t slot, uint32_t epoch,
		   uint64_t now);
void egress_routed(struct crypto_worker *w, uint32_t slot, uint32_t pos);

/* handover.c */
/* Hold a packet (or marker) of an SA in standby until it becomes active. */
void handover_park(struct crypto_worker *w, struct rte_mbuf *m);
/* A HANDOVER marker reached us after every packet of its SA: pass the SA's
 * runtime slot on to the new worker and forget the SA. Consumes m. */
void handover_release(struct crypto_worker *w, struct rte_mbuf *m);
/* Activate standby SAs whose ownership arrived and process what they parked. */
void handover_poll(struct crypto_worker *w);
/* Non-zero if a standby SA could become active now. */
int handover_ready(struct crypto_worker *w);
/* Put an SA in standby (1) or take it out of it (0); parked packets of an SA
 * taken out without becoming active are dropped for reason. */
int handover_standby(struct crypto_worker *w, uint32_t slot);
void handover_forget(struct crypto_worker *w, uint32_t slot, enum esgw_drop reason);

/* worker_config.c */
/* The tables by runtime slot, dp.max_sas entries each: after esgw_dp_attach.
 * 0, or -1 out of memory. */
int crypto_worker_tables_alloc(struct crypto_worker *w);
int crypto_worker_on_config(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err,
			    size_t errlen);
/* A DpConfigDelta: only the SAs it names are built, removed or installed. */
int crypto_worker_on_config_delta(struct esgw_dp *dp, const Esgw__DpConfigDelta *d, char *err,
				  size_t errlen);
void crypto_worker_on_stats(struct esgw_dp *dp, Esgw__DpStats *stats);
void crypto_worker_on_seq_limits(struct esgw_dp *dp, const Esgw__DpSeqLimits *limits);
/* Raise the runtime slot's limit to the pushed floor, if the slot is ours
 * (not in hand-over standby): after a push, and when a standby SA activates. */
void crypto_worker_seq_limit_apply(struct crypto_worker *w, uint32_t slot);
/* Wipe and free every SA: on shutdown, so no key outlives the process. */
void crypto_worker_sas_wipe(struct crypto_worker *w);
/* Forget (wipe) what the SA in slot was built from: it left this worker. */
void crypto_worker_sa_built_free(struct crypto_worker *w, uint32_t slot);

#endif
