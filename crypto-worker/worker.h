/* SPDX-License-Identifier: BSD-3-Clause */
/* State of one esgw-crypto process: its SAs (by runtime slot), rings and
 * counters, shared by main.c, worker_loop.c and worker_config.c. */
#ifndef ESGW_CRYPTO_WORKER_H
#define ESGW_CRYPTO_WORKER_H

#include <stdint.h>

#include <intel-ipsec-mb.h>
#include <rte_ring.h>

#include "dp.h"
#include "esp.h"

struct crypto_worker {
	struct esgw_dp dp; /* first: the dp callbacks get &worker->dp */
	unsigned int id;
	IMB_MGR *mgr;
	struct rte_ring *ring_in;        /* esgw.crypto.<id>, from the router */
	struct rte_ring *ring_router_in; /* decrypted packets back to the router */
	struct rte_ring *ring_tx[ESGW_MAX_PORTS]; /* looked up on first use */
	struct esp_sa *sa[ESGW_MAX_SA];  /* by runtime slot; NULL: not ours */
	uint32_t sa_id[ESGW_MAX_SA];     /* configuration id, for stats */
	/* Counters of this worker; the per-SA ones are in shared memory. */
	uint64_t packets_encrypted;
	uint64_t packets_decrypted;
	uint64_t bytes;
	uint64_t drops[ESGW_DROP_MAX];
};

/* worker_loop.c */
int crypto_worker_rings_attach(struct crypto_worker *w);
void crypto_worker_run(struct crypto_worker *w);

/* worker_config.c */
int crypto_worker_on_config(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err,
			    size_t errlen);
void crypto_worker_on_stats(struct esgw_dp *dp, Esgw__DpStats *stats);
/* Wipe and free every SA: on shutdown, so no key outlives the process. */
void crypto_worker_sas_wipe(struct crypto_worker *w);

#endif
