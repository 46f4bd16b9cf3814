# SPDX-License-Identifier: BSD-3-Clause
"""Rekey without loss (issue 5.3): while a sequence-numbered UDP stream runs
h1 -> h2 and h2 -> h1 through two esgw gateways, both gateways rekey 10 times
the way an IKE daemon does it (RFC 7296 2.8 / RFC 4301 4.4.2.1):
  1. install the new SA pair (sa add), not used yet;
  2. inbound accepts old and new (tunnel set t0 sa-in OLD,NEW) on both sides;
  3. outbound switches at once (tunnel set t0 sa-out NEW) on both sides;
  4. after the packets in flight drained, the old SAs go (sa-in NEW, sa del).
Every datagram must arrive exactly once, and the new SAs must carry traffic."""

import socket
import struct
import threading
import time

import pytest

import esgw_harness as h
import hi_topology as hi

PORT = 7000
RATE = 400  # datagrams per second in each direction
REKEYS = 10


class Stream:
    """Sends numbered datagrams src -> dst at RATE until stopped; the receiver
    records every number it gets."""

    def __init__(self, src_ns, src_addr, dst_ns, dst_addr):
        self.tx = h.udp_socket(src_ns, src_addr)
        self.rx = h.udp_socket(dst_ns, dst_addr, PORT, timeout=0.2)
        self.dst = (dst_addr, PORT)
        self.sent = 0
        self.received = []
        self.stop = threading.Event()
        self.drained = threading.Event()  # the receiver may stop
        self.threads = [threading.Thread(target=self._send, daemon=True),
                        threading.Thread(target=self._recv, daemon=True)]

    def start(self):
        for t in self.threads:
            t.start()

    def _send(self):
        next_at = time.monotonic()
        while not self.stop.is_set():
            self.tx.sendto(struct.pack("!Q", self.sent) + b"r" * 120, self.dst)
            self.sent += 1
            next_at += 1.0 / RATE
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def _recv(self):
        while not self.drained.is_set():
            try:
                data = self.rx.recv(2048)
            except socket.timeout:
                continue
            self.received.append(struct.unpack("!Q", data[:8])[0])

    def finish(self):
        self.stop.set()
        self.threads[0].join(5)
        # The last datagrams still cross both gateways (slowly on a busy
        # machine): read until all arrived, or long after any could.
        try:
            h.wait_for(lambda: len(set(self.received)) >= self.sent, 10, 0.1, "the stream's tail")
        except h.HarnessError:
            pass  # what is missing is reported by check_stream
        self.drained.set()
        self.threads[1].join(5)
        self.tx.close()
        self.rx.close()


def rekey(gw1, gw2, alg, k, old):
    """One rekey of both directions; old = (gw1->gw2 SA id, gw2->gw1 SA id)."""
    fwd, rev = 100 + k, 200 + k            # SA ids of the new pair
    fwd_spi, rev_spi = 10000 + k, 20000 + k
    old_fwd, old_rev = old
    for gw in (gw1, gw2):
        gw.ctl(*hi.sa_args(fwd, fwd_spi, alg))
        gw.ctl(*hi.sa_args(rev, rev_spi, alg))
    gw1.ctl("tunnel", "set", "t0", "sa-in", "%d,%d" % (old_rev, rev))
    gw2.ctl("tunnel", "set", "t0", "sa-in", "%d,%d" % (old_fwd, fwd))
    gw1.ctl("tunnel", "set", "t0", "sa-out", fwd)
    gw2.ctl("tunnel", "set", "t0", "sa-out", rev)
    time.sleep(0.5)  # what the old SAs still carry drains
    gw1.ctl("tunnel", "set", "t0", "sa-in", rev)
    gw2.ctl("tunnel", "set", "t0", "sa-in", fwd)
    for gw in (gw1, gw2):
        gw.ctl("sa", "del", old_fwd)
        gw.ctl("sa", "del", old_rev)
    return fwd, rev


def check_stream(name, s):
    got = sorted(s.received)
    missing = sorted(set(range(s.sent)) - set(got))
    dups = len(got) - len(set(got))
    assert s.sent > RATE * REKEYS * 0.5, "%s: only %d sent" % (name, s.sent)
    assert not missing, "%s: %d of %d lost, first %s" % (name, len(missing), s.sent, missing[:10])
    assert dups == 0, "%s: %d duplicates" % (name, dups)


@pytest.mark.parametrize("alg", ["aes-gcm-128", "aes-cbc-256-sha256-128"])
def test_rekey_without_loss(alg):
    h.require_root_and_binaries()
    with hi.gateway_pair() as (ns, gw1, gw2):
        hi.configure(gw1, "gw1", alg)
        hi.configure(gw2, "gw2", alg)
        h.ping_until_ok(ns["h1"], h.H2_ADDR)
        fwd = Stream(ns["h1"], h.H1_ADDR, ns["h2"], h.H2_ADDR)
        rev = Stream(ns["h2"], h.H2_ADDR, ns["h1"], h.H1_ADDR)
        fwd.start()
        rev.start()
        old = (10, 20)
        try:
            time.sleep(0.5)
            for k in range(1, REKEYS + 1):
                old = rekey(gw1, gw2, alg, k, old)
                time.sleep(0.3)
        finally:
            fwd.finish()
            rev.finish()
        # Every drop counter that moved, so that a loss says where it was.
        drops = {gw.name: {k: v for k, v in gw.ctl("show", "stats")["drops"].items() if v}
                 for gw in (gw1, gw2)}
        print("drops after the rekeys:", drops)
        check_stream("h1 -> h2", fwd)
        check_stream("h2 -> h1", rev)
        # The last pair carried the end of both streams.
        assert gw1.sa(old[0])["packets"] > 0 and gw2.sa(old[0])["packets"] > 0
        assert gw1.sa(old[1])["packets"] > 0 and gw2.sa(old[1])["packets"] > 0
        for gw in (gw1, gw2):
            drops = gw.ctl("show", "stats")["drops"]
            for name in ("no_sa", "auth_failed", "replay", "ring_full", "sa_expired"):
                assert drops.get(name, 0) == 0, "%s: %s %d" % (gw.name, name, drops[name])
            gw.assert_no_restarts()
