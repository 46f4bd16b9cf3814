/* SPDX-License-Identifier: BSD-3-Clause */
/* esgw-ctld's policies (SPD entries): `policy add` (which replaces a policy
 * of the same name) and `policy del`, kept in the configuration in
 * evaluation order (priority, lower first; ties in the order they were
 * added), so that show and the push to the router borrow the list as is. */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "log.h"
#include "validate.h"

/* Canonical IPv4 prefix with host bits cleared: "192.168.1.7/24" ->
 * "192.168.1.0/24". */
static void canonical_selector_prefix(char **field)
{
	char buf[ESGW_ADDR_STRLEN];
	struct esgw_addr a;

	if ((*field)[0] == '\0' || esgw_addr_parse(*field, &a) < 0 || a.family != 4)
		return;
	esgw_addr_clear_host(&a);
	str_set(field, esgw_addr_format(&a, 1, buf));
}

static void policy_remove(const char *name)
{
	for (size_t i = 0; i < ctld.config->n_policies; i++) {
		if (strcmp(ctld.config->policies[i]->name, name) == 0) {
			esgw__policy__free_unpacked(ctld.config->policies[i], NULL);
			array_remove(&ctld.config->policies, &ctld.config->n_policies, i);
			return;
		}
	}
}

/* Behind every policy of the same or a lower priority value. */
static void policy_insert(Esgw__Policy *p)
{
	size_t at = ctld.config->n_policies;

	array_append(&ctld.config->policies, &ctld.config->n_policies, p);
	while (at > 0 && ctld.config->policies[at - 1]->priority > p->priority) {
		ctld.config->policies[at] = ctld.config->policies[at - 1];
		at--;
	}
	ctld.config->policies[at] = p;
}

Esgw__Status policy_add_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const Esgw__Policy *in = req->policy_add;
	Esgw__Policy *copy;

	(void)resp;
	if (esgw_check_policy(in, err, errlen) < 0)
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	/* The SA may come later (an IKE daemon installs policies first): until
	 * then the router drops the policy's traffic as policy_no_sa. */
	if (in->action == ESGW__POLICY__ACTION__ACTION_PROTECT && in->tunnel[0] &&
	    state_tunnel(in->tunnel) == NULL) {
		snprintf(err, errlen, "tunnel %.40s does not exist", in->tunnel);
		return ESGW__STATUS__STATUS_NOT_FOUND;
	}
	copy = msg_clone(in);
	canonical_selector_prefix(&copy->src);
	canonical_selector_prefix(&copy->dst);
	if (copy->sport_lo == 0 && copy->sport_hi == 65535)
		copy->sport_hi = 0; /* one spelling of "any" */
	if (copy->dport_lo == 0 && copy->dport_hi == 65535)
		copy->dport_hi = 0;
	policy_remove(copy->name);
	policy_insert(copy);
	ESGW_INFO("policy %s added (priority %u)", copy->name, copy->priority);
	return ESGW__STATUS__STATUS_OK;
}

Esgw__Status policy_del_handle(const Esgw__Request *req, Esgw__Response *resp, char *err,
			       size_t errlen)
{
	const char *name = req->policy_del->name;

	(void)resp;
	for (size_t i = 0; i < ctld.config->n_policies; i++) {
		if (strcmp(ctld.config->policies[i]->name, name) == 0) {
			policy_remove(name);
			ESGW_INFO("policy %s deleted", name);
			return ESGW__STATUS__STATUS_OK;
		}
	}
	snprintf(err, errlen, "policy %.40s does not exist", name);
	return ESGW__STATUS__STATUS_NOT_FOUND;
}

Esgw__Policy *policy_of_tunnel(const char *tunnel)
{
	for (size_t i = 0; i < ctld.config->n_policies; i++)
		if (strcmp(ctld.config->policies[i]->tunnel, tunnel) == 0)
			return ctld.config->policies[i];
	return NULL;
}

Esgw__Tunnel *policy_tunnel_out(uint32_t sa_id)
{
	for (size_t i = 0; i < ctld.config->n_policies; i++) {
		const Esgw__Policy *p = ctld.config->policies[i];

		if (p->action == ESGW__POLICY__ACTION__ACTION_PROTECT && p->sa_out == sa_id)
			return state_tunnel(p->tunnel);
	}
	return NULL;
}
