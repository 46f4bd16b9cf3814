/* SPDX-License-Identifier: BSD-3-Clause */
/* The hugepage objects esgw-rxtx (the DPDK primary) creates and every secondary
 * looks up by name: the mbuf pool, the rings, and the shared table of doorbells
 * and per-SA runtime state. One gateway instance per DPDK --file-prefix, so the
 * names need no instance part. */
#ifndef ESGW_SHM_H
#define ESGW_SHM_H

#include <poll.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_ring.h>

#include "drops.h"
#include "esgw_limits.h"
#include "replay.h"

#define ESGW_POOL_NAME "esgw.pool"
#define ESGW_SHARED_NAME "esgw.shared"
/* Every ring has exactly one producer process and one consumer process
 * (SP/SC). A process killed inside a multi-producer enqueue would leave the
 * ring's head ahead of its tail and stall every other producer for good; with
 * one producer per ring, a restarted producer discards its predecessor's
 * half-done enqueue (esgw_ring_producer_recover) and nothing else is held up. */
#define ESGW_RING_ROUTER_IN "esgw.router_in"  /* rxtx RX -> router */
#define ESGW_RING_TX_FMT "esgw.tx.%u"         /* router -> rxtx, one per port id */
#define ESGW_RING_CRYPTO_FMT "esgw.crypto.%u" /* router -> crypto worker N */
#define ESGW_RING_DECRYPTED_FMT "esgw.dec.%u" /* crypto worker N -> router */
#define ESGW_RING_WORKER_TX_FMT "esgw.wtx.%u" /* crypto worker N -> rxtx, any port */
#define ESGW_RING_PUNT "esgw.punt"            /* router -> rxtx: frames for the host's stack */

#define ESGW_POOL_SIZE 16383
#define ESGW_POOL_CACHE 256
#define ESGW_RING_SIZE 4096
/* Packets a stage takes from a ring or a port at once, and the ESP core's
 * burst (intel-ipsec-mb takes up to 128 jobs a call): 64, not 32, halves
 * the per-burst work (ring and driver calls, the ESP core's job setup, the
 * prefetch passes) per packet. Measured (bench/run.sh --setting A,B, GCM,
 * the builds interleaved, 2 rounds): one CPU 64 B encrypt 533 and 721 ->
 * 493 and 465 cycles of CPU per packet, 1400 B 1,190 and 1,640 -> 1,167
 * and 1,121; the chain at full load 64 B 2.41 and 1.96 -> 2.83 and 2.66
 * Mpps, 1400 B 1.03 and 0.77 -> 1.10 and 1.05. */
#define ESGW_BURST 64

/* What a packet on a ring is, set by whoever enqueues it. */
enum esgw_pkt_kind {
	ESGW_PKT_RX = 1,        /* rxtx -> router: a frame as received, L2 header on */
	ESGW_PKT_ENCRYPT = 2,   /* router -> crypto: inner IPv4 packet (no L2), sa_slot, L2 out */
	ESGW_PKT_DECRYPT = 3,   /* router -> crypto: outer IPv4+ESP (no L2), sa_slot */
	ESGW_PKT_DECRYPTED = 4, /* crypto -> router: inner IPv4 packet (no L2), sa_slot */
	ESGW_PKT_TX = 5,        /* anyone -> rxtx: a complete frame for out_port */
	/* router -> crypto: no data. The SA in sa_slot moved to worker
	 * handover_to; every packet of it the router sent this worker is ahead
	 * of the marker in the ring (crypto-worker/handover.c). */
	ESGW_PKT_HANDOVER = 6,
};

/* Per-packet metadata in the mbuf private area. The enqueuer owns the mbuf
 * until the enqueue succeeds; the dequeuer owns it after. */
struct esgw_meta {
	uint8_t kind;
	uint8_t reserved;
	uint16_t in_port;
	uint16_t out_port;
	uint16_t handover_to; /* HANDOVER: the SA's new worker */
	uint32_t sa_slot;
	struct rte_ether_addr dst_mac; /* L2 header to prepend after encryption */
	struct rte_ether_addr src_mac;
	uint64_t timestamp; /* TSC at RX, for latency measurement */
	/* A decrypted packet the worker sent through the router: rxtx sends
	 * it only once it has taken worker order_worker - 1's ring esgw.wtx
	 * up to order_pos, where it stood when the worker sent this one, so a
	 * packet the worker sent straight to rxtx before it is not overtaken
	 * (rxtx/loop.c). 0: no such worker. */
	uint16_t order_worker;
	uint32_t order_pos;
};

