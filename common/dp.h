/* SPDX-License-Identifier: BSD-3-Clause */
/* What every dataplane process (rxtx, router, crypto worker) shares: EAL start,
 * attaching to the primary's shared objects, the control socket on which
 * esgw-ctld pushes DpConfig and asks for DpStats, quitting on SIGTERM, and the
 * idle sleep. The data thread itself serves the control socket between bursts,
 * so configuration is applied without locks. */
#ifndef ESGW_DP_H
#define ESGW_DP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "dataplane.pb-c.h"
#include "framing.h"
#include "shm.h"
#include "stage_cycles.h"

#define ESGW_RUNDIR_DEFAULT "/run/esgw"

struct esgw_dp;

/* Apply a pushed configuration. Return 0, or -1 with a message in err. */
typedef int (*esgw_dp_config_fn)(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err,
				 size_t errlen);
/* Apply a change against the configuration applied last (its generation
 * checked by the caller). Return 0; -1 with err refused, nothing changed; 1:
 * this change is not done in place, nothing changed (ctld pushes the whole
 * configuration). */
typedef int (*esgw_dp_config_delta_fn)(struct esgw_dp *dp, const Esgw__DpConfigDelta *delta,
				       char *err, size_t errlen);
/* Fill counters, ports and SAs of stats (role, pid, generation are set). Memory
 * from esgw_dp_stats_alloc() is released after the response is sent. */
typedef void (*esgw_dp_stats_fn)(struct esgw_dp *dp, Esgw__DpStats *stats);
/* Raise outbound sequence-number limits (crypto workers only). */
typedef void (*esgw_dp_seq_limits_fn)(struct esgw_dp *dp, const Esgw__DpSeqLimits *limits);

struct esgw_dp {
	const char *role; /* "rxtx", "router", "crypto" */
	int worker;       /* crypto worker id, -1 otherwise */
	char rundir[256];
	char sock_path[300];
	struct esgw_shared *shared;
	struct rte_mempool *pool;
	esgw_dp_config_fn on_config;
	esgw_dp_config_delta_fn on_config_delta; /* NULL: deltas refused, whole pushes only */
	esgw_dp_stats_fn on_stats;
	const Esgw__DpStatsQuery *stats_query; /* what on_stats is answering */
	esgw_dp_seq_limits_fn on_seq_limits;   /* NULL: the request is refused */
	uint64_t generation;
	struct esgw_stage_cycles cycles; /* reported in DpStats; started by ctl_open */
	struct esgw_bells bells;         /* owed by this round: esgw_dp_round_end */
	bool busy_poll;                  /* --busy-poll: esgw_dp_idle never sleeps */
	uint32_t slice_us;               /* --slice-us: the scheduler slice, 0: the kernel's */
	/* SA runtime slots: rxtx's --max-sas (the shared table's size); a
	 * secondary's from the shared table. Slots at or above it are refused. */
	uint32_t max_sas;
	/* Crypto workers with rings: rxtx's --max-workers; a secondary's from
	 * the shared table. */
	uint32_t max_workers;
	uint64_t last_work;              /* TSC at the start of the last round with packets */
	uint64_t recent_cycles;          /* ESGW_RECENT_US in TSC cycles */
	/* private to the dp_*.c files */
	int listen_fd;
	int conn_fd;
	/* The control watcher thread only waits for the socket to become
	 * readable, raises ctl_pending and rings db; the data thread serves the
	 * socket, so configuration is applied between bursts without locks. */
	pthread_t ctl_thread;
	int ctl_stop_fd; /* eventfd: esgw_dp_ctl_close ends the watcher's wait */
	bool ctl_thread_running;
	pthread_mutex_t ctl_lock;
	pthread_cond_t ctl_served;
	volatile int ctl_pending;
	struct esgw_doorbell *volatile db; /* the data thread's doorbell, once it slept */
	int (*idle_has_work)(void *arg);
	void *idle_arg;
	struct esgw_frame_buf rx;
	void **arena;
	size_t arena_len, arena_cap;
};

/* Set when SIGTERM or SIGINT arrived: the main loop returns and cleans up. */
extern volatile int esgw_dp_quit;

/* rte_eal_init plus signal handlers; returns the number of EAL arguments
 * consumed (argv is shifted like rte_eal_init does) or exits with a message. */
int esgw_dp_eal_init(int argc, char **argv);
/* Ask the kernel for a scheduler slice of slice_us for the calling thread
 * (0: leave the default); a refusal is logged, not fatal. */
void esgw_dp_slice_apply(uint32_t slice_us);
/* Parse the application arguments after "--": --rundir DIR, --worker N (only
 * and then required when want_worker), --help. Logs what is wrong and returns
 * -1 on bad arguments; exits 0 after --help. */
int esgw_dp_args_parse(struct esgw_dp *dp, int argc, char **argv, int want_worker);
/* Secondary: look up the shared table and mbuf pool created by rxtx, waiting
 * up to timeout_ms for them. Returns 0 or -1 with a message logged. */
int esgw_dp_attach(struct esgw_dp *dp, int timeout_ms);
/* Create the control socket <rundir>/<name>.sock (0600). */
int esgw_dp_ctl_open(struct esgw_dp *dp, const char *name);
/* Serve the control socket if the watcher thread saw it readable: accept,
 * read, answer. Costs one load when there is nothing to do. */
