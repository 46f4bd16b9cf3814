# SPDX-License-Identifier: BSD-3-Clause
"""The interop matrix of ESP tunnel mode (issue 5's acceptance): every
algorithm x {4in4, 6in4, 4in6} x {plain ESP, ESP in UDP (RFC 3948)} x {ESN
off, on} x {out, in}, each one test id, against an independent ESP:

- out: h1 sends UDP through gw1; the reference decrypts what it captures on
  the WAN and checks the outer header (addresses, UDP ports, length and
  checksum), the SPI and the inner packet (addresses, TTL/hop limit - 1,
  payload);
- in:  the reference encrypts a UDP packet to h1 and sends it to gw1 on the
  WAN; h1's socket receives it.

References (esp_reference.py): scapy 2.5's SecurityAssociation for every
algorithm with ESN off and for the AEADs (AES-GCM, ChaCha20-Poly1305) with
ESN on; esp_reference.EspSA (python `cryptography` + `hmac`, no esgw code)
for ESN on with an HMAC integrity algorithm (aes-cbc-*, null-*), where scapy
leaves the ESN high half out of the ICV. The UDP header of ESP in UDP is
built and checked by the test (scapy's nat_t_header writes UDP length 8).
test_reference_agrees_with_scapy checks EspSA against scapy where both are
right. With ESN on the sequence numbers stay below 2^32 (seq_hi = 0 in the
ICV or AAD); the 2^32 boundary is in the unit vectors (tests/unit).

One gateway for the whole matrix: h1 -- gw1 -- peer, dual stack, tunnel t4
(IPv4 outer, carries 4in4 and 6in4) and t6 (IPv6 outer, carries 4in6). Between
groups of (algorithm, encapsulation, ESN) the SAs are replaced with esgwctl
(sa add, tunnel set, sa del), never by restarting; each group has fresh SPIs."""

import itertools
import os
import shutil
import socket
import struct
import time

import pytest

import esgw_harness as h
import esp_reference as ref
import hi_topology as hi
import v6_topology as v

ALGS = sorted(ref.ALGS)
CASES = {  # case -> (tunnel, inner family, far address behind the tunnel)
    "4in4": ("t4", socket.AF_INET, v.FAR4_T4),
    "6in4": ("t4", socket.AF_INET6, v.FAR6_T4),
    "4in6": ("t6", socket.AF_INET, v.FAR4_T6),
}
ENCAPS = ("esp", "udp")
ESNS = ("esn-off", "esn-on")
DIRECTIONS = ("out", "in")
GW_NATT_PORT, PEER_NATT_PORT = 4500, 4501  # distinct: a swapped pair shows
TUNNELS = {"t4": (v.GW1_WAN4, v.PEER_WAN4), "t6": (v.GW1_WAN6, v.PEER_WAN6)}
PORT_H1, PORT_FAR = 9998, 9999
# Seconds to wait for each try: quick when all is well, patient with a
# gateway slowed by other work on a 2-core machine before declaring a loss.
TRY_WAITS = (0.3, 0.5, 0.7, 1.0, 2.0, 3.0)

GROUPS = list(itertools.product(ALGS, ENCAPS, ESNS))
MATRIX = [(alg, case, encap, esn, d) for alg, encap, esn in GROUPS
          for case in CASES for d in DIRECTIONS]


class HmTopology(v.V6Topology):
    """Namespaces hm<pid>n<k>-*."""

    def __init__(self):
        super().__init__()
        self.tag = "hm" + self.tag[2:]


def sa_keys(spi, alg):
    klen, slen, ilen = ref.key_lengths(alg)
    return {"crypto": bytes.fromhex(hi.key_hex(spi, "crypto", klen)),
            "salt": bytes.fromhex(hi.key_hex(spi, "salt", slen)),
            "integ": bytes.fromhex(hi.key_hex(spi, "integ", ilen))}


