/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's answer to a stats query: its named counters, the sizes of its
 * tables that input can fill, then every drop reason; the neighbour table
 * itself when the query asks for it, and the policy_no_sa drops of each
 * protect policy without an SA (esgw-ctld turns them into acquire events). */
#include "router.h"
#include "spd.h"

static void policy_no_sa_counts(struct router *r, Esgw__DpStats *stats)
{
	const struct spd_table *spd = r->tables ? r->tables->spd : NULL;

	for (uint32_t i = 0; spd != NULL && i < spd->nb_policies; i++)
		stats->n_policy_no_sa += spd->policies[i].no_sa != 0;
	if (stats->n_policy_no_sa == 0)
		return;
	stats->policy_no_sa = esgw_dp_stats_alloc(&r->dp, stats->n_policy_no_sa * sizeof(void *));
	stats->n_policy_no_sa = 0;
	for (uint32_t i = 0; i < spd->nb_policies; i++)
		if (spd->policies[i].no_sa != 0)
			stats->policy_no_sa[stats->n_policy_no_sa++] = esgw_dp_stats_counter(
				&r->dp, spd->names[i], spd->policies[i].no_sa);
}

void router_stats(struct esgw_dp *dp, Esgw__DpStats *stats)
{
	struct router *r = router_of(dp);
	static const char *const names[] = {
#define ROUTER_COUNTER_NAME(name) #name,
		FOREACH_ROUTER_COUNTER(ROUTER_COUNTER_NAME)
#undef ROUTER_COUNTER_NAME
	};
	const uint64_t values[] = {
#define ROUTER_COUNTER_VALUE(name) r->ctr.name,
		FOREACH_ROUTER_COUNTER(ROUTER_COUNTER_VALUE)
#undef ROUTER_COUNTER_VALUE
	};
	size_t nb_named = sizeof(names) / sizeof(names[0]), nb_drops, n = 0;
	Esgw__Counter **drops = esgw_dp_stats_drops(dp, r->ctr.drops, &nb_drops);
	Esgw__Counter **all = esgw_dp_stats_alloc(dp, (nb_named + 6 + nb_drops) * sizeof(*all));
	struct neighbor_gauges g;
	unsigned int reasm = reassembly_mbufs_held(r);

	neighbor_gauges(r, &g);
	for (size_t i = 0; i < nb_named; i++)
		all[n++] = esgw_dp_stats_counter(dp, names[i], values[i]);
	/* Gauges: what the tables hold now. mbufs_held is what a kill of this
	 * process would take out of the pool beyond its current burst. */
	all[n++] = esgw_dp_stats_counter(dp, "neighbor_entries", g.entries);
	all[n++] = esgw_dp_stats_counter(dp, "neighbor_incomplete", g.incomplete);
	all[n++] = esgw_dp_stats_counter(dp, "neighbor_permanent", g.permanent);
	all[n++] = esgw_dp_stats_counter(dp, "neighbor_held_now", g.held);
	all[n++] = esgw_dp_stats_counter(dp, "reassembly_held_now", reasm);
	all[n++] = esgw_dp_stats_counter(dp, "mbufs_held", g.held + reasm);
	for (size_t i = 0; i < nb_drops; i++)
		all[n++] = drops[i];
	stats->counters = all;
	stats->n_counters = n;
	if (dp->stats_query != NULL && dp->stats_query->neighbors)
		stats->neighbors = neighbor_list(r, &stats->n_neighbors);
	policy_no_sa_counts(r, stats);
}
