# SPDX-License-Identifier: BSD-3-Clause
"""Policies (SPD) beside route-based tunnels, against a scapy peer at
192.168.3.2. The seed's case: one peer, two SA pairs, TCP through pair A
(SPIs 1000/2000, AES-GCM) and everything else through pair B (SPIs 3000/4000,
AES-CBC/HMAC-SHA1), chosen by policies that override the plain route to the
peer; discard and bypass actions; a protect policy whose SA is missing never
lets its traffic out in clear; inbound, a decrypted packet must match a
protect policy of the SA it came on."""

import os
import socket
import time

import pytest

import esgw_harness as h

KEYS = {  # (spi): (alg, crypto key, integ key or salt)
    1000: ("aes-gcm-128", "11" * 16, "a1b2c3d4"),
    2000: ("aes-gcm-128", "22" * 16, "d4c3b2a1"),
    3000: ("aes-cbc-128-sha1-96", "33" * 16, "34" * 20),
    4000: ("aes-cbc-128-sha1-96", "44" * 16, "45" * 20),
}
SA_IDS = {1000: 10, 2000: 20, 3000: 30, 4000: 40}
BYPASS_DST, DISCARD_DST, NO_SA_DST = "192.168.2.50", "192.168.2.99", "192.168.2.77"


class HkTopology(h.Topology):
    def __init__(self):
        super().__init__()
        self.tag = "hk" + self.tag[2:]


def sa_add(gw, spi):
    alg, key, extra = KEYS[spi]
    args = ["sa", "add", SA_IDS[spi], "spi", spi, "alg", alg, "crypto-key", key]
    args += ["salt", extra] if "gcm" in alg else ["integ-key", extra]
    gw.ctl(*args)


def scapy_sa(spi, src, dst):
    from scapy.layers.inet import IP
    from scapy.layers.ipsec import ESP, SecurityAssociation
    alg, key, extra = KEYS[spi]
    if "gcm" in alg:
        return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-GCM",
                                   crypt_key=bytes.fromhex(key + extra),
                                   tunnel_header=IP(src=src, dst=dst))
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CBC", crypt_key=bytes.fromhex(key),
                               auth_algo="HMAC-SHA1-96", auth_key=bytes.fromhex(extra),
                               tunnel_header=IP(src=src, dst=dst))


class Sniffer(h.LinkSniffer):
    """Every IPv4 packet gw1 sends to the peer's link, from an AF_PACKET socket
    in the peer namespace (ESP and anything in clear alike)."""

    def __init__(self, netns, dev):
        super().__init__(netns, dev, 0x0800)

    def take(self):
        from scapy.layers.inet import IP
        return [IP(f[14:]) for f in super().take()]


@pytest.fixture(scope="module")
def spd():
    if os.geteuid() != 0 or h.missing_binaries():
        pytest.skip("needs root and a build in %s" % h.ESGW_BUILD)
    topo = HkTopology()
    gw = sniffer = l2 = None
    try:
        ns = h.build_standard(topo, peer=True)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gw.start()
        gw.ctl("interface", "add", "lan", "net_af_packet0,iface=gw1-lan")
        gw.ctl("interface", "address", "add", "lan", h.GW1_LAN + "/24")
        gw.ctl("interface", "add", "wan", "net_af_packet1,iface=gw1-wan")
        gw.ctl("interface", "address", "add", "wan", h.GW1_WAN + "/24")
        for spi in KEYS:
            sa_add(gw, spi)
        gw.ctl("tunnel", "add", "t0", "local", h.GW1_WAN, "remote", h.GW2_WAN,
               "sa-out", 10, "sa-in", "20,40")
        # A plain route to the far LAN: what no policy protects goes in clear.
        gw.ctl("route", "add", "192.168.2.0/24", "via", h.GW2_WAN)
        lans = ["src", "192.168.1.0/24", "dst", "192.168.2.0/24"]
        gw.ctl("policy", "add", "tcp", *lans, "proto", "tcp", "action", "protect",
               "tunnel", "t0", "sa-out", 10, "sa-in", 20, "priority", 10)
        gw.ctl("policy", "add", "rest", *lans, "action", "protect", "tunnel", "t0",
               "sa-out", 30, "sa-in", 40, "priority", 20)
        gw.ctl("policy", "add", "open", "dst", BYPASS_DST + "/32", "action", "bypass",
               "priority", 5)
        gw.ctl("policy", "add", "closed", "dst", DISCARD_DST + "/32", "action", "discard",
               "priority", 5)
        gw.ctl("policy", "add", "pending", "dst", NO_SA_DST + "/32", "proto", "udp",
               "action", "protect", "tunnel", "t0", "sa-out", 99, "priority", 5)
        gw.wait_running()
        sniffer = Sniffer(ns["peer"], "peer-wan")
        l2, esp_sink, macs = h.peer_wan_sockets(ns)
        yield {"ns": ns, "gw1": gw, "sniffer": sniffer, "l2": l2, **macs}
        esp_sink.close()
    finally:
        if sniffer is not None:
            sniffer.close()
        if l2 is not None:
            l2.close()
        problems = gw.stop() if gw is not None else []
        topo.teardown()
    assert not problems, problems


