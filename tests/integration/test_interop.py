# SPDX-License-Identifier: BSD-3-Clause
"""esgw against an independent ESP implementation: scapy stands in gw2's place
(192.168.3.2, and h2's 192.168.2.1 behind it). What gw1 encrypts must decrypt in
scapy, and what scapy encrypts must reach h1."""

import threading
import time

import esgw_harness as h

PORT_H2 = 9999
PORT_H1 = h.PORT_H1


def _layers():
    from scapy.layers.inet import ICMP, IP, UDP
    from scapy.layers.ipsec import ESP
    from scapy.packet import Raw
    return IP, UDP, ICMP, ESP, Raw


def _is_udp_marker(peer, marker):
    IP, UDP, _, _, Raw = _layers()

    def match(outer):
        try:
            inner = peer.decrypt(outer)
        except Exception:
            return False
        return UDP in inner and Raw in inner and marker in bytes(inner[Raw].load)
    return match


def send_h1_udp_until_seen(setup, marker, tries=10):
    """Sends UDP h1 -> 192.168.2.1 until the peer sees it encrypted (the first
    packets may wait for gw1's ARP of the peer). Returns the outer packet."""
    peer = setup["peer"]
    s = h.udp_socket(setup["ns"]["h1"], h.H1_ADDR, 0)
    try:
        for _ in range(tries):
            s.sendto(marker, (h.H2_ADDR, PORT_H2))
            outer = peer.recv_esp(1.0, match=_is_udp_marker(peer, marker))
            if outer is not None:
                return outer
    finally:
        s.close()
    raise AssertionError("no ESP carrying %r reached the peer" % marker)


def test_outbound_udp_decrypts_in_scapy(peer_setup):
    IP, UDP, _, ESP, Raw = _layers()
    peer, gw1 = peer_setup["peer"], peer_setup["gw1"]
    marker = b"INTEROP-OUT-" + peer_setup["alg"].encode()
    outer = send_h1_udp_until_seen(peer_setup, marker)
    assert outer[IP].src == h.GW1_WAN and outer[IP].dst == h.GW2_WAN
    assert outer[IP].proto == 50
    assert outer[ESP].spi == h.SPI_GW1_OUT
    assert outer[ESP].seq >= 1
    assert marker not in bytes(outer), "marker in clear on the WAN"
    inner = peer.decrypt(outer)
    assert inner[IP].src == h.H1_ADDR and inner[IP].dst == h.H2_ADDR
    assert inner[IP].ttl == 63, "gw1 forwards: TTL 64 - 1"
    assert inner[UDP].dport == PORT_H2
    assert bytes(inner[Raw].load) == marker
    assert gw1.sa(h.SA_ID_GW1_OUT)["seq_out"] >= outer[ESP].seq


def test_outbound_sequence_numbers_increase(peer_setup):
    _, _, _, ESP, _ = _layers()
    peer = peer_setup["peer"]
    marker = b"INTEROP-SEQ-" + peer_setup["alg"].encode()
    send_h1_udp_until_seen(peer_setup, marker + b"-warmup")
    peer.drain()
    s = h.udp_socket(peer_setup["ns"]["h1"], h.H1_ADDR, 0)
    seqs = []
    try:
        for i in range(8):
            m = marker + b"-%d" % i
            s.sendto(m, (h.H2_ADDR, PORT_H2))
            outer = peer.recv_esp(3.0, match=_is_udp_marker(peer, m))
            assert outer is not None, "packet %d not seen" % i
            seqs.append(outer[ESP].seq)
    finally:
        s.close()
    assert seqs == list(range(seqs[0], seqs[0] + 8)), seqs


def test_inbound_from_scapy_reaches_h1(peer_setup):
    gw1 = peer_setup["gw1"]
    before = gw1.sa(h.SA_ID_GW1_IN)["packets"]
    marker = b"INTEROP-IN-" + peer_setup["alg"].encode()
    data, addr = h.send_to_h1_until_received(peer_setup, marker)
    assert addr == (h.H2_ADDR, 5555)
    h.wait_for(lambda: gw1.sa(h.SA_ID_GW1_IN)["packets"] > before, 10, 0.3,
               "gw1 inbound SA packet counter to rise")
    sa = gw1.sa(h.SA_ID_GW1_IN)
    assert sa["drops"].get("auth_failed", 0) == 0


class EchoResponder:
    """Answers ICMP echo requests that arrive inside the tunnel, as h2 behind a
    scapy gateway would: decrypt, swap, encrypt, send back to gw1."""

    def __init__(self, peer):
        self.peer = peer
        self.stop = threading.Event()
        self.answered = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        IP, _, ICMP, _, _ = _layers()
        while not self.stop.is_set():
            outer = self.peer.recv_esp(0.2)
            if outer is None:
                continue
            try:
                inner = self.peer.decrypt(outer)
            except Exception:
                continue
            if ICMP not in inner or inner[ICMP].type != 8 or inner[IP].dst != h.H2_ADDR:
                continue
            reply = IP(src=h.H2_ADDR, dst=inner[IP].src, ttl=64) / ICMP(
                type=0, id=inner[ICMP].id, seq=inner[ICMP].seq) / inner[ICMP].payload
            self.peer.send_frame(self.peer.encrypt(reply))
            self.answered += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(5)


def test_ping_round_trip_through_scapy_peer(peer_setup):
    ns = peer_setup["ns"]
    peer_setup["peer"].drain()
    with EchoResponder(peer_setup["peer"]) as responder:
        h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=20)
        res = h.ping(ns["h1"], h.H2_ADDR, count=5)
    assert res.returncode == 0, res.stdout + res.stderr
    assert responder.answered >= 5
    assert " 0% packet loss" in res.stdout or " 20% packet loss" in res.stdout, res.stdout


def test_many_inbound_packets(peer_setup):
    """A burst of 200 inbound packets: all pass in order of sequence numbers."""
    peer = peer_setup["peer"]
    h.send_to_h1_until_received(peer_setup, b"warmup-burst")
    s = h.udp_socket(peer_setup["ns"]["h1"], h.H1_ADDR, PORT_H1, timeout=3.0)
    got = set()
    try:
        for i in range(200):
            peer.send_frame(h.inbound_udp(peer, b"burst-%03d" % i))
            if i % 20 == 19:
                time.sleep(0.01)  # veth queues are short
        try:
            while len(got) < 200:
                data, _ = s.recvfrom(2048)
                got.add(data)
        except OSError:
            pass
    finally:
        s.close()
    assert len(got) >= 190, "only %d of 200 inbound packets reached h1" % len(got)
