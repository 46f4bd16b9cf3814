/* SPDX-License-Identifier: BSD-3-Clause */
/* Answers to `show`: the configuration merged with what the dataplane
 * processes report. A process that does not answer shows its state and zero
 * counters; a show never fails because of one. */
#include "ctld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drops.h"
#include "validate.h"

/* Everything a reply allocates, freed by show_free(). */
static struct arena arena;
static Esgw__Config *stripped_config;
static Esgw__DpResponse *stats_cache[CTLD_MAX_PROCS];
static bool stats_asked[CTLD_MAX_PROCS];
static Esgw__DpResponse *neighbors_resp;

static void *alloc(size_t size)
{
	return arena_alloc(&arena, size);
}

/* DpStats of process i, asked once per show. */
static Esgw__DpStats *proc_stats(int i)
{
	if (!stats_asked[i]) {
		stats_asked[i] = true;
		stats_cache[i] = dp_stats(&ctld.procs[i]);
	}
	return stats_cache[i] ? stats_cache[i]->stats : NULL;
}

static int proc_index(const char *name)
{
	struct dp_proc *p = dp_proc_by_name(name);

	return p ? (int)(p - ctld.procs) : -1;
}

static int worker_proc_index(int worker)
{
	char name[16];

	snprintf(name, sizeof(name), "crypto-%d", worker);
	return proc_index(name);
}

static Esgw__Counter *counter_new(const char *name, uint64_t value)
{
	Esgw__Counter *c = alloc(sizeof(*c));

	esgw__counter__init(c);
	c->name = (char *)name;
	c->value = value;
	return c;
}

/* One counter per drop reason, from values[]. */
static Esgw__Counter **drop_counters(const uint64_t values[ESGW_DROP_MAX], size_t *n)
{
	Esgw__Counter **list = alloc(ESGW_DROP_MAX * sizeof(*list));

	for (int d = 0; d < ESGW_DROP_MAX; d++)
		list[d] = counter_new(esgw_drop_name(d), values[d]);
	*n = ESGW_DROP_MAX;
	return list;
}

static const Esgw__DpSaStats *sa_stats(const Esgw__Sa *sa)
{
	int i = worker_proc_index(sa->worker);

	return dp_stats_find_sa(i >= 0 ? proc_stats(i) : NULL, sa->id, sa->slot);
}

/* A worker counts a drop per process and per SA; if it fills only one of the
 * two, the larger value is the right total for the process. */
static void worker_drops(int worker, uint64_t drops[ESGW_DROP_MAX])
{
	int i = worker_proc_index(worker);
	Esgw__DpStats *st = i >= 0 ? proc_stats(i) : NULL;
	uint64_t from_sas[ESGW_DROP_MAX] = {0};

	memset(drops, 0, ESGW_DROP_MAX * sizeof(uint64_t));
	if (st == NULL)
		return;
	for (size_t k = 0; k < st->n_sas; k++)
		for (int d = 0; d < ESGW_DROP_MAX; d++)
			from_sas[d] += dp_stats_counter(st->sas[k]->drops, st->sas[k]->n_drops,
							esgw_drop_name(d));
	for (int d = 0; d < ESGW_DROP_MAX; d++) {
		drops[d] = dp_stats_counter(st->counters, st->n_counters, esgw_drop_name(d));
		if (from_sas[d] > drops[d])
			drops[d] = from_sas[d];
	}
}

static void show_interfaces(Esgw__ShowReply *reply)
{
	int rx = proc_index("rxtx");
	Esgw__DpStats *st = rx >= 0 ? proc_stats(rx) : NULL;
	char device[128];

	reply->n_interfaces = ctld.config->n_interfaces;
	reply->interfaces = alloc(reply->n_interfaces * sizeof(*reply->interfaces));
	for (size_t i = 0; i < ctld.config->n_interfaces; i++) {
		Esgw__InterfaceInfo *info = alloc(sizeof(*info));
		Esgw__Interface *in = ctld.config->interfaces[i];

		esgw__interface_info__init(info);
		info->config = in;
		info->port_id = -1;
		esgw_devargs_device(in->devargs, device, sizeof(device));
		for (size_t k = 0; st != NULL && k < st->n_ports; k++) {
			Esgw__DpPortStats *ps = st->ports[k];

			if (strcmp(ps->device, device) != 0)
				continue;
			info->port_id = (int32_t)ps->port_id;
			info->mac = ps->mac;
			info->rx_packets = ps->rx_packets;
			info->tx_packets = ps->tx_packets;
			info->rx_bytes = ps->rx_bytes;
			info->tx_bytes = ps->tx_bytes;
			info->rx_missed = ps->rx_missed;
			info->tx_errors = ps->tx_errors;
		}
		reply->interfaces[i] = info;
	}
}

/* The SA without its keys. */
static Esgw__Sa *sa_public(const Esgw__Sa *sa)
{
	Esgw__Sa *copy = alloc(sizeof(*copy));

	*copy = *sa;
	copy->crypto_key.data = copy->integ_key.data = copy->salt.data = NULL;
	copy->crypto_key.len = copy->integ_key.len = copy->salt.len = 0;
	return copy;
}

