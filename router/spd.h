/* SPDX-License-Identifier: BSD-3-Clause */
/* The router's security policy database (RFC 4301 SPD) beside the
 * route-based tunnels: the policies of a configuration in evaluation order
 * with their classifier (spd_classify.h), and per inbound SA the protect
 * policies its decrypted packets must match. Built with the other tables on
 * every push, read-only afterwards. */
#ifndef ESGW_ROUTER_SPD_H
#define ESGW_ROUTER_SPD_H

#include <stdint.h>

#include "esgw_limits.h"
#include "selector.h"
#include "spd_classify.h"

/* An inbound SA's list longer than this gets a classifier of its own. */
#define SPD_INBOUND_SCAN_MAX 8

enum spd_action { SPD_PROTECT = 1, SPD_BYPASS = 2, SPD_DISCARD = 3 };

struct spd_policy {
	struct esgw_selector sel;
	uint8_t action;   /* enum spd_action */
	uint8_t usable;   /* protect: SA installed and tunnel known */
	uint32_t tunnel;  /* protect: index into router_tables.tunnels */
	uint32_t sa_slot; /* protect, usable: the outbound SA */
	uint32_t worker;
	uint32_t priority;
	uint64_t no_sa; /* protect, not usable: packets dropped (an acquire for ctld) */
};

/* An inbound SA's check: policies[index[first .. first + count)]. */
struct spd_inbound {
	uint32_t first, count;
	uint32_t classify; /* count > SPD_INBOUND_SCAN_MAX: inbound_classify[classify - 1] */
	uint8_t checked;   /* the SA's tunnel has protect policies */
};

struct spd_table {
	struct spd_policy *policies; /* sorted: priority, then configuration order */
	char (*names)[64];           /* of policies[i], for the no_sa counts in stats */
	uint32_t nb_policies;
	struct spd_classify *classify;      /* of policies[], in their order */
	uint32_t *index;                    /* policy indices of the inbound checks */
	struct spd_classify **inbound_classify; /* of the long inbound lists */
	uint32_t nb_inbound_classify;
	struct spd_inbound *in; /* by SA runtime slot, nb_in (--max-sas) of them */
	uint32_t nb_in;
};

#endif
