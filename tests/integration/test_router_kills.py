# SPDX-License-Identifier: BSD-3-Clause
"""Issue 9, point 6: a crash loses a bounded number of mbufs, visibly.
esgw-router on gw1 is killed with SIGKILL 20 times while a numbered UDP
stream runs h1 -> h2 through the tunnel. After each kill the stream resumes;
no ESP sequence number gw1 sent appears twice on the wire; and once the
stream stops, the shared pool's in-use count (show stats: mbuf_pool) is back
to its baseline plus at most what the killed routers held (neighbour holds
and reassembly fragments, the router's mbufs_held gauge, plus one burst per
input ring each). The figures are printed. Then the restart backoff, which
the quick kills drove to its maximum, is back at its minimum once the router
has run 10 s."""

import os
import signal
import struct
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

ALG = "aes-cbc-128-sha1-96"
KILLS = 20
BURST = 32  # ESGW_BURST: what the router takes from one ring at a time
PORT = 9997


@pytest.fixture(scope="module")
def pair():
    with h.configured_pair(ALG) as p:
        yield p


def router_info(gw):
    for p in gw.ctl("show", "stats")["processes"]:
        if p["role"] == "router":
            return p
    raise AssertionError("no router in show stats")


def pool(gw):
    return gw.ctl("show", "stats")["mbuf_pool"]


class Stream:
    """Numbered UDP datagrams h1 -> h2, ~500 per second, and what arrived."""

    def __init__(self, ns):
        self.rx = h.udp_socket(ns["h2"], h.H2_ADDR, PORT, timeout=0.2)
        self.tx = h.udp_socket(ns["h1"], h.H1_ADDR, 0)
        self.sent = 0
        self.received = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self.send, self.recv)]
        for t in self.threads:
            t.start()

    def send(self):
        while not self.stop.is_set():
            self.tx.sendto(struct.pack(">I", self.sent), (h.H2_ADDR, PORT))
            self.sent += 1
            time.sleep(0.002)

    def recv(self):
        while not self.stop.is_set():
            try:
                data = self.rx.recv(64)
            except OSError:
                continue
            with self.lock:
                self.received.add(struct.unpack(">I", data[:4])[0])

    def got_after(self, n):
        with self.lock:
            return any(x >= n for x in self.received)

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join(5)
        self.rx.close()
        self.tx.close()


def quiet_in_use(gw):
    """The pool's in-use count once it stops moving (no traffic)."""
    last = []

    def stable():
        last.append(pool(gw)["in_use"])
        return len(last) >= 3 and last[-1] == last[-2] == last[-3]
    h.wait_for(stable, 30, 0.5, "the pool's in-use count to settle")
    return last[-1]


def test_router_killed_20_times_under_traffic(pair):
    ns, gw1 = pair["ns"], pair["gw1"]
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)  # ARP on both sides
    workers = len([p for p in gw1.ctl("show", "stats")["processes"] if p["role"] == "crypto"])
    per_kill_burst = BURST * (1 + workers)  # router_in + every worker's decrypted ring
    baseline = quiet_in_use(gw1)
    size = pool(gw1)["size"]
    cap = h.Capture(ns["gw2"], "gw2-wan", os.path.join(h.WORK_ROOT, "kills-%d.pcap" %
                                                      os.getpid()), direction="in")
    stream = Stream(ns)
    figures = []
    try:
        h.wait_for(lambda: stream.got_after(0), 20, 0.1, "the stream through the tunnel")
        for k in range(KILLS):
            info = router_info(gw1)
            held = info["counters"].get("mbufs_held", 0)
            in_use_before = pool(gw1)["in_use"]
            os.kill(info["pid"], signal.SIGKILL)
            h.wait_for(lambda: router_info(gw1)["pid"] not in (0, info["pid"]) and
                       router_info(gw1)["state"] == "running", 60, 0.1,
                       "kill %d: a new router running" % (k + 1))
            mark = stream.sent
            h.wait_for(lambda: stream.got_after(mark), 30, 0.1,
                       "kill %d: the stream resumes" % (k + 1))
            after = router_info(gw1)
            figures.append((k + 1, info["pid"], held, in_use_before, pool(gw1)["in_use"],
                            after["restarts"], after["backoff"]))
    finally:
        stream.close()
        packets = cap.stop()
    after_kills = quiet_in_use(gw1)
    held_total = sum(f[2] for f in figures)
    bound = held_total + KILLS * per_kill_burst
    print("\nmbuf pool: %d mbufs; in use at rest before the kills: %d" % (size, baseline))
    print("kill  pid     held  in_use_before  in_use_after_resume  restarts  next_backoff")
    for f in figures:
        print("%4d  %-6d  %4d  %13d  %19d  %8d  %12.1f" % f)
    print("in use at rest after %d kills: %d (+%d); bound: held %d + %d x %d (one burst "
          "per input ring) = %d" % (KILLS, after_kills, after_kills - baseline, held_total,
                                   KILLS, per_kill_burst, bound))
    assert after_kills - baseline <= bound, "more mbufs lost than the killed routers held"
    assert router_info(gw1)["restarts"] == pair["gw1"].baseline[("router", -1)][1] + KILLS

    # No ESP sequence number of gw1's outbound SA twice on the wire.
    from scapy.layers.ipsec import ESP
    seqs = [p[ESP].seq for p in packets if ESP in p and p[ESP].spi == h.SPI_GW1_OUT]
    dups = len(seqs) - len(set(seqs))
    print("ESP from gw1 captured at gw2: %d packets, %d distinct sequence numbers" % (
        len(seqs), len(set(seqs))))
    assert len(seqs) > KILLS and dups == 0, "sequence numbers reused: %d" % dups

    # Quick kills drove the backoff to its maximum; after 10 s of running
    # it is back at its minimum, and the next crash waits that long.
    assert figures[-1][6] == 5.0
    h.wait_for(lambda: router_info(gw1)["backoff"] == 0.5, 30, 0.5,
               "the backoff back at 0.5 s after 10 s of running")
    pid = router_info(gw1)["pid"]
    os.kill(pid, signal.SIGKILL)
    h.wait_for(lambda: router_info(gw1)["pid"] not in (0, pid) and
               router_info(gw1)["state"] == "running", 30, 0.1, "the router back")
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
