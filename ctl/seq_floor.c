/* SPDX-License-Identifier: BSD-3-Clause */
/* Outbound sequence numbers as a durable reservation (RFC 4303 3.3.3: never
 * reuse one with the same keys, across any restart).
 *
 * The counter lives in shared hugepage memory, which survives a crypto
 * worker's restart but not rxtx's (or the machine's). So every SA has a
 * floor, Sa.seq_out_floor, kept in the configuration file: no number at or
 * above it was ever sent. The worker enforces it: its limit (shm.h
 * seq_out_max) only ever comes from a floor this file has fsync'ed first
 * (DpSa.seq_limit, DpSeqLimits), and an SA that reaches it holds its packets
 * (seq_hold) instead of passing it. ctld raises floors ahead of use: each
 * second (and right after a process (re)connects) it reads the workers'
 * seq_out and, for an SA within half a reserve of its floor, saves a floor a
 * whole reserve ahead, then pushes the new limit. A runtime slot that starts
 * over (rxtx restarted, ctld restarted with it) starts at the floor, above
 * every number used, and holds until ctld has saved a higher one.
 *
 * In memory, seq_out_floor is always what is on disk: a raise whose save
 * fails is undone. So whenever ctld is down, or cannot write its file, the
 * workers stop at the last durable floor; sa_seq_held says so. */
#include "ctld.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

/* Per runtime slot: the instance of an SA added by this ctld that no worker
 * was given yet (its first runtime starts at 0), and the instance whose hold
 * was reported as an event. */
static uint64_t *never_pushed, *hold_reported; /* ctld.opt.max_sas each */

static uint64_t reserve(void)
{
	return ctld.opt.seq_reserve;
}

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The last sequence number of the SA's space (RFC 4303 2.2.1). */
static uint64_t space_end(const Esgw__Sa *sa)
{
	return sa->esn ? UINT64_MAX : UINT32_MAX;
}

/* The worker's seq_out_max once it has the floor: below it, in the space
 * (crypto-worker/esp_sa.c esp_seq_limit_raise). */
static uint64_t max_for_floor(const Esgw__Sa *sa)
{
	uint64_t max = sa->seq_out_floor == UINT64_MAX ? UINT64_MAX
		       : sa->seq_out_floor > 0	       ? sa->seq_out_floor - 1
						       : 0;

	return max < space_end(sa) ? max : space_end(sa);
}

void seq_floor_sa_added(Esgw__Sa *sa)
{
	/* The first reservation is durable with the sa add itself. */
	sa->seq_out_floor = reserve();
	if (sa->slot < ctld.opt.max_sas) {
		CTLD_SLOTS(never_pushed)[sa->slot] = sa->instance;
		CTLD_SLOTS(hold_reported)[sa->slot] = 0;
	}
}

uint64_t seq_floor_start(const Esgw__Sa *sa)
{
	/* Only the very first runtime of an SA starts at 0 (RFC 4303: the first
	 * packet is number 1); any later one may follow a runtime that used
	 * numbers up to the floor, and that ctld no longer knows of. */
	if (never_pushed != NULL && sa->slot < ctld.opt.max_sas &&
	    never_pushed[sa->slot] == sa->instance) {
		never_pushed[sa->slot] = 0;
		return 0;
	}
	return sa->seq_out_floor;
}

void seq_floor_skip_ahead(Esgw__Config *c)
{
	/* Each save raises a floor by at most one reserve: the newer file the
	 * previous copy stands in for had floors at most one reserve higher. */
	for (size_t i = 0; i < c->n_sas; i++)
		c->sas[i]->seq_out_floor = add_saturating(c->sas[i]->seq_out_floor, reserve());
}

static void report_hold(const Esgw__Sa *sa, const Esgw__DpSaStats *s, const char *why)
{
	char detail[384];
	Esgw__Event ev;

	if (CTLD_SLOTS(hold_reported)[sa->slot] == sa->instance)
		return;
	hold_reported[sa->slot] = sa->instance;
	snprintf(detail, sizeof(detail),
		 "at its durable sequence-number floor %" PRIu64 " (last number used %" PRIu64
		 "): holding outbound packets until a higher floor is saved (%s)",
		 sa->seq_out_floor, s->seq_out, why);
	ESGW_WARN("SA %u: %s", sa->id, detail);
	esgw__event__init(&ev);
	ev.kind = ESGW__EVENT_KIND__EVENT_KIND_SA_SEQ_HELD;
	ev.sa = sa->id;
	ev.worker = sa->worker;
	ev.from_worker = -1;
	ev.detail = detail;
	ctld_event_emit(&ev);
}

