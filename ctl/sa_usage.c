/* SPDX-License-Identifier: BSD-3-Clause */
/* When each SA last carried a packet, as the 1 s sampler sees it: the time
 * its packet count was last seen to grow. An IKE daemon asks for it (dead
 * peer detection and inactivity timeouts in charon depend on it); the
 * crypto workers keep no clock per packet, so one second is the resolution. */
#include "ctld.h"

#include <string.h>
#include <sys/time.h>

struct usage {
	uint32_t id; /* the SA the slot held when last seen; another resets */
	uint64_t packets;
	double last_used; /* seconds since the epoch, 0: never */
};

static struct usage *usage; /* by slot, ctld.opt.max_sas */

void sa_usage_observe(const Esgw__DpStats *st)
{
	struct timeval now;

	if (st == NULL || strcmp(st->role, "crypto") != 0)
		return;
	gettimeofday(&now, NULL);
	for (size_t i = 0; i < st->n_sas; i++) {
		const Esgw__DpSaStats *sa = st->sas[i];
		struct usage *u;

		if (sa->slot >= ctld.opt.max_sas)
			continue;
		u = &CTLD_SLOTS(usage)[sa->slot];
		if (u->id != sa->id)
			*u = (struct usage){.id = sa->id};
		if (sa->packets != u->packets) /* lower too: the dataplane started over */
			u->last_used = sa->packets > u->packets ? now.tv_sec + now.tv_usec / 1e6
								: u->last_used;
		u->packets = sa->packets;
	}
}

double sa_usage_last_used(const Esgw__Sa *sa)
{
	const struct usage *u =
		usage != NULL && sa->slot < ctld.opt.max_sas ? &usage[sa->slot] : NULL;

	return u != NULL && u->id == sa->id ? u->last_used : 0;
}
