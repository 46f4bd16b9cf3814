/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's policy commands: `policy add|del` into a Request, and the output
 * of `show policies` (a table, or JSON) and of policies in `show config`. */
#include "esgwctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "json.h"
#include "selector.h"
#include "validate.h"

static const char *word(int argc, char **argv, int *i, const char *what)
{
	if (*i >= argc)
		usage_error("policy: missing %s", what);
	return argv[(*i)++];
}

static uint32_t number(int argc, char **argv, int *i, const char *what, uint32_t max)
{
	const char *s = word(argc, argv, i, what);
	uint32_t v;

	if (esgw_parse_u32(s, max, &v) < 0)
		usage_error("%s '%s' is not a number 0..%u", what, s, max);
	return v;
}

static void ports(int argc, char **argv, int *i, const char *what, uint32_t *lo, uint32_t *hi)
{
	const char *s = word(argc, argv, i, what);
	uint16_t l, h;

	if (esgw_parse_port_range(s, &l, &h) < 0)
		usage_error("%s '%s' is not a port or a range LO-HI (0..65535)", what, s);
	*lo = l;
	*hi = h;
}

/* "20,40" -> ids */
static uint32_t *ids(const char *s, size_t *n)
{
	uint32_t *out = calloc(strlen(s) / 2 + 2, sizeof(*out));
	const char *p = s;

	if (out == NULL)
		usage_error("out of memory");
	*n = 0;
	for (;;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || v == 0 || v > UINT32_MAX || (*end != ',' && *end != '\0'))
			usage_error("sa-in: '%s' is not a list of SA ids ID[,ID...]", s);
		out[(*n)++] = (uint32_t)v;
		if (*end == '\0')
			return out;
		p = end + 1;
	}
}

static Esgw__Policy__Action action_parse(const char *s)
{
	if (strcmp(s, "protect") == 0)
		return ESGW__POLICY__ACTION__ACTION_PROTECT;
	if (strcmp(s, "bypass") == 0)
		return ESGW__POLICY__ACTION__ACTION_BYPASS;
	if (strcmp(s, "discard") == 0)
		return ESGW__POLICY__ACTION__ACTION_DISCARD;
	usage_error("policy add: action must be protect, bypass or discard, not '%s'", s);
}

static const char *action_name(Esgw__Policy__Action a)
{
	switch (a) {
	case ESGW__POLICY__ACTION__ACTION_PROTECT:
		return "protect";
	case ESGW__POLICY__ACTION__ACTION_BYPASS:
		return "bypass";
	case ESGW__POLICY__ACTION__ACTION_DISCARD:
		return "discard";
	default:
		return "unknown";
	}
}

static void policy_add_parse(int argc, char **argv, int i, Esgw__Request *req)
{
	Esgw__Policy *p = calloc(1, sizeof(*p));
	char err[200];

	if (p == NULL)
		usage_error("out of memory");
	esgw__policy__init(p);
	p->name = (char *)word(argc, argv, &i, "policy name");
	p->priority = 100;
	while (i < argc) {
		const char *kw = word(argc, argv, &i, "option");

		if (strcmp(kw, "src") == 0) {
			p->src = (char *)word(argc, argv, &i, "src PREFIX");
		} else if (strcmp(kw, "dst") == 0) {
			p->dst = (char *)word(argc, argv, &i, "dst PREFIX");
		} else if (strcmp(kw, "proto") == 0) {
			const char *s = word(argc, argv, &i, "proto");
			uint8_t proto;

			if (esgw_parse_protocol(s, &proto) < 0)
				usage_error("proto '%s' is not tcp, udp, icmp, sctp, any or 0..255",
					    s);
			p->protocol = proto;
		} else if (strcmp(kw, "sport") == 0) {
			ports(argc, argv, &i, "sport", &p->sport_lo, &p->sport_hi);
		} else if (strcmp(kw, "dport") == 0) {
			ports(argc, argv, &i, "dport", &p->dport_lo, &p->dport_hi);
		} else if (strcmp(kw, "action") == 0) {
			p->action =
				action_parse(word(argc, argv, &i, "protect, bypass or discard"));
		} else if (strcmp(kw, "tunnel") == 0) {
			p->tunnel = (char *)word(argc, argv, &i, "tunnel name");
		} else if (strcmp(kw, "sa-out") == 0) {
			p->sa_out = number(argc, argv, &i, "sa-out", UINT32_MAX);
		} else if (strcmp(kw, "sa-in") == 0) {
			p->sa_in = ids(word(argc, argv, &i, "sa-in ID[,ID...]"), &p->n_sa_in);
		} else if (strcmp(kw, "priority") == 0) {
			p->priority = number(argc, argv, &i, "priority", UINT32_MAX);
		} else {
			usage_error("policy add: unknown option '%s'", kw);
		}
	}
	if (p->action == ESGW__POLICY__ACTION__ACTION_UNSPECIFIED)
		usage_error("policy add: missing action protect|bypass|discard");
	if (esgw_check_policy(p, err, sizeof(err)) < 0)
		usage_error("%s", err);
	req->body_case = ESGW__REQUEST__BODY_POLICY_ADD;
	req->policy_add = p;
}

