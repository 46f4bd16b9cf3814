/* SPDX-License-Identifier: BSD-3-Clause */
/* DpStats queries to the dataplane processes, with the last answer of each
 * kept for a query that times out. */
#include "ctld.h"

#include <stdlib.h>
#include <string.h>

uint64_t dp_stats_counter(Esgw__Counter **c, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i]->name, name) == 0)
			return c[i]->value;
	return 0;
}

void dp_stats_free(Esgw__DpResponse *r)
{
	if (r != NULL)
		esgw__dp_response__free_unpacked(r, NULL);
}

/* A DpStatsQuery to p; NULL if it is not running or does not answer. */
static Esgw__DpResponse *stats_query(struct dp_proc *p, bool neighbors, bool *asked)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	Esgw__DpStatsQuery q = ESGW__DP_STATS_QUERY__INIT;

	*asked = !(ctld.opt.standalone && p->state != PROC_RUNNING);
	if (!*asked)
		return NULL;
	q.neighbors = neighbors;
	req.version = ESGW__DP_VERSION__DP_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_STATS;
	req.stats = &q;
	return dp_conn_exchange(p, &req);
}

Esgw__DpResponse *dp_stats_neighbors(struct dp_proc *p)
{
	bool asked;
	Esgw__DpResponse *resp = stats_query(p, true, &asked);

	if (resp != NULL && (resp->status != ESGW__STATUS__STATUS_OK || resp->stats == NULL)) {
		dp_stats_free(resp);
		return NULL;
	}
	return resp;
}

Esgw__DpResponse *dp_stats(struct dp_proc *p)
{
	bool asked;
	Esgw__DpResponse *resp = stats_query(p, false, &asked);

	if (!asked)
		return NULL;
	if (resp == NULL) {
		/* Still the same running process, just slow to answer: its last
		 * counters beat zeros that would make totals go backwards. */
		if (p->stats_cache != NULL && p->stats_cache_pid == p->pid && p->pid > 0)
			return esgw__dp_response__unpack(NULL, p->stats_cache_len, p->stats_cache);
		return NULL;
	}
	if (resp->status != ESGW__STATUS__STATUS_OK || resp->stats == NULL) {
		dp_stats_free(resp);
		return NULL;
	}
	free(p->stats_cache);
	p->stats_cache_len = esgw__dp_response__get_packed_size(resp);
	p->stats_cache = malloc(p->stats_cache_len ? p->stats_cache_len : 1);
	if (p->stats_cache != NULL)
		esgw__dp_response__pack(resp, p->stats_cache);
	p->stats_cache_pid = resp->stats->pid;
	if (!ctld.opt.standalone)
		p->pid = resp->stats->pid;
	/* It forgot a config it acked (restarted behind our back): push again. */
	if (resp->stats->generation < p->acked_generation)
		p->acked_generation = resp->stats->generation;
	return resp;
}
