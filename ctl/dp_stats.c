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

const Esgw__DpSaStats *dp_stats_find_sa(const Esgw__DpStats *st, uint32_t id, uint32_t slot)
{
	size_t lo = 0, hi;

	if (st == NULL)
		return NULL;
	hi = st->n_sas;
	while (lo < hi) { /* a worker lists its SAs by slot (crypto_worker_on_stats) */
		size_t mid = lo + (hi - lo) / 2;

		if (st->sas[mid]->slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->n_sas && st->sas[lo]->slot == slot && st->sas[lo]->id == id)
		return st->sas[lo];
	return NULL;
}

void dp_stats_free(Esgw__DpResponse *r)
{
	if (r != NULL)
		esgw__dp_response__free_unpacked(r, NULL);
}

/* SAs a crypto worker lists per answer: it builds and sends them on its data
 * thread, between bursts, so a page stops its packets for well under a
 * millisecond where 20,000 SAs at once took several. */
#define SA_PAGE 1024

static bool answered(const Esgw__DpResponse *r)
{
	return r != NULL && r->status == ESGW__STATUS__STATUS_OK && r->stats != NULL;
}

/* The SAs of page (a later answer) after those of first, page emptied. */
static bool sas_append(Esgw__DpStats *first, Esgw__DpStats *page)
{
	Esgw__DpSaStats **sas;

	if (page->n_sas == 0)
		return true;
	sas = realloc(first->sas, (first->n_sas + page->n_sas) * sizeof(*sas));
	if (sas == NULL)
		return false;
	memcpy(sas + first->n_sas, page->sas, page->n_sas * sizeof(*sas));
	first->sas = sas;
	first->n_sas += page->n_sas;
	page->n_sas = 0; /* they are first's now; page->sas itself is freed with page */
	return true;
}

/* A DpStatsQuery to p, its SAs asked for page by page; NULL if it is not
 * running or does not answer (any of the pages). */
static Esgw__DpResponse *stats_query(struct dp_proc *p, bool neighbors, bool changed, bool *asked)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	Esgw__DpStatsQuery q = ESGW__DP_STATS_QUERY__INIT;
	Esgw__DpResponse *first, *page;

	*asked = !(ctld.opt.standalone && p->state != PROC_RUNNING);
	if (!*asked)
		return NULL;
	q.neighbors = neighbors;
	q.sa_changed = changed;
	q.sa_max = SA_PAGE;
	req.version = ESGW__DP_VERSION__DP_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_STATS;
	req.stats = &q;
	first = dp_conn_exchange(p, &req);
	q.neighbors = false;
	/* sa_next only grows: a worker that ignores the pages answers whole. */
	while (answered(first) && first->stats->sa_next > q.sa_from) {
		q.sa_from = first->stats->sa_next;
		page = dp_conn_exchange(p, &req);
		if (!answered(page) || page->stats->pid != first->stats->pid ||
		    !sas_append(first->stats, page->stats)) {
			dp_stats_free(page);
			dp_stats_free(first);
			return NULL;
		}
		first->stats->sa_next = page->stats->sa_next;
		dp_stats_free(page);
	}
	return first;
}

/* resp if it is an answer with statistics, else NULL (resp freed). */
static Esgw__DpResponse *with_stats(Esgw__DpResponse *resp)
{
	if (answered(resp))
		return resp;
	dp_stats_free(resp);
	return NULL;
}

/* What every answer of p tells about p itself; resp, or NULL. */
static Esgw__DpResponse *observed(struct dp_proc *p, Esgw__DpResponse *resp)
{
	if (resp == NULL)
		return NULL;
	if (!ctld.opt.standalone)
		p->pid = resp->stats->pid;
	/* It forgot a config it acked (restarted behind our back): push again. */
	if (resp->stats->generation < p->acked_generation)
		p->acked_generation = resp->stats->generation;
	return resp;
}

Esgw__DpResponse *dp_stats_neighbors(struct dp_proc *p)
{
	bool asked;

	return with_stats(stats_query(p, true, false, &asked));
}

Esgw__DpResponse *dp_stats_slot(struct dp_proc *p, uint32_t slot)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	Esgw__DpStatsQuery q = ESGW__DP_STATS_QUERY__INIT;

	if (ctld.opt.standalone && p->state != PROC_RUNNING)
		return NULL;
	q.sa_from = slot;
	q.sa_max = 1;
	req.version = ESGW__DP_VERSION__DP_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_STATS;
	req.stats = &q;
	return with_stats(dp_conn_exchange(p, &req));
}

Esgw__DpResponse *dp_stats_changed(struct dp_proc *p)
{
	bool asked;

	return observed(p, with_stats(stats_query(p, false, true, &asked)));
}

Esgw__DpResponse *dp_stats(struct dp_proc *p)
{
	bool asked;
	Esgw__DpResponse *resp = stats_query(p, false, false, &asked);

	if (!asked)
		return NULL;
	if (resp == NULL) {
		/* Still the same running process, just slow to answer: its last
		 * counters beat zeros that would make totals go backwards. */
		if (p->stats_cache != NULL && p->stats_cache_pid == p->pid && p->pid > 0)
			return esgw__dp_response__unpack(NULL, p->stats_cache_len, p->stats_cache);
		return NULL;
	}
	resp = with_stats(resp);
	if (resp == NULL)
		return NULL;
	free(p->stats_cache);
	p->stats_cache_len = esgw__dp_response__get_packed_size(resp);
	p->stats_cache = malloc(p->stats_cache_len ? p->stats_cache_len : 1);
	if (p->stats_cache != NULL)
		esgw__dp_response__pack(resp, p->stats_cache);
	p->stats_cache_pid = resp->stats->pid;
	return observed(p, resp);
}
