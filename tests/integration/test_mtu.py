# SPDX-License-Identifier: BSD-3-Clause
"""MTU and fragments: gw1's WAN MTU is 1400. A packet that would not fit after
ESP encapsulation gets ICMP "fragmentation needed" (DF) or ICMPv6 "packet too
big" with the MTU the inner packet may have; without DF it is fragmented before
encryption; fragmented ESP from the peer is reassembled before decryption;
TTL expiry gets ICMP time exceeded."""

import socket
import struct
import time

import pytest

import esgw_harness as h
import v6_topology as v

WAN_MTU = 1400
# Largest inner packet: ((MTU - outer - ESP header - IV - ICV) / block) * block - 2.
INNER_MTU_T4 = (WAN_MTU - 20 - 8 - 16 - 12) // 16 * 16 - 2   # IPv4 outer, AES-CBC/SHA1-96
INNER_MTU_T6 = (WAN_MTU - 40 - 8 - 8 - 16) // 4 * 4 - 2      # IPv6 outer, AES-GCM-128
IP_MTU_DISCOVER, IP_PMTUDISC_DONT, IP_PMTUDISC_DO = 10, 0, 2


@pytest.fixture(scope="module")
def mtu(request):
    if h.missing_binaries():
        pytest.skip("esgw not built in %s" % h.ESGW_BUILD)
    # net_af_xdp on the WAN: net_af_packet asks the kernel to reassemble
    # IPv4 fragments before it sees them (PACKET_FANOUT_FLAG_DEFRAG), which
    # would hide esgw's own reassembly. XDP hands over the fragments as sent.
    setup = v.start_setup(wan_mtu=WAN_MTU, wan_devargs="net_af_xdp1,iface=gw1-wan")
    yield setup
    problems = v.stop_setup(setup)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


def _warm_up(setup, far, family=socket.AF_INET):
    """One small packet through first, so that ARP/ND of the peer is done."""
    from scapy.packet import Raw
    s = v.udp_socket(setup["ns"]["h1"], family,
                     v.H1_6 if family == socket.AF_INET6 else v.H1_4)
    try:
        for _ in range(8):
            s.sendto(b"warm-up", (far, v.PORT_FAR))
            if setup["peer"].wait_inner(lambda i: Raw in i and b"warm-up" in bytes(i[Raw]), 1.0):
                return
    finally:
        s.close()
    raise AssertionError("no traffic through the tunnel toward %s" % far)


def test_interface_mtu_shown(mtu):
    assert mtu["gw"].interface("wan")["mtu"] == WAN_MTU
    assert mtu["gw"].interface("lan")["mtu"] == 1500


@pytest.mark.parametrize("far,expected", [(v.FAR4_T4, INNER_MTU_T4), (v.FAR4_T6, INNER_MTU_T6)],
                         ids=["ipv4-outer", "ipv6-outer"])
def test_df_too_big_gets_fragmentation_needed(mtu, far, expected):
    """DF set and too big after encapsulation: h1 receives ICMP type 3 code 4
    with the tunnel's inner MTU (RFC 1191), and its kernel lowers the path
    MTU to it; nothing goes out on the WAN; too_big counts."""
    gw, ns = mtu["gw"], mtu["ns"]
    _warm_up(mtu, far)
    before = gw.total_drop("too_big")
    icmp = v.raw_icmp_socket(ns["h1"], socket.AF_INET)
    s = v.udp_socket(ns["h1"], socket.AF_INET, v.H1_4)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    size = expected + 100 - 28  # UDP payload: the IP packet is 100 bytes too big
    try:
        s.sendto(b"D" * size, (far, v.PORT_FAR))
        got = v.recv_icmp(icmp, lambda d: d[20] == 3 and d[21] == 4, 3.0)
    finally:
        s.close()
        icmp.close()
    assert got is not None, "no ICMP fragmentation needed reached h1"
    data, addr = got
    assert addr[0] == v.GW1_LAN4
    assert struct.unpack("!H", data[26:28])[0] == expected
    route = h.nsrun(ns["h1"], ["ip", "route", "get", far]).stdout
    assert "mtu %d" % expected in route, route
    h.wait_for(lambda: gw.total_drop("too_big") > before, 5, 0.3, "too_big to count")
    # Fits exactly at the advertised MTU.
    s = v.udp_socket(ns["h1"], socket.AF_INET, v.H1_4)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    try:
        mtu["peer"].drain()
        s.sendto(b"F" * (expected - 28), (far, v.PORT_FAR))
        got = mtu["peer"].wait_inner(lambda i: len(i) == expected, 3.0)
    finally:
        s.close()
    assert got is not None, "a packet of exactly the inner MTU did not pass"
    assert len(got[1]) <= WAN_MTU


