/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket: accepts many clients on a UNIX stream socket, closes
 * at once those whose credentials fail, decodes framed Requests incrementally
 * and answers each with one Response. No client can stall the others: its
 * requests are served one per loop iteration, its replies queue up to a
 * bound (past it, it is disconnected) instead of blocking, and an idle one
 * is closed. A client that sends garbage gets an error, never takes the
 * daemon down. */
#include "ctld.h"

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "framing.h"
#include "listen.h"
#include "log.h"

#define MAX_CLIENTS 64
/* Replies queued for a client that does not read them: past this it is
 * disconnected. One reply alone may be larger (a show of 40,000 SAs is some
 * 10 MB, up to ESGW_FRAME_MAX): a backlog behind it may not. */
#define CLIENT_OUT_MAX (4u << 20)
#define ADMIN_GROUP "esgw"

/* One reply waiting to be written. */
struct out_frame {
	struct out_frame *next;
	size_t len, done;
	uint8_t *data; /* 4-byte length, then the packed Response */
};

/* One connection. Nothing blocks the event loop: requests are read as they
 * come and served one per loop iteration (a client with several buffered
 * waits for the others' turn), replies are queued and written as the socket
 * takes them. */
struct client {
	ev_io io;        /* readable: more request bytes */
	ev_io writer;    /* writable while replies are queued */
	ev_idle backlog; /* a whole request is buffered: serve it in turn */
	ev_timer idle;   /* no request for --idle-timeout seconds: closed */
	int fd;
	struct esgw_frame_buf rx;
	struct out_frame *out_head, *out_tail;
	size_t out_bytes;
};

static ev_io listen_watcher;
static int listen_fd = -1;
static char listen_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int nclients;

/* root, ctld's own user, or a member of group esgw (when it exists). */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct group *grp;
	struct passwd *pw;
	gid_t groups[256];
	int ngroups = 256;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	grp = getgrnam(ADMIN_GROUP);
	if (grp == NULL)
		return false;
	if (cred.gid == grp->gr_gid)
		return true;
	pw = getpwuid(cred.uid);
	if (pw == NULL || getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups) < 0)
		return false;
	for (int i = 0; i < ngroups; i++)
		if (groups[i] == grp->gr_gid)
			return true;
	return false;
}

static void client_close(struct client *c)
{
	events_subscriber_remove(c->fd);
	ev_io_stop(ctld.loop, &c->io);
	ev_io_stop(ctld.loop, &c->writer);
	ev_idle_stop(ctld.loop, &c->backlog);
	ev_timer_stop(ctld.loop, &c->idle);
	close(c->fd);
	esgw_frame_free(&c->rx); /* wiped: requests may have carried keys */
	while (c->out_head != NULL) {
		struct out_frame *f = c->out_head;

		c->out_head = f->next;
		free(f->data);
		free(f);
	}
	free(c);
	nclients--;
}

/* Write what the socket takes. 0, or -1 if the connection failed. */
static int client_flush(struct client *c)
{
	while (c->out_head != NULL) {
		struct out_frame *f = c->out_head;
		ssize_t n = send(c->fd, f->data + f->done, f->len - f->done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -1;
		f->done += (size_t)n;
		c->out_bytes -= (size_t)n;
		if (f->done < f->len)
			break;
		c->out_head = f->next;
		if (c->out_head == NULL)
			c->out_tail = NULL;
		free(f->data);
		free(f);
	}
	if (c->out_head != NULL)
		ev_io_start(ctld.loop, &c->writer);
	else
		ev_io_stop(ctld.loop, &c->writer);
	return 0;
}

static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;

	(void)loop;
	(void)revents;
	if (client_flush(c) < 0)
		client_close(c);
}

/* Queue one reply and write what fits now. 0, or -1 if the client must be
 * closed: it does not read what it asked for, or its socket failed. */
static int reply(struct client *c, Esgw__Response *resp)
{
	struct out_frame *f;

	/* A subscriber's socket carries events too: queue behind them. */
	if (events_is_subscriber(c->fd))
		return events_queue_response(c->fd, resp);
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->data = esgw_frame_pack(&resp->base, &f->len)) == NULL) {
		free(f);
		ESGW_WARN("cannot queue a reply on fd %d: out of memory or too large", c->fd);
		return -1;
	}
	if (c->out_tail != NULL)
		c->out_tail->next = f;
	else
		c->out_head = f;
	c->out_tail = f;
	c->out_bytes += f->len;
	if (client_flush(c) < 0)
		return -1;
	if (c->out_bytes > CLIENT_OUT_MAX && c->out_bytes > f->len) {
		ESGW_LOG_RATELIMITED(ESGW_LOG_WARN,
				     "control client on fd %d does not read its replies (%zu bytes "
				     "queued): disconnected",
				     c->fd, c->out_bytes);
		return -1;
	}
	return 0;
}

