/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket: accepts many clients on a UNIX stream socket, checks
 * each peer's credentials, decodes framed Requests incrementally and answers
 * each with one Response. A client that sends garbage gets an error, never
 * takes the daemon down. */
#include "ctld.h"

#include <errno.h>
#include <grp.h>
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
#include "log.h"

#define MAX_CLIENTS 64
#define CLIENT_WRITE_TIMEOUT_MS 1000
#define ADMIN_GROUP "esgw"

struct client {
	ev_io io;
	int fd;
	bool allowed;
	struct esgw_frame_buf rx;
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
	close(c->fd);
	esgw_frame_free(&c->rx); /* wiped: requests may have carried keys */
	free(c);
	nclients--;
}

static int reply(struct client *c, Esgw__Response *resp)
{
	/* A subscriber's socket carries events too: queue behind them. */
	if (events_is_subscriber(c->fd))
		return events_queue_response(c->fd, resp);
	return esgw_msg_write(c->fd, &resp->base, CLIENT_WRITE_TIMEOUT_MS);
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

	if (!c->allowed)
		return reply_error(
			c, ESGW__STATUS__STATUS_PERMISSION_DENIED,
			"permission denied: esgw-ctld serves root and group " ADMIN_GROUP);
	req = esgw__request__unpack(NULL, len, msg);
	if (req == NULL)
		return reply_error(c, ESGW__STATUS__STATUS_MALFORMED,
				   "malformed request: not an esgw Request message");
	subscribe = req->body_case == ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE;
	handle_request(req, &resp, err, sizeof(err));
	wipe_request(req);
	rc = reply(c, &resp);
	/* After the OK: the subscriber sees it before any event. */
	if (rc == 0 && subscribe && resp.status == ESGW__STATUS__STATUS_OK)
		events_subscriber_add(c->fd);
	handle_response_free(&resp);
	return rc;
}

static void on_client(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;
	uint8_t buf[16384];
	const uint8_t *msg;
	size_t len;
	ssize_t r;
	int rc;

	(void)loop;
	(void)revents;
	r = read(c->fd, buf, sizeof(buf));
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		client_close(c);
		return;
	}
	if (esgw_frame_feed(&c->rx, buf, (size_t)r) < 0) {
		reply_error(c, ESGW__STATUS__STATUS_INTERNAL, "out of memory");
		client_close(c);
		return;
	}
	explicit_bzero(buf, (size_t)r);
	while ((rc = esgw_frame_next(&c->rx, &msg, &len)) == ESGW_FRAME_READY) {
		rc = serve_frame(c, msg, len);
		explicit_bzero((uint8_t *)msg, len);
		esgw_frame_consume(&c->rx);
		if (rc < 0) {
			client_close(c);
			return;
		}
	}
	if (rc == ESGW_FRAME_TOO_BIG) {
		char err[96];

		snprintf(err, sizeof(err), "request larger than %u bytes: closing the connection",
			 ESGW_FRAME_MAX);
		ESGW_WARN("client sent a frame over %u bytes: closing it", ESGW_FRAME_MAX);
		reply_error(c, ESGW__STATUS__STATUS_MALFORMED, err);
		client_close(c);
	}
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c;
	int fd;

	(void)w;
	(void)revents;
	while ((fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (nclients >= MAX_CLIENTS || (c = calloc(1, sizeof(*c))) == NULL) {
			ESGW_LOG_RATELIMITED(ESGW_LOG_WARN,
					     "too many control clients: refusing one");
			close(fd);
			continue;
		}
		nclients++;
		c->fd = fd;
		c->allowed = peer_allowed(fd);
		ev_io_init(&c->io, on_client, fd, EV_READ);
		c->io.data = c;
		ev_io_start(loop, &c->io);
	}
}

int server_open(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct group *grp;
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		ESGW_ERR("socket path too long: %s", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	make_parent_dirs(path);
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
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(path, 0660) < 0 || listen(fd, SOMAXCONN) < 0) {
		ESGW_ERR("control socket %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	grp = getgrnam(ADMIN_GROUP);
	if (grp != NULL && chown(path, (uid_t)-1, grp->gr_gid) < 0)
		ESGW_WARN("cannot give %s to group %s: %s", path, ADMIN_GROUP, strerror(errno));
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
