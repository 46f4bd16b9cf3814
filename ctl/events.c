/* SPDX-License-Identifier: BSD-3-Clause */
/* Events for the clients that subscribed on the control socket (esgwctl
 * events, an IKE daemon, an orchestrator): what happened is packed once into a
 * Response{event} frame and queued to every subscriber. Each subscriber has a
 * bounded queue written without blocking, so a slow reader never stalls ctld:
 * when its queue is full the oldest event is dropped and counted. */
#include "ctld.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "framing.h"
#include "log.h"

#define EVENTS_QUEUE_MAX 256 /* frames per subscriber */
#define EVENTS_SUBSCRIBERS_MAX 16

struct frame {
	uint8_t *data; /* 4-byte length, then the packed Response */
	size_t len;
};

struct subscriber {
	int fd; /* the client's socket; server.c owns and closes it */
	ev_io writer;
	struct frame queue[EVENTS_QUEUE_MAX];
	unsigned int head, count;
	size_t written; /* bytes of queue[head] already sent */
	uint64_t dropped;
	struct subscriber *next;
};

static struct subscriber *subscribers;
static unsigned int nb_subscribers;
static uint64_t event_seq;
static uint64_t events_dropped_total;

static struct subscriber *find(int fd)
{
	for (struct subscriber *s = subscribers; s != NULL; s = s->next)
		if (s->fd == fd)
			return s;
	return NULL;
}

bool events_is_subscriber(int fd)
{
	return find(fd) != NULL;
}

uint64_t events_dropped(void)
{
	return events_dropped_total;
}

static void frame_free(struct frame *f)
{
	free(f->data);
	f->data = NULL;
	f->len = 0;
}

/* Drop the oldest event not yet being written: a frame already partly on the
 * wire must be finished, or the stream would lose its framing. */
static void drop_oldest(struct subscriber *s)
{
	unsigned int victim = s->written > 0 ? 1 : 0;
	unsigned int idx = (s->head + victim) % EVENTS_QUEUE_MAX;

	frame_free(&s->queue[idx]);
	for (unsigned int k = victim; k + 1 < s->count; k++)
		s->queue[(s->head + k) % EVENTS_QUEUE_MAX] =
			s->queue[(s->head + k + 1) % EVENTS_QUEUE_MAX];
	s->count--;
	s->dropped++;
	events_dropped_total++;
	ESGW_LOG_RATELIMITED(ESGW_LOG_WARN,
			     "event subscriber on fd %d reads too slowly: "
			     "dropped %llu event(s)",
			     s->fd, (unsigned long long)s->dropped);
}

static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct subscriber *s = w->data;

	(void)revents;
	while (s->count > 0) {
		struct frame *f = &s->queue[s->head];
		ssize_t n = write(s->fd, f->data + s->written, f->len - s->written);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			/* The reader side (server.c) notices the close and unsubscribes. */
			ev_io_stop(loop, w);
			return;
		}
		s->written += (size_t)n;
		if (s->written < f->len)
			return;
		frame_free(f);
		s->head = (s->head + 1) % EVENTS_QUEUE_MAX;
		s->count--;
		s->written = 0;
	}
	ev_io_stop(loop, w);
}

/* Queue one packed Response (takes the buffer). */
static void enqueue(struct subscriber *s, uint8_t *data, size_t len)
{
	if (s->count == EVENTS_QUEUE_MAX)
		drop_oldest(s);
	s->queue[(s->head + s->count) % EVENTS_QUEUE_MAX] = (struct frame){data, len};
	s->count++;
	if (!ev_is_active(&s->writer))
		ev_io_start(ctld.loop, &s->writer);
}

int events_queue_response(int fd, const Esgw__Response *resp)
{
	struct subscriber *s = find(fd);
	uint8_t *buf;
	size_t len;

	if (s == NULL || (buf = esgw_frame_pack(&resp->base, &len)) == NULL)
		return -1;
	enqueue(s, buf, len);
	return 0;
}