/* A whole cache line: the mbuf (two lines) and the headroom (RTE_PKTMBUF_HEADROOM,
 * two lines) are whole lines too, so packet data starts on a line and a small
 * packet's headers do not straddle one more line at every hop. */
#define ESGW_MBUF_PRIV_SIZE RTE_ALIGN(sizeof(struct esgw_meta), RTE_CACHE_LINE_SIZE)
_Static_assert(sizeof(struct rte_mbuf) % RTE_CACHE_LINE_SIZE == 0 &&
		       RTE_PKTMBUF_HEADROOM % RTE_CACHE_LINE_SIZE == 0,
	       "packet data is cache-line aligned only if the mbuf and the headroom are");

static inline struct esgw_meta *esgw_meta(struct rte_mbuf *m)
{
	return (struct esgw_meta *)rte_mbuf_to_priv(m);
}

/* A sleeping consumer's wake-up word (a shared futex). The consumer announces
 * it is going to sleep, re-checks its rings, then waits on seq; a producer that
 * enqueued and sees sleeping set bumps seq and wakes it. */
struct esgw_doorbell {
	volatile uint32_t seq;
	volatile uint32_t sleeping;
	volatile int32_t cpu; /* where the consumer went to sleep (esgw_doorbells_round) */
	/* Set by a consumer that sleeps in ppoll() on file descriptors of its
	 * own as well (rxtx: its ports) instead of on the futex: a producer
	 * writes a byte into the instance's doorbell FIFO (ESGW_BELL_FIFO in
	 * DPDK's runtime directory of the --file-prefix) instead of a futex
	 * wake. One such consumer per instance. */
	volatile uint32_t fifo;
} __rte_cache_aligned;

/* A ring's producer waits for room in it (backpressure.h): raised by the
 * producer, cleared by the consumer when it rings the producer's doorbell. */
struct esgw_room {
	volatile uint32_t wanted;
} __rte_cache_aligned;

/* Traffic counters of one SA, written only by the worker that owns it. */
struct esgw_sa_counters {
	uint64_t packets;
	uint64_t bytes;
};

/* Runtime state of one SA, in shared memory so that it survives a worker
 * restart or a move to another worker. Only the owning worker writes it; no key
 * material is ever stored here. */
struct esgw_sa_runtime {
	/* Line 0: what every packet of the SA reads or writes, outbound all of
	 * it (with thousands of SAs each packet's SA is a miss per line). */
	uint64_t seq_out; /* last outbound sequence number used; next is seq_out + 1 */
	/* The highest outbound sequence number the SA may use: one below the
	 * floor esgw-ctld has fsync'ed (DpSa.seq_limit), and within the number
	 * space (2^32 - 1, 2^64 - 1 with ESN). Only raised, by the owner, from
	 * ctld's pushes; at it the SA holds (seq_hold). So however the dataplane
	 * restarts, and whether ctld runs or not, no number above what is on
	 * disk was ever sent, and a fresh slot starts above every number used. */
	uint64_t seq_out_max;
	struct esgw_sa_counters ctr;
	uint32_t expired; /* ESGW_SA_* bits below, set once by the owner */
	uint32_t spi;     /* SPI the state belongs to: a new SA in the slot resets it */
	uint64_t instance; /* DpSa.instance it belongs to: likewise */
	/* Worker id of the one writer. A hand-over is the only other change:
	 * the old owner stores the new id with release order after its last
	 * write, the new owner loads it with acquire order before its first. */
	uint32_t owner;
	uint32_t handover_from; /* below: where the old owner's rings stood */
	uint64_t generation;    /* bumped by the owner when (re)initialised */
	/* Line 1 on: inbound, the window (its head and, up to a 320-packet
	 * window, its whole bitmap in line 1). */
	struct replay_window replay;
	uint64_t handovers;    /* hand-overs so far, bumped by the old owner */
	uint64_t installed_at; /* CLOCK_MONOTONIC seconds when (re)initialised: lifetimes */
	/* Written by the old owner before it hands the SA over: where its
	 * output rings stood. The new owner starts only once rxtx and the router
	 * have taken everything up to there, so the SA's packets stay in order
	 * although the two workers output into different rings. */
	uint32_t handover_wtx_pos;
	uint32_t handover_dec_pos;
	/* Drops of the SA: only the reasons an SA can hit (ESGW_FOREACH_SA_DROP,
	 * drops.h), by enum esgw_sa_drop. */
	uint64_t drops[ESGW_SA_DROP_MAX];
} __rte_cache_aligned;
/* --max-sas of them in the shared table: a new field or drop reason here is
 * shared memory for every SA, so the size is pinned. */
