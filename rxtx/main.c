/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-rxtx: the DPDK primary process. Creates the shared pool, table and
 * rings, starts the ports, then moves frames between the ports and the rings
 * until SIGTERM. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "log.h"
#include "rxtx.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: esgw-rxtx EAL-ARGS... -- [--rundir DIR]\n"
		     "  EAL-ARGS: --file-prefix P --proc-type primary --vdev DEVARGS...\n"
		     "  --rundir DIR  where rxtx.sock is created (default %s)\n",
		ESGW_RUNDIR_DEFAULT);
}

static int parse_options(struct rxtx *rx, int argc, char **argv)
{
	static const struct option options[] = {
		{"rundir", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	optind = 1; /* the EAL used getopt before us */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if ((size_t)snprintf(rx->dp.rundir, sizeof(rx->dp.rundir), "%s", optarg) >=
			    sizeof(rx->dp.rundir)) {
				ESGW_ERR("--rundir too long: %s", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		ESGW_ERR("unexpected argument: %s", argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct rxtx rx = {
		.dp = {.role = "rxtx", .worker = -1, .listen_fd = -1, .conn_fd = -1,
		       .on_config = rxtx_on_config, .on_stats = rxtx_on_stats},
	};
	int n;

	esgw_log_init("esgw-rxtx");
	n = esgw_dp_eal_init(argc, argv);
	argc -= n;
	argv += n;
	if (parse_options(&rx, argc, argv) < 0)
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
	/* Last: the socket appearing is what tells esgw-ctld we are ready. */
	if (esgw_dp_ctl_open(&rx.dp, "rxtx") < 0)
		goto fail_ports;
	ESGW_INFO("ready: %u ports, control socket %s", rx.nb_ports, rx.dp.sock_path);

	rxtx_loop(&rx);

	ESGW_INFO("stopping");
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
