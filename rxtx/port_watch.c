/* SPDX-License-Identifier: BSD-3-Clause */
/* What wakes a sleeping rxtx besides its doorbell: a frame on a port, instead
 * of its next timed poll of the ports (up to RXTX_DEEP_IDLE_TIMEOUT_US later,
 * at every gateway a packet crosses: a ping through two gateways took ~6 ms).
 * It waits on the kernel sockets of af_packet ports (the ones kernel_drops.c
 * found), the eventfds of memif rings in interrupt mode (memif_irq.c) and the
 * TAPs' queues (frames from the host's stack, punt.c).
 *
 * The data thread sleeps in ppoll() on them and on the doorbell's FIFO
 * (esgw_doorbell.fifo, doorbell.c): the router, the workers and the control
 * thread write a byte into the FIFO where they would wake a futex. A frame
 * thus wakes rxtx itself. Before, a thread of its own waited in poll() on the
 * set and rang the futex: two wake-ups, and on this VM's ping through the
 * demo's two gateways the watcher's run and rxtx's wait after it came to
 * 16 + 13 us on average at each of the four gateway crossings. The ping
 * end to end did not move beyond this host's noise (~0.6 ms at the median
 * either way, six interleaved rounds): the wake-ups left cost more.
 *
 * The set changes at run time (a memif peer connects or reconnects, a TAP is
 * made): it is worked out again before each sleep (rxtx_port_watch_update).
 * Without the FIFO (it could not be made) rxtx sleeps on the futex and polls
 * its ports on the timer. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rxtx.h"

void rxtx_port_watch_start(struct rxtx *rx)
{
	rx->watch_bell_fd = esgw_doorbell_fifo_create();
	if (rx->watch_bell_fd < 0) {
		ESGW_WARN("port watcher: no doorbell FIFO: the ports are polled on a timer only");
		return;
	}
	rx->dp.shared->db_rxtx.fifo = 1; /* before any producer attaches */
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
	bool sockets, all;

	if (rx->watch_bell_fd < 0) {
		rx->watch_all = rx->watch_sockets_all = false;
		return;
	}
	all = watch_collect(rx, rx->watch_fd, rx->watch_kind, &rx->watch_nfd, &sockets);
	rx->watch_all = all;
	rx->watch_sockets_all = sockets;
}

void rxtx_port_watch_sleep(struct rxtx *rx, unsigned int timeout_us, int (*has_work)(void *arg))
{
	struct pollfd pfd[1 + RXTX_WATCH_MAX];
	unsigned int n = 0;
	bool port = false, memif = false;

	if (rx->watch_bell_fd < 0) {
		esgw_dp_idle(&rx->dp, &rx->dp.shared->db_rxtx, timeout_us, has_work, rx);
		return;
	}
	pfd[n++] = (struct pollfd){.fd = rx->watch_bell_fd, .events = POLLIN};
	if (!rx->paused) /* paused: frames stay in the ports until the router has room */
		for (unsigned int i = 0; i < rx->watch_nfd; i++)
			pfd[n++] = (struct pollfd){.fd = rx->watch_fd[i], .events = POLLIN};
	esgw_dp_idle_fds(&rx->dp, &rx->dp.shared->db_rxtx, timeout_us, has_work, rx, pfd, n);
	for (unsigned int i = 1; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		port = true;
		if (rx->watch_kind[i - 1] == RXTX_WATCH_TAP)
			rx->tap_ready = 1;
		else if (rx->watch_kind[i - 1] == RXTX_WATCH_MEMIF)
			memif = true;
	}
	if (port)
		__atomic_fetch_add(&rx->port_wakeups, 1, __ATOMIC_RELAXED);
	if (memif)
		__atomic_fetch_add(&rx->memif_wakeups, 1, __ATOMIC_RELAXED);
}