_Static_assert(sizeof(struct esgw_sa_runtime) == 12 * RTE_CACHE_LINE_SIZE,
	       "esgw_sa_runtime: 12 cache lines (its replay window 536 bytes, drops 112)");
_Static_assert(sizeof(struct esgw_sa_runtime) == ESGW_SA_RUNTIME_BYTES,
	       "ESGW_SA_RUNTIME_BYTES (esgw_limits.h) sizes esgw-rxtx's hugepage memory");
_Static_assert(offsetof(struct esgw_sa_runtime, replay) == RTE_CACHE_LINE_SIZE,
	       "esgw_sa_runtime: the per-packet fields in line 0, the window from line 1");

/* Count one packet of the SA dropped for reason (one of ESGW_FOREACH_SA_DROP:
 * any other is counted by the worker alone). */
static inline void esgw_sa_count_drop(struct esgw_sa_runtime *rt, enum esgw_drop reason)
{
	unsigned int i = esgw_sa_drop_index(reason);

	if (i < ESGW_SA_DROP_MAX)
		rt->drops[i]++;
}

/* The SA's drops for reason: 0 for a reason no SA can hit. */
static inline uint64_t esgw_sa_drops(const struct esgw_sa_runtime *rt, enum esgw_drop reason)
{
	unsigned int i = esgw_sa_drop_index(reason);

	return i < ESGW_SA_DROP_MAX ? rt->drops[i] : 0;
}

/* esgw_sa_runtime.expired: the control daemon reports each bit once as an event. */
#define ESGW_SA_SOFT_EXPIRED 0x1  /* a soft lifetime was reached: rekey now */
#define ESGW_SA_HARD_EXPIRED 0x2  /* a hard lifetime was reached: the SA stopped */
#define ESGW_SA_SEQ_EXHAUSTED 0x4 /* outbound seq at 2^32 - 1 without ESN: stopped sending */

/* Crypto worker N's doorbell and backpressure flags (backpressure.h): the
 * router waits for room in crypto.N, worker N in its dec.N and wtx.N. */
struct esgw_worker_shm {
	struct esgw_doorbell db;
	struct esgw_room room_crypto;
	struct esgw_room room_worker_out;
};

struct esgw_shared {
	uint32_t magic;
	uint32_t nb_ports;
	struct esgw_doorbell db_rxtx;
	struct esgw_doorbell db_router;
	/* Backpressure: rxtx waits for room in router_in, the router for room
	 * in the ports' TX rings (any of them). */
	struct esgw_room room_router_in;
	struct esgw_room room_tx;
	uint32_t max_sas;     /* slots in sa[]: esgw-rxtx --max-sas, at most ESGW_MAX_SAS_CAP */
	uint32_t max_workers; /* esgw-rxtx --max-workers: rings and worker[] entries */
	/* 1 + the highest worker id that ever attached (esgw_worker_started):
	 * rxtx polls the output rings of workers below it only. */
	uint32_t workers_started;
	/* Decrypted packets straight to rxtx (router/egress.c,
	 * crypto-worker/egress.c): an entry of egress[] holds while its epoch
	 * is this one. The router bumps it whenever what it decided may have
	 * changed (its tables, a neighbour, its own start); 0: no router has
	 * ever filled the table. Alone in its line: the workers read it per
	 * packet, the router writes it seldom. */
	uint32_t egress_epoch __rte_cache_aligned;
	struct esgw_sa_runtime sa[];
	/* then max_workers struct esgw_worker_shm: esgw_shm_worker(), then
	 * max_sas * ESGW_EGRESS_WAYS struct esgw_egress: esgw_egress() */
};

/* What the router decided for decrypted IPv4 packets of one inbound SA from
 * src to dst, both fixed by the packet's addresses alone: the inbound
 * policy and source checks passed, not for the gateway, a route out of a
 * port (not into a tunnel, no policy in the way) to a resolved neighbour.
 * Written by the router only (a sequence lock: seq odd while it writes),
 * read by the SA's worker, which then sends the packet to rxtx itself
 * after its own per-packet checks (header, TTL, the port's MTU). Ordering:
 * dec_pos is how far the router had taken worker's decrypted ring, and
 * tx_pos how far it had filled the port's TX ring, when it wrote the entry;
 * the worker goes direct only once both cover every packet of the SA it
 * sent through the router (crypto-worker/egress.c). No key material. */
