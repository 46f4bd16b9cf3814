# SPDX-License-Identifier: BSD-3-Clause
"""IPv6 on the gateway, checked against scapy's independent ESP: IPv6 inside
IPv4 tunnels (6in4), IPv4 inside IPv6 tunnels (4in6), IPv6 in IPv6 (6in6), in
both directions; neighbor discovery and ICMPv6 echo for the gateway's own
addresses; hop limit decrement and ICMPv6 time exceeded."""

import socket
import time

import pytest

import esgw_harness as h
import v6_topology as v

# case -> (tunnel, inner far address, inner family)
CASES = {
    "4in4": ("t4", v.FAR4_T4, socket.AF_INET),
    "6in4": ("t4", v.FAR6_T4, socket.AF_INET6),
    "4in6": ("t6", v.FAR4_T6, socket.AF_INET),
    "6in6": ("t6", v.FAR6_T6, socket.AF_INET6),
}


@pytest.fixture(scope="module")
def v6(request):
    if h.missing_binaries():
        pytest.skip("esgw not built in %s" % h.ESGW_BUILD)
    setup = v.start_setup()
    yield setup
    problems = v.stop_setup(setup)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


def _h1_addr(family):
    return v.H1_6 if family == socket.AF_INET6 else v.H1_4


def _udp_match(marker):
    from scapy.packet import Raw

    def match(inner):
        return Raw in inner and marker in bytes(inner[Raw].load)
    return match


def test_nd_and_echo_to_gateway(v6):
    """h1 resolves gw1's LAN address with ND (gw1 answers the solicitation)
    and pings it (gw1 answers the echo)."""
    gw, ns = v6["gw"], v6["ns"]
    na_before = gw.counter("router", "nd_advertisements_sent")
    res = h.nsrun(ns["h1"], ["ping", "-6", "-c", "3", "-i", "0.2", "-W", "2", v.GW1_LAN6],
                  check=False, timeout=20)
    assert res.returncode == 0, res.stdout + res.stderr
    neigh = h.nsrun(ns["h1"], ["ip", "-6", "neigh", "show", v.GW1_LAN6]).stdout
    gw_mac = h.link_mac(ns["gw1"], "gw1-lan")
    assert gw_mac in neigh.lower(), "h1 did not learn gw1's MAC by ND: %r" % neigh
    assert "router" in neigh, "gw1's advertisement must carry the router flag: %r" % neigh
    assert gw.counter("router", "nd_advertisements_sent") > na_before
    assert gw.counter("router", "icmp6_echo_replies") >= 3
    # The WAN address answers too (the peer's kernel resolves it by ND).
    res = h.nsrun(ns["peer"], ["ping", "-6", "-c", "2", "-i", "0.2", "-W", "2", v.GW1_WAN6],
                  check=False, timeout=20)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_outbound_decrypts_in_scapy(v6, case):
    """h1 -> far side: gw1 encrypts into the right tunnel with the right outer
    family; scapy decrypts the inner packet intact, hop limit/TTL minus one."""
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    tunnel, far, family = CASES[case]
    peer = v6["peer"]
    marker = b"V6-OUT-" + case.encode()
    s = v.udp_socket(v6["ns"]["h1"], family, _h1_addr(family))
    got = None
    try:
        for _ in range(8):  # the first packets wait for ND/ARP of the peer
            s.sendto(marker, (far, v.PORT_FAR))
            got = peer.wait_inner(_udp_match(marker), 1.0)
            if got:
                break
    finally:
        s.close()
    assert got is not None, "no ESP carrying %r reached the peer" % marker
    got_tunnel, outer, inner = got
    assert got_tunnel == tunnel
    if tunnel == "t6":
        assert IPv6 in outer and outer[IPv6].src == v.GW1_WAN6 and outer[IPv6].dst == v.PEER_WAN6
    else:
        assert outer.src == v.GW1_WAN4 and outer.dst == v.PEER_WAN4
    assert marker not in bytes(outer), "marker in clear on the WAN"
    if family == socket.AF_INET6:
        assert IPv6 in inner and inner[IPv6].src == v.H1_6 and inner[IPv6].dst == far
        assert inner[IPv6].hlim == 63
    else:
        assert IP in inner and inner[IP].src == v.H1_4 and inner[IP].dst == far
        assert inner[IP].ttl == 63