Esgw__Status events_handle_subscribe(const Esgw__Request *req, Esgw__Response *resp, char *err,
				     size_t errlen)
{
	(void)req;
	(void)resp;
	if (nb_subscribers >= EVENTS_SUBSCRIBERS_MAX) {
		snprintf(err, errlen, "too many event subscribers (at most %d)",
			 EVENTS_SUBSCRIBERS_MAX);
		return ESGW__STATUS__STATUS_UNAVAILABLE;
	}
	return ESGW__STATUS__STATUS_OK;
}

void events_subscriber_add(int fd)
{
	struct subscriber *s;

	if (find(fd) != NULL || nb_subscribers >= EVENTS_SUBSCRIBERS_MAX)
		return;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return;
	s->fd = fd;
	ev_io_init(&s->writer, on_writable, fd, EV_WRITE);
	s->writer.data = s;
	s->next = subscribers;
	subscribers = s;
	nb_subscribers++;
	ESGW_INFO("event subscriber on fd %d", fd);
}

void events_subscriber_remove(int fd)
{
	for (struct subscriber **pp = &subscribers; *pp != NULL; pp = &(*pp)->next) {
		struct subscriber *s = *pp;

		if (s->fd != fd)
			continue;
		ev_io_stop(ctld.loop, &s->writer);
		while (s->count > 0) {
			frame_free(&s->queue[s->head]);
			s->head = (s->head + 1) % EVENTS_QUEUE_MAX;
			s->count--;
		}
		*pp = s->next;
		free(s);
		nb_subscribers--;
		return;
	}
}

void ctld_event_emit(Esgw__Event *ev)
{
	Esgw__Response resp = ESGW__RESPONSE__INIT;
	struct timeval now;

	gettimeofday(&now, NULL);
	ev->seq = ++event_seq;
	ev->time = (double)now.tv_sec + now.tv_usec / 1e6;
	resp.event = ev;
	for (struct subscriber *s = subscribers; s != NULL; s = s->next) {
		uint8_t *buf;
		size_t len;

		ev->events_dropped = s->dropped;
		buf = esgw_frame_pack(&resp.base, &len);
		if (buf != NULL)
			enqueue(s, buf, len);
	}
	ev->events_dropped = 0;
}

static void event_init(Esgw__Event *ev, Esgw__EventKind kind)
{
	esgw__event__init(ev);
	ev->kind = kind;
	ev->worker = -1;
	ev->from_worker = -1;
}

void ctld_event_sa(Esgw__EventKind kind, uint32_t sa, int from_worker, int worker)
{
	Esgw__Event ev;

	event_init(&ev, kind);
	ev.sa = sa;
	ev.from_worker = from_worker;
	ev.worker = worker;
	ctld_event_emit(&ev);
}

void ctld_event_sa_moved(uint32_t sa, int from_worker, int to_worker)
{
	ctld_event_sa(ESGW__EVENT_KIND__EVENT_KIND_SA_MOVED, sa, from_worker, to_worker);
}

void ctld_event_workers_changed(uint32_t from_workers, uint32_t workers)
{
	Esgw__Event ev;

	event_init(&ev, ESGW__EVENT_KIND__EVENT_KIND_WORKERS_CHANGED);
	ev.from_workers = from_workers;
	ev.workers = workers;
	ctld_event_emit(&ev);
}

static void event_named(Esgw__EventKind kind, const char *name, const char *detail)
{
	Esgw__Event ev;

	event_init(&ev, kind);
	ev.name = (char *)name;
	ev.detail = (char *)(detail ? detail : "");
	ctld_event_emit(&ev);
}

void ctld_event_process_exit(const struct dp_proc *p, pid_t pid, int wait_status)
{
	Esgw__Event ev;

	event_init(&ev, ESGW__EVENT_KIND__EVENT_KIND_PROCESS_EXIT);
	ev.name = (char *)p->name;
	ev.role = (char *)p->role;
	ev.worker = p->worker;
	ev.pid = (int32_t)pid;
	ev.restarts = p->restarts;
	if (wait_status < 0) {
		ev.exit_status = -1; /* not our child (systemd): the status is not known */
	} else if (WIFSIGNALED(wait_status)) {
		ev.exit_status = -1;
		ev.signal = WTERMSIG(wait_status);
	} else {
		ev.exit_status = WEXITSTATUS(wait_status);
	}
	ctld_event_emit(&ev);
}

