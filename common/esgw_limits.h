/* SPDX-License-Identifier: BSD-3-Clause */
/* Table sizes every program agrees on, DPDK-free so esgw-ctld and the CLI can
 * include them too. */
#ifndef ESGW_LIMITS_H
#define ESGW_LIMITS_H

#define ESGW_MAX_PORTS 8
#define ESGW_MAX_WORKERS 8
#define ESGW_MAX_SA 1024 /* SA runtime slots */

#endif
