# SPDX-License-Identifier: BSD-3-Clause
"""`sa update`: an installed UDP-encapsulated SA moves in place to another
peer address and port (a NAT mapping changed, the peer floated), against
scapy's independent ESP. gw1's SAs start at 192.168.3.2:4600; the scapy peer
owns 192.168.3.2 and 192.168.3.3 and listens on both. After the update gw1
sends to 192.168.3.3:4700 with the sequence numbers going on from where they
were, takes ESP in UDP from the new address only, and its replay window still
knows what it accepted before."""

import os
import socket

import pytest

import esgw_harness as h

NATT_PORT = 4500
OLD_PORT, NEW_PORT = 4600, 4700
NEW_ADDR = "192.168.3.3"
ALG = "aes-gcm-128"


def _scapy_sa(spi, src, dst, sport=None):
    from scapy.layers.inet import UDP
    sa = h.scapy_sa(ALG, spi, src, dst)
    if sport is not None:
        sa.nat_t_header = UDP(sport=sport, dport=NATT_PORT)
    return sa


class Peer:
    """The far end at two addresses: a UDP socket on each (address, port) gw1
    may send to, and frames to gw1's MAC for what it sends."""

    def __init__(self, netns, dev, gw_mac):
        self.gw_mac = gw_mac
        self.mac = h.link_mac(netns, dev)
        self.sa_from_gw = _scapy_sa(h.SPI_GW1_OUT, h.GW1_WAN, h.GW2_WAN)
        self.socks = {}
        with h.in_netns(netns):
            for where in ((h.GW2_WAN, OLD_PORT), (NEW_ADDR, NEW_PORT)):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(where)
                s.setblocking(False)
                self.socks[where] = s
            self.l2 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.l2.bind((dev, 0))

    def close(self):
        for s in self.socks.values():
            s.close()
        self.l2.close()

    def received(self):
        """[(where, seq, esp bytes, from)] of everything queued on the sockets."""
        out = []
        for where, s in self.socks.items():
            while True:
                try:
                    data, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                out.append((where, int.from_bytes(data[4:8], "big"), data, addr))
        return out

    def decrypt(self, esp_bytes):
        from scapy.layers.inet import IP
        from scapy.layers.ipsec import ESP
        return self.sa_from_gw.decrypt(IP(src=h.GW1_WAN, dst=h.GW2_WAN, proto=50) /
                                       ESP(esp_bytes))

    def send(self, src, sport, seq, marker):
        """ESP in UDP from src:sport to gw1 with sequence number seq carrying
        UDP 192.168.2.1 -> h1 (scapy writes the UDP length of the bare
        header; a real peer counts the payload too: fixed here)."""
        from scapy.layers.inet import IP, UDP
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw
        sa = _scapy_sa(h.SPI_GW1_IN, src, h.GW1_WAN, sport)
        raw = bytearray(bytes(sa.encrypt(IP(src=h.H2_ADDR, dst=h.H1_ADDR) /
                                         UDP(sport=5555, dport=h.PORT_H1) / Raw(marker),
                                         seq_num=seq)))
        ihl = (raw[0] & 0x0f) * 4
        raw[ihl + 4:ihl + 6] = (len(raw) - ihl).to_bytes(2, "big")
        self.l2.send(bytes(Ether(dst=self.gw_mac, src=self.mac, type=0x0800) / bytes(raw)))


