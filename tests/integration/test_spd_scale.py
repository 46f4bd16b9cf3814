# SPDX-License-Identifier: BSD-3-Clause
"""5,000 policies loaded with one `esgwctl -f` (issue 13, point 4: the
router's classifier, router/spd_classify.c): packets that hit the first
policy, one in the middle, the last one, and none, each get the action of
the first policy in evaluation order that matches them, against a scapy peer
at 192.168.3.2 that sees the WAN.

The policies, by priority: 1 protects UDP to 10.100.0.1 with SA 10 (ESP with
SPI 1000 on the wire); 2500 bypasses UDP to 10.101.0.0/16 port 7777, and
2501, more specific but later, would protect 10.101.0.1 with SA 10; 5000
discards 10.102.0.1; every other one protects a network in 10.1-21.x with an
SA that does not exist (its traffic is dropped as policy_no_sa), with three
different prefix pairs and protocols so the classifier has several tuples.
10.103.0.1 matches none and leaves in clear by its route. Inbound, the
tunnel's SA 20 has some 5,000 protect policies to check a decrypted packet
against."""

import os
import time

import pytest

import esgw_harness as h

ALG = "aes-gcm-128"
N = 5000
FIRST, MIDDLE, SHADOWED, LAST, MISS = "10.100.0.1", "10.101.0.1", "10.101.0.1", "10.102.0.1", \
    "10.103.0.1"
PENDING = "10.11.5.9"  # in policy 2505's network (10.11.5.0/24, udp)
PORT = 7777


