/* SPDX-License-Identifier: BSD-3-Clause */
/* ctld's side of the dataplane control sockets: one connection per process,
 * the DpConfig each process needs (keys only to the worker owning the SA), the
 * push/ack bookkeeping that the 1 s reconcile timer retries, and stats queries. */
#include "ctld.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "framing.h"
#include "log.h"
#include "validate.h"

const char *proc_state_name(enum proc_state s)
{
	switch (s) {
	case PROC_STARTING:
		return "starting";
	case PROC_RUNNING:
		return "running";
	case PROC_BACKOFF:
		return "backoff";
	default:
		return "stopped";
	}
}

struct dp_proc *dp_proc_by_name(const char *name)
{
	for (int i = 0; i < ctld.nprocs; i++)
		if (strcmp(ctld.procs[i].name, name) == 0)
			return &ctld.procs[i];
	return NULL;
}

void dp_disconnect(struct dp_proc *p)
{
	if (p->fd < 0)
		return;
	ev_io_stop(ctld.loop, &p->eof_watcher);
	close(p->fd);
	p->fd = -1;
	/* Whoever answers next may be a new instance: it gets the whole config. */
	p->acked_generation = 0;
	if (!ctld.opt.standalone)
		p->state = PROC_STOPPED;
}

/* Between requests a process never writes: readable means it closed. */
static void on_proc_eof(struct ev_loop *loop, ev_io *w, int revents)
{
	struct dp_proc *p = w->data;
	char c;

	(void)loop;
	(void)revents;
	if (recv(p->fd, &c, 1, MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	ESGW_INFO("%s closed its control connection", p->name);
	/* Standalone mode reports exits from waitpid, with the status. */
	if (!ctld.opt.standalone)
		ctld_event_process_exit(p, p->pid, -1);
	dp_disconnect(p);
}

static void proc_init(int i)
{
	struct dp_proc *p;

	if (i < 0 || i >= CTLD_MAX_PROCS)
		return;
	p = &ctld.procs[i];
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->worker = -1;
	if (i == 0) {
		p->role = "rxtx";
		snprintf(p->name, sizeof(p->name), "rxtx");
	} else if (i == 1) {
		p->role = "router";
		snprintf(p->name, sizeof(p->name), "router");
	} else {
		p->role = "crypto";
		p->worker = i - 2;
		snprintf(p->name, sizeof(p->name), "crypto-%d", p->worker);
	}
	ev_io_init(&p->eof_watcher, on_proc_eof, -1, EV_READ);
	p->eof_watcher.data = p;
}

void dp_procs_init(int workers)
{
	ctld.nprocs = 2 + workers;
	for (int i = 0; i < ctld.nprocs; i++)
		proc_init(i);
}

void dp_procs_resize(int workers)
{
	for (int i = ctld.nprocs; i < 2 + workers; i++)
		proc_init(i);
	if (2 + workers > ctld.nprocs)
		ctld.nprocs = 2 + workers;
}

/* The peer of a dataplane socket is one we may give keys: root or our own
 * user, and in standalone mode the very process we started. */
static bool peer_is_dataplane(const struct dp_proc *p, const struct ucred *cred)
{
	if (cred->uid != 0 && cred->uid != geteuid())
		return false;
	return !ctld.opt.standalone || cred->pid == p->pid;
}

void dp_procs_shrink(int workers)
{
	while (ctld.nprocs > 2 + workers) {
		struct dp_proc *p = &ctld.procs[ctld.nprocs - 1];

		dp_disconnect(p);
		free(p->stats_cache);
		p->stats_cache = NULL;
		ctld.nprocs--;
	}
}

/* Connect to <rundir>/<name>.sock; 0 or -1 (not there, not ready). */
int dp_connect(struct dp_proc *p)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ucred cred = {0};
	socklen_t credlen = sizeof(cred);
	int fd;

	if (p->fd >= 0)
		return 0;
	if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%s.sock", ctld.opt.rundir,
			     p->name) >= sizeof(addr.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (!p->unreachable_logged)
			ESGW_INFO("%s not reachable at %s: %s", p->name, addr.sun_path,
				  strerror(errno));
		p->unreachable_logged = true;
		close(fd);
		return -1;
	}
	/* Keys go through this socket: only to the process we mean. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) < 0 ||
	    !peer_is_dataplane(p, &cred)) {
		ESGW_LOG_RATELIMITED(ESGW_LOG_WARN,
				     "%s: the process at %s (pid %d, uid %d) is not ours: nothing "
				     "pushed to it",
				     p->name, addr.sun_path, (int)cred.pid, (int)cred.uid);
		close(fd);
		return -1;
	}
	if (p->unreachable_logged || !ctld.opt.standalone)
		ESGW_INFO("connected to %s", p->name);
	p->unreachable_logged = false;
	p->fd = fd;
	p->acked_generation = 0;
	if (!ctld.opt.standalone) {
		pid_t old = p->pid;

		p->state = PROC_RUNNING;
		p->pid = cred.pid;
		/* systemd restarted it: a new instance answers. */
		if (old > 0 && old != cred.pid) {
			p->restarts++;
			ctld_event_process_restart(p);
			if (strcmp(p->role, "rxtx") == 0)
				units_rxtx_restarted();
		}
	}
	ev_io_set(&p->eof_watcher, fd, EV_READ);
	ev_io_start(ctld.loop, &p->eof_watcher);
	return 0;
}