class Group:
    """The SAs of one (algorithm, encapsulation, ESN) on both tunnels, as
    esgw and the reference see them."""

    def __init__(self, index, alg, encap, esn):
        self.alg, self.encap, self.esn = alg, encap, esn == "esn-on"
        self.ids = {}     # tunnel -> (sa out id, sa in id) on gw1
        self.ref_out = {}  # tunnel -> reference decrypting gw1's outbound SA
        self.ref_in = {}   # tunnel -> reference encrypting for gw1's inbound SA
        self.seq_in = {}   # tunnel -> next sequence number the reference sends
        for k, tunnel in enumerate(("t4", "t6")):
            out_id = 100 + 4 * index + 2 * k
            self.ids[tunnel] = (out_id, out_id + 1)
            local, remote = TUNNELS[tunnel]
            self.ref_out[tunnel] = ref.reference_sa(alg, self.spi(out_id), sa_keys(
                self.spi(out_id), alg), self.esn, local, remote)
            self.ref_in[tunnel] = ref.reference_sa(alg, self.spi(out_id + 1), sa_keys(
                self.spi(out_id + 1), alg), self.esn, remote, local)
            self.seq_in[tunnel] = 1

    @staticmethod
    def spi(sa_id):
        return 0x10000 + sa_id

    def udp_ports(self, from_gw):
        if self.encap != "udp":
            return None
        return (GW_NATT_PORT, PEER_NATT_PORT) if from_gw else (PEER_NATT_PORT, GW_NATT_PORT)

    def sa_add_args(self, sa_id):
        extra = ["esn", "on" if self.esn else "off"]
        if self.encap == "udp":
            extra += ["encap", "udp", "sport", GW_NATT_PORT, "dport", PEER_NATT_PORT]
        return hi.sa_args(sa_id, self.spi(sa_id), self.alg, extra)

    def reference_name(self):
        return type(self.ref_out["t4"]).__name__


class Peer:
    """The far end of both tunnels in the peer namespace (its kernel owns the
    peer's WAN addresses, so it answers ARP and ND). Reads frames on an
    AF_PACKET socket, sends whole frames to gw1's MAC. Raw ESP sockets and UDP
    sockets on the NAT-T port keep its kernel from answering with ICMP."""

    def __init__(self, netns, dev, gw_mac):
        self.gw_mac = gw_mac
        self.mac = h.link_mac(netns, dev)
        with h.in_netns(netns):
            self.quiet = [socket.socket(socket.AF_INET, socket.SOCK_RAW, 50),
                          socket.socket(socket.AF_INET6, socket.SOCK_RAW, 50),
                          socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
                          socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)]
            self.l2 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.quiet[2].bind((v.PEER_WAN4, PEER_NATT_PORT))
        self.quiet[3].bind((v.PEER_WAN6, PEER_NATT_PORT))
        self.l2.bind((dev, 0))

    def close(self):
        for s in self.quiet + [self.l2]:
            s.close()

    def drain(self):
        h.drain_socket(self.l2)

    def recv_outer(self, timeout):
        """Bytes of the next IPv4/IPv6 packet gw1 sent, or None on timeout."""
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
            if addr[2] == socket.PACKET_OUTGOING or len(data) < 14:
                continue
            if struct.unpack("!H", data[12:14])[0] in (0x0800, 0x86DD):
                return data[14:]

    def send_ip(self, ip):
        etype = 0x86DD if ip[0] >> 4 == 6 else 0x0800
        self.l2.send(bytes.fromhex(self.gw_mac.replace(":", "")) +
                     bytes.fromhex(self.mac.replace(":", "")) + struct.pack("!H", etype) + ip)


def configure_gateway(gw, first):
    gw.ctl("interface", "add", "lan", "net_af_packet0,iface=gw1-lan")
    gw.ctl("interface", "address", "add", "lan", v.GW1_LAN4 + "/24")
    gw.ctl("interface", "address", "add", "lan", v.GW1_LAN6 + "/64")
    gw.ctl("interface", "add", "wan", "net_af_packet1,iface=gw1-wan")
    gw.ctl("interface", "address", "add", "wan", v.GW1_WAN4 + "/24")
    gw.ctl("interface", "address", "add", "wan", v.GW1_WAN6 + "/64")
    for tunnel, (out_id, in_id) in first.ids.items():
        gw.ctl(*first.sa_add_args(out_id))
        gw.ctl(*first.sa_add_args(in_id))
        local, remote = TUNNELS[tunnel]
        gw.ctl("tunnel", "add", tunnel, "local", local, "remote", remote,
               "sa-out", out_id, "sa-in", in_id)
    gw.ctl("route", "add", "192.168.2.0/24", "tunnel", "t4")
    gw.ctl("route", "add", "2001:db8:2::/64", "tunnel", "t4")
    gw.ctl("route", "add", "192.168.4.0/24", "tunnel", "t6")
    gw.wait_running()
    gw.baseline = gw.process_snapshot()


def switch_group(gw, old, new):
    """Replace old's SAs by new's on both tunnels while everything runs."""
    for tunnel, (out_id, in_id) in new.ids.items():
        gw.ctl(*new.sa_add_args(out_id))
        gw.ctl(*new.sa_add_args(in_id))
        gw.ctl("tunnel", "set", tunnel, "sa-out", out_id, "sa-in", in_id)
    for out_id, in_id in old.ids.values():
        gw.ctl("sa", "del", out_id)
        gw.ctl("sa", "del", in_id)