def policy_lines():
    lines = ["# %d policies, priority = line number" % N]
    for i in range(1, N + 1):
        if i == 1:
            rule = "dst %s/32 proto udp action protect tunnel t0 sa-out 10" % FIRST
        elif i == N // 2:
            rule = "dst 10.101.0.0/16 proto udp dport %d action bypass" % PORT
        elif i == N // 2 + 1:
            rule = "dst %s/32 action protect tunnel t0 sa-out 10" % SHADOWED
        elif i == N:
            rule = "dst %s/32 action discard" % LAST
        else:
            net = "10.%d.%d" % (1 + i // 250, i % 250)
            rule = ("dst %s.0/24 proto udp" % net,
                    "src 192.168.1.0/24 dst %s.9/32" % net,
                    "dst %s.0/24 proto tcp dport 80-90" % net)[i % 3]
            rule += " action protect tunnel t0 sa-out 99"
        lines.append("policy add p%d %s priority %d" % (i, rule, i))
    return lines


@pytest.fixture(scope="module")
def spd():
    if os.geteuid() != 0 or h.missing_binaries():
        pytest.skip("needs root and a build in %s" % h.ESGW_BUILD)
    topo = h.Topology()
    gw = sniffer = l2 = esp_sink = None
    try:
        ns = h.build_standard(topo, peer=True)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gw.start()
        h.configure_gw1(gw, ALG)
        gw.ctl("route", "add", "10.0.0.0/8", "via", h.GW2_WAN)
        path = os.path.join(gw.workdir, "policies.batch")
        with open(path, "w") as f:
            f.write("\n".join(policy_lines()) + "\n")
        start = time.monotonic()
        res = h.run([h.find_binary("esgwctl"), "--socket", gw.socket, "-f", path],
                    check=False, timeout=600)
        assert res.returncode == 0, res.stderr
        print("esgwctl -f of %d policies: %.2f s" % (N, time.monotonic() - start))
        gw.wait_running()
        sniffer = h.LinkSniffer(ns["peer"], "peer-wan", 0x0800)
        l2, esp_sink, macs = h.peer_wan_sockets(ns)
        yield {"ns": ns, "gw1": gw, "sniffer": sniffer, "l2": l2, **macs}
    finally:
        for s in (sniffer, l2, esp_sink):
            if s is not None:
                s.close()
        problems = gw.stop() if gw is not None else []
        topo.teardown()
    assert not problems, problems


def send(setup, dst, marker, until, tries=8):
    """UDP from h1 to dst until until(packets seen on the WAN) holds; returns
    every IPv4 packet seen."""
    from scapy.layers.inet import IP
    seen = []
    for _ in range(tries):
        s = h.udp_socket(setup["ns"]["h1"], h.H1_ADDR, 0)
        s.sendto(marker, (dst, PORT))
        s.close()
        time.sleep(0.4)
        seen += [IP(f[14:]) for f in setup["sniffer"].take()]
        if until(seen):
            break
    return seen


def esp(packets, spi):
    from scapy.layers.ipsec import ESP
    return [p for p in packets if ESP in p and p[ESP].spi == spi]


def clear(packets, dst, marker):
    return [p for p in packets if p.dst == dst and marker in bytes(p)]


def test_all_policies_installed(spd):
    pols = spd["gw1"].ctl("show", "policies")["policies"]
    assert len(pols) == N
    assert [p["name"] for p in pols[:2]] == ["p1", "p2"] and pols[-1]["name"] == "p%d" % N


def test_first_policy_protects(spd):
    from scapy.layers.inet import UDP
    seen = send(spd, FIRST, b"SPD-FIRST", lambda s: esp(s, h.SPI_GW1_OUT))
    sent = esp(seen, h.SPI_GW1_OUT)
    assert sent, [p.summary() for p in seen]
    inner = h.scapy_sa(ALG, h.SPI_GW1_OUT, h.GW1_WAN, h.GW2_WAN).decrypt(sent[0].copy())
    assert inner.dst == FIRST and inner[UDP].dport == PORT
    assert not clear(seen, FIRST, b"SPD-FIRST")


def test_middle_policy_wins_over_a_later_more_specific_one(spd):
    marker = b"SPD-MIDDLE"
    seen = send(spd, MIDDLE, marker, lambda s: clear(s, MIDDLE, marker))
    assert clear(seen, MIDDLE, marker), [p.summary() for p in seen]  # bypass: in clear
    assert not esp(seen, h.SPI_GW1_OUT), "policy %d (protect) matched" % (N // 2 + 1)


def test_last_policy_discards(spd):
    gw = spd["gw1"]
    before = gw.total_drop("policy_discard")
    seen = send(spd, LAST, b"SPD-LAST", lambda s: False, tries=3)
    assert gw.total_drop("policy_discard") >= before + 3
    assert not [p for p in seen if p.dst == LAST or b"SPD-LAST" in bytes(p)]


def test_pending_policy_drops_without_sa(spd):
    gw = spd["gw1"]
    before = gw.total_drop("policy_no_sa")
    seen = send(spd, PENDING, b"SPD-PENDING", lambda s: False, tries=3)
    assert gw.total_drop("policy_no_sa") >= before + 3
    assert not [p for p in seen if b"SPD-PENDING" in bytes(p)]


def test_miss_goes_by_the_route(spd):
    marker = b"SPD-MISS"
    gw = spd["gw1"]
    before = {k: gw.total_drop(k) for k in ("policy_no_sa", "policy_discard")}
    seen = send(spd, MISS, marker, lambda s: clear(s, MISS, marker))
    assert clear(seen, MISS, marker), [p.summary() for p in seen]
    assert {k: gw.total_drop(k) for k in before} == before


def _send_inbound(spd, sa, inner):
    from scapy.layers.l2 import Ether
    outer = sa.encrypt(inner)  # one SA object: its sequence numbers go up
    spd["l2"].send(bytes(Ether(dst=spd["gw_mac"], src=spd["peer_mac"], type=0x0800) /
                         bytes(outer)))


def test_inbound_checked_against_thousands_of_policies(spd):
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    gw = spd["gw1"]
    sa = h.scapy_sa(ALG, h.SPI_GW1_IN, h.GW2_WAN, h.GW1_WAN)
    s = h.udp_socket(spd["ns"]["h1"], h.H1_ADDR, h.PORT_H1, timeout=1.0)
    try:
        got = h.received_after(  # from policy 1's network: allowed
            s, lambda: _send_inbound(spd, sa, IP(src=FIRST, dst=h.H1_ADDR) /
                                     UDP(sport=PORT, dport=h.PORT_H1) / Raw(b"IN-FIRST")),
            b"IN-FIRST")
        assert got == b"IN-FIRST", {k: v for k, v in gw.ctl("show", "stats")["drops"].items()
                                    if v}
        h.dropped_not_received(  # from no policy's network
            gw, s, lambda: _send_inbound(spd, sa, IP(src=MISS, dst=h.H1_ADDR) /
                                         UDP(sport=PORT, dport=h.PORT_H1) / Raw(b"IN-MISS")),
            b"IN-MISS", "policy_mismatch")
    finally:
        s.close()