/* Send one packed DpRequest and wait for the DpResponse (~2 s). A connection
 * the process closed since the last use is replaced once. */
static Esgw__DpResponse *exchange(struct dp_proc *p, const uint8_t *msg, size_t len)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh = p->fd < 0;
		Esgw__DpResponse *resp;
		uint8_t *buf;
		size_t blen;

		if (dp_connect(p) < 0)
			return NULL;
		if (esgw_frame_write(p->fd, msg, len, CTLD_DP_TIMEOUT_MS) == 0 &&
		    esgw_frame_read(p->fd, &buf, &blen, CTLD_DP_TIMEOUT_MS) == 0) {
			resp = esgw__dp_response__unpack(NULL, blen, buf);
			free(buf);
			if (resp != NULL)
				return resp;
			ESGW_WARN("%s sent a malformed DpResponse", p->name);
			dp_disconnect(p);
			return NULL;
		}
		ESGW_WARN("%s: control request failed: %s", p->name, strerror(errno));
		dp_disconnect(p);
		if (fresh || errno == ETIMEDOUT)
			return NULL;
	}
	return NULL;
}

static Esgw__DpResponse *exchange_msg(struct dp_proc *p, const Esgw__DpRequest *req)
{
	size_t len = esgw__dp_request__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	Esgw__DpResponse *resp;

	if (buf == NULL)
		return NULL;
	esgw__dp_request__pack(req, buf);
	resp = exchange(p, buf, len);
	explicit_bzero(buf, len); /* a crypto worker's config holds keys */
	free(buf);
	return resp;
}

void dp_stats_free(Esgw__DpResponse *r)
{
	if (r != NULL)
		esgw__dp_response__free_unpacked(r, NULL);
}

Esgw__DpResponse *dp_stats(struct dp_proc *p)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	Esgw__DpStatsQuery q = ESGW__DP_STATS_QUERY__INIT;
	Esgw__DpResponse *resp;

	if (ctld.opt.standalone && p->state != PROC_RUNNING)
		return NULL;
	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_STATS;
	req.stats = &q;
	resp = exchange_msg(p, &req);
	if (resp == NULL) {
		/* Still the same running process, just slow to answer: its last
		 * counters beat zeros that would make totals go backwards. */
		if (p->stats_cache != NULL && p->stats_cache_pid == p->pid && p->pid > 0)
			return esgw__dp_response__unpack(NULL, p->stats_cache_len, p->stats_cache);
		return NULL;
	}
	if (resp->status != ESGW__STATUS__STATUS_OK || resp->stats == NULL) {
		dp_stats_free(resp);
		return NULL;
	}
	free(p->stats_cache);
	p->stats_cache_len = esgw__dp_response__get_packed_size(resp);
	p->stats_cache = malloc(p->stats_cache_len ? p->stats_cache_len : 1);
	if (p->stats_cache != NULL)
		esgw__dp_response__pack(resp, p->stats_cache);
	p->stats_cache_pid = resp->stats->pid;
	if (!ctld.opt.standalone)
		p->pid = resp->stats->pid;
	/* It forgot a config it acked (restarted behind our back): push again. */
	if (resp->stats->generation < p->acked_generation)
		p->acked_generation = resp->stats->generation;
	return resp;
}