struct esgw_egress {
	uint32_t seq;
	uint32_t epoch; /* valid while esgw_shared.egress_epoch is this */
	uint32_t src, dst; /* network order, as in the header */
	uint32_t dec_pos;
	uint32_t tx_pos;
	uint64_t fresh_until; /* TSC: the neighbour is to be confirmed by then */
	uint16_t worker;
	uint16_t port;
	uint16_t mtu;
	struct rte_ether_addr dst_mac;
	struct rte_ether_addr src_mac;
} __rte_cache_aligned;
_Static_assert(sizeof(struct esgw_egress) == RTE_CACHE_LINE_SIZE, "esgw_egress: one line");
_Static_assert(ESGW_EGRESS_WAYS * sizeof(struct esgw_egress) == ESGW_SA_EGRESS_BYTES,
	       "ESGW_SA_EGRESS_BYTES (esgw_limits.h) sizes esgw-rxtx's hugepage memory");

/* Bytes of the shared table with max_sas SA runtime slots and max_workers
 * workers' doorbells. */
static inline size_t esgw_shared_size(uint32_t max_sas, uint32_t max_workers)
{
	return sizeof(struct esgw_shared) + (size_t)max_sas * sizeof(struct esgw_sa_runtime) +
	       (size_t)max_workers * sizeof(struct esgw_worker_shm) +
	       (size_t)max_sas * ESGW_EGRESS_WAYS * sizeof(struct esgw_egress);
}

/* Worker w's doorbell and room flags; w < s->max_workers. */
static inline struct esgw_worker_shm *esgw_shm_worker(struct esgw_shared *s, uint32_t w)
{
	return (struct esgw_worker_shm *)&s->sa[s->max_sas] + w;
}

/* Which of an SA's ESGW_EGRESS_WAYS entries holds packets from src to dst
 * (network order). */
static inline uint32_t esgw_egress_way(uint32_t src, uint32_t dst)
{
	uint32_t h = src ^ dst;

	h ^= h >> 16;
	h ^= h >> 8;
	return h & (ESGW_EGRESS_WAYS - 1);
}

/* Entry way of inbound SA slot; slot < s->max_sas. Lines apart from
 * everything else, so the router's writes never share one with the runtime
 * slots or the doorbells. */
static inline struct esgw_egress *esgw_egress_at(struct esgw_shared *s, uint32_t slot, uint32_t way)
{
	struct esgw_egress *table = (struct esgw_egress *)esgw_shm_worker(s, s->max_workers);

	return &table[(size_t)slot * ESGW_EGRESS_WAYS + way];
}

/* The entry of inbound SA slot for decrypted packets from src to dst. */
static inline struct esgw_egress *esgw_egress(struct esgw_shared *s, uint32_t slot, uint32_t src,
					      uint32_t dst)
{
	return esgw_egress_at(s, slot, esgw_egress_way(src, dst));
}

