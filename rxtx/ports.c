/* SPDX-License-Identifier: BSD-3-Clause */
/* The ethdev ports: check that every device given to the EAL (--vdev, --allow)
 * became a port, then configure one RX and one TX queue on each and start it. */
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "log.h"
#include "rxtx.h"

void rxtx_port_mac(uint16_t port_id, char *buf, size_t len)
{
	struct rte_ether_addr mac;

	if (rte_eth_macaddr_get(port_id, &mac) != 0) {
		snprintf(buf, len, "??:??:??:??:??:??");
		return;
	}
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac.addr_bytes[0], mac.addr_bytes[1],
		 mac.addr_bytes[2], mac.addr_bytes[3], mac.addr_bytes[4], mac.addr_bytes[5]);
}

/* The value of key in a devargs string "k1=v1,k2=v2" into buf, or 0. */
static int devargs_value(const char *args, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);

	for (const char *p = args; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(buf, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* The EAL only logs a device that failed to probe and carries on; say which
 * one and, for the common case of a Linux interface, why. */
static void explain_probe_failure(const struct rte_devargs *da)
{
	char iface[IF_NAMESIZE + 1];

	if (devargs_value(da->args, "iface", iface, sizeof(iface)) && if_nametoindex(iface) == 0)
		ESGW_ERR("port %s: iface %s not found (in this network namespace)", da->name,
			 iface);
	else
		ESGW_ERR(
			"port %s: device probe failed (devargs \"%s\"), see the EAL messages above",
			da->name, da->args ? da->args : "");
}

int rxtx_ports_find(struct rxtx *rx)
{
	struct rte_devargs *da;
	uint16_t port;
	int missing = 0;

	RTE_EAL_DEVARGS_FOREACH(NULL, da)
	{
		if (rte_eth_dev_get_port_by_name(da->name, &port) != 0) {
			explain_probe_failure(da);
			missing++;
		}
	}
	if (missing)
		return -1;

	rx->nb_ports = 0;
	RTE_ETH_FOREACH_DEV(port)
	{
		char name[RTE_ETH_NAME_MAX_LEN];

		/* Port ids index the TX rings and the shared tables. */
		if (port >= ESGW_MAX_PORTS) {
			rte_eth_dev_get_name_by_port(port, name);
			ESGW_ERR("port %s: port id %u, at most %u ports are supported", name, port,
				 ESGW_MAX_PORTS);
			return -1;
		}
		rx->ports[rx->nb_ports++] = port;
	}
	if (rx->nb_ports == 0)
		ESGW_WARN("no ports: give devices with --vdev (e.g. net_af_packet0,iface=eth0)");
	return 0;
}

int rxtx_port_start(struct rxtx *rx, uint16_t port, const char *name, bool promiscuous,
		    bool rx_intr)
{
	struct rte_eth_conf conf = {0}; /* rxmode.mtu 0: the device default */
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = 1024, nb_txd = 1024;
	int socket = rte_eth_dev_socket_id(port);
	char mac[32];
	uint16_t mtu = 0;
	int rc;

	if (socket < 0)
		socket = (int)rte_socket_id();
	conf.intr_conf.rxq = rx_intr;
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		ESGW_ERR("port %s: device info: %s", name, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc != 0) {
		ESGW_ERR("port %s: configure: %s", name, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc != 0) {
		ESGW_ERR("port %s: descriptor counts: %s", name, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_rx_queue_setup(port, 0, nb_rxd, (unsigned int)socket, NULL, rx->dp.pool);
	if (rc != 0) {
		ESGW_ERR("port %s: RX queue: %s", name, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_tx_queue_setup(port, 0, nb_txd, (unsigned int)socket, NULL);
	if (rc != 0) {
		ESGW_ERR("port %s: TX queue: %s", name, rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0) {
		ESGW_ERR("port %s: start: %s", name, rte_strerror(-rc));
		return -1;
	}
	/* The router answers ARP for its own addresses on any MAC, and a tunnel
	 * endpoint may be reached through a virtual MAC: take everything. */
	rc = promiscuous ? rte_eth_promiscuous_enable(port) : 0;
	if (rc != 0)
		ESGW_WARN("port %s: promiscuous mode: %s", name, rte_strerror(-rc));
	rte_eth_dev_get_mtu(port, &mtu);
	rxtx_port_mac(port, mac, sizeof(mac));
	ESGW_INFO("port %u %s: mac %s mtu %u driver %s", port, name, mac, mtu, info.driver_name);
	return 0;
}

int rxtx_ports_start(struct rxtx *rx)
{
	char name[RTE_ETH_NAME_MAX_LEN];

	for (rx->nb_started = 0; rx->nb_started < rx->nb_ports; rx->nb_started++) {
		uint16_t port = rx->ports[rx->nb_started];

		rte_eth_dev_get_name_by_port(port, name);
		if (rxtx_port_start(rx, port, name, true, false) < 0) {
			/* A configured but not started port is closed like the others. */
			rte_eth_dev_close(port);
			return -1;
		}
	}
	return 0;
}

void rxtx_ports_stop(struct rxtx *rx)
{
	char name[RTE_ETH_NAME_MAX_LEN];

	while (rx->nb_started > 0) {
		uint16_t port = rx->ports[--rx->nb_started];
		int rc;

		rte_eth_dev_get_name_by_port(port, name);
		rc = rte_eth_dev_stop(port);
		if (rc != 0)
			ESGW_WARN("port %s: stop: %s", name, rte_strerror(-rc));
		rte_eth_dev_close(port);
	}
}
