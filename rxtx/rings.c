/* SPDX-License-Identifier: BSD-3-Clause */
/* Creates the hugepage objects every other dataplane process looks up by name
 * (common/shm.h): the mbuf pool, the shared table, and the rings. */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "log.h"
#include "rxtx.h"

static struct rte_ring *ring_create(const char *name, unsigned int flags)
{
	struct rte_ring *r = rte_ring_create(name, ESGW_RING_SIZE, (int)rte_socket_id(), flags);

	if (r == NULL)
		ESGW_ERR("ring %s: %s", name, rte_strerror(rte_errno));
	return r;
}

/* The shared table of doorbells and SA runtime state (--max-sas slots,
 * --max-workers doorbells), zeroed. */
static int shared_table_create(struct rxtx *rx)
{
	size_t size = esgw_shared_size(rx->dp.max_sas, rx->dp.max_workers);
	struct esgw_shared *shared;

	rx->shared_mz = rte_memzone_reserve(ESGW_SHARED_NAME, size, (int)rte_socket_id(), 0);
	if (rx->shared_mz == NULL) {
		ESGW_ERR("memzone %s: --max-sas %u and --max-workers %u need %zu bytes (%.1f "
			 "MiB) of hugepage memory: %s; lower esgw-ctld's --max-sas or give "
			 "esgw-rxtx more (EAL -m %u for this --max-sas)",
			 ESGW_SHARED_NAME, rx->dp.max_sas, rx->dp.max_workers, size,
			 (double)size / (1 << 20), rte_strerror(rte_errno),
			 esgw_rxtx_mem_mb(rx->dp.max_sas));
		return -1;
	}
	shared = rx->shared_mz->addr;
	memset(shared, 0, size);
	shared->nb_ports = rx->nb_ports;
	shared->max_sas = rx->dp.max_sas;
	shared->max_workers = rx->dp.max_workers;
	/* The magic last: a secondary that sees it sees an initialised table. */
	rte_smp_wmb();
	shared->magic = ESGW_SHARED_MAGIC;
	rx->dp.shared = shared;
	return 0;
}

/* Every ring of shm.h, with one producer and one consumer each. */
static int rings_create(struct rxtx *rx)
{
	const unsigned int flags = RING_F_SP_ENQ | RING_F_SC_DEQ;
	char name[RTE_RING_NAMESIZE];

	rx->router_in = ring_create(ESGW_RING_ROUTER_IN, flags);
	if (rx->router_in == NULL)
		return -1;
	/* Created for every worker up to --max-workers, so that scaling up
	 * needs no new primary; none beyond, so hugepage memory stays bounded. */
	for (unsigned int w = 0; w < rx->dp.max_workers; w++) {
		snprintf(name, sizeof(name), ESGW_RING_CRYPTO_FMT, w);
		rx->crypto[w] = ring_create(name, flags);
		snprintf(name, sizeof(name), ESGW_RING_DECRYPTED_FMT, w);
		rx->decrypted[w] = ring_create(name, flags);
		snprintf(name, sizeof(name), ESGW_RING_WORKER_TX_FMT, w);
		rx->worker_tx[w] = ring_create(name, flags);
		if (rx->crypto[w] == NULL || rx->decrypted[w] == NULL || rx->worker_tx[w] == NULL)
			return -1;
	}
	/* Frames for the host's stack (punt.c), even before a TAP exists: the
	 * router then learns that rxtx, not it, has to count them. */
	rx->punt = ring_create(ESGW_RING_PUNT, flags);
	if (rx->punt == NULL)
		return -1;
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i];

		snprintf(name, sizeof(name), ESGW_RING_TX_FMT, port);
		rx->tx[port] = ring_create(name, flags);
		if (rx->tx[port] == NULL)
			return -1;
	}
	return 0;
}

int rxtx_shared_create(struct rxtx *rx)
{
	rx->dp.pool = rte_pktmbuf_pool_create(ESGW_POOL_NAME, ESGW_POOL_SIZE, ESGW_POOL_CACHE,
					      ESGW_MBUF_PRIV_SIZE, RTE_MBUF_DEFAULT_BUF_SIZE,
					      (int)rte_socket_id());
	if (rx->dp.pool == NULL) {
		ESGW_ERR("mbuf pool %s: %s (is another esgw-rxtx running with this --file-prefix?)",
			 ESGW_POOL_NAME, rte_strerror(rte_errno));
		goto fail;
	}
	if (shared_table_create(rx) < 0 || rings_create(rx) < 0)
		goto fail;
	return 0;
fail:
	rxtx_shared_free(rx);
	return -1;
}

/* Only for a failed start: at a normal exit the objects stay until the EAL
 * cleanup, since secondaries may still hold mbufs from the pool. */
void rxtx_shared_free(struct rxtx *rx)
{
	for (unsigned int p = 0; p < ESGW_MAX_PORTS; p++) {
		rte_ring_free(rx->tx[p]);
		rx->tx[p] = NULL;
	}
	for (unsigned int w = 0; w < rx->dp.max_workers; w++) {
		rte_ring_free(rx->crypto[w]);
		rte_ring_free(rx->decrypted[w]);
		rte_ring_free(rx->worker_tx[w]);
		rx->crypto[w] = rx->decrypted[w] = rx->worker_tx[w] = NULL;
	}
	rte_ring_free(rx->router_in);
	rx->router_in = NULL;
	rte_ring_free(rx->punt);
	rx->punt = NULL;
	if (rx->shared_mz != NULL)
		rte_memzone_free(rx->shared_mz);
	rx->shared_mz = NULL;
	rx->dp.shared = NULL;
	rte_mempool_free(rx->dp.pool);
	rx->dp.pool = NULL;
}
