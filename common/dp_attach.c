/* SPDX-License-Identifier: BSD-3-Clause */
/* A secondary attaching to the shared table and mbuf pool of esgw-rxtx. */
#include "dp.h"

#include <unistd.h>

#include <rte_memzone.h>

#include "log.h"

int esgw_dp_attach(struct esgw_dp *dp, int timeout_ms)
{
	const struct rte_memzone *mz = NULL;
	int waited = 0;

	for (;;) {
		mz = rte_memzone_lookup(ESGW_SHARED_NAME);
		dp->pool = rte_mempool_lookup(ESGW_POOL_NAME);
		if (mz != NULL && dp->pool != NULL)
			break;
		if (waited >= timeout_ms || esgw_dp_quit) {
			ESGW_ERR("shared objects %s/%s not found: is esgw-rxtx running with the "
				 "same --file-prefix?",
				 ESGW_SHARED_NAME, ESGW_POOL_NAME);
			return -1;
		}
		usleep(10000);
		waited += 10;
	}
	dp->shared = mz->addr;
	if (dp->shared->magic != ESGW_SHARED_MAGIC) {
		ESGW_ERR("shared table has a bad magic number: version mismatch with esgw-rxtx?");
		return -1;
	}
	dp->max_sas = dp->shared->max_sas;
	dp->max_workers = dp->shared->max_workers;
	if (dp->max_sas == 0 || dp->max_sas > ESGW_MAX_SAS_CAP || dp->max_workers == 0 ||
	    dp->max_workers > ESGW_MAX_WORKERS ||
	    mz->len < esgw_shared_size(dp->max_sas, dp->max_workers)) {
		ESGW_ERR("shared table of %u SA slots and %u workers in %zu bytes: not esgw-rxtx's "
			 "of this build?",
			 dp->max_sas, dp->max_workers, mz->len);
		return -1;
	}
	return 0;
}