static int reply_error(struct client *c, Esgw__Status status, const char *msg)
{
	Esgw__Response resp = ESGW__RESPONSE__INIT;

	resp.status = status;
	resp.error = (char *)msg;
	return reply(c, &resp);
}

static void wipe_request(Esgw__Request *req)
{
	if (req->body_case == ESGW__REQUEST__BODY_SA_ADD && req->sa_add != NULL)
		sa_wipe_keys(req->sa_add);
	esgw__request__free_unpacked(req, NULL);
}

/* One whole frame: 0, or -1 if the client must be closed. */
static int serve_frame(struct client *c, const uint8_t *msg, size_t len)
{
	Esgw__Response resp = ESGW__RESPONSE__INIT;
	Esgw__Request *req;
	bool subscribe;
	char err[512];
	int rc;

	req = esgw__request__unpack(NULL, len, msg);
	if (req == NULL)
		return reply_error(c, ESGW__STATUS__STATUS_MALFORMED,
				   "malformed request: not an esgw Request message");
	subscribe = req->body_case == ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE;
	request_handle(req, &resp, err, sizeof(err));
	wipe_request(req);
	rc = reply(c, &resp);
	/* After the OK: the subscriber sees it before any event. */
	if (rc == 0 && subscribe && resp.status == ESGW__STATUS__STATUS_OK) {
		/* The OK may still be in our queue: events must follow it. */
		if (client_flush(c) < 0 || c->out_head != NULL) {
			ESGW_WARN("event subscriber on fd %d does not read: disconnected", c->fd);
			rc = -1;
		} else {
			events_subscriber_add(c->fd);
			ev_timer_stop(ctld.loop, &c->idle); /* waiting for events is its job */
		}
	}
	request_response_free(&resp);
	return rc;
}

/* Serve at most one buffered request, then wait for the next turn: the next
 * buffered request (idle watcher, after every other client's events) or
 * more bytes (read watcher). Consumes c on error. */
static void client_serve_one(struct client *c)
{
	const uint8_t *msg;
	size_t len;
	int rc = esgw_frame_next(&c->rx, &msg, &len);

	if (rc == ESGW_FRAME_READY) {
		rc = serve_frame(c, msg, len);
		explicit_bzero((uint8_t *)msg, len);
		esgw_frame_consume(&c->rx);
		if (rc < 0) {
			client_close(c);
			return;
		}
		rc = esgw_frame_next(&c->rx, &msg, &len);
	}
	if (rc == ESGW_FRAME_TOO_BIG) {
		char err[96];

		snprintf(err, sizeof(err), "request larger than %u bytes: closing the connection",
			 ESGW_FRAME_MAX);
		ESGW_WARN("client sent a frame over %u bytes: closing it", ESGW_FRAME_MAX);
		reply_error(c, ESGW__STATUS__STATUS_MALFORMED, err); /* as far as it goes */
		client_close(c);
		return;
	}
	if (rc == ESGW_FRAME_READY) {
		/* Read no more from it until what it sent is served. */
		ev_io_stop(ctld.loop, &c->io);
		ev_idle_start(ctld.loop, &c->backlog);
	} else {
		ev_idle_stop(ctld.loop, &c->backlog);
		ev_io_start(ctld.loop, &c->io);
	}
}

static void on_backlog(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)loop;
	(void)revents;
	client_serve_one(w->data);
}

static void on_client(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;
	uint8_t buf[16384];
	ssize_t r;

	(void)revents;
	r = read(c->fd, buf, sizeof(buf));
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		client_close(c);
		return;
	}
	if (ev_is_active(&c->idle))
		ev_timer_again(loop, &c->idle);
	if (esgw_frame_feed(&c->rx, buf, (size_t)r) < 0) {
		explicit_bzero(buf, (size_t)r);
		reply_error(c, ESGW__STATUS__STATUS_INTERNAL, "out of memory");
		client_close(c);
		return;
	}
	explicit_bzero(buf, (size_t)r);
	client_serve_one(c);
}

static void on_idle_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *c = w->data;

	(void)loop;
	(void)revents;
	ESGW_LOG_RATELIMITED(ESGW_LOG_INFO, "control client on fd %d idle for %.0f s: closed",
			     c->fd, ctld.opt.idle_timeout);
	client_close(c);
}

/* A refused peer's socket after its reply: the write side shut, what it
 * sends discarded until it closes (EOF) or REFUSED_LINGER_S pass. Closing at
 * once would reset the connection whenever its request arrived after the
 * reply (a UNIX socket closed with unread data does), and the peer would
 * lose the reply. At most REFUSED_MAX linger; past that they close at once. */
#define REFUSED_MAX 16
#define REFUSED_LINGER_S 1.0
struct refused {
	ev_io io;
	ev_timer timer;
	int fd;
};
static int nrefused;

static void refused_close(struct ev_loop *loop, struct refused *r)
{
	ev_io_stop(loop, &r->io);
	ev_timer_stop(loop, &r->timer);
	close(r->fd);
	free(r);
	nrefused--;
}