/* ---------------------------------------------------------------- DpConfig */

struct build {
	Esgw__DpConfig cfg;
	void **mem;
	size_t n_mem;
};

static void *build_alloc(struct build *b, size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (p == NULL)
		abort();
	array_append(&b->mem, &b->n_mem, p);
	return p;
}

static void build_interfaces(struct build *b)
{
	b->cfg.n_interfaces = ctld.config->n_interfaces;
	b->cfg.interfaces = build_alloc(b, b->cfg.n_interfaces * sizeof(*b->cfg.interfaces));
	for (size_t i = 0; i < ctld.config->n_interfaces; i++) {
		Esgw__Interface *in = ctld.config->interfaces[i];
		Esgw__DpInterface *d = build_alloc(b, sizeof(*d));
		char *device = build_alloc(b, strlen(in->devargs) + 1);

		esgw__dp_interface__init(d);
		d->name = in->name;
		d->device = esgw_devargs_device(in->devargs, device, strlen(in->devargs) + 1);
		d->n_addresses = in->n_addresses;
		d->addresses = in->addresses;
		d->mtu = in->mtu ? in->mtu : 1500;
		b->cfg.interfaces[i] = d;
	}
}

static Esgw__DpSa *build_sa(struct build *b, const Esgw__Sa *sa, bool with_keys)
{
	Esgw__DpSa *d = build_alloc(b, sizeof(*d));
	Esgw__Tunnel *out = state_tunnel_out(sa->id), *in = state_tunnel_in(sa->id);
	Esgw__Tunnel *t = out ? out : in;

	if (t == NULL) { /* an SA only a policy sends with: its tunnel's endpoints */
		out = state_policy_tunnel_out(sa->id);
		t = out;
	}

	esgw__dp_sa__init(d);
	d->id = sa->id;
	d->slot = sa->slot;
	d->spi = sa->spi;
	/* An SA used both ways is sent as outbound (it needs local/remote for
	 * encapsulation); decapsulation finds it by slot either way. */
	d->direction = out  ? ESGW__DIRECTION__DIRECTION_OUTBOUND
		       : in ? ESGW__DIRECTION__DIRECTION_INBOUND
			    : ESGW__DIRECTION__DIRECTION_UNSPECIFIED;
	d->algorithm = sa->algorithm;
	if (with_keys) {
		d->crypto_key = sa->crypto_key;
		d->integ_key = sa->integ_key;
		d->salt = sa->salt;
	}
	d->replay_window = sa->replay_window;
	d->esn = sa->esn;
	d->instance = sa->instance;
	d->iv_mask = sa->iv_mask;
	/* Only a worker creates the SA's runtime slot, from these two. */
	d->seq_out_start = with_keys ? seq_floor_start(sa) : sa->seq_out_floor;
	d->seq_limit = sa->seq_out_floor;
	d->lifetime_soft = sa->lifetime_soft; /* borrowed from the config, like the keys */
	d->lifetime_hard = sa->lifetime_hard;
	d->worker = (uint32_t)sa->worker;
	d->udp_encap = sa->udp_encap;
	d->udp_sport = sa->udp_sport;
	d->udp_dport = sa->udp_dport;
	if (t != NULL) {
		d->local = t->local;
		d->remote = t->remote;
		d->tunnel = t->name;
	}
	return d;
}