@pytest.fixture(scope="module")
def matrix():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, hugepages)")
    missing = h.missing_binaries()
    if missing:
        pytest.skip("not built in %s: %s" % (h.ESGW_BUILD, ", ".join(missing)))
    work_root = h.WORK_ROOT
    h.WORK_ROOT = os.environ.get("ESGW_TEST_WORKDIR", "/tmp/hm/tests")
    topo = HmTopology()
    setup = {"topo": topo, "gw": None, "peer": None, "socks": [], "group": None}
    try:
        ns = v.build(topo)
        setup["ns"] = ns
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        h.WORK_ROOT = work_root
        setup["gw"] = gw
        gw.start()
        first = Group(0, *GROUPS[0])
        configure_gateway(gw, first)
        setup["group"] = first
        setup["peer"] = Peer(ns["peer"], "peer-wan", h.link_mac(ns["gw1"], "gw1-wan"))
        for family, addr in ((socket.AF_INET, v.H1_4), (socket.AF_INET6, v.H1_6)):
            setup["socks"].append(v.udp_socket(ns["h1"], family, addr, PORT_H1, timeout=0.5))
        setup["h1"] = {socket.AF_INET: setup["socks"][0], socket.AF_INET6: setup["socks"][1]}
        yield setup
    finally:
        h.WORK_ROOT = work_root
        for s in setup["socks"]:
            s.close()
        if setup["peer"] is not None:
            setup["peer"].close()
        problems = setup["gw"].stop() if setup["gw"] is not None else []
        if problems:
            setup["gw"].print_logs()
        topo.teardown()
        if setup["gw"] is not None and not problems:
            shutil.rmtree(os.path.dirname(setup["gw"].workdir), ignore_errors=True)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


def group_for(setup, alg, encap, esn):
    """The gateway configured for (alg, encap, esn), switching SAs if needed."""
    key = (alg, encap, esn)
    cur = setup["group"]
    if (cur.alg, cur.encap, "esn-on" if cur.esn else "esn-off") != key:
        new = Group(GROUPS.index(key), alg, encap, esn)
        switch_group(setup["gw"], cur, new)
        setup["group"] = cur = new
    return cur


def gateway_state(gw):
    stats = gw.ctl("show", "stats")
    return "drops %s; SAs %s" % (
        {k: n for k, n in stats["drops"].items() if n},
        [(s["id"], s["spi"], s["packets"], {k: n for k, n in s["drops"].items() if n})
         for s in gw.ctl("show", "sa")["sas"]])


def _h1_addr(family):
    return v.H1_6 if family == socket.AF_INET6 else v.H1_4


def check_outbound(setup, group, case, marker):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    tunnel, family, far = CASES[case]
    peer, gw = setup["peer"], setup["gw"]
    local, remote = TUNNELS[tunnel]
    out_id = group.ids[tunnel][0]
    reference = group.ref_out[tunnel]
    h1 = setup["h1"][family]
    peer.drain()
    seen = []
    for wait in TRY_WAITS:  # the first packets may wait for ARP/ND or the new SA
        h1.sendto(marker, (far, PORT_FAR))
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            ip = peer.recv_outer(deadline - time.monotonic())
            if ip is None:
                break
            outer = ref.parse_outer(ip)
            if outer is None:
                continue
            src, dst, ports, udp_ok, esp = outer
            spi = struct.unpack("!L", esp[:4])[0]
            seen.append((src, dst, ports, hex(spi)))
            if spi != group.spi(out_id):
                continue  # an earlier group's SA, still in flight
            assert (src, dst) == (local, remote), "outer addresses %s -> %s" % (src, dst)
            assert ports == group.udp_ports(True), "UDP ports %s, expected %s" % (
                ports, group.udp_ports(True))
            assert udp_ok, "bad UDP length or checksum in %s" % ip.hex()
            if not group.alg.startswith("null-"):
                assert marker not in esp, "marker in clear on the WAN"
            seq, next_header, inner = reference.decrypt(esp)
            assert seq >= 1
            if family == socket.AF_INET6:
                assert next_header == ref.NEXT_HEADER_IPV6
                pkt = IPv6(inner)
                assert (pkt.src, pkt.dst, pkt.hlim) == (v.H1_6, far, 63), pkt.summary()
            else:
                assert next_header == ref.NEXT_HEADER_IPV4
                pkt = IP(inner)
                assert (pkt.src, pkt.dst, pkt.ttl) == (v.H1_4, far, 63), pkt.summary()
            assert UDP in pkt and pkt[UDP].dport == PORT_FAR
            assert bytes(pkt[UDP].payload) == marker
            return
    raise AssertionError("no ESP of SPI 0x%x carrying %r reached the peer (saw %s); %s" % (
        group.spi(out_id), marker, seen[:6], gateway_state(gw)))