@pytest.fixture(scope="module")
def env():
    if os.geteuid() != 0 or h.missing_binaries():
        pytest.skip("needs root and a build in %s" % h.ESGW_BUILD)
    topo = h.Topology()
    gw = peer = None
    try:
        ns = h.build_standard(topo, peer=True)
        topo.addr(ns["peer"], "peer-wan", NEW_ADDR + "/24")
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gw.start()
        gw.ctl("interface", "add", "lan", "net_af_packet0,iface=gw1-lan")
        gw.ctl("interface", "address", "add", "lan", h.GW1_LAN + "/24")
        gw.ctl("interface", "add", "wan", "net_af_packet1,iface=gw1-wan")
        gw.ctl("interface", "address", "add", "wan", h.GW1_WAN + "/24")
        for sa_id, spi in ((h.SA_ID_GW1_OUT, h.SPI_GW1_OUT), (h.SA_ID_GW1_IN, h.SPI_GW1_IN)):
            gw.ctl(*h.sa_add_args(sa_id, spi, ALG) + ["encap", "udp", "sport", NATT_PORT,
                                                       "dport", OLD_PORT])
        gw.ctl("tunnel", "add", "t0", "local", h.GW1_WAN, "remote", h.GW2_WAN,
               "sa-out", h.SA_ID_GW1_OUT, "sa-in", h.SA_ID_GW1_IN)
        gw.ctl("route", "add", "192.168.2.0/24", "tunnel", "t0")
        gw.wait_running()
        gw.baseline = gw.process_snapshot()
        peer = Peer(ns["peer"], "peer-wan", h.link_mac(ns["gw1"], "gw1-wan"))
        h1 = h.udp_socket(ns["h1"], h.H1_ADDR, h.PORT_H1, timeout=1.0)
        yield {"ns": ns, "gw": gw, "peer": peer, "h1": h1}
        h1.close()
    finally:
        if peer is not None:
            peer.close()
        problems = gw.stop() if gw is not None else []
        topo.teardown()
    assert not problems, problems


def outbound(env, marker):
    """One datagram h1 -> 192.168.2.1 through gw1: (where, seq, from) as the
    peer received it, after checking it decrypts to what h1 sent."""
    from scapy.layers.inet import UDP
    from scapy.packet import Raw
    s = h.udp_socket(env["ns"]["h1"], h.H1_ADDR, 0)
    try:
        s.sendto(marker, (h.H2_ADDR, 9999))
        got = h.wait_for(env["peer"].received, 5, 0.05, "ESP in UDP from gw1")
    finally:
        s.close()
    assert len(got) == 1, got
    where, seq, esp, addr = got[0]
    assert int.from_bytes(esp[:4], "big") == h.SPI_GW1_OUT
    inner = env["peer"].decrypt(esp)
    assert bytes(inner[Raw].load) == marker and inner[UDP].dport == 9999
    return where, seq, addr


def inbound_reaches_h1(env, src, sport, seq, marker, tries=1):
    for _ in range(tries):
        env["peer"].send(src, sport, seq, marker)
        try:
            while True:
                data, _ = env["h1"].recvfrom(2048)
                if data == marker:
                    return True
        except OSError:
            continue
    return False


def sa_drop(gw, sa_id, name):
    return gw.sa(sa_id)["drops"].get(name, 0)


