/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a DpStats reply: memory that lives until the reply is sent,
 * named counters, the drop reasons' counters and the per-stage cycle
 * counters every process keeps. */
#include "dp.h"

#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

void *esgw_dp_stats_alloc(struct esgw_dp *dp, size_t size)
{
	void *p;

	if (dp->arena_len == dp->arena_cap) {
		size_t cap = dp->arena_cap ? dp->arena_cap * 2 : 64;
		void **a = realloc(dp->arena, cap * sizeof(*a));

		if (a == NULL)
			abort(); /* out of memory answering a stats query: nothing sane to do */
		dp->arena = a;
		dp->arena_cap = cap;
	}
	p = calloc(1, size ? size : 1);
	if (p == NULL)
		abort();
	dp->arena[dp->arena_len++] = p;
	return p;
}

char *esgw_dp_stats_strdup(struct esgw_dp *dp, const char *s)
{
	char *p = esgw_dp_stats_alloc(dp, strlen(s) + 1);

	strcpy(p, s);
	return p;
}

void esgw_dp_stats_release(struct esgw_dp *dp)
{
	for (size_t i = 0; i < dp->arena_len; i++)
		free(dp->arena[i]);
	dp->arena_len = 0;
}

Esgw__Counter *esgw_dp_stats_counter(struct esgw_dp *dp, const char *name, uint64_t value)
{
	Esgw__Counter *c = esgw_dp_stats_alloc(dp, sizeof(*c));

	esgw__counter__init(c);
	c->name = (char *)name;
	c->value = value;
	return c;
}

Esgw__Counter **esgw_dp_stats_drops(struct esgw_dp *dp, const uint64_t drops[ESGW_DROP_MAX],
				    size_t *n)
{
	Esgw__Counter **list = esgw_dp_stats_alloc(dp, ESGW_DROP_MAX * sizeof(*list));

	for (int i = 0; i < ESGW_DROP_MAX; i++)
		list[i] = esgw_dp_stats_counter(dp, esgw_drop_name(i), drops[i]);
	*n = ESGW_DROP_MAX;
	return list;
}

Esgw__Counter **esgw_dp_stats_sa_drops(struct esgw_dp *dp, const uint64_t drops[ESGW_SA_DROP_MAX],
				       size_t *n)
{
	Esgw__Counter **list;
	unsigned int nonzero = 0;

	/* Only those not 0 (absent is 0): 20,000 SAs answer in a small message,
	 * and an SA without drops costs no allocation. */
	*n = 0;
	for (unsigned int i = 0; i < ESGW_SA_DROP_MAX; i++)
		nonzero += drops[i] != 0;
	if (nonzero == 0)
		return NULL;
	list = esgw_dp_stats_alloc(dp, nonzero * sizeof(*list));
	for (unsigned int i = 0; i < ESGW_SA_DROP_MAX; i++)
		if (drops[i] != 0)
			list[(*n)++] = esgw_dp_stats_counter(
				dp, esgw_drop_name(esgw_sa_drop_reason(i)), drops[i]);
	return list;
}

/* The per-stage cost counters every process keeps (stage_cycles.h). */
void esgw_dp_stats_stages(const struct esgw_dp *dp, Esgw__DpStats *stats, Esgw__DpTraffic *traffic)
{
	const struct esgw_stage_cycles *c = &dp->cycles;

	stats->tsc_hz = rte_get_tsc_hz();
	stats->tsc = rte_rdtsc();
	stats->loop_cycles = c->start_tsc ? stats->tsc - c->start_tsc : 0;
	stats->busy_cycles = c->busy_cycles;
	stats->busy_packets = c->busy_packets;
	stats->encrypt_cycles = c->encrypt_cycles;
	stats->encrypt_packets = c->encrypt_packets;
	stats->decrypt_cycles = c->decrypt_cycles;
	stats->decrypt_packets = c->decrypt_packets;
	stats->driver_cycles = c->driver_cycles;
	stats->esp_cycles = c->esp_cycles;
	stats->esp_sample_cycles = c->esp_sample_cycles;
	stats->esp_sample_packets = c->esp_sample_packets;
	stats->esp_sample_switched = c->esp_sample_switched;
	traffic->rx_packets = c->rx_packets;
	traffic->rx_bytes = c->rx_bytes;
	traffic->tx_packets = c->tx_packets;
	traffic->tx_bytes = c->tx_bytes;
	stats->traffic = traffic;
}

/* The hand-off counters every process keeps (stage_cycles.h), after the
 * process's own: sleeps on the doorbell (each one a wake-up later: packets
 * per wake-up are busy_packets over sleeps) and the producers it woke after
 * making room in their ring (backpressure.h). */
void esgw_dp_stats_handoffs(struct esgw_dp *dp, Esgw__DpStats *stats)
{
	Esgw__Counter **list = esgw_dp_stats_alloc(dp, (stats->n_counters + 2) * sizeof(*list));
	size_t n = stats->n_counters;

	if (n)
		memcpy(list, stats->counters, n * sizeof(*list));
	list[n++] = esgw_dp_stats_counter(dp, "sleeps", dp->cycles.sleeps);
	list[n++] = esgw_dp_stats_counter(dp, "room_wakes", dp->cycles.room_wakes);
	stats->counters = list;
	stats->n_counters = n;
}
