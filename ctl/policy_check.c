/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks of a policy (SPD entry) that esgwctl applies before sending and
 * esgw-ctld before changing state, so both give the same message. */
#include <stdio.h>
#include <string.h>

#include "selector.h"
#include "validate.h"

static int check_range(const char *what, uint32_t lo, uint32_t hi, char *err, size_t errlen)
{
	if (lo > hi || hi > 65535) {
		snprintf(err, errlen, "%s %u-%u is not a port range LO-HI within 0..65535", what,
			 lo, hi);
		return -1;
	}
	return 0;
}

static int has_ports(uint32_t lo, uint32_t hi)
{
	return !(lo == 0 && (hi == 0 || hi == 65535));
}

int esgw_check_policy(const Esgw__Policy *p, char *err, size_t errlen)
{
	bool protect = p->action == ESGW__POLICY__ACTION__ACTION_PROTECT;

	if (esgw_check_name(p->name, "policy name", err, errlen) < 0)
		return -1;
	if ((p->src[0] && esgw_check_prefix(p->src, "policy src", err, errlen) < 0) ||
	    (p->dst[0] && esgw_check_prefix(p->dst, "policy dst", err, errlen) < 0))
		return -1;
	if (p->protocol > 255) {
		snprintf(err, errlen, "protocol %u is out of range 0..255", p->protocol);
		return -1;
	}
	if (check_range("sport", p->sport_lo, p->sport_hi, err, errlen) < 0 ||
	    check_range("dport", p->dport_lo, p->dport_hi, err, errlen) < 0)
		return -1;
	if ((has_ports(p->sport_lo, p->sport_hi) || has_ports(p->dport_lo, p->dport_hi)) &&
	    !esgw_protocol_has_ports((uint8_t)p->protocol)) {
		snprintf(err, errlen, "policy %s: ports need proto tcp, udp or sctp", p->name);
		return -1;
	}
	switch (p->action) {
	case ESGW__POLICY__ACTION__ACTION_PROTECT:
	case ESGW__POLICY__ACTION__ACTION_BYPASS:
	case ESGW__POLICY__ACTION__ACTION_DISCARD:
		break;
	default:
		snprintf(err, errlen, "policy %s: action must be protect, bypass or discard",
			 p->name);
		return -1;
	}
	/* An IKE daemon's policy (it has an owner) may wait for an SA still to be
	 * negotiated: neither tunnel nor sa-out yet, its packets raise acquires. */
	if (protect && (p->tunnel[0] == '\0' || p->sa_out == 0) &&
	    !(p->owner[0] != '\0' && p->tunnel[0] == '\0' && p->sa_out == 0)) {
		snprintf(err, errlen, "policy %s: protect needs tunnel NAME and sa-out ID",
			 p->name);
		return -1;
	}
	if (protect && p->tunnel[0] && esgw_check_name(p->tunnel, "tunnel name", err, errlen) < 0)
		return -1;
	if (!protect && (p->tunnel[0] != '\0' || p->sa_out != 0 || p->n_sa_in != 0)) {
		snprintf(err, errlen, "policy %s: tunnel, sa-out and sa-in go only with protect",
			 p->name);
		return -1;
	}
	return 0;
}
