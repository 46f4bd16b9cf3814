/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket on which esgw-ctld pushes DpConfig and asks for DpStats:
 * opening it, the watcher thread that wakes the data thread when it is
 * readable, and serving it (accept, read, hand each request to
 * esgw_dp_request_answer) on the data thread between bursts. */
#include "dp.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef ESGW_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "listen.h"
#include "log.h"

#define DP_TRIM_AFTER (1u << 20) /* bytes of a control message */

/* Waits (blocking, off the data path) for the control socket to become
 * readable, then hands it to the data thread and waits until served. This
 * lets an idle data thread sleep long yet answer esgw-ctld at once. The
 * wait has no timeout: esgw_dp_ctl_close ends it through ctl_stop_fd (a
 * 200 ms timeout, to see esgw_dp_quit, woke every dataplane process's
 * watcher 5 times a second at rest, each wake-up about 50 us of CPU on a
 * VM: 20 a second of a gateway's ~176). */
static void *ctl_watch(void *arg)
{
	struct esgw_dp *dp = arg;

	while (!esgw_dp_quit) {
		struct pollfd pfd[3] = {{.fd = dp->ctl_stop_fd, .events = POLLIN},
					{.fd = dp->listen_fd, .events = POLLIN},
					{.fd = dp->conn_fd, .events = POLLIN}};
		int n = poll(pfd, dp->conn_fd >= 0 ? 3 : 2, -1);
		struct timespec until;
		struct esgw_doorbell *db;

		if (n <= 0 || pfd[0].revents != 0)
			continue; /* interrupted, or stopping: esgw_dp_quit is set */
		pthread_mutex_lock(&dp->ctl_lock);
		dp->ctl_pending = 1;
		db = dp->db;
		if (db != NULL)
			esgw_doorbell_ring(db);
		while (dp->ctl_pending && !esgw_dp_quit) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 200 * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&dp->ctl_served, &dp->ctl_lock, &until);
		}
		pthread_mutex_unlock(&dp->ctl_lock);
	}
	return NULL;
}

