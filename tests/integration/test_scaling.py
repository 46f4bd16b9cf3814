# SPDX-License-Identifier: BSD-3-Clause
"""Crypto workers at run time (issue 3, points 3 and 4): SAs moved between
workers under a sequence-numbered UDP stream lose and reorder nothing; `workers
set 1 -> 2 -> 1` under the stream neither; kill -9 of one worker leaves the
tunnel of the other worker untouched, the killed worker's tunnel resumes, and
no (SPI, sequence number) pair ever appears twice on the WAN.

Topology: h1 -- gw1 -- gw2 -- h2, two route-based tunnels between the gateways:
t0 carries 192.168.1.0/24 <-> 192.168.2.0/24 (SAs 10 out, 20 in on gw1), t1
carries 192.168.10.0/24 <-> 192.168.20.0/24 (SAs 11, 21), so that each tunnel
can sit on its own worker. The streams run as separate processes (true
parallelism on two cores); a receiver counts lost, reordered and duplicated
sequence numbers and the longest silence."""

import os
import signal
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import hi_topology as hi  # noqa: E402

ALG = "aes-gcm-128"
RATE = 2000  # packets per second per stream: modest, two gateways share 2 cores
PORT = 7000


def placement(gw):
    return {sa["id"]: sa["worker"] for sa in gw.ctl("show", "sa")["sas"]}


def move(gw, sa_id, worker):
    gw.ctl("sa", "move", sa_id, "--worker", worker)


def worker_drops(gw, name):
    return sum(w["drops"].get(name, 0) for w in gw.ctl("show", "workers")["workers"])


@pytest.fixture(scope="module")
def pair():
    with hi.two_tunnel_pair(ALG) as p:
        yield p


def streams_t0(ns):
    """h1 -> h2 and h2 -> h1 through t0: both SAs of each gateway carry one."""
    return [h.Stream("h1->h2", ns["h1"], h.H1_ADDR, ns["h2"], h.H2_ADDR, PORT, RATE),
            h.Stream("h2->h1", ns["h2"], h.H2_ADDR, ns["h1"], h.H1_ADDR, PORT + 1, RATE)]


def report_drops(*gateways):
    """Non-zero drops and missed/errored frames, to tell a hand-over loss from
    a host that did not keep up (rx_missed: the kernel ring overflowed)."""
    for gw in gateways:
        drops = {k: v for k, v in gw.ctl("show", "stats")["drops"].items() if v}
        ports = {i["name"]: (i["rx_missed"], i["tx_errors"])
                 for i in gw.ctl("show", "interfaces")["interfaces"]}
        print("%s: drops %s, (rx_missed, tx_errors) %s" % (gw.name, drops, ports))


def assert_clean(results):
    for r in results:
        assert r["sent"] > 1000, r
        assert r["lost"] == 0 and r["reordered"] == 0 and r["duplicates"] == 0, r


def test_sa_moves_lose_and_reorder_nothing(pair):
    gw1, gw2 = pair["gw1"], pair["gw2"]
    moves = 24
    for gw in (gw1, gw2):
        for sa_id in (10, 20):
            move(gw, sa_id, 0)
    before = {gw.name: {n: worker_drops(gw, n) for n in ("no_sa", "handover_overflow")}
              for gw in (gw1, gw2)}
    streams = streams_t0(pair["ns"])
    try:
        time.sleep(0.5)
        start = time.monotonic()
        for i in range(moves):
            target = (i + 1) % 2
            # gw1 moves its outbound SA and its inbound SA, gw2 both of its own:
            # encryption and decryption (replay window) change hands each time.
            for gw in (gw1, gw2):
                for sa_id in (10, 20):
                    move(gw, sa_id, target)
            assert placement(gw1)[10] == target and placement(gw2)[20] == target
            time.sleep(0.05)
        took = time.monotonic() - start
        time.sleep(0.5)
    finally:
        results = h.stop_streams(streams)
        report_drops(gw1, gw2)
    print("%d rounds of 4 moves in %.1f s" % (moves, took))
    assert_clean(results)
    for gw in (gw1, gw2):
        for name, value in before[gw.name].items():
            assert worker_drops(gw, name) == value, (gw.name, name)


