/* SPDX-License-Identifier: BSD-3-Clause */
/* Crypto workers at run time: `sa move` hands an SA from one worker to
 * another without losing or reordering a packet, and `workers set` starts
 * workers or, after moving every SA off them, stops them.
 *
 * ctld's part of the hand-over (the dataplane's is in crypto-worker/
 * handover.c and router/handover.c): push the SA to the new worker, which
 * holds it in standby; tell the old worker to keep it ("leaving") until the
 * router's marker; push the new placement to the router, which sends the
 * marker; then wait until the old worker no longer lists the SA, which it
 * does once it passed the runtime slot on. Only then may the SA move again,
 * so a marker never meets a second move of its SA. While a hand-over is in
 * flight the new worker's DpSa has adopt unset; at every other time adopt is
 * set, so that a worker (re)started with the SA takes its slot at once. */
#include "ctld.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define HANDOVER_TIMEOUT_MS 2000 /* a ring drains in well under a millisecond */
#define HANDOVER_POLL_MS 3

/* Hand-overs in flight, by runtime slot. */
static struct {
	bool pending;
	int from;
	pid_t from_pid; /* the instance that holds the SA: another one does not */
} *moving; /* ctld.opt.max_sas */

int handover_from(const Esgw__Sa *sa)
{
	return moving != NULL && sa->slot < ctld.opt.max_sas && moving[sa->slot].pending
		       ? moving[sa->slot].from
		       : -1;
}

static struct dp_proc *worker_proc(int worker)
{
	char name[24]; /* "crypto-N", N < ESGW_MAX_WORKERS */

	snprintf(name, sizeof(name), "crypto-%d", worker);
	return dp_proc_by_name(name);
}

static bool proc_running(const struct dp_proc *p)
{
	return p != NULL && p->state == PROC_RUNNING && p->pid > 0;
}

