/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-rxtx: the DPDK primary process. Creates the shared pool, table and
 * rings, starts the ports, then moves frames between the ports and the rings
 * until SIGTERM. */
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "log.h"
#include "rxtx.h"

int main(int argc, char **argv)
{
	static struct rxtx rx = {
		.dp = {.role = "rxtx",
		       .worker = -1,
		       .listen_fd = -1,
		       .conn_fd = -1,
		       .on_config = rxtx_on_config,
		       .on_stats = rxtx_on_stats},
	};
	int n;

	esgw_log_init("esgw-rxtx");
	n = esgw_dp_eal_init(argc, argv);
	argc -= n;
	argv += n;
	if (esgw_dp_args_parse(&rx.dp, argc, argv, 0) < 0)
		goto fail_eal;
	/* Secondaries find the shared objects only in the primary's memory. */
	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		ESGW_ERR("must run as the DPDK primary (--proc-type primary), but another "
			 "primary uses this --file-prefix");
		goto fail_eal;
	}
	if (rxtx_ports_find(&rx) < 0)
		goto fail_eal;
	if (rxtx_shared_create(&rx) < 0)
		goto fail_eal;
	if (rxtx_ports_start(&rx) < 0)
		goto fail_ports;
	rxtx_kernel_drops_find(&rx);
	rxtx_memif_irq_find(&rx);
	rxtx_port_watch_start(&rx);
	/* Last: the socket appearing is what tells esgw-ctld we are ready. */
	if (esgw_dp_ctl_open(&rx.dp, "rxtx") < 0)
		goto fail_ports;
	ESGW_INFO("ready: %u ports, control socket %s", rx.nb_ports, rx.dp.sock_path);

	rxtx_tx_hold_init(&rx);
	rxtx_loop(&rx);

	ESGW_INFO("stopping");
	rxtx_tx_hold_release(&rx);
	rxtx_punt_stop(&rx);
	rxtx_ports_stop(&rx);
	esgw_dp_ctl_close(&rx.dp);
	rte_eal_cleanup();
	return 0;

fail_ports:
	rxtx_ports_stop(&rx);
	rxtx_shared_free(&rx);
fail_eal:
	rte_eal_cleanup();
	return 1;
}