def test_ipv6_too_big_gets_packet_too_big(mtu):
    """IPv6 is never fragmented by routers: ICMPv6 packet too big with the
    inner MTU of the 6in4 tunnel."""
    ns = mtu["ns"]
    _warm_up(mtu, v.FAR6_T4, socket.AF_INET6)
    icmp = v.raw_icmp_socket(ns["h1"], socket.AF_INET6)
    s = v.udp_socket(ns["h1"], socket.AF_INET6, v.H1_6)
    try:
        s.sendto(b"B" * (INNER_MTU_T4 + 100 - 48), (v.FAR6_T4, v.PORT_FAR))
        got = v.recv_icmp(icmp, lambda d: d[0] == 2, 3.0)
    finally:
        s.close()
        icmp.close()
    assert got is not None, "no ICMPv6 packet too big reached h1"
    data, addr = got
    assert addr[0] == v.GW1_LAN6
    assert struct.unpack("!I", data[4:8])[0] == INNER_MTU_T4


def test_non_df_is_fragmented_before_encryption(mtu):
    """Without DF the inner packet is fragmented before encryption: every
    fragment is its own ESP packet within the WAN MTU, and the fragments
    scapy decrypts reassemble into the packet h1 sent."""
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    from scapy.layers.inet import defragment
    gw, ns, peer = mtu["gw"], mtu["ns"], mtu["peer"]
    _warm_up(mtu, v.FAR4_T4)
    before = gw.counter("router", "fragments_sent")
    payload = bytes(range(256)) * 5 + bytes(170)  # 1450 bytes: one IP packet, two fragments
    s = v.udp_socket(ns["h1"], socket.AF_INET, v.H1_4)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
    peer.drain()
    try:
        s.sendto(payload, (v.FAR4_T4, v.PORT_FAR))
    finally:
        s.close()
    frags, outers = [], []
    deadline = time.monotonic() + 5
    while len(frags) < 2 and time.monotonic() < deadline:
        got = peer.wait_inner(lambda i: IP in i and i[IP].src == v.H1_4 and
                              (i[IP].flags.MF or i[IP].frag > 0), 1.0)
        if got:
            outers.append(got[1])
            frags.append(got[2])
    assert len(frags) == 2, "expected 2 encrypted fragments, got %d" % len(frags)
    assert all(len(o) <= WAN_MTU for o in outers), [len(o) for o in outers]
    whole = defragment(frags)
    assert len(whole) == 1 and UDP in whole[0], whole
    assert bytes(whole[0][UDP].payload) == payload
    assert whole[0][IP].ttl == 63
    assert gw.counter("router", "fragments_sent") >= before + 2


def _outer_fragments(peer, marker, size, fragsize=600):
    from scapy.layers.inet import IP, UDP, fragment
    from scapy.packet import Raw
    inner = IP(src=v.FAR4_T4, dst=v.H1_4, ttl=64) / UDP(sport=5555, dport=v.PORT_H1) / \
        Raw(marker + b"x" * (size - len(marker)))
    outer = IP(bytes(peer.encrypt("t4", inner)))
    return fragment(outer, fragsize=fragsize)


def _send_fragments_until_received(mtu, make_fragments, prefix, size=1300):
    """Sends make_fragments(i) (3 fragments, last first) until h1 receives
    the whole size-byte datagram whose payload starts with prefix + i."""
    s = v.udp_socket(mtu["ns"]["h1"], socket.AF_INET, v.H1_4, v.PORT_H1, timeout=1.0)
    data = None
    try:
        for i in range(5):
            frags = make_fragments(i)
            assert len(frags) == 3
            for f in reversed(frags):
                mtu["peer"].send_frame(f)
            try:
                data, _ = s.recvfrom(4096)
            except OSError:
                continue
            if data.startswith(prefix + b"%d-" % i):
                break
    finally:
        s.close()
    assert data is not None and len(data) == size and data.startswith(prefix)


def test_fragmented_esp_is_reassembled(mtu):
    """ESP fragmented on the way (by scapy, out of order) is reassembled by
    gw1 before decryption and reaches h1 whole."""
    gw = mtu["gw"]
    before = gw.counter("router", "datagrams_reassembled")
    _send_fragments_until_received(
        mtu, lambda i: _outer_fragments(mtu["peer"], b"REASM-%d-" % i, 1300), b"REASM-")
    assert gw.counter("router", "datagrams_reassembled") > before
    assert gw.sa(20)["drops"].get("auth_failed", 0) == 0


def test_incomplete_fragments_time_out(mtu):
    """A datagram missing a fragment is dropped after the reassembly timeout
    and counted (reassembly_timeout), not held forever."""
    gw, peer = mtu["gw"], mtu["peer"]
    before = gw.total_drop("reassembly_timeout")
    frags = _outer_fragments(peer, b"LOST-", 1300)
    peer.send_frame(frags[0])
    peer.send_frame(frags[2])
    h.wait_for(lambda: gw.total_drop("reassembly_timeout") >= before + 2, 8, 0.5,
               "reassembly_timeout to count both held fragments")