void ctld_event_process_restart(const struct dp_proc *p)
{
	Esgw__Event ev;

	event_init(&ev, ESGW__EVENT_KIND__EVENT_KIND_PROCESS_RESTART);
	ev.name = (char *)p->name;
	ev.role = (char *)p->role;
	ev.worker = p->worker;
	ev.pid = (int32_t)p->pid;
	ev.restarts = p->restarts;
	ctld_event_emit(&ev);
}

/* ------------------------------------------------ what a change request did */

/* One configuration's objects of a kind sorted by key, for the lookups of a
 * diff of two configurations of 20,000 tunnels (O(n log n), not O(n^2)). */
struct sorted {
	void **items;
	size_t n;
	int (*cmp)(const void *, const void *);
};

static void sorted_make(struct sorted *s, void *const *items, size_t n,
			int (*cmp)(const void *, const void *))
{
	s->items = malloc((n + 1) * sizeof(*s->items));
	if (s->items == NULL)
		abort();
	memcpy(s->items, items, n * sizeof(*items));
	s->n = n;
	s->cmp = cmp;
	qsort(s->items, n, sizeof(*s->items), cmp);
}

static const void *sorted_find(const struct sorted *s, const void *key_item)
{
	void *const *hit = bsearch(&key_item, s->items, s->n, sizeof(*s->items), s->cmp);

	return hit != NULL ? *hit : NULL;
}

static int sa_cmp(const void *a, const void *b)
{
	uint32_t x = (*(const Esgw__Sa *const *)a)->id, y = (*(const Esgw__Sa *const *)b)->id;

	return x < y ? -1 : x > y;
}

static int tunnel_cmp(const void *a, const void *b)
{
	return strcmp((*(const Esgw__Tunnel *const *)a)->name,
		      (*(const Esgw__Tunnel *const *)b)->name);
}

static int route_cmp(const void *a, const void *b)
{
	return strcmp((*(const Esgw__Route *const *)a)->prefix,
		      (*(const Esgw__Route *const *)b)->prefix);
}

static const Esgw__Interface *config_interface(const Esgw__Config *c, const char *name)
{
	for (size_t i = 0; i < c->n_interfaces; i++)
		if (strcmp(c->interfaces[i]->name, name) == 0)
			return c->interfaces[i];
	return NULL;
}

/* "addresses 10.0.0.1/24,10.0.1.1/24 mtu 1500" */
static void interface_detail(const Esgw__Interface *in, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "addresses ");

	for (size_t i = 0; i < in->n_addresses && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", in->addresses[i]);
	if (in->n_addresses == 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "none");
	if (n < len)
		snprintf(buf + n, len - n, " mtu %u", in->mtu);
}

static bool interface_same(const Esgw__Interface *a, const Esgw__Interface *b)
{
	if (a->mtu != b->mtu || a->n_addresses != b->n_addresses ||
	    strcmp(a->devargs, b->devargs) != 0)
		return false;
	for (size_t i = 0; i < a->n_addresses; i++)
		if (strcmp(a->addresses[i], b->addresses[i]) != 0)
			return false;
	return true;
}

static void route_detail(const Esgw__Route *r, char *buf, size_t len)
{
	if (r->tunnel[0] != '\0')
		snprintf(buf, len, "tunnel %s", r->tunnel);
	else
		snprintf(buf, len, "via %s%s%s", r->via, r->interface[0] ? " dev " : "",
			 r->interface);
}

