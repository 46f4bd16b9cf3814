/* SPDX-License-Identifier: BSD-3-Clause */
/* The idle sleep of a dataplane process: ring what the round owes, serve
 * the control socket, then sleep on the process's doorbell until a producer
 * or the control watcher rings it. */
#include "dp.h"

#include <sys/prctl.h>

#include <rte_pause.h>

/* What the doorbell re-checks after announcing a sleep: control work, or the
 * process's own rings. */
static int idle_has_work(void *arg)
{
	struct esgw_dp *dp = arg;

	return dp->ctl_pending || esgw_dp_quit ||
	       (dp->idle_has_work != NULL && dp->idle_has_work(dp->idle_arg));
}

void esgw_dp_idle(struct esgw_dp *dp, struct esgw_doorbell *db, unsigned int timeout_us,
		  int (*has_work)(void *arg), void *arg)
{
	esgw_doorbells_ring(&dp->bells); /* owed by anything outside a round */
	esgw_dp_ctl_poll(dp);
	esgw_doorbells_ring(&dp->bells);
	if (dp->busy_poll) {
		rte_pause();
		return;
	}
	dp->db = db;
	dp->idle_has_work = has_work;
	dp->idle_arg = arg;
	dp->cycles.sleeps += (uint64_t)esgw_doorbell_wait(db, timeout_us, idle_has_work, dp);
}

/* A timed sleep ends up to the thread's timer slack late: 50 us by default,
 * half again rxtx's 100 us sleeps between port polls while traffic flows on
 * a port without a doorbell (memif), at each gateway a frame crosses. The
 * slack only lets the kernel merge timer interrupts; a dataplane thread has
 * few timers and wants each on time. */
#define ESGW_DP_TIMER_SLACK_NS 1000

void esgw_dp_idle_setup(void)
{
	prctl(PR_SET_TIMERSLACK, ESGW_DP_TIMER_SLACK_NS, 0, 0, 0);
}
