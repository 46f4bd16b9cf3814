# SPDX-License-Identifier: BSD-3-Clause
"""Topology for the IPv6 and MTU tests: h1 -- gw1 -- scapy peer, dual stack,
with two tunnels on gw1: t4 (IPv4 outer, 192.168.3.1 -> .2) and t6 (IPv6
outer, 2001:db8:3::1 -> ::2). Routes put every inner/outer combination on
the wire:

  192.168.2.0/24  -> t4  (4in4)       2001:db8:2::/64 -> t4  (6in4)
  192.168.4.0/24  -> t6  (4in6)       2001:db8:4::/64 -> t6  (6in6)

Builds on esgw_harness (namespaces, Gateway, esgwctl); adds what it lacks:
IPv6 on the hosts, an "hj" namespace prefix, and a scapy peer that speaks ESP
over IPv4 and IPv6 at layer 2."""

import socket
import time

import esgw_harness as h


H1_4, GW1_LAN4, GW1_WAN4, PEER_WAN4 = "192.168.1.1", "192.168.1.2", "192.168.3.1", "192.168.3.2"
H1_6, GW1_LAN6 = "2001:db8:1::1", "2001:db8:1::2"
GW1_WAN6, PEER_WAN6 = "2001:db8:3::1", "2001:db8:3::2"
FAR4_T4, FAR6_T4 = "192.168.2.1", "2001:db8:2::1"   # behind t4
FAR4_T6, FAR6_T6 = "192.168.4.1", "2001:db8:4::1"   # behind t6
FAR6_VIA = "2001:db8:99::1"                          # route via the peer, no tunnel
PORT_H1 = 9998
PORT_FAR = 9999

ALG_T4 = "aes-cbc-128-sha1-96"
ALG_T6 = "aes-gcm-128"
# SPIs: gw1 sends on t4 with 1000 and receives with 2000; on t6 3000 / 4000.
KEYS = {
    1000: {"crypto": "4339314b55523947594d6d3547666b45",
           "integ": "4339314b55523947594d6d3547666b4501020304"},
    2000: {"crypto": "6b45474d6d3547666b4339314b555239",
           "integ": "0a0b0c0d6b45474d6d3547666b4339314b555239"},
    3000: {"crypto": "00112233445566778899aabbccddeeff", "salt": "01020304"},
    4000: {"crypto": "ffeeddccbbaa99887766554433221100", "salt": "05060708"},
}


class V6Topology(h.Topology):
    """h.Topology with namespaces named hj<pid>n<k>-<short>."""

    def __init__(self):
        super().__init__()
        self.tag = "hj" + self.tag[2:]

    def enable_ipv6(self, ns):
        h.nsrun(ns, ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0",
                     "net.ipv6.conf.default.disable_ipv6=0",
                     "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                     "net.ipv6.conf.all.router_solicitations=0",
                     "net.ipv6.conf.default.router_solicitations=0"])

    def addr6(self, ns, dev, cidr):
        h.nsrun(ns, ["ip", "-6", "addr", "add", cidr, "dev", dev, "nodad"])


def build(topo, wan_mtu=None, h1_mtu=1500):
    """h1 -- gw1 -- peer, both hosts dual stack. Returns namespace names."""
    ns = {"h1": topo.add_ns("h1"), "gw1": topo.add_ns("gw1"), "peer": topo.add_ns("peer")}
    topo.enable_ipv6(ns["h1"])
    topo.enable_ipv6(ns["peer"])
    topo.add_veth(ns["h1"], "h1-eth0", ns["gw1"], "gw1-lan")
    topo.add_veth(ns["gw1"], "gw1-wan", ns["peer"], "peer-wan")
    h.nsrun(ns["h1"], ["ip", "link", "set", "h1-eth0", "mtu", str(h1_mtu)])
    topo.addr(ns["h1"], "h1-eth0", H1_4 + "/24")
    topo.addr6(ns["h1"], "h1-eth0", H1_6 + "/64")
    topo.route(ns["h1"], "default", "via", GW1_LAN4)
    h.nsrun(ns["h1"], ["ip", "-6", "route", "add", "default", "via", GW1_LAN6])
    topo.addr(ns["peer"], "peer-wan", PEER_WAN4 + "/24")
    topo.addr6(ns["peer"], "peer-wan", PEER_WAN6 + "/64")
    return ns


def sa_args(sa_id, spi, alg):
    k = KEYS[spi]
    args = ["sa", "add", sa_id, "spi", spi, "alg", alg, "crypto-key", k["crypto"]]
    if "integ" in k:
        args += ["integ-key", k["integ"]]
    if "salt" in k:
        args += ["salt", k["salt"]]
    return args


def configure(gw, wan_mtu=None, wan_devargs=None):
    gw.ctl("interface", "add", "lan", "net_af_packet0,iface=gw1-lan")
    gw.ctl("interface", "address", "add", "lan", GW1_LAN4 + "/24")
    gw.ctl("interface", "address", "add", "lan", GW1_LAN6 + "/64")
    wan = ["interface", "add", "wan", wan_devargs or "net_af_packet1,iface=gw1-wan"]
    if wan_mtu:
        wan += ["mtu", wan_mtu]
    gw.ctl(*wan)
    gw.ctl("interface", "address", "add", "wan", GW1_WAN4 + "/24")
    gw.ctl("interface", "address", "add", "wan", GW1_WAN6 + "/64")
    gw.ctl(*sa_args(10, 1000, ALG_T4))
    gw.ctl(*sa_args(20, 2000, ALG_T4))
    gw.ctl(*sa_args(30, 3000, ALG_T6))
    gw.ctl(*sa_args(40, 4000, ALG_T6))
    gw.ctl("tunnel", "add", "t4", "local", GW1_WAN4, "remote", PEER_WAN4,
           "sa-out", 10, "sa-in", 20)
    gw.ctl("tunnel", "add", "t6", "local", GW1_WAN6, "remote", PEER_WAN6,
           "sa-out", 30, "sa-in", 40)
    gw.ctl("route", "add", "192.168.2.0/24", "tunnel", "t4")
    gw.ctl("route", "add", "2001:db8:2::/64", "tunnel", "t4")
    gw.ctl("route", "add", "192.168.4.0/24", "tunnel", "t6")
    gw.ctl("route", "add", "2001:db8:4::/64", "tunnel", "t6")
    gw.ctl("route", "add", "2001:db8:99::/64", "via", PEER_WAN6)
    gw.wait_running()
    gw.baseline = gw.process_snapshot()


