/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-crypto: one ESP crypto worker (--worker N). Attaches to esgw-rxtx's
 * shared objects, takes its SAs from esgw-ctld, encrypts and decrypts bursts
 * from its ring until SIGTERM, then wipes every key. */
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>

#include "log.h"
#include "worker.h"

#define ATTACH_TIMEOUT_MS 5000

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
		.dp = {.role = "crypto",
		       .listen_fd = -1,
		       .conn_fd = -1,
		       .on_config = crypto_worker_on_config,
		       .on_config_delta = crypto_worker_on_config_delta,
		       .on_stats = crypto_worker_on_stats,
		       .on_seq_limits = crypto_worker_on_seq_limits},
	};
	static char log_name[32];
	char sock_name[32];
	int n;

	esgw_log_init("esgw-crypto");
	n = esgw_dp_eal_init(argc, argv);
	argc -= n;
	argv += n;
	if (esgw_dp_args_parse(&w.dp, argc, argv, 1) < 0)
		goto fail_eal;
	w.id = (uint32_t)w.dp.worker;
	snprintf(log_name, sizeof(log_name), "esgw-crypto-%u", w.id);
	esgw_log_init(log_name);
	if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
		ESGW_ERR("must run as a DPDK secondary (--proc-type secondary) of esgw-rxtx");
		goto fail_eal;
	}
	if (esgw_dp_attach(&w.dp, ATTACH_TIMEOUT_MS) < 0 || crypto_worker_tables_alloc(&w) < 0)
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