void esgw_dp_ctl_poll(struct esgw_dp *dp);
void esgw_dp_ctl_close(struct esgw_dp *dp);
/* Whether the process handled packets less than ESGW_RECENT_US ago: rxtx,
 * whose ports have no doorbell, then sleeps only ESGW_RECENT_TIMEOUT_US at a
 * time, so the next frame of a flow of 1,000 packets/s or more waits at most
 * that long instead of up to a millisecond. A sleep, not a spin: a loop that
 * yielded the CPU instead (sched_yield) starved rxtx whenever a process on
 * its CPU spun (a worker waiting for a hand-over), measured: SA moves took
 * 8-19 s instead of 2 and lost packets. An idle gateway keeps its long sleeps:
 * the window starts at the last packet. 50 us, not 100: at 1,000 packets/s
 * through the chain (bench/run.sh --setting C, two alternating rounds of 3
 * pairs) p50 fell from 500 and 496 us to 342 and 303 (secgw 446-452), for
 * 73 % of a CPU for both gateways instead of 52 and 49 % (secgw 190 %);
 * at rest unchanged (each gateway 0.6-0.75 %). */
#define ESGW_RECENT_US 2000
#define ESGW_RECENT_TIMEOUT_US 50
static inline int esgw_dp_recent(const struct esgw_dp *dp)
{
	return rte_rdtsc() - dp->last_work < dp->recent_cycles;
}
/* Empty rounds a dataplane process polls its rings before it sleeps on its
 * doorbell (rxtx, router, crypto worker alike): a few microseconds. A build
 * may set it (-Dc_args=-DESGW_IDLE_SPINS=N), as ESGW_HOLD_PACKETS. Longer
 * spins do not pay where the stages share a CPU: 1,024 in setting A (GCM
 * 64 B, 3 interleaved rounds) delivered 2.10-2.33 Mpps encrypt against
 * 1.61-2.60 with 64, and 1.00-1.95 decrypt against 1.96-2.21, at no fewer
 * context switches (the spinner holds the CPU its producer needs). */
#ifndef ESGW_IDLE_SPINS
#define ESGW_IDLE_SPINS 64
#endif
/* Sleep on a doorbell (see shm.h) after serving the control socket; the
 * short sleeps of a flow with a 1 us timer slack, so they end on time. */
void esgw_dp_idle(struct esgw_dp *dp, struct esgw_doorbell *db, unsigned int timeout_us,
		  int (*has_work)(void *arg), void *arg);
/* The same in ppoll() on pfd[0..n) (esgw_doorbell_wait: pfd[0] the
 * doorbell FIFO, db->fifo set) for a process that also waits on descriptors
 * of its own. */
void esgw_dp_idle_fds(struct esgw_dp *dp, struct esgw_doorbell *db, unsigned int timeout_us,
		      int (*has_work)(void *arg), void *arg, struct pollfd *pfd, unsigned int n);

/* Memory for a stats reply, freed after the reply is sent. Zeroed. */
void *esgw_dp_stats_alloc(struct esgw_dp *dp, size_t size);
char *esgw_dp_stats_strdup(struct esgw_dp *dp, const char *s);
/* An array of n Counter messages named after the drop reasons, from drops[]. */
Esgw__Counter **esgw_dp_stats_drops(struct esgw_dp *dp, const uint64_t drops[ESGW_DROP_MAX],
				    size_t *n);
/* The same for an SA's counters (struct esgw_sa_counters): the reasons an
 * SA can hit, by enum esgw_sa_drop, only those not 0 (NULL, *n 0: none). */
Esgw__Counter **esgw_dp_stats_sa_drops(struct esgw_dp *dp, const uint64_t drops[ESGW_SA_DROP_MAX],
				       size_t *n);
/* One named counter. */
Esgw__Counter *esgw_dp_stats_counter(struct esgw_dp *dp, const char *name, uint64_t value);

/* Between the dp_*.c files only. */
/* Answer one request (NULL: it did not unpack) on dp->conn_fd. */
void esgw_dp_request_answer(struct esgw_dp *dp, const Esgw__DpRequest *req);
/* Free what esgw_dp_stats_alloc gave out for the reply just sent. */
void esgw_dp_stats_release(struct esgw_dp *dp);
/* The per-stage cost counters (stage_cycles.h) into stats and traffic. */
void esgw_dp_stats_stages(const struct esgw_dp *dp, Esgw__DpStats *stats, Esgw__DpTraffic *traffic);
/* The hand-off counters (sleeps, room_wakes), appended to stats->counters. */
void esgw_dp_stats_handoffs(struct esgw_dp *dp, Esgw__DpStats *stats);

/* End of one round of the main loop that began at TSC begin and handled n
 * packets: its cycles are counted, then the doorbells it owes are rung. */
static inline void esgw_dp_round_end(struct esgw_dp *dp, uint64_t begin, unsigned int n)
{
	esgw_stage_round(&dp->cycles, begin, n);
	esgw_doorbells_round(&dp->bells, n, begin);
	if (n)
		dp->last_work = begin;
}

/* A consumer's doorbell, rung at the end of this round. */
static inline void esgw_dp_wake(struct esgw_dp *dp, struct esgw_doorbell *db)
{
	esgw_doorbell_defer(&dp->bells, db);
}

/* Drop one mbuf for a named reason: free it and count it. */
static inline void esgw_drop(struct rte_mbuf *m, uint64_t drops[ESGW_DROP_MAX],
			     enum esgw_drop reason)
{
	drops[reason]++;
	rte_pktmbuf_free(m);
}

#endif
