/* SPDX-License-Identifier: BSD-3-Clause */
/* Wakes a sleeping rxtx as soon as a frame arrives, instead of at its next
 * timed poll of the ports (up to RXTX_DEEP_IDLE_TIMEOUT_US later, at every
 * gateway a packet crosses: a ping through two gateways took ~6 ms). What it
 * waits on: the kernel sockets of af_packet ports (the ones kernel_drops.c
 * found), the eventfds of memif rings in interrupt mode (memif_irq.c) and the
 * TAPs' queues (frames from the host's stack, punt.c). A thread of its own
 * waits in poll() on them, only while rxtx is about to sleep or asleep
 * (armed): with traffic flowing rxtx polls the ports itself and the thread
 * waits on the armed word, costing nothing.
 *
 * The set changes at run time (a memif peer connects or reconnects, a TAP is
 * made): the data thread works it out before each sleep
 * (rxtx_port_watch_update) and, when it differs, hands it over under
 * watch_lock and kicks the thread out of its poll to take it. */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "rxtx.h"

/* Neither wait has a timeout: rxtx_port_watch_stop arms (ending the futex
 * wait) and writes watch_kick_fd (ending the poll). A 200 ms timeout, to see
 * esgw_dp_quit, woke the thread 5 times a second while rxtx slept. */
static void armed_wait(struct rxtx *rx)
{
	syscall(SYS_futex, &rx->watch_armed, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* The set into pfd after the kick eventfd (pfd[0]), with what each entry
 * is. Returns the number of entries, pfd[0] included. */
static unsigned int watch_copy(struct rxtx *rx, struct pollfd *pfd, uint8_t *kind)
{
	unsigned int n = 0;

	pfd[n] = (struct pollfd){.fd = rx->watch_kick_fd, .events = POLLIN};
	kind[n++] = RXTX_WATCH_SOCKET;
	pthread_mutex_lock(&rx->watch_lock);
	for (unsigned int i = 0; i < rx->watch_nfd; i++) {
		pfd[n] = (struct pollfd){.fd = rx->watch_fd[i], .events = POLLIN};
		kind[n++] = rx->watch_kind[i];
	}
	pthread_mutex_unlock(&rx->watch_lock);
	return n;
}

static void kick_drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		ESGW_WARN("port watcher: eventfd: %s", strerror(errno));
}

static void *port_watch(void *arg)
{
	struct rxtx *rx = arg;
	struct pollfd pfd[1 + RXTX_WATCH_MAX];
	uint8_t kind[1 + RXTX_WATCH_MAX];
	unsigned int n = 0, gen = 0;
	bool memif;

	while (!esgw_dp_quit) {
		if (!rx->watch_armed) {
			armed_wait(rx);
			continue;
		}
		if (n == 0 || gen != __atomic_load_n(&rx->watch_gen, __ATOMIC_ACQUIRE)) {
			gen = __atomic_load_n(&rx->watch_gen, __ATOMIC_ACQUIRE);
			n = watch_copy(rx, pfd, kind);
		}
		if (poll(pfd, n, -1) <= 0)
			continue;
		if (pfd[0].revents != 0) { /* a new set, or stop */
			kick_drain(rx->watch_kick_fd);
			continue;
		}
		if (!rx->watch_armed)
			continue;
		memif = false;
		for (unsigned int i = 1; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (kind[i] == RXTX_WATCH_TAP)
				rx->tap_ready = 1;
			else if (kind[i] == RXTX_WATCH_MEMIF)
				memif = true;
		}
		rx->watch_armed = 0;
		esgw_doorbell_ring(&rx->dp.shared->db_rxtx);
		__atomic_fetch_add(&rx->port_wakeups, 1, __ATOMIC_RELAXED);
		if (memif)
			__atomic_fetch_add(&rx->memif_wakeups, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

void rxtx_port_watch_start(struct rxtx *rx)
{
	sigset_t all, old;
	int rc;

	rx->watch_kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rx->watch_kick_fd < 0) {
		ESGW_WARN("port watcher: eventfd: %s: the ports are polled on a timer only",
			  strerror(errno));
		return;
	}
	pthread_mutex_init(&rx->watch_lock, NULL);
	sigfillset(&all); /* signals go to the data thread */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&rx->watch_thread, NULL, port_watch, rx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		ESGW_WARN("port watcher: %s: the ports are polled on a timer only", strerror(rc));
		close(rx->watch_kick_fd);
		rx->watch_kick_fd = -1;
		return;
	}
	pthread_setname_np(rx->watch_thread, "esgw-ports");
	rx->watch_running = true;
}

/* The set as it is now; returns whether every port and TAP is in it, and
 * in *sockets whether every port has a kernel socket. */
static bool watch_collect(const struct rxtx *rx, int *fd, uint8_t *kind, unsigned int *np,
			  bool *sockets)
{
	unsigned int n = 0;
	bool all = rx->nb_ports != 0;

	*sockets = all;
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i];
		const struct rxtx_memif_irq *irq = &rx->memif_irq[port];

		for (uint8_t k = 0; k < rx->kdrop_nfd[port]; k++) {
			fd[n] = rx->kdrop_fd[port][k];
			kind[n++] = RXTX_WATCH_SOCKET;
		}
		if (rx->kdrop_nfd[port] == 0)
			*sockets = false;
		if (irq->fd >= 0 && irq->flags != NULL) {
			fd[n] = irq->fd;
			kind[n++] = RXTX_WATCH_MEMIF;
		} else if (rx->kdrop_nfd[port] == 0 && !(irq->queue != NULL && irq->down)) {
			all = false; /* polled on the timer */
		}
		if (rx->has_tap[port]) {
			if (rx->tap_fd[port] >= 0) {
				fd[n] = rx->tap_fd[port];
				kind[n++] = RXTX_WATCH_TAP;
			} else {
				all = false;
			}
		}
	}
	*np = n;
	return all;
}

