/* SPDX-License-Identifier: BSD-3-Clause */
/* Table sizes every program agrees on, DPDK-free so esgw-ctld and the CLI can
 * include them too. */
#ifndef ESGW_LIMITS_H
#define ESGW_LIMITS_H

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
/* SA runtime slots: the most esgw-ctld --max-sas (and esgw-rxtx's) allows, and
 * its default; the shared region holds --max-sas of them. */
#define ESGW_MAX_SA 65536
/* Limits of the router's tables, checked by esgw-ctld before it accepts a
 * configuration (ctl/limits.c), so a push is never refused for them. */
#define ESGW_MAX_ADDRS_PER_INTERFACE 16 /* IPv4 and IPv6 together */
#define ESGW_MAX_NATT_PORTS 8           /* distinct local UDP encapsulation ports, 4500 included */
#define ESGW_NEIGHBOR_ENTRIES 2048      /* ARP and ND together */
#define ESGW_MAX_STATIC_NEIGHBORS 256   /* of the neighbour entries */

#endif
