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
} moving[ESGW_MAX_SA];

int handover_from(const Esgw__Sa *sa)
{
	return sa->slot < ESGW_MAX_SA && moving[sa->slot].pending ? moving[sa->slot].from : -1;
}

static struct dp_proc *worker_proc(int worker)
{
	char name[16];

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

/* 1: the old worker let the SA go, 0: it still holds it, -1: that instance
 * is gone or does not answer. */
static int old_owner_done(struct dp_proc *p, pid_t pid, uint32_t slot)
{
	Esgw__DpResponse *r;
	int held = 0;

	if (!proc_running(p) || p->pid != pid)
		return -1;
	r = dp_stats(p);
	if (r == NULL)
		return -1;
	if (r->stats->pid != pid) {
		dp_stats_free(r);
		return -1;
	}
	for (size_t k = 0; k < r->stats->n_sas; k++)
		held |= r->stats->sas[k]->slot == slot;
	dp_stats_free(r);
	return !held;
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

/* The marker did not complete the hand-over: take the SA from the old worker
 * (a push without it, or, if it does not answer, SIGKILL: a hung process
 * might still write the slot), then let the new one adopt the slot. */
static void handover_force(Esgw__Sa *sa, int to, struct dp_proc *from, pid_t pid)
{
	moving[sa->slot].pending = false;
	ctld.generation++;
	if (proc_running(from) && from->pid == pid) {
		dp_push(from);
		if (from->acked_generation != ctld.generation && ctld.opt.standalone) {
			ESGW_WARN("%s does not let SA %u go: killing it", from->name, sa->id);
			kill(pid, SIGKILL);
			for (int i = 0; i < 200 && !process_gone(pid); i++)
				sleep_ms(5);
		}
	}
	push_if_running(worker_proc(to));
	dp_push_all();
}

/* Move one SA (placement already checked) and wait for the hand-over. */
static Esgw__Status move_sa(Esgw__Sa *sa, int to, char *err, size_t errlen)
{
	int from = sa->worker, waited = 0, done = -1;
	struct dp_proc *src = worker_proc(from), *dst = worker_proc(to);
	struct dp_proc *router = dp_proc_by_name("router");
	bool in_use = state_tunnel_out(sa->id) != NULL || state_tunnel_in(sa->id) != NULL;
	pid_t pid = src != NULL ? src->pid : 0;

	sa->worker = to;
	if (config_save(ctld.config, ctld.opt.config_path, err, errlen) < 0) {
		sa->worker = from;
		ESGW_ERR("%s", err);
		return ESGW__STATUS__STATUS_INTERNAL;
	}
	ctld.generation++;
	if (!in_use || !proc_running(src)) {
		/* No packet of it can be in flight to the old worker (no tunnel
		 * uses it), or that worker is gone: the new one adopts the slot.
		 * The old one lets go first, so the slot never has two writers. */
		push_if_running(src);
		push_if_running(dst);
		dp_push_all();
		ESGW_INFO("SA %u moved from worker %d to %d (%s)", sa->id, from, to,
			  in_use ? "old worker not running" : "not in a tunnel");
		ctld_event_sa_moved(sa->id, from, to);
		return ESGW__STATUS__STATUS_OK;
	}
	moving[sa->slot].pending = true;
	moving[sa->slot].from = from;
	moving[sa->slot].from_pid = pid;
	/* The order is the protocol: standby, leaving, then the router's switch. */
	push_if_running(dst);
	dp_push(src);
	push_if_running(router);
	dp_push_all();
	while (waited < HANDOVER_TIMEOUT_MS && (done = old_owner_done(src, pid, sa->slot)) == 0) {
		sleep_ms(HANDOVER_POLL_MS);
		waited += HANDOVER_POLL_MS;
	}
	if (done == 1) {
		moving[sa->slot].pending = false;
		ESGW_INFO("SA %u handed over from worker %d to %d", sa->id, from, to);
	} else {
		ESGW_WARN("SA %u: worker %d %s: worker %d adopts it", sa->id, from,
			  done < 0 ? "went away during the hand-over"
				   : "did not hand it over in time",
			  to);
		handover_force(sa, to, src, pid);
	}
	ctld_event_sa_moved(sa->id, from, to);
	(void)err;
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
	return move_sa(sa, (int)mv->worker, err, errlen);
}

/* Least loaded of workers 0..count-1, by number of SAs. */
static int least_loaded(uint32_t count)
{
	unsigned int load[ESGW_MAX_WORKERS] = {0};
	int best = 0;

	for (size_t i = 0; i < ctld.config->n_sas; i++)
		if (ctld.config->sas[i]->worker >= 0 && ctld.config->sas[i]->worker < (int)count)
			load[ctld.config->sas[i]->worker]++;
	for (int w = 1; w < (int)count; w++)
		if (load[w] < load[best])
			best = w;
	return best;
}

Esgw__Status workers_set_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
				size_t errlen)
{
	uint32_t count = req->workers_set->count, before = ctld.config->workers;

	(void)resp;
	if (count < 1 || count > ESGW_MAX_WORKERS) {
		snprintf(err, errlen, "workers must be 1..%d", ESGW_MAX_WORKERS);
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	}
	if (count == before)
		return ESGW__STATUS__STATUS_OK;
	/* Scaling down: every SA leaves the workers that stop, while they run. */
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		Esgw__Sa *sa = ctld.config->sas[i];
		Esgw__Status st;

		if (sa->worker < (int)count)
			continue;
		st = move_sa(sa, least_loaded(count), err, errlen);
		if (st != ESGW__STATUS__STATUS_OK)
			return st;
	}
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