void rxtx_port_watch_update(struct rxtx *rx)
{
	int fd[RXTX_WATCH_MAX];
	uint8_t kind[RXTX_WATCH_MAX];
	unsigned int n;
	bool sockets, all = watch_collect(rx, fd, kind, &n, &sockets);
	uint64_t one = 1;

	if (!rx->watch_running) {
		rx->watch_all = rx->watch_sockets_all = false;
		return;
	}
	rx->watch_all = all;
	rx->watch_sockets_all = sockets;
	if (n == rx->watch_nfd && memcmp(fd, rx->watch_fd, n * sizeof(fd[0])) == 0 &&
	    memcmp(kind, rx->watch_kind, n * sizeof(kind[0])) == 0)
		return; /* the same set (a reconnected memif ring's eventfd may reuse the number) */
	pthread_mutex_lock(&rx->watch_lock);
	memcpy(rx->watch_fd, fd, n * sizeof(fd[0]));
	memcpy(rx->watch_kind, kind, n * sizeof(kind[0]));
	rx->watch_nfd = n;
	pthread_mutex_unlock(&rx->watch_lock);
	__atomic_fetch_add(&rx->watch_gen, 1, __ATOMIC_RELEASE);
	if (write(rx->watch_kick_fd, &one, sizeof(one)) != sizeof(one)) /* out of poll */
		ESGW_WARN("port watcher: eventfd: %s", strerror(errno));
}

void rxtx_port_watch_arm(struct rxtx *rx)
{
	if (!rx->watch_running || rx->watch_armed || rx->watch_nfd == 0)
		return;
	rx->watch_armed = 1;
	syscall(SYS_futex, &rx->watch_armed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int rxtx_port_watch_ready(struct rxtx *rx)
{
	struct pollfd pfd[RXTX_WATCH_MAX];
	unsigned int n = rx->watch_nfd;
	int ready = 0;

	if (!rx->watch_running || n == 0)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = rx->watch_fd[i], .events = POLLIN};
	if (poll(pfd, n, 0) <= 0)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (rx->watch_kind[i] == RXTX_WATCH_TAP)
			rx->tap_ready = 1;
		ready = 1;
	}
	return ready;
}

void rxtx_port_watch_stop(struct rxtx *rx)
{
	uint64_t one = 1;

	if (!rx->watch_running)
		return;
	esgw_dp_quit = 1;    /* ends the loop, which the two wake-ups reach */
	rx->watch_armed = 1; /* out of armed_wait */
	syscall(SYS_futex, &rx->watch_armed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	if (write(rx->watch_kick_fd, &one, sizeof(one)) != sizeof(one)) /* out of poll */
		ESGW_WARN("port watcher: eventfd: %s", strerror(errno));
	pthread_join(rx->watch_thread, NULL);
	close(rx->watch_kick_fd);
	rx->watch_kick_fd = -1;
	rx->watch_running = false;
	pthread_mutex_destroy(&rx->watch_lock);
}
