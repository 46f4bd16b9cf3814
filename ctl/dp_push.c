/* SPDX-License-Identifier: BSD-3-Clause */
/* Pushing configuration to the dataplane processes: the current generation to
 * each process that has not acked it (retried by the 1 s reconcile timer),
 * crypto workers before the router, and sequence-number limits. */
#include "ctld.h"

#include <inttypes.h>
#include <stdlib.h>

#include "log.h"

void dp_push(struct dp_proc *p)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	bool connected_now = p->acked_generation == 0;
	struct dp_config b = {0};
	Esgw__DpResponse *resp;

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
