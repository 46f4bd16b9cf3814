/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What charon asks for, in esgw's terms: IKEv2 transforms to esgw
 * algorithms, lifetimes, traffic selectors to policy selectors. Each
 * conversion says what esgw cannot do instead of guessing. */
#ifndef ESGW_MAP_H_
#define ESGW_MAP_H_

#include <library.h>
#include <ipsec/ipsec_types.h>
#include <networking/host.h>
#include <selectors/traffic_selector.h>

#include "esgw.pb-c.h"

#define ESGW_IKE_OWNER "ike"

/* The esgw algorithm for an ESP encryption transform with its key length in
 * bytes (salt included for AEADs) and integrity transform; sets *salt_len.
 * ESGW__ALGORITHM__ALGORITHM_UNSPECIFIED if esgw has none. */
Esgw__Algorithm esgw_map_algorithm(uint16_t enc_alg, size_t enc_key_len, uint16_t int_alg,
				   size_t *salt_len);

/* Soft (rekey) and hard (life) limits of charon's lifetime configuration. */
void esgw_map_lifetimes(const lifetime_cfg_t *cfg, Esgw__Lifetime *soft, Esgw__Lifetime *hard);

/* "192.0.2.1" for a host; buf of INET6_ADDRSTRLEN bytes. */
char *esgw_map_host(host_t *host, char *buf, size_t len);

/* Fill a policy's selector (src, dst, protocol, ports) from a pair of traffic
 * selectors; src/dst strings go to src_buf/dst_buf (64 bytes each). FALSE,
 * with why in *why, if esgw cannot express it (an address range that is not
 * a prefix, ICMP types, a family mix). */
bool esgw_map_selector(traffic_selector_t *src_ts, traffic_selector_t *dst_ts, Esgw__Policy *p,
		       char *src_buf, char *dst_buf, const char **why);

/* esgw priority (lower first) of a charon policy: manual_prio if set,
 * otherwise more specific selectors first, after the operator's policies
 * (default priority 100). */
uint32_t esgw_map_priority(traffic_selector_t *src_ts, traffic_selector_t *dst_ts,
			   uint32_t manual_prio);

#endif
