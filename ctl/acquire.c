/* SPDX-License-Identifier: BSD-3-Clause */
/* Acquire events: the router counts, per protect policy that has no SA yet,
 * the packets it dropped (policy_no_sa); when a policy's count grows, an IKE
 * daemon should negotiate its SA (what an XFRM acquire tells charon). Fed by
 * the 1 s DpStats sampler (dataplane.c), at most one event a second per
 * policy, however fast packets arrive. */
#include "ctld.h"

#include <stdio.h>
#include <string.h>

#include "validate.h"

#define ACQUIRE_INTERVAL 1.0 /* seconds between two events of one policy */
#define ACQUIRE_POLICIES_MAX 256

/* What was seen of one policy's counter: it counts from 0 again whenever
 * the router builds new tables (a push) or restarts. */
struct seen {
	char name[ESGW_NAME_MAX + 1];
	uint64_t count;
	uint64_t generation;
	int32_t pid;
	double emitted; /* ev_time() of the last event, 0: none */
};

static struct seen seen[ACQUIRE_POLICIES_MAX];
static size_t nb_seen;

/* The entry of name, a free one, or the one longest without an event. */
static struct seen *entry(const char *name)
{
	struct seen *oldest = &seen[0];

	for (size_t i = 0; i < nb_seen; i++) {
		if (strcmp(seen[i].name, name) == 0)
			return &seen[i];
		if (seen[i].emitted < oldest->emitted)
			oldest = &seen[i];
	}
	if (nb_seen < ACQUIRE_POLICIES_MAX)
		oldest = &seen[nb_seen++];
	*oldest = (struct seen){0};
	snprintf(oldest->name, sizeof(oldest->name), "%s", name);
	return oldest;
}

void acquire_observe(const Esgw__DpStats *st)
{
	double now = ev_time();

	if (st == NULL || strcmp(st->role, "router") != 0)
		return;
	for (size_t i = 0; i < st->n_policy_no_sa; i++) {
		const Esgw__Counter *c = st->policy_no_sa[i];
		struct seen *s = entry(c->name);
		bool same_tables = s->generation == st->generation && s->pid == st->pid;
		uint64_t before = same_tables ? s->count : 0;
		char detail[96];
		Esgw__Event ev = ESGW__EVENT__INIT;

		s->count = c->value;
		s->generation = st->generation;
		s->pid = st->pid;
		if (c->value <= before || now - s->emitted < ACQUIRE_INTERVAL)
			continue;
		s->emitted = now;
		snprintf(detail, sizeof(detail), "%llu packets without an SA (policy_no_sa)",
			 (unsigned long long)(c->value - before));
		ev.kind = ESGW__EVENT_KIND__EVENT_KIND_ACQUIRE;
		ev.name = c->name;
		ev.detail = detail;
		ev.worker = -1;
		ev.from_worker = -1;
		ctld_event_emit(&ev);
	}
}
