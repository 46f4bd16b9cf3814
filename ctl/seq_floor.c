/* SPDX-License-Identifier: BSD-3-Clause */
/* Outbound sequence numbers across dataplane restarts. The counter lives in
 * shared hugepage memory, which survives a crypto worker's restart but not
 * rxtx's (or the machine's). So ctld keeps, per SA, a persisted floor above
 * every number used so far: each second it reads the workers' seq_out and,
 * once a counter comes within half a reserve of the floor, moves the floor a
 * whole reserve ahead and saves the configuration. A dataplane that starts
 * over continues from the floor (DpSa.seq_out_start): no number is sent twice
 * with the same keys (RFC 4303 3.3.3), and the peer's replay window, which is
 * far ahead of 1, still accepts the SA's packets. The bound holds as long as
 * an SA sends fewer than SEQ_RESERVE / 2 packets between two samples. */
#include "ctld.h"

#include <string.h>
#include <time.h>

#include "log.h"

#define SEQ_RESERVE (1ull << 24) /* 16.7 M packets: ~8 s at 1 Mpps between saves */

void seq_floor_observe(const Esgw__DpStats *st)
{
	char err[256];
	bool raised = false;

	if (st == NULL || strcmp(st->role, "crypto") != 0)
		return;
	for (size_t i = 0; i < st->n_sas; i++) {
		const Esgw__DpSaStats *s = st->sas[i];
		Esgw__Sa *sa = state_sa(s->id);

		if (sa == NULL || s->seq_out == 0 ||
		    s->seq_out + SEQ_RESERVE / 2 <= sa->seq_out_floor)
			continue;
		sa->seq_out_floor = s->seq_out + SEQ_RESERVE;
		raised = true;
	}
	if (raised && config_save(ctld.config, ctld.opt.config_path, err, sizeof(err)) < 0)
		ESGW_WARN("saving sequence number floors: %s", err);
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