static void push_if_running(struct dp_proc *p)
{
	if (proc_running(p))
		dp_push(p);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Is process pid gone (or a zombie, which writes nothing)? */
static bool process_gone(pid_t pid)
{
	char path[64], state = '?';
	FILE *f;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return true;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = '?';
	fclose(f);
	return state == 'Z' || state == 'X';
}

/* One SA of a move: where from and to, and whether to wait for its old
 * worker's hand-over (it is in a tunnel and that worker runs). */
struct move {
	Esgw__Sa *sa;
	int from, to;
	pid_t pid; /* the old worker's instance */
	bool wait;
};

/* Whether the old worker (src, instance pid) still holds the SA in slot: 1,
 * 0, or -1 if that instance is gone or does not answer. One SA asked for:
 * with thousands on the worker, a move costs what it moves. */
static int slot_held(struct dp_proc *src, pid_t pid, uint32_t slot)
{
	Esgw__DpResponse *r = dp_stats_slot(src, slot);
	int held;

	if (r == NULL || r->stats->pid != pid) {
		dp_stats_free(r);
		return -1;
	}
	held = r->stats->n_sas > 0 && r->stats->sas[0]->slot == slot;
	dp_stats_free(r);
	return held;
}

#define SLOT_QUERIES_MAX 16 /* moves from one worker asked about one by one */

/* Of the moves that wait, those whose old worker (src, instance pid) still
 * holds the SA: still pending. Their count, or -1 if that instance is gone
 * or does not answer (all of its moves are then forced). */
static long still_held(struct dp_proc *src, pid_t pid, struct move *mv, size_t n, int from)
{
	static bool *held; /* ctld.opt.max_sas */
	Esgw__DpResponse *r;
	long count = 0, waiting = 0;

	if (!proc_running(src) || src->pid != pid)
		return -1;
	for (size_t i = 0; i < n; i++)
		waiting += mv[i].wait && mv[i].from == from && moving[mv[i].sa->slot].pending;
	if (waiting <= SLOT_QUERIES_MAX) {
		for (size_t i = 0; i < n; i++) {
			int h;

			if (!mv[i].wait || mv[i].from != from || !moving[mv[i].sa->slot].pending)
				continue;
			h = slot_held(src, pid, mv[i].sa->slot);
			if (h < 0)
				return -1;
			if (h)
				count++;
			else
				moving[mv[i].sa->slot].pending = false; /* handed over */
		}
		return count;
	}
	r = dp_stats(src);
	if (r == NULL)
		return -1;
	if (r->stats->pid != pid) {
		dp_stats_free(r);
		return -1;
	}
	(void)CTLD_SLOTS(held);
	for (size_t k = 0; k < r->stats->n_sas; k++)
		if (r->stats->sas[k]->slot < ctld.opt.max_sas)
			held[r->stats->sas[k]->slot] = true;
	for (size_t i = 0; i < n; i++) {
		if (!mv[i].wait || mv[i].from != from || !moving[mv[i].sa->slot].pending)
			continue;
		if (held[mv[i].sa->slot])
			count++;
		else
			moving[mv[i].sa->slot].pending = false; /* handed over */
	}
	for (size_t k = 0; k < r->stats->n_sas; k++)
		if (r->stats->sas[k]->slot < ctld.opt.max_sas)
			held[r->stats->sas[k]->slot] = false;
	dp_stats_free(r);
	return count;
}

/* The markers did not complete the hand-overs still pending from worker
 * from: take the SAs from it (a push without them, or, if it does not
 * answer, SIGKILL: a hung process might still write the slots), then let the
 * new owners adopt the slots. */
static void handover_force(struct move *mv, size_t n, int from)
{
	struct dp_proc *src = worker_proc(from);
	pid_t pid = 0;

	for (size_t i = 0; i < n; i++) {
		if (!mv[i].wait || mv[i].from != from || !moving[mv[i].sa->slot].pending)
			continue;
		moving[mv[i].sa->slot].pending = false;
		pid = mv[i].pid;
		ESGW_WARN("SA %u: worker %d did not hand it over: worker %d adopts it",
			  mv[i].sa->id, from, mv[i].to);
	}
	ctld.generation++;
	if (proc_running(src) && src->pid == pid) {
		dp_push(src);
		if (src->acked_generation != ctld.generation && ctld.opt.standalone) {
			ESGW_WARN("%s does not let its SAs go: killing it", src->name);
			kill(pid, SIGKILL);
			for (int i = 0; i < 200 && !process_gone(pid); i++)
				sleep_ms(5);
		}
	}
	dp_push_all();
}

/* Wait until every old worker let its moving SAs go, forcing those that
 * did not in time. A hand-over takes a marker through a ring (well under a
 * millisecond each); thousands at once take longer. */
static void handover_wait(struct move *mv, size_t n)
{
	long timeout = HANDOVER_TIMEOUT_MS + (long)n / 4, waited = 0;

	for (int from = 0; from < (int)ctld.opt.max_workers; from++) {
		struct dp_proc *src = worker_proc(from);
		pid_t pid = 0;
		long held = 0;

		for (size_t i = 0; i < n; i++)
			if (mv[i].wait && mv[i].from == from)
				pid = mv[i].pid;
		if (pid == 0)
			continue;
		while ((held = still_held(src, pid, mv, n, from)) > 0 && waited < timeout) {
			sleep_ms(HANDOVER_POLL_MS);
			waited += HANDOVER_POLL_MS;
		}
		if (held != 0)
			handover_force(mv, n, from);
	}
}

static void push_workers(const bool *workers)
{
	for (int w = 0; w < (int)ctld.opt.max_workers; w++)
		if (workers[w])
			push_if_running(worker_proc(w));
}

/* Move SAs at once (placements already checked): one save, one push per
 * process in the order of the protocol, one wait. An SA that no tunnel uses
 * or whose old worker is gone is adopted by its new worker at once, its old
 * worker letting go first, so a slot never has two writers; the others are
 * handed over: the new worker holds them in standby, the old one keeps them
 * ("leaving") until the router's markers, which the router's switch sends. */
static Esgw__Status move_sas(struct move *mv, size_t n, char *err, size_t errlen)
{
	bool adopt_from[ESGW_MAX_WORKERS] = {0}, to[ESGW_MAX_WORKERS] = {0},
	     leaving[ESGW_MAX_WORKERS] = {0};

	/* A change of change.c's log, each SA replaced by a copy on its new
	 * worker: one journal record, and pushed as a change (DpConfigDelta)
	 * to the processes that have the configuration before it. */
	change_begin();
	for (size_t i = 0; i < n; i++) {
		Esgw__Sa *sa = mv[i].sa;
		struct dp_proc *src = worker_proc(sa->worker);
		bool in_use = state_tunnel_out(sa->id) != NULL || state_tunnel_in(sa->id) != NULL;

		mv[i].from = sa->worker;
		mv[i].pid = src != NULL ? src->pid : 0;
		mv[i].wait = in_use && proc_running(src);
		mv[i].sa = sa_replace(sa, mv[i].to);
	}
	if (config_journal_append(ctld.config, ctld.opt.config_path, err, errlen) < 0) {
		change_abort(); /* the old objects back: mv[].sa no longer valid */
		ESGW_ERR("%s", err);
		return ESGW__STATUS__STATUS_INTERNAL;
	}
	change_commit(true);
	state_loads_follow(ctld.generation, ctld.generation + 1);
	ctld.generation++;
	for (size_t i = 0; i < n; i++)
		if (mv[i].wait)
			CTLD_SLOTS(moving)[mv[i].sa->slot] =
				(typeof(moving[0])){true, mv[i].from, mv[i].pid};
	/* Adopted ones: the old worker first. Then every new worker (standby
	 * or adopt), the old workers of the hand-overs (leaving), the router. */
	for (size_t i = 0; i < n; i++) {
		bool *from = mv[i].wait ? leaving : adopt_from;

		if (mv[i].from >= 0 && mv[i].from < ESGW_MAX_WORKERS)
			from[mv[i].from] = true;
		to[mv[i].to] = true;
	}
	push_workers(adopt_from);
	push_workers(to);
	push_workers(leaving);
	push_if_running(dp_proc_by_name("router"));
	dp_push_all();
	handover_wait(mv, n);
	for (size_t i = 0; i < n; i++) {
		ESGW_INFO("SA %u moved from worker %d to %d%s", mv[i].sa->id, mv[i].from, mv[i].to,
			  mv[i].wait ? " (handed over)" : "");
		ctld_event_sa_moved(mv[i].sa->id, mv[i].from, mv[i].to);
	}
	return ESGW__STATUS__STATUS_OK;
}

Esgw__Status sa_move_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			    size_t errlen)
{
	const Esgw__SaMove *mv = req->sa_move;
	Esgw__Sa *sa = state_sa(mv->id);

	(void)resp;
	if (sa == NULL) {
		snprintf(err, errlen, "SA %u does not exist", mv->id);
		return ESGW__STATUS__STATUS_NOT_FOUND;
	}
	if (mv->worker >= ctld.config->workers) {
		snprintf(err, errlen, "worker %u does not exist (workers 0..%u)", mv->worker,
			 ctld.config->workers - 1);
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	}
	if (sa->worker == (int32_t)mv->worker)
		return ESGW__STATUS__STATUS_OK;
	return move_sas(&(struct move){.sa = sa, .to = (int)mv->worker}, 1, err, errlen);
}

