/* SPDX-License-Identifier: BSD-3-Clause */
/* Pushing configuration to the dataplane processes: the current generation to
 * each process that has not acked it (retried by the 1 s reconcile timer),
 * crypto workers before the router, as the last change alone (a
 * DpConfigDelta) to a process that has the generation before it, else whole;
 * and sequence-number limits. */
#include "ctld.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* The kept change alone to p, which has the generation before it: true if
 * p applied it. Else (p refused it, e.g. a change it does not apply in place,
 * or it restarted since) the caller pushes the whole configuration. rxtx
 * holds none of what such a change touches (interfaces and the worker count
 * go through copies of the configuration): it gets an empty one, to be at the
 * new generation. */
static bool dp_push_delta(struct dp_proc *p)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	struct dp_config b = {0};
	Esgw__DpResponse *resp;
	bool ok;

	dp_config_delta_build(&b, p);
	req.version = ESGW__DP_VERSION__DP_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_CONFIG_DELTA;
	req.config_delta = &b.delta;
	resp = dp_conn_exchange(p, &req);
	dp_config_free(&b);
	ok = resp != NULL && resp->status == ESGW__STATUS__STATUS_OK;
	if (ok)
		p->acked_generation = ctld.generation;
	else if (resp != NULL)
		ESGW_INFO("%s: change %" PRIu64 " not applied in place (%s): whole push", p->name,
			   ctld.generation, resp->error);
	dp_stats_free(resp);
	return ok;
}

void dp_push(struct dp_proc *p)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	bool connected_now = p->acked_generation == 0;
	struct dp_config b = {0};
	Esgw__DpResponse *resp;
	uint64_t base;

	/* A process one change behind gets the change only. */
	if (!connected_now && change_kept(&base) && p->acked_generation == base &&
	    dp_config_delta_possible() && dp_push_delta(p))
		return;
	dp_config_build(&b, p);
	req.version = ESGW__DP_VERSION__DP_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_CONFIG;
	req.config = &b.cfg;
	resp = dp_conn_exchange(p, &req);
	dp_config_free(&b);
	if (resp == NULL)
		return; /* logged; the reconcile timer retries */
	if (resp->status == ESGW__STATUS__STATUS_OK) {
		p->acked_generation = ctld.generation;
		/* A worker that (re)started may have fresh runtime slots, at
		 * their floor: reserve more now rather than at the next sample. */
		if (connected_now && p->worker >= 0)
			seq_floor_check(p);
	} else {
		/* Counted as not acked: retried every second, logged once per generation. */
		static uint64_t logged[CTLD_MAX_PROCS];
		int i = (int)(p - ctld.procs);

		if (logged[i] != ctld.generation)
			ESGW_WARN("%s refused configuration %" PRIu64 ": %s", p->name,
				  ctld.generation, resp->error);
		logged[i] = ctld.generation;
	}
	dp_stats_free(resp);
}

void dp_push_seq_limits(struct dp_proc *p, const Esgw__DpSeqLimits *limits)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	Esgw__DpResponse *resp;

	req.version = ESGW__DP_VERSION__DP_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_SEQ_LIMITS;
	req.seq_limits = (Esgw__DpSeqLimits *)limits;
	resp = dp_conn_exchange(p, &req);
	if (resp != NULL && resp->status != ESGW__STATUS__STATUS_OK)
		ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "%s refused sequence-number limits: %s",
				     p->name, resp->error);
	dp_stats_free(resp); /* retried at the next sample if it did not arrive */
}

void dp_push_all(void)
{
	/* Crypto workers first: an SA is on its worker (maybe in standby, see
	 * workers.c) before the router sends it packets there. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < ctld.nprocs; i++) {
			struct dp_proc *p = &ctld.procs[i];

			if ((p->worker >= 0) != (pass == 0))
				continue;
			if (ctld.opt.standalone && (p->state != PROC_RUNNING || p->stop_requested))
				continue;
			if (p->acked_generation < ctld.generation)
				dp_push(p);
		}
	}
}
