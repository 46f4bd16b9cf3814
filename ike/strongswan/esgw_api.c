/* SPDX-License-Identifier: GPL-2.0-or-later */
/* esgw-ctld's API socket as the kernel-esgw plugin uses it: framed protobuf
 * (common/framing.h) on a UNIX stream socket, one request at a time on the
 * request connection, and a thread that keeps an event subscription up,
 * reconnecting every second while ctld is away. */
#include "esgw_api.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <threading/mutex.h>
#include <threading/thread.h>
#include <utils/debug.h>

#include "framing.h"

#define RECONNECT_MS 1000

typedef struct private_esgw_api_t private_esgw_api_t;

struct private_esgw_api_t {
	esgw_api_t public;
	char *path;
	int timeout_ms;
	mutex_t *lock;  /* the request connection */
	int fd;         /* request connection, -1: closed */
	int event_fd;   /* subscribed connection, -1: not connected */
	bool connected; /* event_fd is subscribed */
	thread_t *thread;
	esgw_api_event_cb_t on_event;
	esgw_api_connect_cb_t on_connect;
	void *data;
	bool unreachable_logged;
};

const char *esgw_api_error(const Esgw__Response *resp)
{
	if (resp == NULL)
		return "esgw-ctld not reachable";
	if (resp->status == ESGW__STATUS__STATUS_OK)
		return "ok";
	return resp->error && resp->error[0] ? resp->error : "refused";
}

static int connect_socket(private_esgw_api_t *this)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(this->path) >= sizeof(addr.sun_path))
		return -1;
	strcpy(addr.sun_path, this->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One request and its response on fd; NULL on any socket error. */
static Esgw__Response *exchange(int fd, Esgw__Request *req, int timeout_ms)
{
	Esgw__Response *resp;
	uint8_t *msg;
	size_t len;

	req->version = ESGW__API_VERSION__API_VERSION_CURRENT;
	if (esgw_msg_write(fd, &req->base, timeout_ms) < 0 ||
	    esgw_frame_read(fd, &msg, &len, timeout_ms) < 0)
		return NULL;
	resp = esgw__response__unpack(NULL, len, msg);
	free(msg);
	return resp;
}

METHOD(esgw_api_t, call, Esgw__Response *, private_esgw_api_t *this, Esgw__Request *req)
{
	Esgw__Response *resp = NULL;

	this->lock->lock(this->lock);
	/* A connection that broke since the last call (ctld restarted) fails
	 * the first exchange: try once more on a new one. */
	for (int attempt = 0; attempt < 2 && resp == NULL; attempt++) {
		if (this->fd < 0)
			this->fd = connect_socket(this);
		if (this->fd < 0)
			break;
		resp = exchange(this->fd, req, this->timeout_ms);
		if (resp == NULL) {
			close(this->fd);
			this->fd = -1;
		}
	}
	if (resp == NULL && !this->unreachable_logged) {
		DBG1(DBG_KNL, "kernel-esgw: esgw-ctld at %s does not answer: %s", this->path,
		     strerror(errno));
		this->unreachable_logged = TRUE;
	} else if (resp != NULL) {
		this->unreachable_logged = FALSE;
	}
	this->lock->unlock(this->lock);
	return resp;
}

METHOD(esgw_api_t, is_connected, bool, private_esgw_api_t *this)
{
	return this->connected;
}

/* Connect and subscribe; TRUE once ctld said OK. */
static bool subscribe(private_esgw_api_t *this)
{
	Esgw__Request req = ESGW__REQUEST__INIT;
	Esgw__EventsSubscribe sub = ESGW__EVENTS_SUBSCRIBE__INIT;
	Esgw__Response *resp;
	int fd = connect_socket(this);

	if (fd < 0)
		return FALSE;
	req.body_case = ESGW__REQUEST__BODY_EVENTS_SUBSCRIBE;
	req.events_subscribe = &sub;
	resp = exchange(fd, &req, this->timeout_ms);
	if (resp == NULL || resp->status != ESGW__STATUS__STATUS_OK) {
		DBG1(DBG_KNL, "kernel-esgw: event subscription refused: %s", esgw_api_error(resp));
		if (resp)
			esgw__response__free_unpacked(resp, NULL);
		close(fd);
		return FALSE;
	}
	esgw__response__free_unpacked(resp, NULL);
	this->event_fd = fd;
	return TRUE;
}

/* Read what is there and hand every whole event frame on; FALSE on EOF. */
static bool read_events(private_esgw_api_t *this, struct esgw_frame_buf *fb)
{
	uint8_t buf[4096];
	const uint8_t *msg;
	size_t len;
	ssize_t n = read(this->event_fd, buf, sizeof(buf));
	int rc;

	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	if (esgw_frame_feed(fb, buf, (size_t)n) < 0)
		return FALSE;
	while ((rc = esgw_frame_next(fb, &msg, &len)) == ESGW_FRAME_READY) {
		Esgw__Response *resp = esgw__response__unpack(NULL, len, msg);

		esgw_frame_consume(fb);
		if (resp == NULL)
			continue;
		if (resp->event != NULL)
			this->on_event(this->data, resp->event);
		esgw__response__free_unpacked(resp, NULL);
	}
	return rc != ESGW_FRAME_TOO_BIG;
}

static void *watch_events(private_esgw_api_t *this)
{
	struct esgw_frame_buf fb = {0};

	while (TRUE) {
		struct pollfd pfd;
		bool ok;

		if (this->event_fd < 0) {
			thread_cancelability(FALSE);
			ok = subscribe(this);
			if (ok) {
				DBG1(DBG_KNL, "kernel-esgw: connected to esgw-ctld at %s", this->path);
				this->connected = TRUE;
				this->on_connect(this->data);
			}
			thread_cancelability(TRUE);
			if (!ok) {
				usleep(RECONNECT_MS * 1000); /* a cancellation point */
				continue;
			}
		}
		pfd = (struct pollfd){.fd = this->event_fd, .events = POLLIN};
		if (poll(&pfd, 1, -1) <= 0)
			continue;
		thread_cancelability(FALSE);
		ok = read_events(this, &fb);
		if (!ok) {
			DBG1(DBG_KNL, "kernel-esgw: lost esgw-ctld at %s: reconnecting", this->path);
			close(this->event_fd);
			this->event_fd = -1;
			this->connected = FALSE;
			esgw_frame_free(&fb);
		}
		thread_cancelability(TRUE);
	}
	return NULL;
}

METHOD(esgw_api_t, destroy, void, private_esgw_api_t *this)
{
	if (this->thread) {
		this->thread->cancel(this->thread);
		this->thread->join(this->thread);
	}
	if (this->event_fd >= 0)
		close(this->event_fd);
	if (this->fd >= 0)
		close(this->fd);
	this->lock->destroy(this->lock);
	free(this->path);
	free(this);
}

esgw_api_t *esgw_api_create(const char *socket_path, int timeout_ms, esgw_api_event_cb_t on_event,
			    esgw_api_connect_cb_t on_connect, void *data)
{
	private_esgw_api_t *this;

	INIT(this,
		.public = {
			.call = _call,
			.is_connected = _is_connected,
			.destroy = _destroy,
		},
		.path = strdup(socket_path),
		.timeout_ms = timeout_ms,
		.lock = mutex_create(MUTEX_TYPE_DEFAULT),
		.fd = -1,
		.event_fd = -1,
		.on_event = on_event,
		.on_connect = on_connect,
		.data = data,
	);
	this->thread = thread_create((thread_main_t)watch_events, this);
	if (this->thread == NULL) {
		destroy(this);
		return NULL;
	}
	return &this->public;
}