static int ctl_thread_start(struct esgw_dp *dp)
{
	sigset_t all, old;
	int rc;

	dp->ctl_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dp->ctl_stop_fd < 0) {
		ESGW_ERR("control thread: eventfd: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_init(&dp->ctl_lock, NULL);
	pthread_cond_init(&dp->ctl_served, NULL);
	/* Signals go to the data thread, which checks esgw_dp_quit. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&dp->ctl_thread, NULL, ctl_watch, dp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		ESGW_ERR("control thread: %s", strerror(rc));
		close(dp->ctl_stop_fd);
		dp->ctl_stop_fd = -1;
		return -1;
	}
	pthread_setname_np(dp->ctl_thread, "esgw-ctl");
	dp->ctl_thread_running = true;
	return 0;
}

int esgw_dp_ctl_open(struct esgw_dp *dp, const char *name)
{
	char err[512] = "";
	int fd, rc;

	dp->conn_fd = -1;
	if (dp->rundir[0] == '\0')
		snprintf(dp->rundir, sizeof(dp->rundir), "%s", ESGW_RUNDIR_DEFAULT);
	rc = esgw_listen_dir_check(dp->rundir, err, sizeof(err));
	if (rc == 1 && mkdir(dp->rundir, 0750) == 0)
		rc = esgw_listen_dir_check(dp->rundir, err, sizeof(err));
	if (rc != 0) {
		if (err[0] == '\0')
			snprintf(err, sizeof(err), "%s: %s", dp->rundir, strerror(errno));
		ESGW_ERR("run directory %s", err);
		return -1;
	}
	snprintf(dp->sock_path, sizeof(dp->sock_path), "%s/%s.sock", dp->rundir, name);
	/* 0600: ctld pushes keys through it (and checks who listens). */
	fd = esgw_listen_open(dp->sock_path, 0600, 4, SOCK_NONBLOCK, err, sizeof(err));
	if (fd < 0) {
		ESGW_ERR("control %s", err);
		return -1;
	}
	dp->listen_fd = fd;
	if (ctl_thread_start(dp) < 0) {
		close(fd);
		unlink(dp->sock_path);
		dp->listen_fd = -1;
		return -1;
	}
	/* The main loop starts right after: loop cycles count from here. */
	esgw_stage_start(&dp->cycles);
	dp->recent_cycles = rte_get_tsc_hz() / 1000000 * ESGW_RECENT_US;
	dp->bells.hold_cycles = rte_get_tsc_hz() / 1000000 * ESGW_HOLD_US;
#ifdef ESGW_HAVE_LIBSYSTEMD
	/* The units are Type=notify: esgw-rxtx.service is active only from here
	 * on, so the secondaries ordered after it find the primary's memory
	 * (without it they start with the primary's exec and fail in EAL init).
	 * Outside systemd NOTIFY_SOCKET is unset and this does nothing. */
	sd_notify(0, "READY=1");
#endif
	return 0;
}

void esgw_dp_ctl_close(struct esgw_dp *dp)
{
	if (dp->ctl_thread_running) {
		uint64_t one = 1;

		esgw_dp_quit = 1;
		if (write(dp->ctl_stop_fd, &one, sizeof(one)) != sizeof(one)) /* never full */
			ESGW_WARN("control thread: eventfd: %s", strerror(errno));
		pthread_mutex_lock(&dp->ctl_lock);
		dp->ctl_pending = 0;
		pthread_cond_signal(&dp->ctl_served);
		pthread_mutex_unlock(&dp->ctl_lock);
		pthread_join(dp->ctl_thread, NULL);
		dp->ctl_thread_running = false;
		close(dp->ctl_stop_fd);
		dp->ctl_stop_fd = -1;
	}
	if (dp->conn_fd >= 0)
		close(dp->conn_fd);
	if (dp->listen_fd >= 0) {
		close(dp->listen_fd);
		unlink(dp->sock_path);
	}
	dp->conn_fd = dp->listen_fd = -1;
	esgw_frame_free(&dp->rx);
}

static void ctl_serve(struct esgw_dp *dp);

void esgw_dp_ctl_poll(struct esgw_dp *dp)
{
	if (!dp->ctl_pending)
		return;
	ctl_serve(dp);
	pthread_mutex_lock(&dp->ctl_lock);
	dp->ctl_pending = 0;
	pthread_cond_signal(&dp->ctl_served);
	pthread_mutex_unlock(&dp->ctl_lock);
}

/* Only root or our own user may configure us (the socket is 0600 too). */
static bool peer_is_controller(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       (cred.uid == 0 || cred.uid == geteuid());
}

static void ctl_serve(struct esgw_dp *dp)
{
	uint8_t buf[16384];
	const uint8_t *msg;
	size_t len;
	ssize_t r;
	int fd, rc;

	fd = accept4(dp->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0 && !peer_is_controller(fd)) {
		ESGW_LOG_RATELIMITED(ESGW_LOG_WARN, "control connection from a process that is "
						    "neither root nor our user: closed");
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		/* One controller at a time: a new connection replaces the old one. */
		if (dp->conn_fd >= 0)
			close(dp->conn_fd);
		dp->conn_fd = fd;
		esgw_frame_reset(&dp->rx);
	}
	if (dp->conn_fd < 0)
		return;
	for (;;) {
		r = read(dp->conn_fd, buf, sizeof(buf));
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0 || esgw_frame_feed(&dp->rx, buf, (size_t)r) < 0) {
			close(dp->conn_fd);
			dp->conn_fd = -1;
			esgw_frame_reset(&dp->rx);
			return;
		}
	}
	explicit_bzero(buf, sizeof(buf)); /* may hold SA keys */
	while ((rc = esgw_frame_next(&dp->rx, &msg, &len)) == ESGW_FRAME_READY) {
		Esgw__DpRequest *req = esgw__dp_request__unpack(NULL, len, msg);

		esgw_dp_request_answer(dp, req);
		if (req != NULL)
			esgw__dp_request__free_unpacked(req, NULL);
		/* A DpConfig carries SA keys: leave none in the receive buffer. */
		explicit_bzero((uint8_t *)msg, len);
		/* A large message (a whole configuration of thousands of
		 * tunnels, a big batch) left its unpacked copy and what was
		 * built from it freed in the heap: give those pages back, so
		 * that resident memory is what the tables hold. Small changes
		 * (one command) skip it: it costs a walk of the heap. */
		if (len >= DP_TRIM_AFTER)
			malloc_trim(0);
		if (dp->conn_fd < 0)
			return;
		esgw_frame_consume(&dp->rx);
	}
	if (rc == ESGW_FRAME_TOO_BIG) {
		ESGW_WARN("control message over %u bytes: closing the connection", ESGW_FRAME_MAX);
		close(dp->conn_fd);
		dp->conn_fd = -1;
		esgw_frame_reset(&dp->rx);
	}
}
