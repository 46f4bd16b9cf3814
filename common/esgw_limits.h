/* SPDX-License-Identifier: BSD-3-Clause */
/* Table sizes every program agrees on, DPDK-free so esgw-ctld and the CLI can
 * include them too. */
#ifndef ESGW_LIMITS_H
#define ESGW_LIMITS_H

#include <stdint.h>

#define ESGW_MAX_PORTS 8
/* Crypto workers: esgw-ctld --max-workers N (default the larger of
 * ESGW_DEFAULT_MAX_WORKERS and the CPUs online) sizes the rings and doorbells
 * esgw-rxtx creates; ESGW_MAX_WORKERS bounds N. Worker N runs as DPDK lcore
 * ESGW_WORKER_LCORE(N), so the bound keeps within DPDK's RTE_MAX_LCORE (128
 * in Debian's build; asserted in common/dp_args.c). */
#define ESGW_MAX_WORKERS 112
#define ESGW_DEFAULT_MAX_WORKERS 64
/* Fixed lcore ids, unique per mbuf pool: rxtx 1, the router 2, worker N: */
#define ESGW_WORKER_LCORE(n) (10 + (n))
/* SA runtime slots: esgw-ctld --max-sas N (default ESGW_DEFAULT_MAX_SAS)
 * sizes the shared table esgw-rxtx creates in hugepage memory and every
 * process's tables by slot, at start-up; ESGW_MAX_SAS_CAP bounds N (2^24:
 * 14 GiB of SA slots in hugepages; esgw-ctld refuses at start a --max-sas
 * the host's hugepages cannot hold). */
#define ESGW_DEFAULT_MAX_SAS 65536
#define ESGW_MAX_SAS_CAP (1u << 24)
/* esgw-rxtx's hugepage memory (EAL -m, MiB) with the default --max-sas: mbuf
 * pool, rings, the shared table; a larger --max-sas adds its extra slots. */
#define ESGW_RXTX_MEM_DEFAULT_MB 256
/* sizeof(struct esgw_sa_runtime) (common/shm.h asserts it), for the programs
 * without DPDK's headers. */
#define ESGW_SA_RUNTIME_BYTES 768
/* Per SA too: ESGW_EGRESS_WAYS entries of one line each where the router
 * tells the SA's worker where decrypted packets go (common/shm.h). */
#define ESGW_EGRESS_WAYS 2
#define ESGW_SA_EGRESS_BYTES 128
/* Hugepage memory per SA slot in esgw-rxtx's shared table. */
#define ESGW_SA_SHARED_BYTES (ESGW_SA_RUNTIME_BYTES + ESGW_SA_EGRESS_BYTES)

/* The EAL -m (MiB) esgw-rxtx needs for max_sas SA runtime slots. */
static inline uint32_t esgw_rxtx_mem_mb(uint32_t max_sas)
{
	uint64_t extra = max_sas > ESGW_DEFAULT_MAX_SAS
				 ? (uint64_t)(max_sas - ESGW_DEFAULT_MAX_SAS) * ESGW_SA_SHARED_BYTES
				 : 0;

	return ESGW_RXTX_MEM_DEFAULT_MB + (uint32_t)((extra + (1u << 20) - 1) >> 20);
}
/* Limits of the router's tables, checked by esgw-ctld before it accepts a
 * configuration (ctl/limits.c), so a push is never refused for them. */
#define ESGW_MAX_ADDRS_PER_INTERFACE 16 /* IPv4 and IPv6 together */
#define ESGW_MAX_NATT_PORTS 8           /* distinct local UDP encapsulation ports, 4500 included */
#define ESGW_NEIGHBOR_ENTRIES 2048      /* ARP and ND together */
#define ESGW_MAX_STATIC_NEIGHBORS 256   /* of the neighbour entries */

/* The dataplane processes' scheduler slice unless --slice-us says otherwise
 * (esgw_dp_slice_apply): a process woken by a doorbell preempts a CPU's busy
 * neighbour at once instead of after its slice. */
#define ESGW_DP_SLICE_US_DEFAULT 100
#define ESGW_DP_SLICE_US_MIN 100    /* the kernel clamps to 0.1 .. */
#define ESGW_DP_SLICE_US_MAX 100000 /* .. 100 ms */

#endif
