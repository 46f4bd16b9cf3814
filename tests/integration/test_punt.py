# SPDX-License-Identifier: BSD-3-Clause
"""The punt path: what is addressed to gw1 but not served by its router (IKE
on UDP 500, non-ESP-marked packets on NAT-T port 4500, TCP such as SSH) goes
through rxtx to a TAP interface in gw1's namespace, where the host's own
sockets answer, and their answers go back out of the right port. ESP and ICMP
echo stay with the dataplane. The same over IPv6 (v6_topology: gw1's WAN
address 2001:db8:3::1), where the host resolves the peer with neighbor
discovery through the TAP."""

import os
import socket
import threading

import pytest

import esgw_harness as h
import v6_topology as v

ALG = "aes-gcm-128"  # one algorithm: the punt path does not depend on it


class HnTopology(h.Topology):
    """The harness topology with this helper's namespace prefix."""

    def __init__(self):
        super().__init__()
        self.tag = "hn" + self.tag[2:]


@pytest.fixture(scope="module")
def punt():
    if os.geteuid() != 0 or h.missing_binaries():
        pytest.skip("needs root and a build in %s" % h.ESGW_BUILD)
    topo = HnTopology()
    gw = peer = None
    try:
        ns = h.build_standard(topo, peer=True)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gw.start()
        h.configure_gw1(gw, ALG)
        peer = h.ScapyPeer(ns["peer"], "peer-wan", ALG, h.link_mac(ns["gw1"], "gw1-wan"))
        yield {"ns": ns, "gw1": gw, "peer": peer}
    finally:
        if peer is not None:
            peer.close()
        problems = gw.stop() if gw is not None else []
        topo.teardown()
        assert not problems, problems


def _udp_round_trip(setup, port, payload):
    """A socket bound to 0.0.0.0:port in gw1's namespace (the host's stack, as
    an IKE daemon binds) receives payload sent from the peer's kernel to gw1's
    WAN address and answers; the peer gets the answer from gw1's address."""
    ns = setup["ns"]
    host = h.udp_socket(ns["gw1"], "0.0.0.0", port, timeout=1.0)
    client = h.udp_socket(ns["peer"], h.GW2_WAN, 0, timeout=1.0)
    try:
        got = None
        # The first tries may wait for ARP (gw1 -> peer, and the host -> peer).
        for _ in range(10):
            client.sendto(payload, (h.GW1_WAN, port))
            try:
                got, addr = host.recvfrom(2048)
                break
            except socket.timeout:
                continue
        assert got == payload, "the host's socket on %d never got the packet" % port
        assert addr[0] == h.GW2_WAN
        reply = b"reply:" + payload
        host.sendto(reply, addr)
        back, frm = client.recvfrom(2048)
        assert back == reply
        assert frm == (h.GW1_WAN, port)
    finally:
        host.close()
        client.close()


def test_ike_udp_500_reaches_host_and_reply_returns(punt):
    gw = punt["gw1"]
    before_router = gw.counters("router").get("punted", 0)
    before_rxtx = gw.counters("rxtx")
    _udp_round_trip(punt, 500, b"IKE_SA_INIT " + os.urandom(8).hex().encode())
    assert gw.counters("router")["punted"] > before_router
    after_rxtx = gw.counters("rxtx")
    assert after_rxtx["punt_tx"] > before_rxtx.get("punt_tx", 0)
    assert after_rxtx["punt_rx"] > before_rxtx.get("punt_rx", 0)  # the reply, and ARP
    assert gw.total_drop("punted_no_host") == 0


def test_non_esp_marker_on_4500_reaches_host(punt):
    """RFC 3948: IKE on the NAT-T port starts with four zero bytes; the host's
    socket gets it (marker included, as the kernel would deliver it)."""
    gw = punt["gw1"]
    no_sa = gw.total_drop("no_sa")
    _udp_round_trip(punt, 4500, b"\0\0\0\0" + b"IKE_AUTH " + os.urandom(8).hex().encode())
    assert gw.total_drop("no_sa") == no_sa  # never taken for ESP