def scapy_sa(spi, alg, src, dst):
    """A scapy SecurityAssociation; the tunnel header family follows src."""
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.ipsec import ESP, SecurityAssociation
    k = KEYS[spi]
    header = IPv6(src=src, dst=dst) if ":" in src else IP(src=src, dst=dst)
    if alg == "aes-gcm-128":
        return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-GCM",
                                   crypt_key=bytes.fromhex(k["crypto"] + k["salt"]),
                                   tunnel_header=header)
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CBC",
                               crypt_key=bytes.fromhex(k["crypto"]),
                               auth_algo="HMAC-SHA1-96", auth_key=bytes.fromhex(k["integ"]),
                               tunnel_header=header)


class DualPeer:
    """The far end of both tunnels, in the peer namespace (whose kernel owns
    192.168.3.2 and 2001:db8:3::2, so it answers ARP and ND). It reads frames
    on an AF_PACKET socket (IPv4 and IPv6 ESP alike) and sends whole frames to
    gw1's MAC; raw ESP sockets keep its kernel from answering ESP with ICMP."""

    def __init__(self, netns, dev, gw_mac):
        self.gw_mac = gw_mac
        self.mac = h.link_mac(netns, dev)
        self.sa_out = {"t4": scapy_sa(1000, ALG_T4, GW1_WAN4, PEER_WAN4),
                       "t6": scapy_sa(3000, ALG_T6, GW1_WAN6, PEER_WAN6)}
        self.sa_in = {"t4": scapy_sa(2000, ALG_T4, PEER_WAN4, GW1_WAN4),
                      "t6": scapy_sa(4000, ALG_T6, PEER_WAN6, GW1_WAN6)}
        with h.in_netns(netns):
            self.esp4 = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
            self.esp6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, 50)
            self.l2 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
            self.l2.bind((dev, 0))

    def close(self):
        for s in (self.esp4, self.esp6, self.l2):
            s.close()

    def drain(self):
        h.drain_socket(self.l2)

    def recv_esp(self, timeout=3.0):
        """[(tunnel, outer scapy packet)] of ESP frames from gw1 until timeout."""
        from scapy.layers.l2 import Ether
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.l2.settimeout(left)
            try:
                data, addr = self.l2.recvfrom(65535)
            except socket.timeout:
                return None
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            frame = Ether(data)
            if frame.type == 0x0800 and frame.payload.proto == 50:
                return "t4", frame.payload
            if frame.type == 0x86DD and frame.payload.nh == 50:
                return "t6", frame.payload

    def decrypt(self, tunnel, outer):
        return self.sa_out[tunnel].decrypt(outer.copy())

    def wait_inner(self, match, timeout=3.0):
        """(tunnel, outer, inner) of the first ESP packet whose decrypted inner
        packet satisfies match; None on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.recv_esp(deadline - time.monotonic())
            if got is None:
                return None
            tunnel, outer = got
            try:
                inner = self.decrypt(tunnel, outer)
            except Exception:
                continue
            if match(inner):
                return tunnel, outer, inner
        return None

    def encrypt(self, tunnel, inner):
        return self.sa_in[tunnel].encrypt(inner)

    def send_frame(self, ip_pkt):
        from scapy.layers.l2 import Ether
        payload = bytes(ip_pkt)
        etype = 0x86DD if payload[0] >> 4 == 6 else 0x0800
        self.l2.send(bytes(Ether(dst=self.gw_mac, src=self.mac, type=etype) / payload))


def udp_socket(netns, family, addr, port=0, timeout=3.0):
    with h.in_netns(netns):
        s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, port))
    s.settimeout(timeout)
    return s


def raw_icmp_socket(netns, family, timeout=3.0):
    with h.in_netns(netns):
        if family == socket.AF_INET6:
            s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(timeout)
    return s


def recv_icmp(sock, want, timeout=3.0):
    """The first ICMP(v6) message for which want(bytes) is true. IPv4 raw
    sockets return the IP header, IPv6 ones only the ICMPv6 message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data, addr = sock.recvfrom(65535)
        except OSError:
            return None
        if want(data):
            return data, addr
    return None


def start_setup(wan_mtu=None, wan_devargs=None):
    """Everything for one module: topology, gateway, peer. Returns a dict."""
    topo = V6Topology()
    setup = {"topo": topo, "gw": None, "peer": None}
    try:
        ns = build(topo)
        setup["ns"] = ns
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        setup["gw"] = gw
        gw.start()
        configure(gw, wan_mtu, wan_devargs)
        setup["peer"] = DualPeer(ns["peer"], "peer-wan", h.link_mac(ns["gw1"], "gw1-wan"))
    except Exception:
        stop_setup(setup)
        raise
    return setup


def stop_setup(setup):
    problems = []
    if setup.get("peer") is not None:
        setup["peer"].close()
    if setup.get("gw") is not None:
        problems = setup["gw"].stop()
        if problems:
            setup["gw"].print_logs()
    setup["topo"].teardown()
    return problems
