/* SPDX-License-Identifier: BSD-3-Clause */
/* rxtx's end of the punt path (router/punt.c explains what is punted and
 * why): for each configured interface rxtx creates a DPDK net_tap port, a
 * Linux TAP interface "esgw-<name>" in the gateway's network namespace with
 * the interface's MAC, IPv4 and IPv6 addresses and MTU. Frames on the ring
 * esgw.punt (from the router, meta->in_port = the dataplane port they came in on) are
 * written to that port's TAP; frames the host's stack writes into a TAP are
 * complete (it resolved the neighbour with ARP or ND through the same TAP) and go
 * out of the paired port as they are.
 *
 * The TAPs are made when the configuration arrives, not from the command
 * line: their names and addresses are in the DpConfig (interface names are
 * not on the command line), so esgw-ctld and the systemd unit need nothing
 * new, and a TAP lives exactly as long as the rxtx that owns it (the kernel
 * removes it, addresses included, when rxtx exits). rte_vdev_init probes the
 * TAP in this process only: the secondaries never use it. */
#include <stdio.h>
#include <string.h>
#include <net/if.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "log.h"
#include "rxtx.h"

#define TAP_PREFIX "esgw-"
/* Reading a TAP is a system call even when it is empty (two per poll with two
 * interfaces): polled every 50 us and after every wake-up, as it was, that
 * was 40,778 read system calls a second in rxtx at full load in bench
 * setting (A) (1,536 with this).
 * Host frames (ARP, ND, IKE, ICMP from the host's stack) are control traffic:
 * they wait at most this long while rxtx is awake; a sleeping rxtx is woken
 * by the port watcher (port_watch.c), which also has it poll them at once.
 * A poll that found frames is followed by another at once. */
#define TAP_POLL_US 1000

static int our_port(const struct rxtx *rx, uint16_t port)
{
	for (uint16_t i = 0; i < rx->nb_ports; i++)
		if (rx->ports[i] == port)
			return 1;
	return 0;
}

/* "esgw-<interface name>" fits IFNAMSIZ for names up to 10 characters;
 * longer names get "esgw-p<port id>". */
static void tap_name(char *buf, size_t len, const char *ifc_name, uint16_t port)
{
	if (strlen(TAP_PREFIX) + strlen(ifc_name) < IF_NAMESIZE)
		snprintf(buf, len, TAP_PREFIX "%s", ifc_name);
	else
		snprintf(buf, len, TAP_PREFIX "p%u", port);
}

