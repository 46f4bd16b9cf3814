/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-crypto: one ESP crypto worker (--worker N). Attaches to esgw-rxtx's
 * shared objects, takes its SAs from esgw-ctld, encrypts and decrypts bursts
 * from its ring until SIGTERM, then wipes every key. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "log.h"
#include "worker.h"

#define ATTACH_TIMEOUT_MS 5000

static void usage(FILE *out)
{
	fprintf(out, "usage: esgw-crypto EAL-ARGS... -- --worker N [--rundir DIR]\n"
		     "  EAL-ARGS: --file-prefix P --proc-type secondary --lcores <10+N>@CPU\n"
		     "  --worker N    worker id, 0..%d: serves ring esgw.crypto.N\n"
		     "  --rundir DIR  where crypto-N.sock is created (default %s)\n",
		ESGW_MAX_WORKERS - 1, ESGW_RUNDIR_DEFAULT);
}

static int parse_options(struct crypto_worker *w, int argc, char **argv)
{
	static const struct option options[] = {
		{"rundir", required_argument, NULL, 'r'},
		{"worker", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt, have_worker = 0;
	char *end;
	long id;

	optind = 1; /* the EAL used getopt before us */
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if ((size_t)snprintf(w->dp.rundir, sizeof(w->dp.rundir), "%s", optarg) >=
			    sizeof(w->dp.rundir)) {
				ESGW_ERR("--rundir too long: %s", optarg);
				return -1;
			}
			break;
		case 'w':
			id = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || id < 0 || id >= ESGW_MAX_WORKERS) {
				ESGW_ERR("--worker must be a number from 0 to %d, not '%s'",
					 ESGW_MAX_WORKERS - 1, optarg);
				return -1;
			}
			w->id = (unsigned int)id;
			have_worker = 1;
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
	if (!have_worker) {
		ESGW_ERR("--worker N is required");
		return -1;
	}
	return 0;
}

static IMB_MGR *ipsec_mb_open(void)
{
	IMB_MGR *mgr = alloc_mb_mgr(0);

	if (mgr == NULL) {
		ESGW_ERR("intel-ipsec-mb: cannot allocate a manager");
		return NULL;
	}
	init_mb_mgr_auto(mgr, NULL);
	if (imb_get_errno(mgr) != 0) {
		ESGW_ERR("intel-ipsec-mb: %s", imb_get_strerror(imb_get_errno(mgr)));
		free_mb_mgr(mgr);
		return NULL;
	}
	return mgr;
}

int main(int argc, char **argv)
{
	static struct crypto_worker w = {
		.dp = {.role = "crypto", .listen_fd = -1, .conn_fd = -1,
		       .on_config = crypto_worker_on_config, .on_stats = crypto_worker_on_stats},
	};
	static char log_name[32];
	char sock_name[32];
	int n;

	esgw_log_init("esgw-crypto");
	n = esgw_dp_eal_init(argc, argv);
	argc -= n;
	argv += n;
	if (parse_options(&w, argc, argv) < 0)
		goto fail_eal;
	w.dp.worker = (int)w.id;
	snprintf(log_name, sizeof(log_name), "esgw-crypto-%u", w.id);
	esgw_log_init(log_name);
	if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
		ESGW_ERR("must run as a DPDK secondary (--proc-type secondary) of esgw-rxtx");
		goto fail_eal;
	}
	if (esgw_dp_attach(&w.dp, ATTACH_TIMEOUT_MS) < 0)
		goto fail_eal;
	w.mgr = ipsec_mb_open();
	if (w.mgr == NULL)
		goto fail_eal;
	if (crypto_worker_rings_attach(&w) < 0)
		goto fail_mgr;
	snprintf(sock_name, sizeof(sock_name), "crypto-%u", w.id);
	if (esgw_dp_ctl_open(&w.dp, sock_name) < 0)
		goto fail_mgr;
	ESGW_INFO("ready: ring %s, control socket %s", w.ring_in->name, w.dp.sock_path);

	crypto_worker_run(&w);

	ESGW_INFO("stopping");
	crypto_worker_sas_wipe(&w);
	esgw_dp_ctl_close(&w.dp);
	free_mb_mgr(w.mgr);
	rte_eal_cleanup();
	return 0;

fail_mgr:
	free_mb_mgr(w.mgr);
fail_eal:
	rte_eal_cleanup();
	return 1;
}