@pytest.mark.parametrize("case", sorted(CASES))
def test_inbound_from_scapy_reaches_h1(v6, case):
    """far side -> h1: scapy encrypts, gw1 decrypts (next header 4 or 41) and
    forwards to h1 (ND for h1 on the LAN for IPv6)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.packet import Raw
    tunnel, far, family = CASES[case]
    peer, gw = v6["peer"], v6["gw"]
    marker = b"V6-IN-" + case.encode()
    h1 = _h1_addr(family)
    net = IPv6(src=far, dst=h1, hlim=64) if family == socket.AF_INET6 else \
        IP(src=far, dst=h1, ttl=64)
    sa_id = 20 if tunnel == "t4" else 40
    before = gw.sa(sa_id)["packets"]
    s = v.udp_socket(v6["ns"]["h1"], family, h1, v.PORT_H1, timeout=1.0)
    data = None
    try:
        for _ in range(8):
            peer.send_frame(peer.encrypt(tunnel, net / UDP(sport=5555, dport=v.PORT_H1) /
                                         Raw(marker)))
            try:
                data, addr = s.recvfrom(2048)
            except OSError:
                continue
            if data == marker:
                break
    finally:
        s.close()
    assert data == marker, "h1 never received %r" % marker
    assert addr[0] == far
    assert gw.sa(sa_id)["packets"] > before
    assert gw.sa(sa_id)["drops"].get("bad_next_header", 0) == 0


def test_hop_limit_expired_gets_icmpv6_time_exceeded(v6):
    """A packet with hop limit 1 is not forwarded; h1 gets ICMPv6 time
    exceeded from gw1, and gw1 counts ttl_expired."""
    gw, ns = v6["gw"], v6["ns"]
    before = gw.total_drop("ttl_expired")
    icmp = v.raw_icmp_socket(ns["h1"], socket.AF_INET6)
    s = v.udp_socket(ns["h1"], socket.AF_INET6, v.H1_6)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 1)
    try:
        got = None
        for _ in range(5):
            s.sendto(b"hop-limit-1", (v.FAR6_VIA, v.PORT_FAR))
            got = v.recv_icmp(icmp, lambda d: d[0] == 3 and b"hop-limit-1" in d, 1.0)
            if got:
                break
    finally:
        s.close()
        icmp.close()
    assert got is not None, "no ICMPv6 time exceeded reached h1"
    data, addr = got
    assert data[1] == 0, "code 0: hop limit exceeded in transit"
    assert addr[0] == v.GW1_LAN6
    h.wait_for(lambda: gw.total_drop("ttl_expired") > before, 5, 0.3, "ttl_expired to count")


def test_hop_limit_decremented_when_forwarding(v6):
    """Forwarded by a plain IPv6 route (via the peer): hop limit minus one."""
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    ns = v6["ns"]
    peer = v6["peer"]
    s = v.udp_socket(ns["h1"], socket.AF_INET6, v.H1_6)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 7)
    seen = None
    try:
        for _ in range(5):
            s.sendto(b"hop-limit-7", (v.FAR6_VIA, v.PORT_FAR))
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and seen is None:
                peer.l2.settimeout(0.2)
                try:
                    data, addr = peer.l2.recvfrom(65535)
                except OSError:
                    continue
                f = Ether(data)
                if IPv6 in f and f[IPv6].dst == v.FAR6_VIA and b"hop-limit-7" in data:
                    seen = f
            if seen is not None:
                break
    finally:
        s.close()
    assert seen is not None, "gw1 did not forward to the route's next hop"
    assert seen[IPv6].hlim == 6


def test_ctl_refuses_mixed_families(v6):
    gw = v6["gw"]
    res = gw.ctl_raw("tunnel", "add", "tx", "local", v.GW1_WAN4, "remote", v.PEER_WAN6,
                     "sa-out", 10, "sa-in", 20, json_out=False)
    assert res.returncode != 0 and "famil" in res.stderr, res.stderr
    res = gw.ctl_raw("route", "add", "2001:db8:77::/64", "via", v.PEER_WAN4, json_out=False)
    assert res.returncode != 0 and "famil" in res.stderr, res.stderr
    res = gw.ctl_raw("route", "add", "2001:db8:77::1/64", "via", v.PEER_WAN6, json_out=False)
    assert res.returncode != 0 and "bits set" in res.stderr, res.stderr
    routes = [r["prefix"] for r in gw.ctl("show", "routes")["routes"]]
    assert "2001:db8:2::/64" in routes and "2001:db8:77::/64" not in routes
    addrs = gw.interface("lan")["addresses"]
    assert v.GW1_LAN6 + "/64" in addrs


def _reaches_peer(v6, far, marker, tries=8):
    s = v.udp_socket(v6["ns"]["h1"], socket.AF_INET6, v.H1_6)
    try:
        for _ in range(tries):
            s.sendto(marker, (far, v.PORT_FAR))
            got = v6["peer"].wait_inner(_udp_match(marker), 1.0)
            if got:
                return got
    finally:
        s.close()
    return None


def test_ipv6_route_change_applied_in_place(v6):
    """An IPv6 route into a tunnel deleted and added back by single commands
    goes out of and into the router's IPv6 FIB in place (no whole push): in
    between its destination counts no_route, after it the 6in6 packets reach
    the peer through t6 again."""
    gw = v6["gw"]
    in_place = gw.logs_text(lines=100000).count("applied in place")
    gw.ctl("route", "del", "2001:db8:4::/64")
    try:
        h.wait_for(lambda: gw.logs_text(lines=100000).count("applied in place") > in_place,
                   20, 0.2, "the route's deletion applied in place")
        no_route = gw.counter("router", "no_route")
        assert _reaches_peer(v6, v.FAR6_T6, b"V6-GONE", tries=3) is None
        h.wait_for(lambda: gw.counter("router", "no_route") > no_route, 20, 0.2,
                   "no_route for the deleted route's destination")
    finally:
        in_place = gw.logs_text(lines=100000).count("applied in place")
        gw.ctl("route", "add", "2001:db8:4::/64", "tunnel", "t6")
    h.wait_for(lambda: gw.logs_text(lines=100000).count("applied in place") > in_place,
               20, 0.2, "the route's addition applied in place")
    got = _reaches_peer(v6, v.FAR6_T6, b"V6-BACK")
    assert got is not None and got[0] == "t6"