def test_workers_set_1_2_1_under_traffic(pair):
    gw1 = pair["gw1"]
    gw1.ctl("workers", "set", 1)
    gw1.wait_workers_running(1)
    assert set(placement(gw1).values()) == {0}
    streams = streams_t0(pair["ns"])
    try:
        time.sleep(0.5)
        for _ in range(2):
            gw1.ctl("workers", "set", 2)
            gw1.wait_workers_running(2)
            # Give the new worker traffic so that scaling down has to move it.
            move(gw1, 10, 1)
            move(gw1, 20, 1)
            time.sleep(0.5)
            gw1.ctl("workers", "set", 1)
            assert set(placement(gw1).values()) == {0}
            gw1.wait_workers_running(1)
            time.sleep(0.3)
    finally:
        results = h.stop_streams(streams)
        report_drops(gw1, pair["gw2"])
    assert_clean(results)
    gw1.ctl("workers", "set", 2)
    gw1.wait_workers_running(2)


def test_worker_kill_other_tunnel_unaffected(pair, tmp_path):
    gw1, ns = pair["gw1"], pair["ns"]
    gw1.ctl("workers", "set", 2)  # whatever the test before left
    gw1.wait_workers_running(2)
    for sa_id, worker in ((10, 0), (20, 0), (11, 1), (21, 1)):
        move(gw1, sa_id, worker)
    victim = [w for w in gw1.ctl("show", "workers")["workers"] if w["id"] == 1][0]
    assert sorted(victim["sas"]) == [11, 21]
    cap = h.Capture(ns["gw2"], "gw2-wan", str(tmp_path / "wan.pcap"), snaplen=96, bpf="esp")
    streams = [h.Stream("t0 h1->h2", ns["h1"], h.H1_ADDR, ns["h2"], h.H2_ADDR, PORT + 2, RATE),
               h.Stream("t1 h1->h2", ns["h1"], hi.H1_ADDR_B, ns["h2"], hi.H2_ADDR_B, PORT + 3, RATE)]
    try:
        time.sleep(1.0)
        killed_at = time.monotonic()
        os.kill(victim["pid"], signal.SIGKILL)
        h.wait_for(lambda: any(p["role"] == "crypto" and p["worker"] == 1 and
                               p["state"] == "running" and p["pid"] != victim["pid"]
                               for p in gw1.ctl("show", "stats")["processes"]),
                   20, 0.1, "crypto-1 restarted")
        print("crypto-1 running again %.2f s after the kill" % (time.monotonic() - killed_at))
        time.sleep(3.0)
    finally:
        results = h.stop_streams(streams)
        cap.stop(parse=False)
    t0, t1 = results
    print("t1 recovery: longest silence %.2f s" % t1["max_gap"])
    assert t0["lost"] == 0 and t0["reordered"] == 0 and t0["duplicates"] == 0, t0
    assert t1["received"] > 0 and t1["max_gap"] < 5.0, t1
    assert t1["top"] == t1["sent"] - 1 or t1["top"] >= t1["sent"] - RATE, t1  # flowing at the end
    pairs = [(spi, seq) for spi, seq, _ in h.esp_headers(cap.path)]
    assert len(pairs) > 1000
    seen, twice = set(), []
    for p in pairs:
        if p in seen:
            twice.append(p)
        seen.add(p)
    print("WAN capture: %d ESP packets, SPIs %s" % (len(pairs), sorted({p[0] for p in pairs})))
    assert not twice, "ESP (spi, seq) reused on the wire: %s" % twice[:10]
    assert {p[0] for p in pairs} >= {1000, 1001}