def _tcp_echo(server_ns, family, client_ns, address, port, size, greeting):
    """A listener on any address in server_ns (the host's stack, as sshd
    binds) accepts a connection from client_ns to address, reads a line of
    size random bytes (hex) and answers greeting + line; the client must get
    exactly that back. More than one segment each way: the host's MTU and
    offloads hold up."""
    with h.in_netns(server_ns):
        server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    server.listen(1)
    server.settimeout(20)

    def serve():
        try:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(20)
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(greeting + data)
        except OSError:
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with h.in_netns(client_ns):
        client = socket.socket(family, socket.SOCK_STREAM)
    try:
        client.settimeout(20)
        client.connect((address, port))
        line = os.urandom(size).hex().encode() + b"\n"
        client.sendall(line)
        want = greeting + line
        got = b""
        while len(got) < len(want):
            chunk = client.recv(65536)
            if not chunk:
                break
            got += chunk
        assert got == want
    finally:
        client.close()
        server.close()
        t.join(5)


def test_tcp_to_lan_address_reaches_host(punt):
    """SSH-like: h1 connects to gw1's LAN address, a listener in gw1's
    namespace accepts and echoes."""
    ns = punt["ns"]
    _tcp_echo(ns["gw1"], socket.AF_INET, ns["h1"], h.GW1_LAN, 2222, 3000,
              b"SSH-2.0-esgw-host echo ")
    # The gateway's own interface list is still the configured one: no TAP.
    assert sorted(i["name"] for i in punt["gw1"].ctl("show", "interfaces")["interfaces"]) == \
        ["lan", "wan"]


def test_closed_tcp_port_gets_reset_from_host(punt):
    """Nothing listens: the host's stack refuses (RST) instead of silence."""
    with h.in_netns(punt["ns"]["h1"]):
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.settimeout(10)
    try:
        with pytest.raises(ConnectionRefusedError):
            client.connect((h.GW1_LAN, 2223))
    finally:
        client.close()


def test_udp_flood_never_starves_ike_or_ssh(punt):
    """Issue 9, point 4: a UDP flood from the WAN to some other port of gw1
    (port 9, far above the punt budget of its class) while IKE datagrams and
    an SSH-like TCP session go to the host: each class has its own budget,
    so no IKE datagram is policed, all reach the host's socket, the TCP
    exchange completes, the flood is policed in its own class, and the
    router is the same process afterwards."""
    import time
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    gw, ns, peer = punt["gw1"], punt["ns"], punt["peer"]
    _udp_round_trip(punt, 500, b"IKE warm-up")  # ARP both ways settled
    before = gw.counters("router")
    missed = gw.total_drop("rx_missed")
    procs = gw.process_snapshot()
    flood = bytes(Ether(dst=peer.gw_mac, src=peer.mac) /
                  IP(src=h.GW2_WAN, dst=h.GW1_WAN) / UDP(sport=40000, dport=9) / Raw(b"f" * 18))
    stop = threading.Event()
    sent = [0]

    def flooder():
        while not stop.is_set():
            for _ in range(200):
                peer.l2_sock.send(flood)
            sent[0] += 200
            time.sleep(0.001)

    host = h.udp_socket(ns["gw1"], "0.0.0.0", 500, timeout=0.05)
    client = h.udp_socket(ns["peer"], h.GW2_WAN, 0)
    t = threading.Thread(target=flooder, daemon=True)
    t.start()
    got = set()
    try:
        # Half a second of flood before IKE starts: the flood's class is
        # over its budget the whole time.
        h.wait_for(lambda: gw.counters("router").get("punt_policed_other", 0) >
                   before.get("punt_policed_other", 0), 10, 0.1, "the flood policed")
        for i in range(200):
            client.sendto(b"IKE-%03d" % i, (h.GW1_WAN, 500))
            try:
                while True:
                    got.add(host.recvfrom(2048)[0])
            except OSError:
                pass
        _tcp_echo(ns["gw1"], socket.AF_INET, ns["peer"], h.GW1_WAN, 2224, 3000,
                  b"SSH-2.0-esgw-host echo ")
        deadline = time.monotonic() + 3
        while len(got) < 200 and time.monotonic() < deadline:
            try:
                got.add(host.recvfrom(2048)[0])
            except OSError:
                pass
    finally:
        stop.set()
        t.join(5)
        host.close()
        client.close()
    after = gw.counters("router")
    lost_before_router = gw.total_drop("rx_missed") - missed
    print("flood: %d frames sent, %d policed; IKE: 200 sent, %d received; rx_missed +%d" % (
        sent[0], after["punt_policed_other"] - before.get("punt_policed_other", 0), len(got),
        lost_before_router))
    assert after["punt_policed_ike"] == before.get("punt_policed_ike", 0)
    assert after["punt_policed_tcp"] == before.get("punt_policed_tcp", 0)
    assert after["punt_policed_other"] > before.get("punt_policed_other", 0)
    assert after["punted_ike"] >= before.get("punted_ike", 0) + 200 - lost_before_router
    assert len(got) >= 200 - lost_before_router, "IKE datagrams lost: %d" % (200 - len(got))
    assert gw.process_snapshot() == procs, "a process changed during the flood"