def check_inbound(setup, group, case, marker):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.packet import Raw
    tunnel, family, far = CASES[case]
    peer, gw = setup["peer"], setup["gw"]
    local, remote = TUNNELS[tunnel]
    h1_addr = _h1_addr(family)
    net = IPv6(src=far, dst=h1_addr, hlim=64) if family == socket.AF_INET6 else \
        IP(src=far, dst=h1_addr, ttl=64)
    inner = bytes(net / UDP(sport=5555, dport=PORT_H1) / Raw(marker))
    h1 = setup["h1"][family]
    h1.settimeout(0)
    try:  # leftovers of an earlier test
        while True:
            h1.recvfrom(2048)
    except OSError:
        pass
    for wait in TRY_WAITS:
        seq = group.seq_in[tunnel]
        group.seq_in[tunnel] += 1
        esp = group.ref_in[tunnel].encrypt(inner, seq)
        peer.send_ip(ref.outer_packet(esp, remote, local, group.udp_ports(False)))
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            h1.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data, addr = h1.recvfrom(2048)
            except OSError:
                break
            if data == marker:
                assert addr[0] == far and addr[1] == 5555, addr
                return
    raise AssertionError("h1 never received %r (SPI 0x%x); %s" % (
        marker, group.spi(group.ids[tunnel][1]), gateway_state(gw)))


@pytest.mark.parametrize("alg,case,encap,esn,direction", MATRIX,
                         ids=["-".join(c) for c in MATRIX])
def test_interop(matrix, alg, case, encap, esn, direction):
    group = group_for(matrix, alg, encap, esn)
    marker = ("MATRIX %s %s %s %s %s" % (alg, case, encap, esn, direction)).encode()
    if direction == "out":
        check_outbound(matrix, group, case, marker)
    else:
        check_inbound(matrix, group, case, marker)


def test_udp_sa_over_ipv6_takes_only_esp_in_udp(matrix):
    """Over IPv6 as over IPv4: an SA configured for UDP refuses plain ESP
    (no_sa), and a NAT keepalive to its port is absorbed and counted."""
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    group = group_for(matrix, ALGS[0], "udp", "esn-off")
    gw, peer = matrix["gw"], matrix["peer"]
    local, remote = TUNNELS["t6"]
    before = gw.total_drop("no_sa")
    inner = bytes(IP(src=v.FAR4_T6, dst=v.H1_4) / UDP(sport=5555, dport=PORT_H1) / Raw(b"plain"))
    esp = group.ref_in["t6"].encrypt(inner, 100000)
    peer.send_ip(ref.outer_packet(esp, remote, local, None))
    h.wait_for(lambda: gw.total_drop("no_sa") > before, 5, 0.1, "no_sa for plain ESP over IPv6")
    keepalives = gw.counter("router", "natt_keepalive")
    peer.send_ip(ref.outer_packet(b"\xff", remote, local, group.udp_ports(False)))
    h.wait_for(lambda: gw.counter("router", "natt_keepalive") > keepalives, 5, 0.1,
               "natt_keepalive over IPv6")


def test_matrix_ran_without_restarts_or_auth_failures(matrix):
    """After the matrix (runs last in this module): no process restarted, no
    packet of the reference failed its ICV."""
    gw = matrix["gw"]
    gw.assert_no_restarts()
    drops = gw.ctl("show", "stats")["drops"]
    for name in ("auth_failed", "replay", "bad_padding", "bad_next_header", "malformed"):
        assert drops.get(name, 0) == 0, "%s: %s" % (name, gateway_state(gw))


@pytest.mark.parametrize("alg", ALGS)
def test_reference_agrees_with_scapy(alg):
    """EspSA and scapy decrypt each other's packets wherever scapy 2.5 is
    right (ESN off; ESN on for the AEADs), IPv4 and IPv6 inner: the home-made
    reference is checked against the independent one, not against esgw."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.packet import Raw
    keys = sa_keys(0x4242, alg)
    inners = (bytes(IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / Raw(b"a" * 13)),
              bytes(IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP() / Raw(b"b" * 30)))
    for esn in (False, True):
        mine = ref.EspSA(alg, 0x4242, keys, esn)
        if esn and ref.has_hmac(alg):
            continue
        theirs = ref.ScapySA(alg, 0x4242, keys, esn)
        for seq, inner in enumerate(inners, 7):
            assert theirs.decrypt(mine.encrypt(inner, seq))[2] == inner
            assert mine.decrypt(theirs.encrypt(inner, seq)) == (seq, inner[0] >> 4 == 6 and 41 or 4,
                                                                 inner)
        if esn:  # the high half counts: ESN on and off must not agree
            with pytest.raises(ref.EspError):
                ref.EspSA(alg, 0x4242, keys, False).decrypt(mine.encrypt(inners[0], 9))