/* Least loaded of workers 0..count-1 by load (SAs per worker). */
static int least_loaded(const unsigned int *load, uint32_t count)
{
	int best = 0;

	for (int w = 1; w < (int)count; w++)
		if (load[w] < load[best])
			best = w;
	return best;
}

/* Scaling down: every SA of the workers that stop moves, all at once, to
 * the least loaded remaining ones. */
static Esgw__Status move_off(uint32_t count, char *err, size_t errlen)
{
	unsigned int load[ESGW_MAX_WORKERS] = {0};
	struct move *mv = calloc(ctld.config->n_sas + 1, sizeof(*mv));
	Esgw__Status st;
	size_t n = 0;

	if (mv == NULL)
		abort();
	for (size_t i = 0; i < ctld.config->n_sas; i++)
		if (ctld.config->sas[i]->worker >= 0 && ctld.config->sas[i]->worker < (int)count)
			load[ctld.config->sas[i]->worker]++;
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		Esgw__Sa *sa = ctld.config->sas[i];

		if (sa->worker < (int)count)
			continue;
		mv[n].sa = sa;
		mv[n].to = least_loaded(load, count);
		load[mv[n++].to]++;
	}
	st = n != 0 ? move_sas(mv, n, err, errlen) : ESGW__STATUS__STATUS_OK;
	free(mv);
	return st;
}

Esgw__Status workers_set_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				size_t errlen)
{
	uint32_t count = req->workers_set->count, before = ctld.config->workers;

	(void)resp;
	if (count < 1 || count > ctld.opt.max_workers) {
		snprintf(err, errlen,
			 "workers must be 1..%u: the limit is esgw-ctld's --max-workers (%u; it "
			 "raises it up to %d)",
			 ctld.opt.max_workers, ctld.opt.max_workers, ESGW_MAX_WORKERS);
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	}
	if (count == before)
		return ESGW__STATUS__STATUS_OK;
	/* Scaling down: every SA leaves the workers that stop, while they run. */
	if (move_off(count, err, errlen) != ESGW__STATUS__STATUS_OK)
		return ESGW__STATUS__STATUS_INTERNAL;
	ctld.config->workers = count;
	if (config_save(ctld.config, ctld.opt.config_path, err, errlen) < 0) {
		ctld.config->workers = before;
		ESGW_ERR("%s", err);
		return ESGW__STATUS__STATUS_INTERNAL;
	}
	ESGW_INFO("crypto workers: %u -> %u", before, count);
	dp_procs_resize((int)count);
	ctld_event_workers_changed(before, count);
	if (!ctld.opt.standalone)
		units_workers_changed(before, count);
	ctld_config_changed(false); /* the supervisor starts or stops them at its tick */
	return ESGW__STATUS__STATUS_OK;
}