static void routes_diff(const Esgw__Config *before, const Esgw__Config *after)
{
	struct sorted old, now;
	char detail[256];

	sorted_make(&old, (void *const *)before->routes, before->n_routes, route_cmp);
	sorted_make(&now, (void *const *)after->routes, after->n_routes, route_cmp);
	for (size_t i = 0; i < before->n_routes; i++)
		if (sorted_find(&now, before->routes[i]) == NULL)
			event_named(ESGW__EVENT_KIND__EVENT_KIND_ROUTE_REMOVED,
				    before->routes[i]->prefix, NULL);
	for (size_t i = 0; i < after->n_routes; i++) {
		if (sorted_find(&old, after->routes[i]) != NULL)
			continue;
		route_detail(after->routes[i], detail, sizeof(detail));
		event_named(ESGW__EVENT_KIND__EVENT_KIND_ROUTE_ADDED, after->routes[i]->prefix,
			    detail);
	}
	free(old.items);
	free(now.items);
}

static void tunnels_diff(const Esgw__Config *before, const Esgw__Config *after)
{
	struct sorted old, now;
	char detail[256];

	sorted_make(&old, (void *const *)before->tunnels, before->n_tunnels, tunnel_cmp);
	sorted_make(&now, (void *const *)after->tunnels, after->n_tunnels, tunnel_cmp);
	for (size_t i = 0; i < before->n_tunnels; i++)
		if (sorted_find(&now, before->tunnels[i]) == NULL)
			event_named(ESGW__EVENT_KIND__EVENT_KIND_TUNNEL_REMOVED,
				    before->tunnels[i]->name, NULL);
	for (size_t i = 0; i < after->n_tunnels; i++) {
		const Esgw__Tunnel *t = after->tunnels[i];

		if (sorted_find(&old, t) != NULL)
			continue;
		snprintf(detail, sizeof(detail), "%s -> %s sa-out %u", t->local, t->remote,
			 t->sa_out);
		event_named(ESGW__EVENT_KIND__EVENT_KIND_TUNNEL_ADDED, t->name, detail);
	}
	free(old.items);
	free(now.items);
}

static void sas_diff(const Esgw__Config *before, const Esgw__Config *after)
{
	struct sorted old, now;

	sorted_make(&old, (void *const *)before->sas, before->n_sas, sa_cmp);
	sorted_make(&now, (void *const *)after->sas, after->n_sas, sa_cmp);
	for (size_t i = 0; i < before->n_sas; i++)
		if (sorted_find(&now, before->sas[i]) == NULL)
			ctld_event_sa(ESGW__EVENT_KIND__EVENT_KIND_SA_REMOVED, before->sas[i]->id,
				      -1, before->sas[i]->worker);
	for (size_t i = 0; i < after->n_sas; i++)
		if (sorted_find(&old, after->sas[i]) == NULL)
			ctld_event_sa(ESGW__EVENT_KIND__EVENT_KIND_SA_ADDED, after->sas[i]->id, -1,
				      after->sas[i]->worker);
	free(old.items);
	free(now.items);
}

void events_config_diff(const Esgw__Config *before, const Esgw__Config *after)
{
	char detail[256];

	for (size_t i = 0; i < before->n_interfaces; i++)
		if (config_interface(after, before->interfaces[i]->name) == NULL)
			event_named(ESGW__EVENT_KIND__EVENT_KIND_INTERFACE_REMOVED,
				    before->interfaces[i]->name, before->interfaces[i]->devargs);
	for (size_t i = 0; i < after->n_interfaces; i++) {
		const Esgw__Interface *in = after->interfaces[i];
		const Esgw__Interface *old = config_interface(before, in->name);

		interface_detail(in, detail, sizeof(detail));
		if (old == NULL)
			event_named(ESGW__EVENT_KIND__EVENT_KIND_INTERFACE_ADDED, in->name, detail);
		else if (!interface_same(old, in))
			event_named(ESGW__EVENT_KIND__EVENT_KIND_INTERFACE_CHANGED, in->name,
				    detail);
	}
	routes_diff(before, after);
	tunnels_diff(before, after);
	sas_diff(before, after);
	/* SA moves are not diffed here: the move code emits them with
	 * ctld_event_sa_moved() when the hand-over is done. */
	if (before->workers != after->workers) {
		ctld_event_workers_changed(before->workers, after->workers);
		units_workers_changed(before->workers, after->workers);
	}
}
