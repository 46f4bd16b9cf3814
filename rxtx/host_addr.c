/* SPDX-License-Identifier: BSD-3-Clause */
/* Gives a punt TAP the IPv4 and IPv6 addresses and MTU of its interface over rtnetlink,
 * so the host's stack accepts what the router punts (it only takes packets
 * for its own addresses) and answers from the gateway's addresses. Netlink
 * rather than `ip addr`: no fork from the DPDK primary, no dependency on
 * iproute2's output format, and an error comes back as an errno. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addr.h"
#include "log.h"
#include "rxtx.h"

#define NL_BUF 8192
#define HOST_ADDRS_MAX 64

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct ifaddrmsg ifa;
		struct ifinfomsg ifi;
	};
	char attrs[64];
};

struct host_addr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t len;
	uint8_t addr[16]; /* network order; IPv4 in the first 4 bytes, the rest 0 */
};

static size_t addr_bytes(const struct host_addr *a)
{
	return a->family == AF_INET6 ? 16 : 4;
}

static void nl_attr(struct nl_req *req, unsigned short type, const void *data, size_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/* Send one request and wait for its acknowledgement: 0 or -errno. */
static int nl_call(int fd, struct nl_req *req)
{
	char buf[NL_BUF];
	ssize_t n;

	req->nh.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(fd, req, req->nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
	     nh = NLMSG_NEXT(nh, n))
		if (nh->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
	return -EPROTO;
}

/* The addresses of family the kernel has on ifindex now, appended to out
 * after count: the new count, or -errno. */
static int addrs_get(int fd, int ifindex, int family, struct host_addr *out, int count, int max)
{
	struct nl_req req = {.nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)),
				    .nlmsg_type = RTM_GETADDR,
				    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP}};
	char buf[NL_BUF];

	req.ifa.ifa_family = (unsigned char)family;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0)
			return -errno;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			struct ifaddrmsg *ifa = NLMSG_DATA(nh);
			int alen = (int)IFA_PAYLOAD(nh);

			if (nh->nlmsg_type == NLMSG_DONE)
				return count;
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
			if (nh->nlmsg_type != RTM_NEWADDR || (int)ifa->ifa_index != ifindex ||
			    ifa->ifa_family != family)
				continue;
			/* IPv4 names the address IFA_LOCAL, IPv6 only IFA_ADDRESS. */
			for (struct rtattr *a = IFA_RTA(ifa); RTA_OK(a, alen);
			     a = RTA_NEXT(a, alen))
				if (a->rta_type == (family == AF_INET ? IFA_LOCAL : IFA_ADDRESS) &&
				    count < max) {
					memset(&out[count], 0, sizeof(out[count]));
					out[count].family = (uint8_t)family;
					memcpy(out[count].addr, RTA_DATA(a),
					       family == AF_INET ? 4 : 16);
					out[count++].len = ifa->ifa_prefixlen;
				}
		}
	}
}

static int addr_change(int fd, int ifindex, int type, const struct host_addr *a)
{
	struct nl_req req = {.nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)),
				    .nlmsg_type = (unsigned short)type}};

	if (type == RTM_NEWADDR)
		req.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
	req.ifa.ifa_family = a->family;
	req.ifa.ifa_prefixlen = a->len;
	req.ifa.ifa_index = (unsigned int)ifindex;
	/* No duplicate address detection: the router answers for the address
	 * already, the host's probe would find nothing else (tap_quiet_ipv6). */
	if (a->family == AF_INET6)
		req.ifa.ifa_flags = IFA_F_NODAD;
	nl_attr(&req, IFA_LOCAL, a->addr, addr_bytes(a));
	nl_attr(&req, IFA_ADDRESS, a->addr, addr_bytes(a));
	return nl_call(fd, &req);
}

static int mtu_set(int fd, int ifindex, uint32_t mtu)
{
	struct nl_req req = {.nh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
				    .nlmsg_type = RTM_NEWLINK}};

	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	nl_attr(&req, IFLA_MTU, &mtu, sizeof(mtu));
	return nl_call(fd, &req);
}

static int in_list(const struct host_addr *list, int n, const struct host_addr *a)
{
	for (int i = 0; i < n; i++)
		if (list[i].family == a->family && list[i].len == a->len &&
		    memcmp(list[i].addr, a->addr, addr_bytes(a)) == 0)
			return 1;
	return 0;
}

int rxtx_host_addr_sync(const char *ifname, int ifindex, const Esgw__DpInterface *ifc)
{
	struct host_addr want[HOST_ADDRS_MAX], have[HOST_ADDRS_MAX];
	int fd, n_want = 0, n_have, rc = 0, err;

	for (size_t i = 0; i < ifc->n_addresses && n_want < HOST_ADDRS_MAX; i++) {
		const Esgw__DpPrefix *p = ifc->addresses[i];
		struct host_addr *a = &want[n_want];
		struct esgw_addr in;

		if (esgw_addr_from_bytes(&in, p->address.data, p->address.len, p->length) < 0)
			continue;
		a->family = in.family == 4 ? AF_INET : AF_INET6;
		a->len = in.len;
		memcpy(a->addr, in.bytes, sizeof(a->addr)); /* network order, IPv4 first */
		n_want++;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		ESGW_ERR("punt %s: netlink socket: %s", ifname, strerror(errno));
		return -1;
	}
	n_have = addrs_get(fd, ifindex, AF_INET, have, 0, HOST_ADDRS_MAX);
	if (n_have >= 0)
		n_have = addrs_get(fd, ifindex, AF_INET6, have, n_have, HOST_ADDRS_MAX);
	if (n_have < 0) {
		ESGW_ERR("punt %s: reading addresses: %s", ifname, strerror(-n_have));
		close(fd);
		return -1;
	}
	for (int i = 0; i < n_have; i++)
		if (!in_list(want, n_want, &have[i]) &&
		    (err = addr_change(fd, ifindex, RTM_DELADDR, &have[i])) < 0) {
			ESGW_ERR("punt %s: removing an address: %s", ifname, strerror(-err));
			rc = -1;
		}
	for (int i = 0; i < n_want; i++)
		if (!in_list(have, n_have, &want[i]) &&
		    (err = addr_change(fd, ifindex, RTM_NEWADDR, &want[i])) < 0) {
			char text[INET6_ADDRSTRLEN] = "?";

			inet_ntop(want[i].family, want[i].addr, text, sizeof(text));
			ESGW_ERR("punt %s: adding %s/%u: %s", ifname, text, want[i].len,
				 strerror(-err));
			rc = -1;
		}
	/* The host's TCP must not build segments the port cannot carry. */
	if (ifc->mtu != 0 && (err = mtu_set(fd, ifindex, ifc->mtu)) < 0) {
		ESGW_ERR("punt %s: mtu %u: %s", ifname, ifc->mtu, strerror(-err));
		rc = -1;
	}
	close(fd);
	return rc;
}
