/* SPDX-License-Identifier: BSD-3-Clause */
/* esgwctl's output of show replies: aligned tables for people, one JSON
 * document with stable key names for programs. */
#include "esgwctl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drops.h"
#include "json.h"
#include "validate.h"

/* ---------------------------------------------------------------- tables */

#define TABLE_MAX_COLS 12

struct table {
	int ncols;
	const char *head[TABLE_MAX_COLS];
	char *(*rows)[TABLE_MAX_COLS];
	char **notes; /* printed indented under the row; may be NULL */
	size_t nrows;
};

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static char *dash(const char *s)
{
	return fmt("%s", s && s[0] ? s : "-");
}

/* Append a row of t->ncols cells (strings from fmt(), owned by the table). */
static void table_row(struct table *t, char *note, ...)
{
	va_list ap;

	t->rows = realloc(t->rows, (t->nrows + 1) * sizeof(*t->rows));
	t->notes = realloc(t->notes, (t->nrows + 1) * sizeof(*t->notes));
	if (t->rows == NULL || t->notes == NULL)
		abort();
	va_start(ap, note);
	for (int c = 0; c < t->ncols; c++)
		t->rows[t->nrows][c] = va_arg(ap, char *);
	va_end(ap);
	t->notes[t->nrows++] = note;
}

static void table_print(struct table *t)
{
	size_t width[TABLE_MAX_COLS];

	for (int c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++)
			if (strlen(t->rows[r][c]) > width[c])
				width[c] = strlen(t->rows[r][c]);
	}
	for (int c = 0; c < t->ncols; c++)
		printf("%-*s%s", c + 1 < t->ncols ? (int)width[c] : 0, t->head[c],
		       c + 1 < t->ncols ? "  " : "\n");
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			printf("%-*s%s", c + 1 < t->ncols ? (int)width[c] : 0, t->rows[r][c],
			       c + 1 < t->ncols ? "  " : "\n");
			free(t->rows[r][c]);
		}
		if (t->notes[r] != NULL) {
			printf("    %s\n", t->notes[r]);
			free(t->notes[r]);
		}
	}
	free(t->rows);
	free(t->notes);
}

/* "replay 3, auth_failed 1" for the non-zero counters, or NULL. */
static char *nonzero_counters(Esgw__Counter **c, size_t n, const char *label)
{
	char *s = NULL;

	for (size_t i = 0; i < n; i++) {
		char *next;

		if (c[i]->value == 0)
			continue;
		next = fmt("%s%s%s %" PRIu64, s ? s : label, s ? ", " : "", c[i]->name,
			   c[i]->value);
		free(s);
		s = next;
	}
	return s;
}

static char *id_list(const uint32_t *ids, size_t n)
{
	char *s = fmt("%s", n ? "" : "-");

	for (size_t i = 0; i < n; i++) {
		char *next = fmt("%s%s%u", s, i ? "," : "", ids[i]);

		free(s);
		s = next;
	}
	return s;
}

/* The direction of every SA of a reply from its tunnels, sorted by SA id:
 * one pass over the tunnels instead of one per SA (20,000 tunnels). */
struct sa_dir {
	uint32_t id;
	uint8_t bits; /* 1 out, 2 in */
};

static int sa_dir_cmp(const void *a, const void *b)
{
	const struct sa_dir *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 : (int)x->bits - (int)y->bits;
}

