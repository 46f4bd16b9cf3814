/* SPDX-License-Identifier: BSD-3-Clause */
/* ctld's control connection to each dataplane process: connecting (only to a
 * peer that may receive keys), noticing it close, and one request/response
 * exchange. */
#include "ctld.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "framing.h"
#include "log.h"

void dp_conn_close(struct dp_proc *p)
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
	dp_conn_close(p);
}

void dp_conn_init(struct dp_proc *p)
{
	p->fd = -1;
	ev_io_init(&p->eof_watcher, on_proc_eof, -1, EV_READ);
	p->eof_watcher.data = p;
}

/* The peer of a dataplane socket is one we may give keys: root or our own
 * user, and in standalone mode the very process we started. */
static bool peer_is_dataplane(const struct dp_proc *p, const struct ucred *cred)
{
	if (cred->uid != 0 && cred->uid != geteuid())
		return false;
	return !ctld.opt.standalone || cred->pid == p->pid;
}

/* Connect to <rundir>/<name>.sock; 0 or -1 (not there, not ready). */
int dp_conn_open(struct dp_proc *p)
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

		if (dp_conn_open(p) < 0)
			return NULL;
		if (esgw_frame_write(p->fd, msg, len, CTLD_DP_TIMEOUT_MS) == 0 &&
		    esgw_frame_read(p->fd, &buf, &blen, CTLD_DP_TIMEOUT_MS) == 0) {
			resp = esgw__dp_response__unpack(NULL, blen, buf);
			free(buf);
			if (resp != NULL)
				return resp;
			ESGW_WARN("%s sent a malformed DpResponse", p->name);
			dp_conn_close(p);
			return NULL;
		}
		ESGW_WARN("%s: control request failed: %s", p->name, strerror(errno));
		dp_conn_close(p);
		if (fresh || errno == ETIMEDOUT)
			return NULL;
	}
	return NULL;
}

Esgw__DpResponse *dp_conn_exchange(struct dp_proc *p, const Esgw__DpRequest *req)
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
