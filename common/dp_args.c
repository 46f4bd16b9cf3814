/* SPDX-License-Identifier: BSD-3-Clause */
/* The dataplane processes' own arguments, after the EAL's "--". */
#include "dp.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_config.h>

#include "addr.h"
#include "log.h"

_Static_assert(ESGW_WORKER_LCORE(ESGW_MAX_WORKERS - 1) < RTE_MAX_LCORE,
	       "worker lcore ids beyond RTE_MAX_LCORE");

static void usage(const struct esgw_dp *dp, int want_worker, FILE *out)
{
	fprintf(out,
		"usage: esgw-%s EAL-ARGS... -- %s[--rundir DIR] [--busy-poll] [--max-sas N]\n"
		"       [--max-workers N] [--slice-us N]\n"
		"  --rundir DIR  where the control socket is created (default %s)\n"
		"  --busy-poll   never sleep when idle: poll at full speed (uses a whole CPU;\n"
		"                for comparison with the adaptive default)\n"
		"  --max-sas N   esgw-rxtx: SA runtime slots in the shared table, 1..%u\n"
		"                (default %d, %zu bytes each of hugepage memory: EAL -m %u\n"
		"                MiB for the default, more for more)\n"
		"  --max-workers N  esgw-rxtx: crypto workers with rings, 1..%d (default %d)\n"
		"  --slice-us N  the scheduler slice the process asks for, %d..%d us, or 0 for\n"
		"                the kernel's default (default %d): a process woken by a\n"
		"                doorbell gets its CPU at once instead of after a busy\n"
		"                neighbour's slice\n",
		dp->role, want_worker ? "--worker N " : "", ESGW_RUNDIR_DEFAULT, ESGW_MAX_SAS_CAP,
		ESGW_DEFAULT_MAX_SAS, sizeof(struct esgw_sa_runtime), ESGW_RXTX_MEM_DEFAULT_MB,
		ESGW_MAX_WORKERS, ESGW_DEFAULT_MAX_WORKERS, ESGW_DP_SLICE_US_MIN, ESGW_DP_SLICE_US_MAX,
		ESGW_DP_SLICE_US_DEFAULT);
	if (want_worker)
		fprintf(out,
			"  --worker N    worker id, below esgw-rxtx's --max-workers: serves ring "
			"esgw.crypto.N\n");
}

int esgw_dp_args_parse(struct esgw_dp *dp, int argc, char **argv, int want_worker)
{
	static const struct option options[] = {
		{"rundir", required_argument, NULL, 'r'},
		{"worker", required_argument, NULL, 'w'},
		{"busy-poll", no_argument, NULL, 'b'},
		{"max-sas", required_argument, NULL, 'm'},
		{"max-workers", required_argument, NULL, 'W'},
		{"slice-us", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint32_t worker;
	int opt;

	dp->worker = -1;
	dp->max_sas = ESGW_DEFAULT_MAX_SAS;
	dp->max_workers = ESGW_DEFAULT_MAX_WORKERS;
	dp->slice_us = ESGW_DP_SLICE_US_DEFAULT;
	optind = 1; /* the EAL used getopt before us */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if ((size_t)snprintf(dp->rundir, sizeof(dp->rundir), "%s", optarg) >=
			    sizeof(dp->rundir)) {
				ESGW_ERR("--rundir too long: %s", optarg);
				return -1;
			}
			break;
		case 'w':
			if (!want_worker ||
			    esgw_parse_u32(optarg, ESGW_MAX_WORKERS - 1, &worker) < 0) {
				ESGW_ERR("--worker must be a number from 0 to %d, not '%s'",
					 ESGW_MAX_WORKERS - 1, optarg);
				return -1;
			}
			dp->worker = (int)worker;
			break;
		case 'b':
			dp->busy_poll = true;
			break;
		case 'm':
			if (esgw_parse_u32(optarg, ESGW_MAX_SAS_CAP, &dp->max_sas) < 0 ||
			    dp->max_sas == 0) {
				ESGW_ERR("--max-sas must be a number from 1 to %u, not '%s'",
					 ESGW_MAX_SAS_CAP, optarg);
				return -1;
			}
			break;
		case 'W':
			if (esgw_parse_u32(optarg, ESGW_MAX_WORKERS, &dp->max_workers) < 0 ||
			    dp->max_workers == 0) {
				ESGW_ERR("--max-workers must be a number from 1 to %d, not '%s'",
					 ESGW_MAX_WORKERS, optarg);
				return -1;
			}
			break;
		case 's':
			if (esgw_parse_u32(optarg, ESGW_DP_SLICE_US_MAX, &dp->slice_us) < 0 ||
			    (dp->slice_us != 0 && dp->slice_us < ESGW_DP_SLICE_US_MIN)) {
				ESGW_ERR("--slice-us must be 0 or a number from %d to %d, not '%s'",
					 ESGW_DP_SLICE_US_MIN, ESGW_DP_SLICE_US_MAX, optarg);
				return -1;
			}
			break;
		case 'h':
			usage(dp, want_worker, stdout);
			exit(0);
		default:
			usage(dp, want_worker, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		ESGW_ERR("unexpected argument: %s", argv[optind]);
		return -1;
	}
	if (want_worker && dp->worker < 0) {
		ESGW_ERR("--worker N is required");
		return -1;
	}
	esgw_dp_slice_apply(dp->slice_us);
	return 0;
}
