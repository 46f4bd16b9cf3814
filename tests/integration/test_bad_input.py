# SPDX-License-Identifier: BSD-3-Clause
"""Bad packets on gw1's WAN, sent by the scapy peer: each is dropped under its
own counter (invariant 3), nothing crashes or restarts, and the tunnel keeps
carrying valid traffic afterwards (invariant 7)."""

import os
import time

import pytest

import esgw_harness as h


def _ip():
    from scapy.layers.inet import IP
    return IP


@pytest.fixture
def checked(peer_setup):
    """The tunnel works before the test, and after it: valid traffic still
    reaches h1 and no process restarted."""
    h.send_to_h1_until_received(peer_setup, b"before-" + os.urandom(4).hex().encode())
    yield peer_setup
    h.send_to_h1_until_received(peer_setup, b"after-" + os.urandom(4).hex().encode())
    peer_setup["gw1"].assert_no_restarts()


def expect_drop(setup, name, send, per_sa=False):
    """Calls send() (which sends one bad packet) and checks that exactly one
    drop was counted, under `name` and no other reason, in show stats and, with
    per_sa, also on the inbound SA."""
    gw = setup["gw1"]
    before = gw.ctl("show", "stats")["drops"]
    before_sa = gw.sa(h.SA_ID_GW1_IN)["drops"]
    send()
    h.wait_for(lambda: gw.total_drop(name) > before.get(name, 0), 10, 0.2,
               "%s to rise" % name)
    time.sleep(0.3)  # a drop counted twice or under a second name shows up too

    def changed(new, old):
        return {k: v - old.get(k, 0) for k, v in new.items() if v != old.get(k, 0)}
    assert changed(gw.ctl("show", "stats")["drops"], before) == {name: 1}
    if per_sa:
        assert changed(gw.sa(h.SA_ID_GW1_IN)["drops"], before_sa) == {name: 1}


@pytest.mark.parametrize("where", ["icv", "ciphertext", "iv"])
def test_wrong_icv_counts_auth_failed(checked, where):
    peer = checked["peer"]
    raw = bytearray(bytes(h.inbound_udp(peer, b"tampered")))
    # Outer IPv4 (20) + SPI, seq (8), then IV (16 CBC / 8 GCM), data, ICV at the end.
    offset = {"icv": len(raw) - 1, "ciphertext": len(raw) - 20, "iv": 28}[where]
    raw[offset] ^= 0x40
    expect_drop(checked, "auth_failed", lambda: peer.send_frame(bytes(raw)), per_sa=True)


def test_replay_counts_replay(checked):
    peer = checked["peer"]
    marker = b"replayed-" + os.urandom(4).hex().encode()
    pkt = bytes(h.inbound_udp(peer, marker))
    s = h.udp_socket(checked["ns"]["h1"], h.H1_ADDR, 9998, timeout=3.0)
    try:
        peer.send_frame(pkt)
        data, _ = s.recvfrom(2048)
        assert data == marker
        expect_drop(checked, "replay", lambda: peer.send_frame(pkt), per_sa=True)
        s.settimeout(1.0)
        with pytest.raises(OSError):
            while True:
                data, _ = s.recvfrom(2048)
                assert data != marker, "replayed packet delivered twice"
    finally:
        s.close()


def test_old_sequence_number_counts_replay(checked):
    """A packet far behind the window (64) is a replay even if never seen."""
    peer = checked["peer"]
    old = bytes(h.inbound_udp(peer, b"old"))  # sequence n
    # Move the window forward by more than its size.
    for i in range(80):
        peer.send_frame(h.inbound_udp(peer, b"filler"))
    h.send_to_h1_until_received(checked, b"window-moved")
    expect_drop(checked, "replay", lambda: peer.send_frame(old), per_sa=True)


def test_unknown_spi_counts_no_sa(checked):
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    stranger = h.scapy_sa(checked["alg"], h.SPI_GW1_IN, h.GW2_WAN, h.GW1_WAN)
    stranger.spi = 0x7eadbeef
    pkt = stranger.encrypt(IP(src=h.H2_ADDR, dst=h.H1_ADDR) / UDP(sport=1, dport=9998) /
                           Raw(b"unknown spi"))
    expect_drop(checked, "no_sa", lambda: checked["peer"].send_frame(pkt))


def _esp_raw(payload):
    IP = _ip()
    return IP(src=h.GW2_WAN, dst=h.GW1_WAN, proto=50) / payload