def send_from_h1(setup, dst, proto, marker, tries=8, until=None):
    """Sends from h1 (UDP datagram, TCP SYN or ping) until until(packets) is
    true for what the sniffer saw; returns all packets seen."""
    ns = setup["ns"]["h1"]
    seen = []
    for _ in range(tries):
        if proto == "udp":
            s = h.udp_socket(ns, h.H1_ADDR, 0)
            s.sendto(marker, (dst, 7777))
            s.close()
        elif proto == "tcp":
            with h.in_netns(ns):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect((dst, 7778))
            except BlockingIOError:
                pass
            time.sleep(0.3)
            s.close()
        else:
            h.ping(ns, dst, count=1)
        time.sleep(0.5)
        seen += setup["sniffer"].take()
        if until is None or until(seen):
            break
    return seen


def esp_with_spi(packets, spi):
    from scapy.layers.ipsec import ESP
    return [p for p in packets if ESP in p and p[ESP].spi == spi]


def test_tcp_goes_through_sa_a(spd):
    from scapy.layers.inet import TCP
    seen = send_from_h1(spd, h.H2_ADDR, "tcp", b"", until=lambda s: esp_with_spi(s, 1000))
    esp = esp_with_spi(seen, 1000)
    assert esp, "no ESP with SPI 1000 on the wire: %r" % [p.summary() for p in seen]
    assert not esp_with_spi(seen, 3000), "TCP went through SA B"
    inner = scapy_sa(1000, h.GW1_WAN, h.GW2_WAN).decrypt(esp[0].copy())
    assert TCP in inner and inner[TCP].dport == 7778
    assert not [p for p in seen if p.proto == 6], "TCP in clear"


def test_udp_and_icmp_go_through_sa_b(spd):
    from scapy.layers.inet import ICMP, UDP
    marker = b"SPD-UDP-B"
    seen = send_from_h1(spd, h.H2_ADDR, "udp", marker, until=lambda s: esp_with_spi(s, 3000))
    esp = esp_with_spi(seen, 3000)
    assert esp and not esp_with_spi(seen, 1000), [p.summary() for p in seen]
    inner = scapy_sa(3000, h.GW1_WAN, h.GW2_WAN).decrypt(esp[0].copy())
    assert UDP in inner and bytes(inner[UDP].payload) == marker
    seen = send_from_h1(spd, h.H2_ADDR, "icmp", b"", until=lambda s: esp_with_spi(s, 3000))
    esp = esp_with_spi(seen, 3000)
    assert esp and not esp_with_spi(seen, 1000), [p.summary() for p in seen]
    assert ICMP in scapy_sa(3000, h.GW1_WAN, h.GW2_WAN).decrypt(esp[0].copy())
    assert not [p for p in seen if marker in bytes(p) or p.proto == 1], "sent in clear"