static void show_tunnels(Esgw__ShowReply *reply)
{
	reply->n_tunnels = ctld.config->n_tunnels;
	reply->tunnels = ctld.config->tunnels; /* borrowed: not freed */
}

static void show_sas(Esgw__ShowReply *reply)
{
	reply->n_sas = ctld.config->n_sas;
	reply->sas = alloc(reply->n_sas * sizeof(*reply->sas));
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		const Esgw__Sa *sa = ctld.config->sas[i];
		Esgw__SaInfo *info = alloc(sizeof(*info));
		Esgw__Tunnel *t = state_tunnel_out(sa->id);
		const Esgw__DpSaStats *st = sa_stats(sa);
		uint64_t drops[ESGW_DROP_MAX] = {0};

		esgw__sa_info__init(info);
		info->config = sa_public(sa);
		if (t == NULL)
			t = state_tunnel_in(sa->id);
		if (t != NULL)
			info->tunnel = t->name;
		if (st != NULL) {
			info->packets = st->packets;
			info->bytes = st->bytes;
			info->seq_out = st->seq_out;
			info->seq_out_max = st->seq_out_max;
			info->replay_top = st->replay_top;
			info->soft_expired = st->soft_expired;
			info->hard_expired = st->hard_expired;
			info->seq_exhausted = st->seq_exhausted;
			for (int d = 0; d < ESGW_DROP_MAX; d++)
				drops[d] =
					dp_stats_counter(st->drops, st->n_drops, esgw_drop_name(d));
		}
		info->drops = drop_counters(drops, &info->n_drops);
		info->last_used = sa_usage_last_used(sa);
		reply->sas[i] = info;
	}
	/* Direction follows from the tunnels: the CLI needs them to show it. */
	show_tunnels(reply);
}

static void show_workers(Esgw__ShowReply *reply)
{
	reply->n_workers = ctld.config->workers;
	reply->workers = alloc(reply->n_workers * sizeof(*reply->workers));
	for (uint32_t w = 0; w < ctld.config->workers; w++) {
		Esgw__WorkerInfo *info = alloc(sizeof(*info));
		int i = worker_proc_index((int)w);
		Esgw__DpStats *st = i >= 0 ? proc_stats(i) : NULL;
		uint64_t drops[ESGW_DROP_MAX];

		esgw__worker_info__init(info);
		info->id = w;
		info->sas = alloc(ctld.config->n_sas * sizeof(*info->sas));
		for (size_t k = 0; k < ctld.config->n_sas; k++)
			if (ctld.config->sas[k]->worker == (int32_t)w)
				info->sas[info->n_sas++] = ctld.config->sas[k]->id;
		if (i >= 0) {
			info->pid = ctld.procs[i].pid;
			info->state = (char *)dp_proc_state_name(ctld.procs[i].state);
		}
		if (st != NULL) {
			info->packets_encrypted =
				dp_stats_counter(st->counters, st->n_counters, "packets_encrypted");
			info->packets_decrypted =
				dp_stats_counter(st->counters, st->n_counters, "packets_decrypted");
			info->bytes = dp_stats_counter(st->counters, st->n_counters, "bytes");
			if (info->bytes == 0)
				info->bytes = dp_stats_counter(st->counters, st->n_counters,
							       "bytes_encrypted") +
					      dp_stats_counter(st->counters, st->n_counters,
							       "bytes_decrypted");
		}
		worker_drops((int)w, drops);
		info->drops = drop_counters(drops, &info->n_drops);
		reply->workers[w] = info;
	}
}

static bool is_drop_name(const char *name)
{
	for (int d = 0; d < ESGW_DROP_MAX; d++)
		if (strcmp(esgw_drop_name(d), name) == 0)
			return true;
	return false;
}

static void show_processes(Esgw__ShowReply *reply)
{
	reply->n_processes = (size_t)ctld.nprocs;
	reply->processes = alloc(reply->n_processes * sizeof(*reply->processes));
	for (int i = 0; i < ctld.nprocs; i++) {
		struct dp_proc *p = &ctld.procs[i];
		Esgw__ProcessInfo *info = alloc(sizeof(*info));
		Esgw__DpStats *st = proc_stats(i);
		uint64_t drops[ESGW_DROP_MAX] = {0};
		size_t n = 0, extra = st ? st->n_counters : 0;

		esgw__process_info__init(info);
		info->role = (char *)p->role;
		info->worker = p->worker;
		info->pid = p->pid;
		info->state = (char *)dp_proc_state_name(p->state);
		info->restarts = p->restarts;
		info->backoff = supervise_next_backoff(p);
		if (p->worker >= 0)
			worker_drops(p->worker, drops);
		else if (st != NULL)
			for (int d = 0; d < ESGW_DROP_MAX; d++)
				drops[d] = dp_stats_counter(st->counters, st->n_counters,
							    esgw_drop_name(d));
		/* Every drop reason, then the process's other counters in its order. */
		info->counters = alloc((ESGW_DROP_MAX + extra) * sizeof(*info->counters));
		for (size_t k = 0; k < extra; k++)
			if (!is_drop_name(st->counters[k]->name))
				info->counters[n++] = st->counters[k];
		for (int d = 0; d < ESGW_DROP_MAX; d++)
			info->counters[n++] = counter_new(esgw_drop_name(d), drops[d]);
		info->n_counters = n;
		reply->processes[i] = info;
	}
}