def test_short_esp_counts_malformed(checked):
    """Six bytes of ESP: not even a sequence number."""
    expect_drop(checked, "malformed", lambda: checked["peer"].send_frame(
        _esp_raw(h.SPI_GW1_IN.to_bytes(4, "big") + b"\x00\x01")))


@pytest.mark.parametrize("keep", [8, 12, 30])
def test_cut_short_esp_counts_malformed(checked, keep):
    """A valid packet of the inbound SA cut after `keep` bytes of ESP (header
    and part of the IV / ciphertext): shorter than IV + one block + ICV."""
    IP = _ip()
    peer = checked["peer"]
    valid = h.inbound_udp(peer, b"cut short")
    esp_bytes = bytes(valid[IP].payload)[:keep]
    expect_drop(checked, "malformed", lambda: peer.send_frame(_esp_raw(esp_bytes)))


def test_ip_length_beyond_frame_counts_malformed(checked):
    """An IPv4 header claiming more bytes than the frame carries."""
    IP = _ip()
    pkt = bytearray(bytes(IP(src=h.GW2_WAN, dst=h.GW1_WAN, proto=50) /
                          (h.SPI_GW1_IN.to_bytes(4, "big") + bytes(60))))
    pkt[2:4] = (1400).to_bytes(2, "big")
    # Keep the header checksum right so that only the length is wrong.
    pkt[10:12] = b"\0\0"
    pkt[10:12] = _checksum(bytes(pkt[:20])).to_bytes(2, "big")
    expect_drop(checked, "malformed", lambda: checked["peer"].send_frame(bytes(pkt)))


def _checksum(header):
    s = sum(int.from_bytes(header[i:i + 2], "big") for i in range(0, len(header), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def expect_punted(setup, send):
    """Calls send() (one packet to gw1's address that the router does not
    serve) and checks that it went to the host's stack (router/punt.c): the
    router counts it as punted, rxtx wrote it to a TAP, and no drop of any
    name was counted (unsupported_protocol was the old fate of these)."""
    gw = setup["gw1"]
    before = gw.ctl("show", "stats")["drops"]
    punted, punt_tx = gw.counter("router", "punted"), gw.counter("rxtx", "punt_tx")
    send()
    h.wait_for(lambda: gw.counter("router", "punted") > punted and
               gw.counter("rxtx", "punt_tx") > punt_tx, 10, 0.2, "punted to rise")
    time.sleep(0.3)
    after = gw.ctl("show", "stats")["drops"]
    assert {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)} == {}


def test_unknown_ip_protocol_is_punted(checked):
    """A protocol the router does not speak, to its address: the host's stack
    decides (it answers ICMP protocol unreachable)."""
    IP = _ip()
    expect_punted(checked, lambda: checked["peer"].send_frame(
        IP(src=h.GW2_WAN, dst=h.GW1_WAN, proto=253) / os.urandom(64)))


def test_udp_to_random_port_is_punted(checked):
    from scapy.layers.inet import IP, UDP
    expect_punted(checked, lambda: checked["peer"].send_frame(
        IP(src=h.GW2_WAN, dst=h.GW1_WAN) / UDP(sport=40000, dport=31337) / os.urandom(32)))


def test_unknown_protocol_to_broadcast_counts_unsupported(checked):
    """Broadcasts are never punted: the host must not answer for the gateway."""
    IP = _ip()
    expect_drop(checked, "unsupported_protocol", lambda: checked["peer"].send_frame(
        IP(src=h.GW2_WAN, dst="192.168.3.255", proto=253) / os.urandom(64)))


def test_garbage_burst_does_not_crash(checked):
    """Random bytes after a valid outer header, many times, every length up to
    120: each is counted as some drop, none crashes the gateway."""
    IP = _ip()
    peer = checked["peer"]
    drops_before = sum(checked["gw1"].ctl("show", "stats")["drops"].values())
    n = 0
    for length in range(0, 121, 3):
        peer.send_frame(_esp_raw(os.urandom(length)))
        peer.send_frame(IP(src=h.GW2_WAN, dst=h.GW1_WAN, proto=50) /
                        (h.SPI_GW1_IN.to_bytes(4, "big") + os.urandom(length)))
        n += 2
    h.wait_for(lambda: sum(checked["gw1"].ctl("show", "stats")["drops"].values())
               >= drops_before + n, 15, 0.3, "%d garbage packets counted as drops" % n)