def test_bypass_forwards_in_clear(spd):
    from scapy.layers.inet import UDP
    marker = b"SPD-BYPASS"
    seen = send_from_h1(spd, BYPASS_DST, "udp", marker,
                        until=lambda s: [p for p in s if marker in bytes(p)])
    clear = [p for p in seen if UDP in p and p.dst == BYPASS_DST]
    assert clear and bytes(clear[0][UDP].payload) == marker, [p.summary() for p in seen]


def test_discard_drops_and_counts(spd):
    gw = spd["gw1"]
    before = gw.total_drop("policy_discard")
    seen = send_from_h1(spd, DISCARD_DST, "udp", b"SPD-DISCARD", tries=3, until=lambda s: False)
    assert gw.total_drop("policy_discard") >= before + 3
    assert not [p for p in seen if p.dst == DISCARD_DST or b"SPD-DISCARD" in bytes(p)]


def test_protect_without_sa_never_leaks(spd):
    gw = spd["gw1"]
    before = gw.total_drop("policy_no_sa")
    marker = b"SPD-SECRET"
    seen = send_from_h1(spd, NO_SA_DST, "udp", marker, tries=3, until=lambda s: False)
    assert gw.total_drop("policy_no_sa") >= before + 3
    assert not [p for p in seen if marker in bytes(p) or p.dst == NO_SA_DST], \
        [p.summary() for p in seen]


def _send_inbound(spd, spi, inner):
    from scapy.layers.l2 import Ether
    outer = scapy_sa(spi, h.GW2_WAN, h.GW1_WAN).encrypt(inner)
    spd["l2"].send(bytes(Ether(dst=spd["gw_mac"], src=spd["peer_mac"], type=0x0800) / bytes(outer)))


def test_inbound_must_match_the_sa_policy(spd):
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    gw = spd["gw1"]
    s = h.udp_socket(spd["ns"]["h1"], h.H1_ADDR, h.PORT_H1, timeout=1.0)
    try:
        # UDP through SA B (policy "rest"): delivered.
        got = h.received_after(
            s, lambda: _send_inbound(spd, 4000, IP(src=h.H2_ADDR, dst=h.H1_ADDR) /
                                     UDP(sport=5555, dport=h.PORT_H1) / Raw(b"IN-B")),
            b"IN-B")
        assert got == b"IN-B", {k: v for k, v in gw.ctl("show", "stats")["drops"].items() if v}
        # UDP through SA A, which only carries TCP: refused after decryption.
        h.dropped_not_received(
            gw, s, lambda: _send_inbound(spd, 2000, IP(src=h.H2_ADDR, dst=h.H1_ADDR) /
                                         UDP(sport=5555, dport=h.PORT_H1) / Raw(b"IN-A-UDP")),
            b"IN-A-UDP", "policy_mismatch")
    finally:
        s.close()
    assert gw.sa(20)["drops"].get("auth_failed", 0) == 0


def test_show_policies_and_validation(spd):
    gw = spd["gw1"]
    pols = gw.ctl("show", "policies")["policies"]
    assert [p["name"] for p in pols][:3] == ["open", "closed", "pending"]
    assert [p["name"] for p in pols][3:] == ["tcp", "rest"]
    tcp = pols[3]
    assert tcp["protocol"] == "tcp" and tcp["sa_out"] == 10 and tcp["sa_in"] == [20]
    assert tcp["src"] == "192.168.1.0/24" and tcp["action"] == "protect"
    for bad in (["policy", "add", "x", "sport", "80", "action", "bypass"],  # ports need tcp/udp
                ["policy", "add", "x", "action", "protect", "tunnel", "t0"],  # no sa-out
                ["policy", "add", "x", "action", "drop"],
                ["policy", "add", "x", "proto", "tcp", "dport", "90-80", "action", "bypass"]):
        res = gw.ctl_raw(*bad)
        assert res.returncode == 2 and res.stderr.startswith("esgwctl: "), (bad, res.stderr)
    res = gw.ctl_raw("policy", "add", "x", "action", "protect", "tunnel", "nope", "sa-out", 10)
    assert res.returncode == 1 and "does not exist" in res.stderr
    res = gw.ctl_raw("tunnel", "del", "t0")
    assert res.returncode == 1 and "policy" in res.stderr
    assert gw.ctl_raw("policy", "del", "nope").returncode == 1