static void on_refused_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct refused *r = w->data;
	uint8_t junk[4096];
	ssize_t n;

	(void)revents;
	n = recv(r->fd, junk, sizeof(junk), MSG_DONTWAIT);
	explicit_bzero(junk, sizeof(junk));
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		refused_close(loop, r);
}

static void on_refused_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	refused_close(loop, w->data);
}

/* Discard what it sends until it goes: see struct refused. */
static void refused_linger(struct ev_loop *loop, int fd)
{
	struct refused *r = nrefused < REFUSED_MAX ? calloc(1, sizeof(*r)) : NULL;

	if (r == NULL) {
		close(fd); /* a flood of refused peers: they may lose the reply */
		return;
	}
	nrefused++;
	r->fd = fd;
	ev_io_init(&r->io, on_refused_readable, fd, EV_READ);
	r->io.data = r;
	ev_timer_init(&r->timer, on_refused_timeout, REFUSED_LINGER_S, 0.);
	r->timer.data = r;
	ev_io_start(loop, &r->io);
	ev_timer_start(loop, &r->timer);
}

/* A peer that fails the credential check gets one error reply, if its
 * socket takes it at once, and is closed: it never holds a client slot. */
static void refuse_peer(struct ev_loop *loop, int fd)
{
	Esgw__Response resp = ESGW__RESPONSE__INIT;
	uint8_t *buf;
	size_t len;

	resp.status = ESGW__STATUS__STATUS_PERMISSION_DENIED;
	resp.error = "permission denied: esgw-ctld serves root and group " ADMIN_GROUP;
	buf = esgw_frame_pack(&resp.base, &len);
	if (buf != NULL && send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		ESGW_LOG_RATELIMITED(ESGW_LOG_INFO, "refused control client: %s", strerror(errno));
	free(buf);
	ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "control client refused: not root, not ctld's user, "
					    "not in group " ADMIN_GROUP);
	shutdown(fd, SHUT_WR); /* the reply, then EOF: nothing else goes to it */
	refused_linger(loop, fd);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c;
	int fd;

	(void)w;
	(void)revents;
	while ((fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (!peer_allowed(fd)) {
			refuse_peer(loop, fd);
			continue;
		}
		if (nclients >= MAX_CLIENTS || (c = calloc(1, sizeof(*c))) == NULL) {
			ESGW_LOG_RATELIMITED(ESGW_LOG_WARN,
					     "too many control clients: refusing one");
			close(fd);
			continue;
		}
		nclients++;
		c->fd = fd;
		ev_io_init(&c->io, on_client, fd, EV_READ);
		c->io.data = c;
		ev_io_init(&c->writer, on_writable, fd, EV_WRITE);
		c->writer.data = c;
		ev_idle_init(&c->backlog, on_backlog);
		c->backlog.data = c;
		ev_init(&c->idle, on_idle_timeout);
		c->idle.repeat = ctld.opt.idle_timeout;
		c->idle.data = c;
		ev_timer_again(loop, &c->idle);
		ev_io_start(loop, &c->io);
	}
}

int server_open(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char dir[sizeof(addr.sun_path)], err[512];
	struct group *grp;
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		ESGW_ERR("socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	make_parent_dirs(path);
	snprintf(dir, sizeof(dir), "%s", path);
	if (esgw_listen_dir_check(dirname(dir), err, sizeof(err)) != 0) {
		ESGW_ERR("control socket %s: %s", path, err[0] ? err : "no directory");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A socket that still answers belongs to a live ctld: do not steal it. */
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
		ESGW_ERR("another esgw-ctld is serving %s", path);
		close(fd);
		return -1;
	}
	close(fd);
	/* Owner only until it belongs to group esgw: then 0660. */
	fd = esgw_listen_open(path, 0600, SOMAXCONN, SOCK_NONBLOCK, err, sizeof(err));
	if (fd < 0) {
		ESGW_ERR("control %s", err);
		return -1;
	}
	grp = getgrnam(ADMIN_GROUP);
	if (grp != NULL && chown(path, (uid_t)-1, grp->gr_gid) < 0)
		ESGW_WARN("cannot give %s to group %s: %s", path, ADMIN_GROUP, strerror(errno));
	if (chmod(path, 0660) < 0) {
		ESGW_ERR("control socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	listen_fd = fd;
	snprintf(listen_path, sizeof(listen_path), "%s", path);
	ev_io_init(&listen_watcher, on_accept, fd, EV_READ);
	ev_io_start(ctld.loop, &listen_watcher);
	ESGW_INFO("serving the control API on %s", path);
	return 0;
}

void server_close(void)
{
	if (listen_fd < 0)
		return;
	ev_io_stop(ctld.loop, &listen_watcher);
	close(listen_fd);
	unlink(listen_path);
	listen_fd = -1;
}
