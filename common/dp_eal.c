/* SPDX-License-Identifier: BSD-3-Clause */
/* Starting a dataplane process: DPDK's EAL, and quitting on SIGTERM or
 * SIGINT. */
#include "dp.h"

#include <signal.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "log.h"

volatile int esgw_dp_quit;

static void on_signal(int sig)
{
	(void)sig;
	esgw_dp_quit = 1;
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
