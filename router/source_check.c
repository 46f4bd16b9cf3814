/* SPDX-License-Identifier: BSD-3-Clause */
/* Who may send what, checked on every packet the router takes in, for both
 * families, before it is delivered or forwarded:
 *
 * - Martian sources (0/8, 127/8, multicast, broadcast, ::, ::1, the
 *   gateway's own addresses) are dropped on every port and from every
 *   tunnel: no host has them, so they only serve spoofing and reflection.
 * - A packet that arrived in clear and is to be forwarded must not be one a
 *   tunnel stands for (RFC 4301 5.2, 4.4.1): its source is not routed into a
 *   tunnel (the peer's networks come only through ESP), and the first policy
 *   its addresses match with source and destination swapped is not a
 *   protect policy (nor discard). Otherwise anyone on the WAN could send
 *   into the LAN as the peer's network, past the policies.
 * - A decrypted packet of a route-based tunnel (one without protect
 *   policies: those check their selectors in spd.c) must have a source that
 *   routes back into the tunnel of the SA it came on, or into another
 *   tunnel to the same peer (strict reverse path, per peer), so one peer
 *   cannot speak for another peer's network or for the LAN; and it is not
 *   sent into a tunnel again (no hairpin from one peer to another through
 *   the gateway).
 * The reverse path holds for decrypted packets to the gateway itself too
 * (the host behind the punt path trusts addresses); cleartext delivered to
 * the gateway (ESP, IKE, ICMP) is subject only to the martian check: the
 * protocols themselves authenticate what they accept. */
#include <string.h>

#include "router.h"
#include "spd.h"

/* Tunnels a and b end at the same peer (the same remote address): several
 * tunnels to one peer share its networks, e.g. one per crypto worker with
 * routes spreading the destinations over them while the return traffic
 * comes back by one route. */
static int same_peer(const struct router_tables *t, uint32_t a, uint32_t b)
{
	const struct router_tunnel *x = &t->tunnels[a], *y = &t->tunnels[b];

	if (a == b)
		return 1;
	if (x->outer_ipv6 != y->outer_ipv6)
		return 0;
	return x->outer_ipv6 ? memcmp(x->remote6, y->remote6, 16) == 0 : x->remote == y->remote;
}

/* Returns 0 if m may go on, or -1 with m dropped. */
int source_check(struct router *r, struct rte_mbuf *m, const struct source_route *s)
{
	const struct esgw_meta *meta = esgw_meta(m);
	uint32_t slot = meta->sa_slot, tunnel;

	if (s->martian) {
		router_drop(r, m, ESGW_DROP_MARTIAN_SOURCE);
		return -1;
	}
	if (meta->kind == ESGW_PKT_DECRYPTED) {
		if (!s->local && s->dst_tunnel >= 0) {
			router_drop(r, m, ESGW_DROP_TUNNEL_SOURCE_MISMATCH);
			return -1;
		}
		if (spd_inbound_checked(r->tables, slot))
			return 0; /* the tunnel's policies vouched for it (spd_inbound_check) */
		tunnel = slot < r->tables->max_sas ? r->tables->sa_tunnel[slot] : 0;
		if (tunnel == 0 || s->src_tunnel < 0 ||
		    !same_peer(r->tables, (uint32_t)s->src_tunnel, tunnel - 1)) {
			router_drop(r, m, ESGW_DROP_TUNNEL_SOURCE_MISMATCH);
			return -1;
		}
		return 0;
	}
	if (s->local)
		return 0;
	if (s->src_tunnel >= 0) {
		router_drop(r, m, ESGW_DROP_POLICY_CLEARTEXT);
		return -1;
	}
	return s->ipv6 ? 0 : spd_cleartext_check(r, m);
}