static void build_for(struct build *b, const struct dp_proc *p)
{
	esgw__dp_config__init(&b->cfg);
	b->cfg.generation = ctld.generation;
	b->cfg.workers = ctld.config->workers;
	if (p->worker < 0)
		build_interfaces(b);
	if (strcmp(p->role, "router") == 0) {
		b->cfg.n_routes = ctld.config->n_routes;
		b->cfg.routes = ctld.config->routes;
		b->cfg.n_tunnels = ctld.config->n_tunnels;
		b->cfg.tunnels = ctld.config->tunnels;
		b->cfg.n_policies = ctld.config->n_policies; /* in evaluation order */
		b->cfg.policies = ctld.config->policies;
	}
	if (strcmp(p->role, "rxtx") == 0)
		return;
	b->cfg.sas = build_alloc(b, ctld.config->n_sas * sizeof(*b->cfg.sas));
	for (size_t i = 0; i < ctld.config->n_sas; i++) {
		const Esgw__Sa *sa = ctld.config->sas[i];

		Esgw__DpSa *d;

		if (p->worker < 0) {
			b->cfg.sas[b->cfg.n_sas++] = build_sa(b, sa, false);
		} else if (sa->worker == p->worker) {
			/* Wait in standby for a hand-over in flight, else own it. */
			d = build_sa(b, sa, true);
			d->adopt = handover_from(sa) < 0;
			b->cfg.sas[b->cfg.n_sas++] = d;
		} else if (handover_from(sa) == p->worker) {
			/* Keep it until the router's hand-over marker. */
			d = build_sa(b, sa, true);
			d->leaving = true;
			b->cfg.sas[b->cfg.n_sas++] = d;
		}
	}
}

static void build_free(struct build *b)
{
	for (size_t i = 0; i < b->n_mem; i++)
		free(b->mem[i]);
	free(b->mem);
}

void dp_push(struct dp_proc *p)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	bool connected_now = p->acked_generation == 0;
	struct build b = {0};
	Esgw__DpResponse *resp;

	build_for(&b, p);
	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_CONFIG;
	req.config = &b.cfg;
	resp = exchange_msg(p, &req);
	build_free(&b);
	if (resp == NULL)
		return; /* logged; the reconcile timer retries */
	if (resp->status == ESGW__STATUS__STATUS_OK) {
		p->acked_generation = ctld.generation;
		/* A worker that (re)started may have fresh runtime slots, at
		 * their floor: reserve more now rather than at the next sample. */
		if (connected_now && p->worker >= 0)
			seq_floor_check(p);
	} else {
		/* Counted as not acked: retried every second, logged once per generation. */
		static uint64_t logged[CTLD_MAX_PROCS];
		int i = (int)(p - ctld.procs);

		if (logged[i] != ctld.generation)
			ESGW_WARN("%s refused configuration %" PRIu64 ": %s", p->name,
				  ctld.generation, resp->error);
		logged[i] = ctld.generation;
	}
	dp_stats_free(resp);
}

void dp_push_seq_limits(struct dp_proc *p, const Esgw__DpSeqLimits *limits)
{
	Esgw__DpRequest req = ESGW__DP_REQUEST__INIT;
	Esgw__DpResponse *resp;

	req.version = ESGW__API_VERSION__API_VERSION_CURRENT;
	req.body_case = ESGW__DP_REQUEST__BODY_SEQ_LIMITS;
	req.seq_limits = (Esgw__DpSeqLimits *)limits;
	resp = exchange_msg(p, &req);
	if (resp != NULL && resp->status != ESGW__STATUS__STATUS_OK)
		ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "%s refused sequence-number limits: %s",
				     p->name, resp->error);
	dp_stats_free(resp); /* retried at the next sample if it did not arrive */
}

void dp_push_all(void)
{
	/* Crypto workers first: an SA is on its worker (maybe in standby, see
	 * workers.c) before the router sends it packets there. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < ctld.nprocs; i++) {
			struct dp_proc *p = &ctld.procs[i];

			if ((p->worker >= 0) != (pass == 0))
				continue;
			if (ctld.opt.standalone && (p->state != PROC_RUNNING || p->stop_requested))
				continue;
			if (p->acked_generation < ctld.generation)
				dp_push(p);
		}
	}
}