/* A crypto worker announces itself before its first enqueue. */
static inline void esgw_worker_started(struct esgw_shared *s, uint32_t w)
{
	uint32_t seen = __atomic_load_n(&s->workers_started, __ATOMIC_RELAXED);

	while (seen < w + 1 && !__atomic_compare_exchange_n(&s->workers_started, &seen, w + 1, 0,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* Workers whose output rings rxtx polls: those started since rxtx began. */
static inline uint32_t esgw_workers_polled(const struct esgw_shared *s)
{
	uint32_t n = __atomic_load_n(&s->workers_started, __ATOMIC_ACQUIRE);

	return n < s->max_workers ? n : s->max_workers;
}

#define ESGW_SHARED_MAGIC 0x65736777u /* "esgw" */

/* A process that has just started as the only producer of r discards what a
 * killed predecessor reserved but never published (prod.head past prod.tail),
 * so those slots are never handed to the consumer. Call before the first
 * enqueue, only on an SP ring whose producer is this process. */
static inline void esgw_ring_producer_recover(struct rte_ring *r)
{
	if (r->prod.head != r->prod.tail)
		r->prod.head = r->prod.tail;
}

/* Doorbell: producer side. Cheap when the consumer is awake (one read). */
void esgw_doorbell_ring(struct esgw_doorbell *db);

/* Doorbells a process owes for what it enqueued in this round, rung together
 * once the round is over (esgw_doorbells_round): one memory barrier per round
 * instead of one per enqueue, and a consumer woken on our own CPU, which the
 * scheduler often runs at once, does not run inside our round and its
 * cycles (stage_cycles.h). Each doorbell is listed once.
 *
 * A consumer asleep on our own CPU is not woken at once but held, until we
 * have handled ESGW_HOLD_PACKETS packets or ESGW_HOLD_US have passed since the
 * first hold, or a round of ours finds no work (we are about to go idle
 * ourselves; esgw_doorbells_ring rings them all before we sleep): woken at
 * once, it would take the CPU from us (the scheduler favours a task that
 * slept) after every burst, so that each burst costs two context switches
 * and the stages run in bursts of 32 instead of hundreds. Measured on one
 * CPU (bench setting A, GCM 64 B encrypt, the builds interleaved, medians of
 * 6): without the hold 2.10 Mpps, 1,178 cycles of CPU and 12.5 context
 * switches per 1,000 packets; with 256 packets / 100 us 2.15 Mpps; with 1,024 / 500
 * us 2.20 Mpps, 1,123 cycles, 5.0 switches; 2,048 and 4,096 no better (the
 * packets waiting between the stages no longer fit the caches).
 * On a machine whose context switch costs twice as much (~15,500 cycles, a
 * VM under a PVM hypervisor) 4,096 / 2 ms pays: setting A, GCM, the builds
 * interleaved, 3 rounds, median esgw / secgw (cycles of CPU per packet)
 * before -> after: 64 B encrypt 0.61 (1,159) -> 0.69 (1,065), decrypt
 * 0.57 (1,254) -> 0.72 (1,017); 1400 B encrypt 0.65 (4,211) -> 0.77
 * (2,665), decrypt 0.64 (4,584) -> 1.08 (2,299), context switches per
 * 1,000 packets 10-12 -> 4.5-5.5: at 1400 B the 500 us ended the hold
 * long before 1,024 packets. 2,048 / 1 ms was in between, 4,096 / 4 ms no
 * better than 2 ms. The chain (setting B) no worse: full load 0.96 -> 1.20
 * at 64 B, 0.82 -> 0.90 at 1400 B.
 * A consumer on another CPU is woken at once: it runs beside us. */
#define ESGW_BELLS_MAX (2 + ESGW_MAX_WORKERS)
#ifndef ESGW_HOLD_PACKETS /* a build may set them (-Dc_args), as ESGW_RING_HIGH */
#define ESGW_HOLD_PACKETS 4096
#endif
#ifndef ESGW_HOLD_US
#define ESGW_HOLD_US 2000
#endif
struct esgw_bells {
	struct esgw_doorbell *db[ESGW_BELLS_MAX];
	unsigned int n;
	uint32_t held_packets; /* handled since the first hold */
	uint64_t held_since;   /* TSC of the first hold, 0: none held */
	uint64_t hold_cycles;  /* ESGW_HOLD_US in TSC cycles, 0: never hold */
};

static inline void esgw_doorbell_defer(struct esgw_bells *b, struct esgw_doorbell *db)
{
	for (unsigned int i = 0; i < b->n; i++)
		if (b->db[i] == db)
			return;
	if (b->n < ESGW_BELLS_MAX)
		b->db[b->n++] = db;
	else
		esgw_doorbell_ring(db); /* not reached: every doorbell fits */
}

/* Ring every doorbell owed, held ones too (before we sleep); cheap when none
 * is owed. */
void esgw_doorbells_ring(struct esgw_bells *b);
/* End of a round that handled n packets at TSC now: ring what is owed, but
 * hold a consumer asleep on our CPU (see above). */
void esgw_doorbells_round(struct esgw_bells *b, unsigned int n, uint64_t now);
/* Consumer side: sleep until rung or timeout_us passes. has_work is called after
 * announcing the sleep; if it returns non-zero the wait is skipped. Returns
 * whether it waited. n == 0: on the futex; else (db->fifo set) in ppoll() on
 * pfd[0..n), where pfd[0] is the FIFO (emptied here when it woke us) and the
 * caller reads the other entries' revents. */
int esgw_doorbell_wait(struct esgw_doorbell *db, unsigned int timeout_us,
		       int (*has_work)(void *arg), void *arg, struct pollfd *pfd, unsigned int n);

/* The FIFO doorbell (esgw_doorbell.fifo), in DPDK's runtime directory. */
#define ESGW_BELL_FIFO "esgw.bell"
/* Consumer side: create (or reuse) the FIFO and open it; returns its file
 * descriptor, or -1 with a message logged. The caller then sets db->fifo. */
int esgw_doorbell_fifo_create(void);

#endif
