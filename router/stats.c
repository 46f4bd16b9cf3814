/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's answer to a stats query: its named counters, then every drop
 * reason. */
#include "router.h"

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
	size_t nb_named = sizeof(names) / sizeof(names[0]), nb_drops;
	Esgw__Counter **drops = esgw_dp_drop_counters(dp, r->ctr.drops, &nb_drops);
	Esgw__Counter **all = esgw_dp_alloc(dp, (nb_named + nb_drops) * sizeof(*all));

	for (size_t i = 0; i < nb_named; i++)
		all[i] = esgw_dp_counter(dp, names[i], values[i]);
	for (size_t i = 0; i < nb_drops; i++)
		all[nb_named + i] = drops[i];
	stats->counters = all;
	stats->n_counters = nb_named + nb_drops;
}
