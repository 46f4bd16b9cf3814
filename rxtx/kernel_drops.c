/* SPDX-License-Identifier: BSD-3-Clause */
/* Frames the kernel dropped before rxtx saw them. net_af_packet receives
 * through a kernel ring; when rxtx falls behind (a busy CPU) the kernel drops
 * frames there and DPDK 22.11's af_packet driver does not report it (imissed
 * stays 0). So rxtx finds the driver's AF_PACKET sockets among its own file
 * descriptors, matches them to ports by interface index, and adds up their
 * PACKET_STATISTICS drops (the kernel resets them on every read). Counted as
 * the port's rx_missed and as the drop reason rx_missed. */
#include <dirent.h>
#include <linux/if_packet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "log.h"
#include "rxtx.h"

static int port_of_ifindex(const struct rxtx *rx, int ifindex)
{
	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		struct rte_eth_dev_info info;

		if (rte_eth_dev_info_get(rx->ports[i], &info) == 0 && info.if_index != 0 &&
		    (int)info.if_index == ifindex)
			return rx->ports[i];
	}
	return -1;
}

void rxtx_kernel_drops_find(struct rxtx *rx)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;

	if (dir == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		int fd = atoi(de->d_name), domain = 0, port;
		socklen_t len = sizeof(domain);
		struct sockaddr_ll sll;
		socklen_t sll_len = sizeof(sll);

		if (fd <= 2 || fd == dirfd(dir) ||
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
		    domain != AF_PACKET || getsockname(fd, (struct sockaddr *)&sll, &sll_len) != 0)
			continue;
		port = port_of_ifindex(rx, sll.sll_ifindex);
		if (port < 0 || rx->kdrop_nfd[port] >= RXTX_KDROP_FDS)
			continue;
		rx->kdrop_fd[port][rx->kdrop_nfd[port]++] = fd;
	}
	closedir(dir);
	for (uint16_t i = 0; i < rx->nb_ports; i++)
		if (rx->kdrop_nfd[rx->ports[i]])
			ESGW_INFO("port %u: counting kernel ring drops on %u socket(s)",
				  rx->ports[i], rx->kdrop_nfd[rx->ports[i]]);
}

void rxtx_kernel_drops_poll(struct rxtx *rx)
{
	for (uint16_t p = 0; p < ESGW_MAX_PORTS; p++) {
		for (uint8_t k = 0; k < rx->kdrop_nfd[p]; k++) {
			struct tpacket_stats st;
			socklen_t len = sizeof(st);

			if (getsockopt(rx->kdrop_fd[p][k], SOL_PACKET, PACKET_STATISTICS, &st,
				       &len) == 0)
				rx->kernel_drops[p] += st.tp_drops;
		}
	}
}
