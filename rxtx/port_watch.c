/* SPDX-License-Identifier: BSD-3-Clause */
/* Wakes a sleeping rxtx as soon as a frame arrives on a port with a kernel
 * socket (net_af_packet: the sockets kernel_drops.c found), instead of at its
 * next timed poll of the ports (up to RXTX_DEEP_IDLE_TIMEOUT_US later, at
 * every gateway a packet crosses: a ping through two gateways took ~6 ms).
 * A thread of its own waits in poll() on those sockets, only while rxtx is
 * about to sleep or asleep (armed): with traffic flowing rxtx polls the ports
 * itself and the thread waits on the armed word, costing nothing. */
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
 * wait) and writes watch_stop_fd (ending the poll). A 200 ms timeout, to see
 * esgw_dp_quit, woke the thread 5 times a second while rxtx slept. */
static void armed_wait(struct rxtx *rx)
{
	syscall(SYS_futex, &rx->watch_armed, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* The sockets to watch after the stop eventfd (pfd[0]). */
static unsigned int watch_fds(const struct rxtx *rx, struct pollfd *pfd)
{
	unsigned int n = 0;

	pfd[n++] = (struct pollfd){.fd = rx->watch_stop_fd, .events = POLLIN};

	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i];

		for (uint8_t k = 0; k < rx->kdrop_nfd[port]; k++)
			pfd[n++] = (struct pollfd){.fd = rx->kdrop_fd[port][k], .events = POLLIN};
	}
	return n;
}

static void *port_watch(void *arg)
{
	struct rxtx *rx = arg;
	struct pollfd pfd[1 + ESGW_MAX_PORTS * RXTX_KDROP_FDS];
	unsigned int n = watch_fds(rx, pfd);

	while (!esgw_dp_quit) {
		if (!rx->watch_armed) {
			armed_wait(rx);
			continue;
		}
		if (poll(pfd, n, -1) > 0 && pfd[0].revents == 0 && rx->watch_armed) {
			rx->watch_armed = 0;
			esgw_doorbell_ring(&rx->dp.shared->db_rxtx);
		}
	}
	return NULL;
}

/* Whether every dataplane port has a socket to watch. */
static bool all_watched(const struct rxtx *rx)
{
	for (uint16_t i = 0; i < rx->nb_ports; i++)
		if (rx->kdrop_nfd[rx->ports[i]] == 0)
			return false;
	return rx->nb_ports != 0;
}

void rxtx_port_watch_start(struct rxtx *rx)
{
	struct pollfd pfd[1 + ESGW_MAX_PORTS * RXTX_KDROP_FDS];
	sigset_t all, old;
	int rc;

	rx->watch_stop_fd = -1;
	if (watch_fds(rx, pfd) == 1)
		return; /* no socket to watch */
	rx->watch_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rx->watch_stop_fd < 0) {
		ESGW_WARN("port watcher: eventfd: %s: the ports are polled on a timer only",
			  strerror(errno));
		return;
	}
	sigfillset(&all); /* signals go to the data thread */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&rx->watch_thread, NULL, port_watch, rx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		ESGW_WARN("port watcher: %s: the ports are polled on a timer only", strerror(rc));
		close(rx->watch_stop_fd);
		rx->watch_stop_fd = -1;
		return;
	}
	pthread_setname_np(rx->watch_thread, "esgw-ports");
	rx->watch_running = true;
	rx->watch_all = all_watched(rx);
}

void rxtx_port_watch_arm(struct rxtx *rx)
{
	if (!rx->watch_running || rx->watch_armed)
		return;
	rx->watch_armed = 1;
	syscall(SYS_futex, &rx->watch_armed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int rxtx_port_watch_ready(struct rxtx *rx)
{
	struct pollfd pfd[1 + ESGW_MAX_PORTS * RXTX_KDROP_FDS];
	unsigned int n;

	if (!rx->watch_running)
		return 0;
	n = watch_fds(rx, pfd);
	return poll(pfd + 1, n - 1, 0) > 0;
}

void rxtx_port_watch_stop(struct rxtx *rx)
{
	uint64_t one = 1;

	if (!rx->watch_running)
		return;
	esgw_dp_quit = 1;    /* ends the loop, which the two wake-ups reach */
	rx->watch_armed = 1; /* out of armed_wait */
	syscall(SYS_futex, &rx->watch_armed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	if (write(rx->watch_stop_fd, &one, sizeof(one)) != sizeof(one)) /* out of poll */
		ESGW_WARN("port watcher: eventfd: %s", strerror(errno));
	pthread_join(rx->watch_thread, NULL);
	close(rx->watch_stop_fd);
	rx->watch_stop_fd = -1;
	rx->watch_running = false;
}