static int sysctl_set(const char *family, const char *ifname, const char *key, const char *value)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/%s/conf/%s/%s", family, ifname, key);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(value, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* The host speaks IPv6 through the TAP (the router punts IPv6 to it), but as
 * quietly as Linux allows, because whatever it sends leaves through the
 * port with the gateway's MAC. No link-local address (addr_gen_mode 1): the
 * router has none either, and an fe80:: address derived from the shared MAC
 * would be answered for by nobody; without one the kernel sends no router
 * solicitations and its neighbour solicitations take the gateway address of
 * the packet that needs them as source. No DAD (the router already answers
 * for these addresses: the host's probes would only find the router), no
 * router advertisements or autoconfiguration (the addresses and routes come
 * from the configuration). What is left are MLD reports for the addresses'
 * solicited-node groups, from ::, which a snooping switch uses anyway.
 * Everything is set before IPv6 is enabled and before the link comes up. */
static void tap_quiet_ipv6(const char *ifname)
{
	static const char *const keys[] = {"addr_gen_mode",        "accept_dad", "dad_transmits",
					   "router_solicitations", "accept_ra",  "autoconf"};
	static const char *const values[] = {"1\n", "0\n", "0\n", "0\n", "0\n", "0\n"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (sysctl_set("ipv6", ifname, keys[i], values[i]) < 0)
			return; /* no IPv6 in this kernel: nothing to enable either */
	sysctl_set("ipv6", ifname, "disable_ipv6", "0\n");
}

/* A port on a Linux interface (net_af_packet) is seen by the kernel too: now
 * that the kernel owns the gateway's addresses (on the TAP), it would take
 * every packet to them straight from that interface as well, answer pings
 * the router answers, and see TCP and IKE twice. Strict reverse-path
 * filtering there drops them (the way back to any sender is a TAP, never
 * this interface), and arp_ignore 8 keeps the kernel from answering ARP on
 * it. net_af_xdp and PCI ports take frames away from the kernel: nothing to
 * do; neither is anything undone at exit (the interface is the dataplane's). */
static void port_quiet_kernel(uint16_t port)
{
	struct rte_eth_dev_info info;
	char ifname[IF_NAMESIZE];
	FILE *f;
	int all = 0;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.if_index == 0 ||
	    if_indextoname(info.if_index, ifname) == NULL)
		return;
	/* The kernel applies the larger of "all" and the interface's value:
	 * loose mode (2) in "all" would let these packets through. */
	f = fopen("/proc/sys/net/ipv4/conf/all/rp_filter", "r");
	if (f != NULL) {
		if (fscanf(f, "%d", &all) != 1)
			all = 0;
		fclose(f);
	}
	if (all == 2 || sysctl_set("ipv4", ifname, "rp_filter", "1\n") < 0 ||
	    sysctl_set("ipv4", ifname, "arp_ignore", "8\n") < 0)
		ESGW_WARN("punt: cannot keep the kernel's stack off %s (rp_filter, arp_ignore): "
			  "it may answer packets for the gateway twice",
			  ifname);
	/* IPv6 has no reverse-path filter, and Linux takes a packet for any of
	 * its addresses on any interface: IPv6 goes off on this interface
	 * altogether (AF_PACKET still sees every frame), else the kernel would
	 * answer pings and TCP to the gateway's IPv6 addresses a second time. */
	if (sysctl_set("ipv6", ifname, "disable_ipv6", "1\n") < 0)
		ESGW_WARN("punt: cannot disable the kernel's IPv6 on %s: it may answer packets "
			  "for the gateway's IPv6 addresses twice",
			  ifname);
}

static int tap_create(struct rxtx *rx, uint16_t port, const char *ifc_name)
{
	char vdev[32], args[96], mac[32], *ifname = rx->tap_name[port];
	uint16_t tap;
	int rc;

	tap_name(ifname, sizeof(rx->tap_name[port]), ifc_name, port);
	rxtx_port_mac(port, mac, sizeof(mac));
	snprintf(vdev, sizeof(vdev), "net_tap_esgw%u", port);
	snprintf(args, sizeof(args), "iface=%s,mac=%s", ifname, mac);
	rc = rte_vdev_init(vdev, args);
	if (rc != 0 || rte_eth_dev_get_port_by_name(vdev, &tap) != 0) {
		ESGW_ERR("punt: cannot create TAP %s for port %u (%s): packets for the host "
			 "are dropped as punted_no_host",
			 ifname, port, rc ? rte_strerror(-rc) : "no port");
		return -1;
	}
	tap_quiet_ipv6(ifname);  /* before the link comes up */
	port_quiet_kernel(port); /* before the TAP gets the gateway's addresses */
	if (rxtx_port_start(rx, tap, vdev, false, true) < 0) {
		rte_eth_dev_close(tap);
		rte_vdev_uninit(vdev);
		return -1;
	}
	rx->tap[port] = tap;
	rx->has_tap[port] = true;
	/* Its queue's descriptor, readable when the host sent a frame: the port
	 * watcher wakes a sleeping rxtx with it (port_watch.c). */
	rx->tap_fd[port] = rte_eth_dev_rx_intr_ctl_q_get_fd(tap, 0);
	if (rx->tap_fd[port] < 0)
		ESGW_WARN("punt: TAP %s has no queue descriptor to wait on: the host's frames "
			  "wait for rxtx's next timed wake-up (up to %u ms)",
			  ifname, RXTX_DEEP_IDLE_TIMEOUT_US / 1000);
	ESGW_INFO("punt: port %u <-> TAP %s (port %u)", port, ifname, tap);
	return 0;
}

int rxtx_punt_configure(struct rxtx *rx, const Esgw__DpConfig *cfg)
{
	int rc = 0;

	for (size_t i = 0; i < cfg->n_interfaces; i++) {
		const Esgw__DpInterface *ifc = cfg->interfaces[i];
		unsigned int ifindex;
		uint16_t port;

		if (rte_eth_dev_get_port_by_name(ifc->device, &port) != 0 ||
		    port >= ESGW_MAX_PORTS || !our_port(rx, port))
			continue; /* not probed by this rxtx: ctld restarts it with the new ports */
		if (!rx->has_tap[port] && tap_create(rx, port, ifc->name) < 0) {
			rc = -1;
			continue;
		}
		ifindex = if_nametoindex(rx->tap_name[port]);
		if (ifindex == 0 || rxtx_host_addr_sync(rx->tap_name[port], (int)ifindex, ifc) < 0)
			rc = -1;
	}
	return rc;
}

/* Punted frames to the TAP of the port each came in on. */
static unsigned int ring_to_taps(struct rxtx *rx)
{
	struct rte_mbuf *pkts[ESGW_BURST], *by_port[ESGW_MAX_PORTS][ESGW_BURST];
	uint16_t count[ESGW_MAX_PORTS] = {0};
	unsigned int n = rte_ring_dequeue_burst(rx->punt, (void **)pkts, ESGW_BURST, NULL);

	for (unsigned int k = 0; k < n; k++) {
		uint16_t port = esgw_meta(pkts[k])->in_port;

		if (port >= ESGW_MAX_PORTS || !rx->has_tap[port])
			esgw_drop(pkts[k], rx->drops, ESGW_DROP_PUNTED_NO_HOST);
		else
			by_port[port][count[port]++] = pkts[k];
	}
	for (uint16_t port = 0; port < ESGW_MAX_PORTS; port++) {
		uint16_t sent;

		if (count[port] == 0)
			continue;
		sent = rte_eth_tx_burst(rx->tap[port], 0, by_port[port], count[port]);
		for (uint16_t k = sent; k < count[port]; k++) /* the host reads too slowly */
			esgw_drop(by_port[port][k], rx->drops, ESGW_DROP_PUNTED_NO_HOST);
		rx->punt_tx += sent;
	}
	return n;
}

/* What the host's stack sent through the TAPs, out of the paired ports. */
static unsigned int taps_to_ports(struct rxtx *rx)
{
	struct rte_mbuf *pkts[ESGW_BURST];
	unsigned int total = 0;

	for (uint16_t i = 0; i < rx->nb_ports; i++) {
		uint16_t port = rx->ports[i], n, sent;

		if (!rx->has_tap[port])
			continue;
		n = rte_eth_rx_burst(rx->tap[port], 0, pkts, ESGW_BURST);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(port, 0, pkts, n);
		for (uint16_t k = sent; k < n; k++)
			esgw_drop(pkts[k], rx->drops, ESGW_DROP_TX_FAILED);
		rx->punt_rx += n;
		rx->tx_packets += sent;
		total += n;
	}
	return total;
}

unsigned int rxtx_punt_round(struct rxtx *rx)
{
	unsigned int n = 0, from_host;
	uint64_t now;

	if (rx->punt != NULL && rte_ring_count(rx->punt) != 0)
		n += ring_to_taps(rx);
	now = rte_rdtsc();
	if (now < rx->next_tap_poll && !rx->tap_ready)
		return n;
	rx->tap_ready = 0; /* set by the port watcher: a TAP was readable */
	from_host = taps_to_ports(rx);
	rx->next_tap_poll = from_host ? now : now + rte_get_tsc_hz() / 1000000 * TAP_POLL_US;
	return n + from_host;
}

void rxtx_punt_stop(struct rxtx *rx)
{
	for (uint16_t port = 0; port < ESGW_MAX_PORTS; port++) {
		char vdev[32];

		if (!rx->has_tap[port])
			continue;
		rte_eth_dev_stop(rx->tap[port]);
		rte_eth_dev_close(rx->tap[port]);
		snprintf(vdev, sizeof(vdev), "net_tap_esgw%u", port);
		rte_vdev_uninit(vdev);
		rx->has_tap[port] = false;
		rx->tap_fd[port] = -1;
	}
}