def test_ttl_expired_gets_time_exceeded(mtu):
    gw, ns = mtu["gw"], mtu["ns"]
    before = gw.total_drop("ttl_expired")
    icmp = v.raw_icmp_socket(ns["h1"], socket.AF_INET)
    s = v.udp_socket(ns["h1"], socket.AF_INET, v.H1_4)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, 1)
    try:
        got = None
        for _ in range(5):
            s.sendto(b"ttl-1", (v.FAR4_T4, v.PORT_FAR))
            got = v.recv_icmp(icmp, lambda d: d[20] == 11, 1.0)
            if got:
                break
    finally:
        s.close()
        icmp.close()
    assert got is not None, "no ICMP time exceeded reached h1"
    assert got[1][0] == v.GW1_LAN4 and got[0][21] == 0
    h.wait_for(lambda: gw.total_drop("ttl_expired") > before, 5, 0.3, "ttl_expired to count")


def _outer_fragments6(peer, marker, size, ident, fragsize=552):
    """4in6 ESP for t6 split by hand into IPv6 fragments (RFC 8200 4.5):
    each carries the fixed header, a fragment header and fragsize bytes
    (a multiple of 8) of the ESP packet."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
    from scapy.packet import Raw
    inner = IP(src=v.FAR4_T6, dst=v.H1_4, ttl=64) / UDP(sport=5555, dport=v.PORT_H1) / \
        Raw(marker + b"y" * (size - len(marker)))
    esp = bytes(IPv6(bytes(peer.encrypt("t6", inner))).payload)
    frags = []
    for off in range(0, len(esp), fragsize):
        chunk = esp[off:off + fragsize]
        frags.append(IPv6(src=v.PEER_WAN6, dst=v.GW1_WAN6) /
                     IPv6ExtHdrFragment(nh=50, offset=off // 8, id=ident,
                                        m=int(off + fragsize < len(esp))) / Raw(chunk))
    return frags


def test_fragmented_esp_over_ipv6_is_reassembled(mtu):
    """4in6 ESP in IPv6 fragments (out of order) is reassembled by gw1 before
    decryption and reaches h1 whole. On net_af_packet too the kernel would
    hand these over as they are (its defragmentation is IPv4 only)."""
    gw = mtu["gw"]
    before = gw.counter("router", "datagrams_reassembled")
    _send_fragments_until_received(
        mtu, lambda i: _outer_fragments6(mtu["peer"], b"REASM6-%d-" % i, 1300, 0x6000 + i),
        b"REASM6-")
    assert gw.counter("router", "datagrams_reassembled") > before
    assert gw.sa(40)["drops"].get("auth_failed", 0) == 0


def test_incomplete_ipv6_fragments_time_out(mtu):
    gw, peer = mtu["gw"], mtu["peer"]
    before = gw.total_drop("reassembly_timeout")
    frags = _outer_fragments6(peer, b"LOST6-", 1300, 0x6100)
    peer.send_frame(frags[0])
    peer.send_frame(frags[2])
    h.wait_for(lambda: gw.total_drop("reassembly_timeout") >= before + 2, 8, 0.5,
               "reassembly_timeout to count both held IPv6 fragments")


def test_overlapping_ipv6_fragments_drop_the_datagram(mtu):
    """RFC 5722: a fragment overlapping another discards the whole datagram,
    so the rest of it can no longer complete it either."""
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
    from scapy.packet import Raw
    gw, ns, peer = mtu["gw"], mtu["ns"], mtu["peer"]
    before_invalid = gw.total_drop("reassembly_invalid")
    before_done = gw.counter("router", "datagrams_reassembled")
    frags = _outer_fragments6(peer, b"OVERLAP6-", 1300, 0x6200)
    overlap = IPv6(src=v.PEER_WAN6, dst=v.GW1_WAN6) / \
        IPv6ExtHdrFragment(nh=50, offset=8, id=0x6200, m=1) / Raw(b"z" * 64)
    s = v.udp_socket(ns["h1"], socket.AF_INET, v.H1_4, v.PORT_H1, timeout=1.5)
    try:
        peer.send_frame(frags[0])
        peer.send_frame(overlap)      # inside frags[0]: both dropped
        peer.send_frame(frags[1])     # a new datagram now, never complete
        peer.send_frame(frags[2])
        with pytest.raises(OSError):
            data, _ = s.recvfrom(4096)
            assert not data.startswith(b"OVERLAP6-")
    finally:
        s.close()
    h.wait_for(lambda: gw.total_drop("reassembly_invalid") >= before_invalid + 2, 5, 0.3,
               "reassembly_invalid to count the overlapping fragment and its datagram")
    assert gw.counter("router", "datagrams_reassembled") == before_done
