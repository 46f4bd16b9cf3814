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

/* A timed sleep ends up to the thread's timer slack late: 50 us by default,
 * as long again as rxtx's 50 us sleeps between port polls while traffic flows on
 * a port without a doorbell (memif), at each gateway a frame crosses. So the
 * short sleeps of a flow (ESGW_RECENT_TIMEOUT_US and below) run with a 1 us
 * slack; the long ones of a quiet gateway keep the default, which lets the
 * kernel merge their timer interrupts with others (measured: two idle
 * gateways 2.2-2.4 % of a CPU with 1 us slack always, 1.8 % without). */
#define ESGW_DP_TIMER_SLACK_NS 1000

static void timer_slack_for(unsigned int timeout_us)
{
	static __thread int precise = -1; /* the slack this thread has: unknown */
	int want = timeout_us != 0 && timeout_us <= ESGW_RECENT_TIMEOUT_US;

	if (want != precise) {
		prctl(PR_SET_TIMERSLACK, want ? ESGW_DP_TIMER_SLACK_NS : 0, 0, 0, 0); /* 0: default */
		precise = want;
	}
}

void esgw_dp_idle(struct esgw_dp *dp, struct esgw_doorbell *db, unsigned int timeout_us,
		  int (*has_work)(void *arg), void *arg)
{
	esgw_dp_idle_fds(dp, db, timeout_us, has_work, arg, NULL, 0);
}

void esgw_dp_idle_fds(struct esgw_dp *dp, struct esgw_doorbell *db, unsigned int timeout_us,
		      int (*has_work)(void *arg), void *arg, struct pollfd *pfd, unsigned int n)
{
	esgw_doorbells_ring(&dp->bells); /* owed by anything outside a round */
	esgw_dp_ctl_poll(dp);
	esgw_doorbells_ring(&dp->bells);
	if (dp->busy_poll) {
		rte_pause();
		return;
	}
	timer_slack_for(timeout_us);
	dp->db = db;
	dp->idle_has_work = has_work;
	dp->idle_arg = arg;
	dp->cycles.sleeps +=
		(uint64_t)esgw_doorbell_wait(db, timeout_us, idle_has_work, dp, pfd, n);
}
