/* SPDX-License-Identifier: BSD-3-Clause */
/* Policies (SPD) beside the route-based tunnels. Outbound, a packet the
 * router is about to send by its route is matched against the policies in
 * priority order, first match wins: protect hands it to the policy's SA over
 * the policy's tunnel (overriding the route), discard drops it, bypass and no
 * match leave it to the route. Like Linux's xfrm output lookup, this happens
 * after the FIB lookup, so a protected destination still needs a route (a
 * default route will do). A protect policy whose SA is not installed drops
 * the packet: traffic the operator asked to protect is never sent in clear.
 * Inbound, a decrypted packet must match, with source and destination
 * swapped, a protect policy of the SA it arrived on when its tunnel has any
 * (RFC 4301 5.2); otherwise a peer could inject any traffic through an SA
 * negotiated for a narrower selector. Matching is spd_classify.c's first
 * match, at a cost per packet that does not grow with the policies. */
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "router.h"
#include "slot_table.h"
#include "spd.h"

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		goto fail;                                                                         \
	} while (0)

void spd_free(struct spd_table *spd)
{
	if (spd == NULL)
		return;
	spd_classify_free(spd->classify);
	for (uint32_t i = 0; i < spd->nb_inbound_classify; i++)
		spd_classify_free(spd->inbound_classify[i]);
	free(spd->inbound_classify);
	free(spd->policies);
	free(spd->names);
	free(spd->index);
	esgw_slot_table_free(spd->in, spd->nb_in, sizeof(*spd->in));
	free(spd);
}

/* Absent is any; otherwise an IPv4 prefix. Returns 0 or -1. */
static int parse_selector_prefix(const Esgw__DpPrefix *p, uint32_t *addr, uint32_t *mask)
{
	struct esgw_addr a;

	if (p == NULL) {
		*addr = *mask = 0;
		return 0;
	}
	if (esgw_addr_from_bytes(&a, p->address.data, p->address.len, p->length) < 0 ||
	    a.family != 4)
		return -1;
	*mask = esgw_prefix_mask(a.len);
	*addr = esgw_addr_ipv4(&a) & *mask;
	return 0;
}

static void port_range(uint32_t lo, uint32_t hi, uint16_t *out_lo, uint16_t *out_hi)
{
	if ((lo == 0 && hi == 0) || lo > 65535 || hi > 65535 || lo > hi) {
		*out_lo = 0; /* unset (ctld refuses the rest): any */
		*out_hi = 65535;
		return;
	}
	*out_lo = (uint16_t)lo;
	*out_hi = (uint16_t)hi;
}