/* The router's table; while it does not answer, the configured static
 * neighbours, in state "configured". */
static void show_neighbors(Esgw__ShowReply *reply)
{
	struct dp_proc *router = dp_proc_by_name("router");

	neighbors_resp = router != NULL ? dp_stats_neighbors(router) : NULL;
	if (neighbors_resp != NULL) {
		reply->n_neighbors = neighbors_resp->stats->n_neighbors; /* borrowed */
		reply->neighbors = neighbors_resp->stats->neighbors;
		return;
	}
	reply->n_neighbors = ctld.config->n_neighbors;
	reply->neighbors = alloc(reply->n_neighbors * sizeof(*reply->neighbors));
	for (size_t i = 0; i < ctld.config->n_neighbors; i++) {
		const Esgw__Neighbor *n = ctld.config->neighbors[i];
		Esgw__NeighborInfo *info = alloc(sizeof(*info));

		esgw__neighbor_info__init(info);
		info->interface = n->interface;
		info->address = n->address;
		info->mac = n->mac;
		info->state = "configured";
		reply->neighbors[i] = info;
	}
}

/* The shared mbuf pool, as esgw-rxtx (which made it) counts it. */
static void show_mbuf_pool(Esgw__ShowReply *reply)
{
	int rx = proc_index("rxtx");
	Esgw__DpStats *st = rx >= 0 ? proc_stats(rx) : NULL;
	Esgw__MbufPool *pool = alloc(sizeof(*pool));

	esgw__mbuf_pool__init(pool);
	if (st != NULL) {
		pool->size = st->mbuf_pool_size;
		pool->in_use = st->mbuf_in_use;
	}
	reply->mbuf_pool = pool;
}

static void show_config(Esgw__ShowReply *reply)
{
	stripped_config = msg_clone(ctld.config);
	for (size_t i = 0; i < stripped_config->n_sas; i++) {
		Esgw__Sa *sa = stripped_config->sas[i];
		ProtobufCBinaryData *keys[] = {&sa->crypto_key, &sa->integ_key, &sa->salt};

		for (size_t k = 0; k < 3; k++) {
			if (keys[k]->data != NULL) {
				explicit_bzero(keys[k]->data, keys[k]->len);
				free(keys[k]->data);
			}
			keys[k]->data = NULL;
			keys[k]->len = 0;
		}
	}
	reply->config = stripped_config;
}

void show_build(Esgw__ShowRequest__What what, Esgw__ShowReply *reply)
{
	switch (what) {
	case ESGW__SHOW_REQUEST__WHAT__WHAT_INTERFACES:
		show_interfaces(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_ROUTES:
		reply->n_routes = ctld.config->n_routes;
		reply->routes = ctld.config->routes; /* borrowed */
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_SAS:
		show_sas(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_TUNNELS:
		show_tunnels(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_STATS:
		show_processes(reply);
		show_mbuf_pool(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_NEIGHBORS:
		show_neighbors(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_WORKERS:
		show_workers(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_CONFIG:
		show_config(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_DATAPLANE:
		dataplane_show(reply);
		break;
	case ESGW__SHOW_REQUEST__WHAT__WHAT_POLICIES:
		reply->n_policies = ctld.config->n_policies; /* borrowed, in evaluation order */
		reply->policies = ctld.config->policies;
		break;
	default:
		break;
	}
}

void show_free(Esgw__ShowReply *reply)
{
	(void)reply;
	arena_free(&arena);
	config_free(stripped_config);
	stripped_config = NULL;
	dataplane_show_free();
	dp_stats_free(neighbors_resp);
	neighbors_resp = NULL;
	for (int i = 0; i < CTLD_MAX_PROCS; i++) {
		dp_stats_free(stats_cache[i]);
		stats_cache[i] = NULL;
		stats_asked[i] = false;
	}
}

Esgw__Status show_handle(const Esgw__Request *req, Esgw__Response *resp, char *err, size_t errlen)
{
	Esgw__ShowReply *reply;
	Esgw__ShowRequest__What what = req->show->what;

	if (what <= ESGW__SHOW_REQUEST__WHAT__WHAT_UNSPECIFIED ||
	    (what > ESGW__SHOW_REQUEST__WHAT__WHAT_DATAPLANE &&
	     what != ESGW__SHOW_REQUEST__WHAT__WHAT_POLICIES &&
	     what != ESGW__SHOW_REQUEST__WHAT__WHAT_NEIGHBORS)) {
		snprintf(err, errlen, "show: unknown item %d", what);
		return ESGW__STATUS__STATUS_INVALID_ARGUMENT;
	}
	reply = calloc(1, sizeof(*reply));
	if (reply == NULL)
		abort();
	esgw__show_reply__init(reply);
	show_build(what, reply);
	resp->show = reply;
	return ESGW__STATUS__STATUS_OK;
}
