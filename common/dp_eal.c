/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting a dataplane process: DPDK's EAL, and quitting on SIGTERM or
 * SIGINT. */
#include "dp.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "log.h"

volatile int esgw_dp_quit;

static void on_signal(int sig)
{
	(void)sig;
	esgw_dp_quit = 1;
}

/* The scheduler slice of the calling thread (Linux 6.6+ EEVDF: a SCHED_OTHER
 * thread's sched_attr.sched_runtime, clamped by the kernel to 0.1..100 ms;
 * 6.12+ lets a woken thread with a shorter slice preempt the one running).
 * A dataplane process woken by a doorbell then gets its CPU at once instead
 * of after the running neighbour's slice (a generator or another gateway's
 * poller: up to the 4 ms tick here). Not fatal: an older kernel ignores or
 * refuses it, and the process runs with the default. Only for SCHED_OTHER
 * (a process an operator made real-time keeps its policy), nice kept. */
void esgw_dp_slice_apply(uint32_t slice_us)
{
	struct { /* the kernel's struct sched_attr (linux/sched/types.h, whose
		  * struct sched_param collides with glibc's) */
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr = {.size = sizeof(attr),
		  .policy = 0 /* SCHED_OTHER */,
		  .runtime = (uint64_t)slice_us * 1000};

	if (slice_us == 0 || sched_getscheduler(0) != SCHED_OTHER)
		return;
	errno = 0;
	attr.nice = getpriority(PRIO_PROCESS, 0);
	if (errno != 0 || syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
		ESGW_WARN("scheduler slice of %u us not set (the kernel's default stays): %s",
			  slice_us, strerror(errno));
}

int esgw_dp_eal_init(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	int n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		ESGW_ERR("DPDK EAL init failed: %s", rte_strerror(rte_errno));
		exit(1);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return n;
}