static int tunnel_index(const struct router_tables *t, const char *name)
{
	for (uint32_t i = 0; i < t->nb_tunnels; i++)
		if (strcmp(t->tunnels[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Sort key: priority, then position in the configuration (stable). */
struct ranked {
	struct spd_policy policy;
	uint32_t position;
	const Esgw__DpPolicy *config;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->policy.priority != y->policy.priority)
		return x->policy.priority < y->policy.priority ? -1 : 1;
	return x->position < y->position ? -1 : x->position > y->position;
}

static int policy_from(struct ranked *rk, const struct router_tables *t, const Esgw__DpConfig *cfg,
		       char *err, size_t errlen)
{
	const Esgw__DpPolicy *pc = rk->config;
	struct spd_policy *p = &rk->policy;
	const Esgw__DpSa *sa;
	int tun;

	if (parse_selector_prefix(pc->src, &p->sel.src, &p->sel.src_mask) < 0 ||
	    parse_selector_prefix(pc->dst, &p->sel.dst, &p->sel.dst_mask) < 0)
		FAIL("policy %s: bad source or destination prefix", pc->name);
	if (pc->protocol > 255)
		FAIL("policy %s: protocol %u out of range", pc->name, pc->protocol);
	p->sel.proto = (uint8_t)pc->protocol;
	port_range(pc->sport_lo, pc->sport_hi, &p->sel.sport_lo, &p->sel.sport_hi);
	port_range(pc->dport_lo, pc->dport_hi, &p->sel.dport_lo, &p->sel.dport_hi);
	p->priority = pc->priority;
	switch (pc->action) {
	case ESGW__POLICY__ACTION__ACTION_PROTECT:
		p->action = SPD_PROTECT;
		break;
	case ESGW__POLICY__ACTION__ACTION_BYPASS:
		p->action = SPD_BYPASS;
		return 0;
	case ESGW__POLICY__ACTION__ACTION_DISCARD:
		p->action = SPD_DISCARD;
		return 0;
	default:
		FAIL("policy %s: unknown action %d", pc->name, pc->action);
	}
	/* Protect: usable only with its tunnel and an installed SA; until then
	 * its traffic is dropped, not routed in clear. */
	tun = tunnel_index(t, pc->tunnel);
	sa = router_sa_by_id(cfg, pc->sa_out);
	if (tun < 0 || sa == NULL || sa->slot >= t->max_sas || sa->worker >= ESGW_MAX_WORKERS)
		return 0;
	p->tunnel = (uint32_t)tun;
	p->sa_slot = sa->slot;
	p->worker = sa->worker;
	p->usable = 1;
	return 0;
fail:
	return -1;
}

static int lists_sa(const Esgw__DpPolicy *pc, uint32_t id)
{
	if (pc->n_sa_in == 0)
		return 1;
	for (size_t i = 0; i < pc->n_sa_in; i++)
		if (pc->sa_in[i] == id)
			return 1;
	return 0;
}

/* A classifier of the selectors of policies[index[0 .. n)]. */
static struct spd_classify *classify_of(const struct spd_table *spd, const uint32_t *index,
					uint32_t n)
{
	const struct esgw_selector **sels = calloc(n + 1, sizeof(*sels));
	struct spd_classify *c;

	if (sels == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		sels[i] = &spd->policies[index != NULL ? index[i] : i].sel;
	c = spd_classify_build(sels, n);
	free(sels);
	return c;
}

/* Inbound SAs whose list is too long to scan get a classifier of it. */
static int build_inbound_classify(struct spd_table *spd, uint32_t nb_long)
{
	spd->inbound_classify = calloc(nb_long + 1, sizeof(*spd->inbound_classify));
	if (spd->inbound_classify == NULL)
		return -1;
	for (uint32_t slot = 0; slot < spd->nb_in && spd->nb_inbound_classify < nb_long; slot++) {
		struct spd_inbound *in = &spd->in[slot];
		struct spd_classify *c;

		if (!in->checked || in->count <= SPD_INBOUND_SCAN_MAX)
			continue;
		c = classify_of(spd, spd->index + in->first, in->count);
		if (c == NULL)
			return -1;
		spd->inbound_classify[spd->nb_inbound_classify++] = c;
		in->classify = spd->nb_inbound_classify;
	}
	return 0;
}

/* For every inbound SA of a tunnel with protect policies, the list of those
 * its decrypted packets must match. */
static int build_inbound(struct spd_table *spd, const struct ranked *rk, const Esgw__DpConfig *cfg,
			 char *err, size_t errlen)
{
	size_t cap = 0, used = 0;
	uint32_t nb_long = 0;

	for (size_t ti = 0; ti < cfg->n_tunnels; ti++) {
		const Esgw__DpTunnel *tc = cfg->tunnels[ti];
		int has_protect = 0;

		for (uint32_t k = 0; k < spd->nb_policies; k++)
			has_protect |= rk[k].policy.action == SPD_PROTECT &&
				       strcmp(rk[k].config->tunnel, tc->name) == 0;
		if (!has_protect)
			continue;
		for (size_t s = 0; s < tc->n_sa_in; s++) {
			const Esgw__DpSa *sa = router_sa_by_id(cfg, tc->sa_in[s]);
			struct spd_inbound *in;

			if (sa == NULL || sa->slot >= spd->nb_in)
				continue; /* add_tunnels refused this configuration already */
			in = &spd->in[sa->slot];
			in->checked = 1;
			in->first = (uint32_t)used;
			for (uint32_t k = 0; k < spd->nb_policies; k++) {
				if (rk[k].policy.action != SPD_PROTECT ||
				    strcmp(rk[k].config->tunnel, tc->name) != 0 ||
				    !lists_sa(rk[k].config, sa->id))
					continue;
				if (used == cap) {
					uint32_t *grown;

					cap = cap ? 2 * cap : 16;
					grown = realloc(spd->index, cap * sizeof(*grown));
					if (grown == NULL)
						FAIL("out of memory");
					spd->index = grown;
				}
				spd->index[used++] = k;
			}
			in->count = (uint32_t)used - in->first;
			nb_long += in->count > SPD_INBOUND_SCAN_MAX;
		}
	}
	if (nb_long != 0 && build_inbound_classify(spd, nb_long) < 0)
		FAIL("out of memory");
	return 0;
fail:
	return -1;
}

int spd_build(struct router_tables *t, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	struct ranked *rk = NULL;
	struct spd_table *spd;

	t->spd = NULL;
	if (cfg->n_policies == 0)
		return 0;
	spd = calloc(1, sizeof(*spd));
	rk = calloc(cfg->n_policies, sizeof(*rk));
	if (spd == NULL || rk == NULL)
		FAIL("out of memory");
	t->spd = spd; /* freed with the tables on failure */
	spd->nb_in = t->max_sas;
	spd->in = esgw_slot_table_alloc(spd->nb_in, sizeof(*spd->in));
	if (spd->in == NULL)
		FAIL("out of memory");
	spd->nb_policies = (uint32_t)cfg->n_policies;
	for (size_t i = 0; i < cfg->n_policies; i++) {
		rk[i].position = (uint32_t)i;
		rk[i].config = cfg->policies[i];
		if (policy_from(&rk[i], t, cfg, err, errlen) < 0)
			goto fail;
	}
	qsort(rk, cfg->n_policies, sizeof(*rk), ranked_cmp);
	spd->policies = calloc(cfg->n_policies, sizeof(*spd->policies));
	spd->names = calloc(cfg->n_policies, sizeof(*spd->names));
	if (spd->policies == NULL || spd->names == NULL)
		FAIL("out of memory");
	for (size_t i = 0; i < cfg->n_policies; i++) {
		spd->policies[i] = rk[i].policy;
		snprintf(spd->names[i], sizeof(spd->names[i]), "%s", rk[i].config->name);
		if (rk[i].policy.action == SPD_PROTECT && !rk[i].policy.usable)
			ESGW_WARN("policy %s: SA %u or tunnel %s not installed: its traffic is "
				  "dropped",
				  rk[i].config->name, rk[i].config->sa_out, rk[i].config->tunnel);
	}
	spd->classify = classify_of(spd, NULL, spd->nb_policies);
	if (spd->classify == NULL)
		FAIL("out of memory");
	if (build_inbound(spd, rk, cfg, err, errlen) < 0)
		goto fail;
	free(rk);
	return 0;
fail:
	free(rk);
	return -1;
}

/* The flow of m; -1 with m dropped if it cannot be classified, so that
 * possibly protected traffic fails closed. */
static int packet_flow(struct router *r, struct rte_mbuf *m, struct esgw_flow *flow)
{
	if (esgw_flow_from_ipv4(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m),
				flow) < 0) {
		router_drop(r, m, ESGW_DROP_MALFORMED);
		return -1;
	}
	return 0;
}

int spd_output(struct router *r, struct rte_mbuf *m)
{
	struct spd_table *spd = r->tables->spd;
	struct esgw_flow flow;
	struct spd_policy *p;
	int32_t first;

	if (spd == NULL)
		return 0;
	if (packet_flow(r, m, &flow) < 0)
		return 1;
	first = spd_classify_first(spd->classify, &flow);
	if (first < 0)
		return 0;
	p = &spd->policies[first];
	switch (p->action) {
	case SPD_BYPASS:
		return 0;
	case SPD_DISCARD:
		router_drop(r, m, ESGW_DROP_POLICY_DISCARD);
		return 1;
	default:
		if (!p->usable) {
			p->no_sa++; /* ctld asks an IKE daemon for the SA (acquire) */
			router_drop(r, m, ESGW_DROP_POLICY_NO_SA);
		} else {
			dispatch_encrypt(r, m, &r->tables->tunnels[p->tunnel], p->sa_slot,
					 p->worker);
		}
		return 1;
	}
}

int spd_inbound_check(struct router *r, struct rte_mbuf *m)
{
	const struct spd_table *spd = r->tables->spd;
	uint32_t slot = esgw_meta(m)->sa_slot;
	const struct spd_inbound *in;
	struct esgw_flow flow;

	if (spd == NULL || slot >= spd->nb_in || !spd->in[slot].checked)
		return 0;
	in = &spd->in[slot];
	/* Not IPv4 or truncated: no IPv4 selector can vouch for it. */
	if (esgw_flow_from_ipv4(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m),
				&flow) == 0) {
		if (in->classify != 0 &&
		    spd_classify_first_reverse(spd->inbound_classify[in->classify - 1], &flow) >= 0)
			return 0;
		for (uint32_t k = in->first; in->classify == 0 && k < in->first + in->count; k++)
			if (esgw_selector_match_reverse(&spd->policies[spd->index[k]].sel, &flow))
				return 0;
	}
	router_drop(r, m, ESGW_DROP_POLICY_MISMATCH);
	return -1;
}

int spd_inbound_checked(const struct router_tables *t, uint32_t slot)
{
	return t->spd != NULL && slot < t->spd->nb_in && t->spd->in[slot].checked;
}

int spd_cleartext_check(struct router *r, struct rte_mbuf *m)
{
	const struct spd_table *spd = r->tables->spd;
	const struct spd_policy *p;
	struct esgw_flow flow;
	int32_t first;

	if (spd == NULL)
		return 0;
	if (packet_flow(r, m, &flow) < 0)
		return -1;
	/* The inbound half of each policy, in the same order as outbound. */
	first = spd_classify_first_reverse(spd->classify, &flow);
	if (first < 0)
		return 0;
	p = &spd->policies[first];
	if (p->action == SPD_BYPASS)
		return 0;
	router_drop(r, m,
		    p->action == SPD_DISCARD ? ESGW_DROP_POLICY_DISCARD : ESGW_DROP_POLICY_CLEARTEXT);
	return -1;
}
