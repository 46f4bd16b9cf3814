/* SPDX-License-Identifier: BSD-3-Clause */
/* rxtx's answers on the control socket: the pushed DpConfig (its interfaces
 * name the punt TAPs and give them their addresses) and DpStats with per-port
 * and per-process counters. */
#include <string.h>

#include <rte_ethdev.h>

#include "rxtx.h"

int rxtx_on_config(struct esgw_dp *dp, const Esgw__DpConfig *cfg, char *err, size_t errlen)
{
	/* Ports come from the command line. The punt TAPs follow the
	 * interfaces' names, addresses and MTU; a TAP that cannot be made is
	 * logged and its punts counted as punted_no_host, but it is no reason
	 * to refuse the configuration the forwarding path needs. */
	(void)err;
	(void)errlen;
	rxtx_punt_configure((struct rxtx *)dp, cfg);
	return 0;
}

static Esgw__DpPortStats *port_stats(struct esgw_dp *dp, uint16_t port, uint64_t *missed)
{
	const struct rxtx *rx = (const struct rxtx *)dp;
	Esgw__DpPortStats *ps = esgw_dp_stats_alloc(dp, sizeof(*ps));
	char name[RTE_ETH_NAME_MAX_LEN] = "";
	struct rte_eth_stats st = {0};
	char mac[32];

	esgw__dp_port_stats__init(ps);
	rte_eth_dev_get_name_by_port(port, name);
	rxtx_port_mac(port, mac, sizeof(mac));
	rte_eth_stats_get(port, &st); /* on failure the zeroes are the honest answer */
	ps->port_id = port;
	ps->device = esgw_dp_stats_strdup(dp, name);
	ps->mac = esgw_dp_stats_strdup(dp, mac);
	ps->rx_packets = st.ipackets;
	ps->tx_packets = st.opackets;
	ps->rx_bytes = st.ibytes;
	ps->tx_bytes = st.obytes;
	ps->rx_missed = st.imissed + rx->kernel_drops[port];
	*missed += ps->rx_missed;
	ps->tx_errors = st.oerrors;
	return ps;
}

void rxtx_on_stats(struct esgw_dp *dp, Esgw__DpStats *stats)
{
	struct rxtx *rx = (struct rxtx *)dp;
	uint64_t drops_now[ESGW_DROP_MAX], missed = 0;
	Esgw__Counter **drops;
	size_t n_drops, n = 0;

	rxtx_kernel_drops_poll(rx);
	stats->ports = esgw_dp_stats_alloc(dp, rx->nb_ports * sizeof(*stats->ports));
	for (uint16_t i = 0; i < rx->nb_ports; i++)
		stats->ports[i] = port_stats(dp, rx->ports[i], &missed);
	stats->n_ports = rx->nb_ports;

	/* Frames the ports dropped before we saw them count like our own drops. */
	memcpy(drops_now, rx->drops, sizeof(drops_now));
	drops_now[ESGW_DROP_RX_MISSED] = missed;
	drops = esgw_dp_stats_drops(dp, drops_now, &n_drops);
	stats->counters = esgw_dp_stats_alloc(dp, (10 + n_drops) * sizeof(*stats->counters));
	stats->counters[n++] = esgw_dp_stats_counter(dp, "rx_packets", rx->rx_packets);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "tx_packets", rx->tx_packets);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "punt_tx", rx->punt_tx);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "punt_rx", rx->punt_rx);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "rx_paused", rx->rx_paused);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "tx_held", rx->tx_held);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "tx_stalls", rx->tx_stalls);
	stats->counters[n++] = esgw_dp_stats_counter(dp, "tx_order_waits", rx->tx_order_waits);
	stats->counters[n++] = esgw_dp_stats_counter(
		dp, "port_wakeups", __atomic_load_n(&rx->port_wakeups, __ATOMIC_RELAXED));
	stats->counters[n++] = esgw_dp_stats_counter(
		dp, "memif_wakeups", __atomic_load_n(&rx->memif_wakeups, __ATOMIC_RELAXED));
	/* The whole pool (every lcore's cache included: they live in it). */
	stats->mbuf_pool_size = dp->pool->size;
	stats->mbuf_in_use = rte_mempool_in_use_count(dp->pool);
	for (size_t i = 0; i < n_drops; i++)
		stats->counters[n++] = drops[i];
	stats->n_counters = n;
}