void policy_cmd_parse(int argc, char **argv, Esgw__Request *req)
{
	int i = 0;
	const char *verb = word(argc, argv, &i, "add or del");

	if (strcmp(verb, "add") == 0) {
		policy_add_parse(argc, argv, i, req);
	} else if (strcmp(verb, "del") == 0) {
		Esgw__NameRef *ref = calloc(1, sizeof(*ref));
		char err[160];

		if (ref == NULL)
			usage_error("out of memory");
		esgw__name_ref__init(ref);
		ref->name = (char *)word(argc, argv, &i, "policy name");
		if (esgw_check_name(ref->name, "policy name", err, sizeof(err)) < 0)
			usage_error("%s", err);
		if (i < argc)
			usage_error("policy del: unexpected '%s'", argv[i]);
		req->body_case = ESGW__REQUEST__BODY_POLICY_DEL;
		req->policy_del = ref;
	} else {
		usage_error("policy: unknown operation '%s' (add or del)", verb);
	}
}

/* "any", "80" or "1024-65535" */
static const char *range_text(uint32_t lo, uint32_t hi, char *buf, size_t len)
{
	if (lo == 0 && (hi == 0 || hi == 65535))
		return "any";
	if (lo == hi)
		snprintf(buf, len, "%u", lo);
	else
		snprintf(buf, len, "%u-%u", lo, hi);
	return buf;
}

static void json_policy(struct json *j, const Esgw__Policy *p)
{
	char proto[8];

	json_object_begin(j);
	json_kv_string(j, "name", p->name);
	json_kv_u64(j, "priority", p->priority);
	if (p->owner != NULL && p->owner[0] != '\0') /* set by an IKE daemon only */
		json_kv_string(j, "owner", p->owner);
	json_kv_string(j, "src", p->src[0] ? p->src : "0.0.0.0/0");
	json_kv_string(j, "dst", p->dst[0] ? p->dst : "0.0.0.0/0");
	json_kv_string(j, "protocol",
		       esgw_protocol_name((uint8_t)p->protocol, proto, sizeof(proto)));
	json_kv_u64(j, "sport_lo", p->sport_lo);
	json_kv_u64(j, "sport_hi", p->sport_lo == 0 && p->sport_hi == 0 ? 65535 : p->sport_hi);
	json_kv_u64(j, "dport_lo", p->dport_lo);
	json_kv_u64(j, "dport_hi", p->dport_lo == 0 && p->dport_hi == 0 ? 65535 : p->dport_hi);
	json_kv_string(j, "action", action_name(p->action));
	json_kv_string(j, "tunnel", p->tunnel);
	json_kv_u64(j, "sa_out", p->sa_out);
	json_key(j, "sa_in");
	json_array_begin(j);
	for (size_t k = 0; k < p->n_sa_in; k++)
		json_u64(j, p->sa_in[k]);
	json_array_end(j);
	json_object_end(j);
}

void json_policies(struct json *j, Esgw__Policy *const *policies, size_t n)
{
	json_key(j, "policies");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		json_policy(j, policies[i]);
	json_array_end(j);
}

/* One `policy add` line without the leading words: what rebuilds p. */
static void print_policy_words(const Esgw__Policy *p)
{
	char proto[8], range[16];

	printf("%s", p->name);
	if (p->src[0])
		printf(" src %s", p->src);
	if (p->dst[0])
		printf(" dst %s", p->dst);
	if (p->protocol)
		printf(" proto %s", esgw_protocol_name((uint8_t)p->protocol, proto, sizeof(proto)));
	if (strcmp(range_text(p->sport_lo, p->sport_hi, range, sizeof(range)), "any") != 0)
		printf(" sport %s", range);
	if (strcmp(range_text(p->dport_lo, p->dport_hi, range, sizeof(range)), "any") != 0)
		printf(" dport %s", range);
	printf(" action %s", action_name(p->action));
	if (p->action == ESGW__POLICY__ACTION__ACTION_PROTECT) {
		printf(" tunnel %s sa-out %u", p->tunnel, p->sa_out);
		for (size_t k = 0; k < p->n_sa_in; k++)
			printf("%s%u", k ? "," : " sa-in ", p->sa_in[k]);
	}
	printf(" priority %u\n", p->priority);
}

void print_policy_commands(const Esgw__Config *c)
{
	for (size_t i = 0; i < c->n_policies; i++) {
		printf("policy add ");
		print_policy_words(c->policies[i]);
	}
}

void print_policies(const Esgw__ShowReply *reply, struct json *j)
{
	char proto[8], sport[16], dport[16];

	if (j) {
		json_object_begin(j);
		json_policies(j, reply->policies, reply->n_policies);
		json_object_end(j);
		return;
	}
	printf("%-16s %8s %-18s %-18s %-5s %-11s %-11s %-8s %s\n", "NAME", "PRIORITY", "SRC", "DST",
	       "PROTO", "SPORT", "DPORT", "ACTION", "TUNNEL/SA");
	for (size_t i = 0; i < reply->n_policies; i++) {
		const Esgw__Policy *p = reply->policies[i];

		printf("%-16s %8u %-18s %-18s %-5s %-11s %-11s %-8s", p->name, p->priority,
		       p->src[0] ? p->src : "any", p->dst[0] ? p->dst : "any",
		       esgw_protocol_name((uint8_t)p->protocol, proto, sizeof(proto)),
		       range_text(p->sport_lo, p->sport_hi, sport, sizeof(sport)),
		       range_text(p->dport_lo, p->dport_hi, dport, sizeof(dport)),
		       action_name(p->action));
		if (p->action == ESGW__POLICY__ACTION__ACTION_PROTECT) {
			printf(" %s sa-out %u", p->tunnel, p->sa_out);
			for (size_t k = 0; k < p->n_sa_in; k++)
				printf("%s%u", k ? "," : " sa-in ", p->sa_in[k]);
		}
		printf("\n");
	}
}