/* Save floors a reserve ahead for the SAs of st that come near theirs.
 * Returns false if a save was needed and failed (err says why). */
static bool raise_floors(const Esgw__DpStats *st, Esgw__Sa *const *sas, char *err,
			 size_t errlen)
{
	uint64_t *old = NULL; /* by configuration position: the floors before */
	bool raised = false;

	for (size_t i = 0; i < st->n_sas; i++) {
		const Esgw__DpSaStats *s = st->sas[i];
		Esgw__Sa *sa = sas[i];
		uint64_t want;

		if (sa == NULL || sa->slot != s->slot || s->slot >= ctld.opt.max_sas ||
		    add_saturating(s->seq_out, reserve() / 2) < sa->seq_out_floor)
			continue;
		want = add_saturating(s->seq_out, reserve());
		if (want <= sa->seq_out_floor)
			continue;
		if (!raised) {
			old = malloc((ctld.config->n_sas + 1) * sizeof(*old));
			if (old == NULL) {
				snprintf(err, errlen, "out of memory");
				return false;
			}
			for (size_t k = 0; k < ctld.config->n_sas; k++)
				old[k] = ctld.config->sas[k]->seq_out_floor;
		}
		sa->seq_out_floor = want;
		raised = true;
	}
	if (!raised)
		return true;
	if (config_save(ctld.config, ctld.opt.config_path, err, errlen) == 0) {
		for (size_t i = 0; i < st->n_sas; i++)
			if (hold_reported != NULL && st->sas[i]->slot < ctld.opt.max_sas)
				hold_reported[st->sas[i]->slot] = 0;
		free(old);
		return true;
	}
	/* Not durable: not pushed, and not kept (a later save must not make a
	 * floor durable that no worker was held to). */
	for (size_t k = 0; k < ctld.config->n_sas; k++)
		ctld.config->sas[k]->seq_out_floor = old[k];
	free(old);
	ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "cannot save higher sequence-number floors (%s): SAs "
					    "hold at their floor until a save succeeds",
			     err);
	return false;
}

void seq_floor_observe(struct dp_proc *p, const Esgw__DpStats *st, Esgw__Sa *const *sas)
{
	Esgw__DpSeqLimits msg = ESGW__DP_SEQ_LIMITS__INIT;
	Esgw__DpSeqLimit *limits, **list;
	char err[512] = "";
	bool saved;

	if (st == NULL || sas == NULL || strcmp(st->role, "crypto") != 0)
		return;
	saved = raise_floors(st, sas, err, sizeof(err));
	limits = malloc((st->n_sas + 1) * sizeof(*limits));
	list = malloc((st->n_sas + 1) * sizeof(*list));
	if (limits == NULL || list == NULL) {
		ESGW_ERR("out of memory for the sequence-number limits of %zu SAs", st->n_sas);
		free(limits);
		free(list);
		return;
	}
	for (size_t i = 0; i < st->n_sas; i++) {
		const Esgw__DpSaStats *s = st->sas[i];
		const Esgw__Sa *sa = sas[i];
		Esgw__DpSeqLimit *l;

		if (sa == NULL || sa->slot != s->slot || s->slot >= ctld.opt.max_sas)
			continue;
		/* At the end of its space the SA is exhausted, not held. */
		if (!saved && s->seq_out >= max_for_floor(sa) && max_for_floor(sa) < space_end(sa))
			report_hold(sa, s, err);
		if (s->seq_out_max >= max_for_floor(sa))
			continue; /* the worker has the durable floor already */
		l = &limits[msg.n_limits];
		esgw__dp_seq_limit__init(l);
		l->slot = sa->slot;
		l->spi = sa->spi;
		l->instance = sa->instance;
		l->seq_limit = sa->seq_out_floor;
		list[msg.n_limits++] = l;
	}
	if (msg.n_limits > 0) {
		msg.limits = list;
		dp_push_seq_limits(p, &msg);
	}
	free(limits);
	free(list);
}

void seq_floor_check(struct dp_proc *p)
{
	Esgw__DpResponse *r = dp_stats(p);

	if (r != NULL && r->stats != NULL) {
		Esgw__Sa **sas = state_sas_of_stats(r->stats);

		seq_floor_observe(p, r->stats, sas);
		free(sas);
	}
	dp_stats_free(r);
}

uint64_t seq_floor_new_instance(void)
{
	static uint64_t last;
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	last = now > last ? now : last + 1;
	return last;
}