static const char *sa_direction(uint32_t id, const Esgw__ShowReply *reply)
{
	static const Esgw__ShowReply *built;
	static struct sa_dir *dirs;
	static size_t n;
	struct sa_dir key = {id, 0};
	uint8_t bits = 0;
	size_t lo, hi;

	if (built != reply) {
		free(dirs);
		n = 0;
		for (size_t i = 0; i < reply->n_tunnels; i++)
			n += 1 + reply->tunnels[i]->n_sa_in;
		dirs = calloc(n + 1, sizeof(*dirs));
		if (dirs == NULL)
			die(1, "out of memory");
		n = 0;
		for (size_t i = 0; i < reply->n_tunnels; i++) {
			const Esgw__Tunnel *t = reply->tunnels[i];

			dirs[n++] = (struct sa_dir){t->sa_out, 1};
			for (size_t j = 0; j < t->n_sa_in; j++)
				dirs[n++] = (struct sa_dir){t->sa_in[j], 2};
		}
		qsort(dirs, n, sizeof(*dirs), sa_dir_cmp);
		built = reply;
	}
	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (sa_dir_cmp(&dirs[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && dirs[lo].id == id; lo++)
		bits |= dirs[lo].bits;
	return bits == 3 ? "in/out" : bits == 1 ? "out" : bits == 2 ? "in" : "none";
}

/* {"bytes":N,"packets":N,"seconds":N}, 0 meaning no limit. */
static void json_lifetime(struct json *j, const char *key, const Esgw__Lifetime *l)
{
	json_key(j, key);
	json_object_begin(j);
	json_kv_u64(j, "bytes", l ? l->bytes : 0);
	json_kv_u64(j, "packets", l ? l->packets : 0);
	json_kv_u64(j, "seconds", l ? l->seconds : 0);
	json_object_end(j);
}

static void print_lifetime(const char *kind, const Esgw__Lifetime *l)
{
	if (l == NULL)
		return;
	if (l->bytes)
		printf(" lifetime-%s-bytes %" PRIu64, kind, l->bytes);
	if (l->packets)
		printf(" lifetime-%s-packets %" PRIu64, kind, l->packets);
	if (l->seconds)
		printf(" lifetime-%s-seconds %" PRIu64, kind, l->seconds);
}

static const char *alg_name(Esgw__Algorithm alg)
{
	const char *n = esgw_algorithm_name(alg);

	return n ? n : "unknown";
}

/* ---------------------------------------------------------------- JSON */

static void json_counters(struct json *j, const char *key, Esgw__Counter **c, size_t n)
{
	json_key(j, key);
	json_object_begin(j);
	for (size_t i = 0; i < n; i++)
		json_kv_u64(j, c[i]->name, c[i]->value);
	json_object_end(j);
}

static void json_ids(struct json *j, const char *key, const uint32_t *ids, size_t n)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		json_u64(j, ids[i]);
	json_array_end(j);
}

static void json_route(struct json *j, const Esgw__Route *r)
{
	json_object_begin(j);
	json_kv_string(j, "prefix", r->prefix);
	json_kv_string(j, "via", r->via);
	json_kv_string(j, "interface", r->interface);
	json_kv_string(j, "tunnel", r->tunnel);
	json_object_end(j);
}

static void json_tunnel(struct json *j, const Esgw__Tunnel *t)
{
	json_object_begin(j);
	json_kv_string(j, "name", t->name);
	json_kv_string(j, "local", t->local);
	json_kv_string(j, "remote", t->remote);
	json_kv_u64(j, "sa_out", t->sa_out);
	json_ids(j, "sa_in", t->sa_in, t->n_sa_in);
	if (t->owner != NULL && t->owner[0] != '\0') /* set by an IKE daemon only */
		json_kv_string(j, "owner", t->owner);
	json_object_end(j);
}

static void json_addresses(struct json *j, const Esgw__Interface *in)
{
	json_key(j, "addresses");
	json_array_begin(j);
	for (size_t i = 0; i < in->n_addresses; i++)
		json_string(j, in->addresses[i]);
	json_array_end(j);
}

/* ---------------------------------------------------------------- items */

/* A show document is {"<key>":[...]} in JSON, one table for people. */
static void doc_list_begin(struct json *j, const char *key)
{
	if (j == NULL)
		return;
	json_object_begin(j);
	json_key(j, key);
	json_array_begin(j);
}

static void doc_list_end(struct json *j, struct table *t)
{
	if (j == NULL) {
		table_print(t);
		return;
	}
	json_array_end(j);
	json_object_end(j);
}

static void print_interfaces(const Esgw__ShowReply *reply, struct json *j)
{
	struct table t = {.ncols = 12,
			  .head = {"NAME", "DEVARGS", "PORT", "MAC", "MTU", "ADDRESSES", "RX-PKTS",
				   "TX-PKTS", "RX-BYTES", "TX-BYTES", "RX-MISSED", "TX-ERRORS"}};

	doc_list_begin(j, "interfaces");
	for (size_t i = 0; i < reply->n_interfaces; i++) {
		const Esgw__InterfaceInfo *info = reply->interfaces[i];
		const Esgw__Interface *in = info->config;
		char *addrs = fmt("%s", in->n_addresses ? "" : "-");

		if (j) {
			json_object_begin(j);
			json_kv_string(j, "name", in->name);
			json_kv_string(j, "devargs", in->devargs);
			json_kv_i64(j, "port_id", info->port_id);
			json_kv_string(j, "mac", info->mac);
			json_addresses(j, in);
			json_kv_u64(j, "mtu", in->mtu ? in->mtu : 1500);
			json_kv_u64(j, "rx_packets", info->rx_packets);
			json_kv_u64(j, "tx_packets", info->tx_packets);
			json_kv_u64(j, "rx_bytes", info->rx_bytes);
			json_kv_u64(j, "tx_bytes", info->tx_bytes);
			json_kv_u64(j, "rx_missed", info->rx_missed);
			json_kv_u64(j, "tx_errors", info->tx_errors);
			json_object_end(j);
			free(addrs);
			continue;
		}
		for (size_t a = 0; a < in->n_addresses; a++) {
			char *next = fmt("%s%s%s", addrs, a ? "," : "", in->addresses[a]);

			free(addrs);
			addrs = next;
		}
		table_row(&t, NULL, fmt("%s", in->name), fmt("%s", in->devargs),
			  info->port_id >= 0 ? fmt("%d", info->port_id) : fmt("down"),
			  dash(info->mac), fmt("%u", in->mtu ? in->mtu : 1500), addrs,
			  fmt("%" PRIu64, info->rx_packets), fmt("%" PRIu64, info->tx_packets),
			  fmt("%" PRIu64, info->rx_bytes), fmt("%" PRIu64, info->tx_bytes),
			  fmt("%" PRIu64, info->rx_missed), fmt("%" PRIu64, info->tx_errors));
	}
	doc_list_end(j, &t);
}

static void print_routes(const Esgw__ShowReply *reply, struct json *j)
{
	struct table t = {.ncols = 4, .head = {"PREFIX", "VIA", "DEV", "TUNNEL"}};

	doc_list_begin(j, "routes");
	for (size_t i = 0; i < reply->n_routes; i++) {
		const Esgw__Route *r = reply->routes[i];

		if (j)
			json_route(j, r);
		else
			table_row(&t, NULL, fmt("%s", r->prefix), dash(r->via), dash(r->interface),
				  dash(r->tunnel));
	}
	doc_list_end(j, &t);
}

static void print_tunnels(const Esgw__ShowReply *reply, struct json *j)
{
	struct table t = {.ncols = 5, .head = {"NAME", "LOCAL", "REMOTE", "SA-OUT", "SA-IN"}};

	doc_list_begin(j, "tunnels");
	for (size_t i = 0; i < reply->n_tunnels; i++) {
		const Esgw__Tunnel *tn = reply->tunnels[i];

		if (j)
			json_tunnel(j, tn);
		else
			table_row(&t, NULL, fmt("%s", tn->name), fmt("%s", tn->local),
				  fmt("%s", tn->remote), fmt("%u", tn->sa_out),
				  id_list(tn->sa_in, tn->n_sa_in));
	}
	doc_list_end(j, &t);
}

static void print_sas(const Esgw__ShowReply *reply, struct json *j)
{
	struct table t = {.ncols = 11,
			  .head = {"ID", "SPI", "ALGORITHM", "DIR", "TUNNEL", "WORKER", "SLOT",
				   "PACKETS", "BYTES", "SEQ-OUT", "OWNER"}};

	doc_list_begin(j, "sas");
	for (size_t i = 0; i < reply->n_sas; i++) {
		const Esgw__SaInfo *info = reply->sas[i];
		const Esgw__Sa *sa = info->config;

		if (j) {
			json_object_begin(j);
			json_kv_u64(j, "id", sa->id);
			json_kv_u64(j, "spi", sa->spi);
			json_kv_string(j, "direction", sa_direction(sa->id, reply));
			json_kv_string(j, "algorithm", alg_name(sa->algorithm));
			json_kv_string(j, "tunnel", info->tunnel);
			json_kv_i64(j, "worker", sa->worker);
			json_kv_u64(j, "slot", sa->slot);
			json_kv_u64(j, "replay_window", sa->replay_window);
			json_kv_u64(j, "packets", info->packets);
			json_kv_u64(j, "bytes", info->bytes);
			json_kv_u64(j, "seq_out", info->seq_out);
			json_kv_u64(j, "seq_out_max", info->seq_out_max);
			json_kv_u64(j, "seq_out_floor", sa->seq_out_floor);
			json_kv_u64(j, "replay_top", info->replay_top);
			json_kv_bool(j, "esn", sa->esn);
			json_lifetime(j, "lifetime_soft", sa->lifetime_soft);
			json_lifetime(j, "lifetime_hard", sa->lifetime_hard);
			json_kv_bool(j, "soft_expired", info->soft_expired);
			json_kv_bool(j, "hard_expired", info->hard_expired);
			json_kv_bool(j, "seq_exhausted", info->seq_exhausted);
			json_counters(j, "drops", info->drops, info->n_drops);
			json_kv_string(j, "owner", sa->owner ? sa->owner : "");
			json_kv_double(j, "last_used", info->last_used);
			json_kv_bool(j, "udp_encap", sa->udp_encap);
			json_kv_u64(j, "udp_sport", sa->udp_sport);
			json_kv_u64(j, "udp_dport", sa->udp_dport);
			json_object_end(j);
			continue;
		}
		table_row(&t, nonzero_counters(info->drops, info->n_drops, "drops: "),
			  fmt("%u", sa->id), fmt("0x%08x (%u)", sa->spi, sa->spi),
			  fmt("%s%s%s", alg_name(sa->algorithm), sa->esn ? " esn" : "",
			      info->hard_expired || info->seq_exhausted ? " EXPIRED"
			      : info->soft_expired                      ? " soft-expired"
									: ""),
			  fmt("%s", sa_direction(sa->id, reply)), dash(info->tunnel),
			  fmt("%d", sa->worker), fmt("%u", sa->slot),
			  fmt("%" PRIu64, info->packets), fmt("%" PRIu64, info->bytes),
			  fmt("%" PRIu64, info->seq_out), dash(sa->owner));
	}
	doc_list_end(j, &t);
}

static void print_workers(const Esgw__ShowReply *reply, struct json *j)
{
	struct table t = {
		.ncols = 7,
		.head = {"WORKER", "PID", "STATE", "SAS", "ENCRYPTED", "DECRYPTED", "BYTES"}};

	doc_list_begin(j, "workers");
	for (size_t i = 0; i < reply->n_workers; i++) {
		const Esgw__WorkerInfo *w = reply->workers[i];

		if (j) {
			json_object_begin(j);
			json_kv_u64(j, "id", w->id);
			json_kv_i64(j, "pid", w->pid);
			json_kv_string(j, "state", w->state);
			json_ids(j, "sas", w->sas, w->n_sas);
			json_kv_u64(j, "packets_encrypted", w->packets_encrypted);
			json_kv_u64(j, "packets_decrypted", w->packets_decrypted);
			json_kv_u64(j, "bytes", w->bytes);
			json_counters(j, "drops", w->drops, w->n_drops);
			json_object_end(j);
			continue;
		}
		table_row(&t, nonzero_counters(w->drops, w->n_drops, "drops: "), fmt("%u", w->id),
			  w->pid > 0 ? fmt("%d", w->pid) : fmt("-"), dash(w->state),
			  id_list(w->sas, w->n_sas), fmt("%" PRIu64, w->packets_encrypted),
			  fmt("%" PRIu64, w->packets_decrypted), fmt("%" PRIu64, w->bytes));
	}
	doc_list_end(j, &t);
}

/* Every process's drops, reason by reason. */
static void drop_totals(const Esgw__ShowReply *reply, uint64_t totals[ESGW_DROP_MAX])
{
	for (size_t i = 0; i < reply->n_processes; i++) {
		const Esgw__ProcessInfo *p = reply->processes[i];

		for (size_t k = 0; k < p->n_counters; k++)
			for (int d = 0; d < ESGW_DROP_MAX; d++)
				if (strcmp(p->counters[k]->name, esgw_drop_name(d)) == 0)
					totals[d] += p->counters[k]->value;
	}
}

static void json_stats(const Esgw__ShowReply *reply, const uint64_t totals[ESGW_DROP_MAX],
		       struct json *j)
{
	doc_list_begin(j, "processes");
	for (size_t i = 0; i < reply->n_processes; i++) {
		const Esgw__ProcessInfo *p = reply->processes[i];

		json_object_begin(j);
		json_kv_string(j, "role", p->role);
		json_kv_i64(j, "worker", p->worker);
		json_kv_i64(j, "pid", p->pid);
		json_kv_string(j, "state", p->state);
		json_kv_u64(j, "restarts", p->restarts);
		json_kv_double(j, "backoff", p->backoff);
		json_counters(j, "counters", p->counters, p->n_counters);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "drops");
	json_object_begin(j);
	for (int d = 0; d < ESGW_DROP_MAX; d++)
		json_kv_u64(j, esgw_drop_name(d), totals[d]);
	json_object_end(j);
	json_key(j, "mbuf_pool");
	json_object_begin(j);
	json_kv_u64(j, "size", reply->mbuf_pool ? reply->mbuf_pool->size : 0);
	json_kv_u64(j, "in_use", reply->mbuf_pool ? reply->mbuf_pool->in_use : 0);
	json_object_end(j);
	json_object_end(j);
}

static void print_stats(const Esgw__ShowReply *reply, struct json *j)
{
	struct table t = {.ncols = 4, .head = {"PROCESS", "PID", "STATE", "RESTARTS"}};
	uint64_t totals[ESGW_DROP_MAX] = {0};
	char *total_line = NULL;

	drop_totals(reply, totals);
	if (j) {
		json_stats(reply, totals, j);
		return;
	}
	for (size_t i = 0; i < reply->n_processes; i++) {
		const Esgw__ProcessInfo *p = reply->processes[i];

		table_row(&t, nonzero_counters(p->counters, p->n_counters, ""),
			  p->worker >= 0 ? fmt("%s-%d", p->role, p->worker) : fmt("%s", p->role),
			  p->pid > 0 ? fmt("%d", p->pid) : fmt("-"), dash(p->state),
			  fmt("%u", p->restarts));
	}
	table_print(&t);
	if (reply->mbuf_pool != NULL && reply->mbuf_pool->size != 0)
		printf("mbuf pool: %" PRIu64 " of %" PRIu64 " in use\n", reply->mbuf_pool->in_use,
		       reply->mbuf_pool->size);
	for (int d = 0; d < ESGW_DROP_MAX; d++) {
		char *next;

		if (totals[d] == 0)
			continue;
		next = fmt("%s%s%s %" PRIu64, total_line ? total_line : "", total_line ? ", " : "",
			   esgw_drop_name(d), totals[d]);
		free(total_line);
		total_line = next;
	}
	printf("drops: %s\n", total_line ? total_line : "none");
	free(total_line);
}

/* Human form: the commands that rebuild this configuration (keys withheld). */
static void print_config_commands(const Esgw__Config *c)
{
	printf("# %u crypto worker(s)\n", c->workers);
	for (size_t i = 0; i < c->n_interfaces; i++) {
		const Esgw__Interface *in = c->interfaces[i];

		printf("interface add %s %s mtu %u\n", in->name, in->devargs,
		       in->mtu ? in->mtu : 1500);
		for (size_t a = 0; a < in->n_addresses; a++)
			printf("interface address add %s %s\n", in->name, in->addresses[a]);
	}
	for (size_t i = 0; i < c->n_sas; i++) {
		const Esgw__Sa *sa = c->sas[i];

		printf("sa add %u spi %u alg %s%s%s%s replay-window %u%s worker %d", sa->id,
		       sa->spi, alg_name(sa->algorithm),
		       sa->crypto_key.len ? " crypto-key <hidden>" : "",
		       sa->integ_key.len ? " integ-key <hidden>" : "",
		       sa->salt.len ? " salt <hidden>" : "", sa->replay_window,
		       sa->esn ? " esn on" : "", sa->worker);
		print_lifetime("soft", sa->lifetime_soft);
		print_lifetime("hard", sa->lifetime_hard);
		if (sa->udp_encap)
			printf(" encap udp sport %u dport %u", sa->udp_sport, sa->udp_dport);
		printf("  # slot %u\n", sa->slot);
	}
	for (size_t i = 0; i < c->n_tunnels; i++) {
		const Esgw__Tunnel *t = c->tunnels[i];
		char *in = id_list(t->sa_in, t->n_sa_in);

		printf("tunnel add %s local %s remote %s sa-out %u sa-in %s\n", t->name, t->local,
		       t->remote, t->sa_out, in);
		free(in);
	}
	for (size_t i = 0; i < c->n_routes; i++) {
		const Esgw__Route *r = c->routes[i];

		if (r->tunnel[0])
			printf("route add %s tunnel %s\n", r->prefix, r->tunnel);
		else if (r->interface[0])
			printf("route add %s via %s dev %s\n", r->prefix, r->via, r->interface);
		else
			printf("route add %s via %s\n", r->prefix, r->via);
	}
	print_policy_commands(c);
	print_neighbor_commands(c);
}

/* An interface and an SA of `show config --json` (no keys). */
static void json_config_interface(struct json *j, const Esgw__Interface *in)
{
	json_object_begin(j);
	json_kv_string(j, "name", in->name);
	json_kv_string(j, "devargs", in->devargs);
	json_addresses(j, in);
	json_kv_u64(j, "mtu", in->mtu);
	json_object_end(j);
}

static void json_config_sa(struct json *j, const Esgw__Sa *sa)
{
	json_object_begin(j);
	json_kv_u64(j, "id", sa->id);
	json_kv_u64(j, "spi", sa->spi);
	json_kv_string(j, "algorithm", alg_name(sa->algorithm));
	json_kv_u64(j, "replay_window", sa->replay_window);
	json_kv_i64(j, "worker", sa->worker);
	json_kv_u64(j, "slot", sa->slot);
	json_kv_bool(j, "esn", sa->esn);
	json_lifetime(j, "lifetime_soft", sa->lifetime_soft);
	json_lifetime(j, "lifetime_hard", sa->lifetime_hard);
	json_kv_bool(j, "udp_encap", sa->udp_encap);
	json_kv_u64(j, "udp_sport", sa->udp_sport);
	json_kv_u64(j, "udp_dport", sa->udp_dport);
	json_object_end(j);
}

static void print_config(const Esgw__ShowReply *reply, struct json *j)
{
	const Esgw__Config *c = reply->config;
	static Esgw__Config empty = ESGW__CONFIG__INIT;

	if (c == NULL)
		c = &empty;
	if (!j) {
		print_config_commands(c);
		return;
	}
	json_object_begin(j);
	json_key(j, "config");
	json_object_begin(j);
	json_kv_u64(j, "workers", c->workers);
	json_key(j, "interfaces");
	json_array_begin(j);
	for (size_t i = 0; i < c->n_interfaces; i++)
		json_config_interface(j, c->interfaces[i]);
	json_array_end(j);
	json_key(j, "routes");
	json_array_begin(j);
	for (size_t i = 0; i < c->n_routes; i++)
		json_route(j, c->routes[i]);
	json_array_end(j);
	json_key(j, "sas");
	json_array_begin(j);
	for (size_t i = 0; i < c->n_sas; i++)
		json_config_sa(j, c->sas[i]);
	json_array_end(j);
	json_key(j, "tunnels");
	json_array_begin(j);
	for (size_t i = 0; i < c->n_tunnels; i++)
		json_tunnel(j, c->tunnels[i]);
	json_array_end(j);
	json_policies(j, c->policies, c->n_policies);
	json_static_neighbors(j, c);
	json_object_end(j);
	json_object_end(j);
}

void print_show(Esgw__ShowRequest__What what, const Esgw__ShowReply *reply, bool as_json)
{
	static const Esgw__ShowReply empty = ESGW__SHOW_REPLY__INIT;
	struct json doc, *j = NULL;

	if (reply == NULL)
		reply = &empty;
	if (as_json) {
		json_init(&doc, stdout);
		j = &doc;
	}
	switch (what) {
	case ESGW__SHOW_REQUEST__WHAT__WHAT_INTERFACES:
		print_interfaces(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_ROUTES:
		print_routes(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_SAS:
		print_sas(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_TUNNELS:
		print_tunnels(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_STATS:
		print_stats(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_WORKERS:
		print_workers(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_CONFIG:
		print_config(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_POLICIES:
		print_policies(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_NEIGHBORS:
		print_neighbors(reply, j);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_DATAPLANE:
		print_dataplane(reply, as_json); /* a whole document, newline included */
		return;
	default:
		break;
	}
	if (j)
		json_finish(j);
}