def test_esp_and_echo_stay_in_the_dataplane(punt):
    """A ping to gw1 is answered by the router (once: the host never sees it,
    or it would answer too), and ESP is decrypted by the worker, not punted."""
    gw, ns, peer = punt["gw1"], punt["ns"], punt["peer"]
    h.ping_until_ok(ns["peer"], h.GW1_WAN)  # neighbours settled
    h.send_to_h1_until_received(punt, b"warm-" + os.urandom(4).hex().encode())
    router = gw.counters("router")
    sa_packets = gw.sa(h.SA_ID_GW1_IN)["packets"]

    res = h.ping(ns["peer"], h.GW1_WAN, count=5)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "DUP!" not in res.stdout
    h.send_to_h1_until_received(punt, b"esp-" + os.urandom(4).hex().encode())

    after = gw.counters("router")
    assert after["icmp_echo_replies"] >= router["icmp_echo_replies"] + 5
    assert gw.sa(h.SA_ID_GW1_IN)["packets"] > sa_packets
    assert after["punted"] == router["punted"]


def test_secondary_restarted_after_taps_attaches(punt):
    """A crypto worker started after rxtx made its TAPs probes them too (the
    EAL of a secondary attaches to every device of the primary): it must come
    up, and ESP and the punt path must keep working."""
    import signal
    import time
    gw = punt["gw1"]
    workers = [pid for pid, argv in gw.dataplane_processes()
               if os.path.basename(argv[0]) == "esgw-crypto"]
    assert workers
    os.kill(workers[0], signal.SIGKILL)
    h.wait_for(lambda: not h.pid_alive(workers[0]), 5, 0.1, "worker gone")
    time.sleep(0.5)
    gw.wait_running(30)
    h.send_to_h1_until_received(punt, b"after-restart-" + os.urandom(4).hex().encode())
    _udp_round_trip(punt, 500, b"IKE again " + os.urandom(4).hex().encode())


@pytest.fixture(scope="module")
def punt6():
    if os.geteuid() != 0 or h.missing_binaries():
        pytest.skip("needs root and a build in %s" % h.ESGW_BUILD)
    setup = v.start_setup()  # net_af_packet on both ports
    yield setup
    problems = v.stop_setup(setup)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


def test_tcp_over_ipv6_to_wan_address_reaches_host(punt6):
    """The peer's kernel connects to gw1's WAN IPv6 address: the SYN is
    punted to the TAP, the host's SYN-ACK resolves the peer with its own
    neighbor solicitation (the advertisement comes back through the router's
    copy, router/nd.c) and leaves through the WAN port."""
    gw, ns = punt6["gw"], punt6["ns"]
    punted = gw.counters("router").get("punted", 0)
    _tcp_echo(ns["gw1"], socket.AF_INET6, ns["peer"], v.GW1_WAN6, 2224, 2000, b"v6 echo ")
    assert gw.counters("router").get("punted", 0) > punted


def test_icmpv6_echo_stays_in_the_dataplane(punt6):
    """A ping to gw1's WAN IPv6 address is answered by the router, once: the
    host (which now has the address on its TAP) never sees the request, and
    the kernel's IPv6 on the AF_PACKET interface is off (rxtx/punt.c)."""
    gw, ns = punt6["gw"], punt6["ns"]
    h.ping_until_ok(ns["peer"], v.GW1_WAN6)  # neighbours settled
    router = gw.counters("router")
    res = h.ping(ns["peer"], v.GW1_WAN6, count=5)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "DUP!" not in res.stdout
    after = gw.counters("router")
    assert after["icmp6_echo_replies"] >= router["icmp6_echo_replies"] + 5
    assert after.get("punted", 0) == router.get("punted", 0)