def test_float_keeps_sequence_and_replay_state(env):
    gw, peer = env["gw"], env["peer"]
    # Before: the first packet may wait for ARP; then one at a time.
    h.wait_for(lambda: inbound_reaches_h1(env, h.GW2_WAN, OLD_PORT, 1, b"in-1"), 20, 0.1,
               "inbound ESP in UDP from the old address")
    for seq in range(2, 6):
        assert inbound_reaches_h1(env, h.GW2_WAN, OLD_PORT, seq, b"in-%d" % seq, tries=3)
    where, seq_before, addr = outbound(env, b"before-float")
    assert where == (h.GW2_WAN, OLD_PORT) and addr == (h.GW1_WAN, NATT_PORT)
    sa_in = gw.sa(h.SA_ID_GW1_IN)
    assert sa_in["replay_top"] == 5, sa_in
    packets_in = sa_in["packets"]
    # From the new address before the update: not this SA's peer.
    no_sa = gw.total_drop("no_sa")
    peer.send(NEW_ADDR, NEW_PORT, 6, b"too-early")
    h.wait_for(lambda: gw.total_drop("no_sa") > no_sa, 10, 0.2, "no_sa for the new address")

    gw.ctl("sa", "update", h.SA_ID_GW1_OUT, "remote", NEW_ADDR, "dport", NEW_PORT)
    gw.ctl("sa", "update", h.SA_ID_GW1_IN, "dport", NEW_PORT)
    tunnel = [t for t in gw.ctl("show", "tunnels")["tunnels"] if t["name"] == "t0"][0]
    assert tunnel["remote"] == NEW_ADDR, tunnel
    for sa_id in (h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN):
        sa = gw.sa(sa_id)
        assert sa["udp_encap"] and sa["udp_sport"] == NATT_PORT and \
            sa["udp_dport"] == NEW_PORT, sa

    # Outbound: to the new address and port, sequence numbers going on. The
    # push reaches the worker a moment later: until then the old address.
    seqs = [seq_before]
    for i in range(50):
        where, seq, addr = outbound(env, b"after-float-%d" % i)
        seqs.append(seq)
        if where == (NEW_ADDR, NEW_PORT):
            break
    else:
        raise AssertionError("gw1 never sent to %s:%d: %s" % (NEW_ADDR, NEW_PORT, seqs))
    assert addr == (h.GW1_WAN, NATT_PORT)
    assert seqs == list(range(seq_before, seq_before + len(seqs))), seqs
    where, seq, _ = outbound(env, b"after-float-next")
    assert where == (NEW_ADDR, NEW_PORT) and seq == seqs[-1] + 1
    print("outbound sequence numbers across the float: %s" % seqs)

    # Inbound: the new address is the SA's peer now, the window as it was.
    assert h.wait_for(lambda: inbound_reaches_h1(env, NEW_ADDR, NEW_PORT, 7, b"in-7"), 10, 0.1,
                      "inbound from the new address")
    replay = sa_drop(gw, h.SA_ID_GW1_IN, "replay")
    peer.send(NEW_ADDR, NEW_PORT, 3, b"replayed")  # accepted before the float
    h.wait_for(lambda: sa_drop(gw, h.SA_ID_GW1_IN, "replay") > replay, 10, 0.2,
               "replay drop of a sequence number accepted before the float")
    no_sa = gw.total_drop("no_sa")
    peer.send(h.GW2_WAN, OLD_PORT, 8, b"old-address")
    h.wait_for(lambda: gw.total_drop("no_sa") > no_sa, 10, 0.2, "no_sa for the old address")
    sa_in = gw.sa(h.SA_ID_GW1_IN)
    assert sa_in["replay_top"] == 7 and sa_in["packets"] > packets_in, sa_in
    assert sa_drop(gw, h.SA_ID_GW1_IN, "auth_failed") == 0
    gw.assert_no_restarts()


def test_sa_update_refusals(env):
    gw = env["gw"]
    res = gw.ctl_raw("sa", "update", 4242, "dport", 4800)
    assert res.returncode == 1 and "does not exist" in res.stderr, res.stderr
    res = gw.ctl_raw("sa", "update", h.SA_ID_GW1_OUT, "encap", "none", "dport", 4800)
    assert res.returncode == 1 and "only with encap udp" in res.stderr, res.stderr
    res = gw.ctl_raw("sa", "update", h.SA_ID_GW1_OUT, "remote", "2001:db8::1")
    assert res.returncode == 1 and "different families" in res.stderr, res.stderr
    res = gw.ctl_raw("sa", "update", h.SA_ID_GW1_OUT)
    assert res.returncode == 2, res.stderr
    gw.ctl("sa", "add", 99, "spi", 9999, "alg", ALG, "crypto-key", "ab" * 16, "salt", "cd" * 4)
    res = gw.ctl_raw("sa", "update", 99, "remote", NEW_ADDR)
    assert res.returncode == 1 and "in no tunnel" in res.stderr, res.stderr
    gw.ctl("sa", "update", 99, "encap", "udp", "dport", 4900)  # ports need no tunnel
    sa = gw.sa(99)
    assert sa["udp_encap"] and sa["udp_sport"] == NATT_PORT and sa["udp_dport"] == 4900, sa
    gw.ctl("sa", "del", 99)
