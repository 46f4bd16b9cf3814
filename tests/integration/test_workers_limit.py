# SPDX-License-Identifier: BSD-3-Clause
"""More crypto workers than the old fixed eight (issue 13, point 1): with
esgw-ctld --max-workers 12, `workers set 12` starts twelve workers (they sleep
when idle, so twelve fit on two CPUs), both tunnels' SAs move onto the
highest ones and traffic crosses them, moves between high workers and scaling
back down to two under a sequence-numbered stream lose and reorder nothing;
`workers set 13` is refused with a message naming the limit and the option
that raises it, and so is esgw-ctld --workers above --max-workers.

Topology: test_scaling's (h1 -- gw1 -- gw2 -- h2, tunnels t0 with SAs 10/20
and t1 with SAs 11/21)."""

import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import hi_topology as hi  # noqa: E402

ALG = "aes-gcm-128"
LIMIT = 12
RATE = 1000
PORT = 7600


@pytest.fixture(scope="module")
def pair():
    with hi.two_tunnel_pair(ALG, ctld_args=["--max-workers", str(LIMIT)]) as p:
        yield p


def placement(gw):
    return {sa["id"]: sa["worker"] for sa in gw.ctl("show", "sa")["sas"]}


def worker_packets(gw):
    return {w["id"]: w.get("packets_encrypted", 0) + w.get("packets_decrypted", 0)
            for w in gw.ctl("show", "workers")["workers"]}


def streams_t0(ns):
    return [h.Stream("h1->h2", ns["h1"], h.H1_ADDR, ns["h2"], h.H2_ADDR, PORT, RATE),
            h.Stream("h2->h1", ns["h2"], h.H2_ADDR, ns["h1"], h.H1_ADDR, PORT + 1, RATE)]


def test_rxtx_makes_rings_for_max_workers(pair):
    rxtx = [argv for _, argv in pair["gw1"].dataplane_processes()
            if os.path.basename(argv[0]) == "esgw-rxtx"]
    assert rxtx and "--max-workers" in rxtx[0], rxtx
    assert rxtx[0][rxtx[0].index("--max-workers") + 1] == str(LIMIT)


def test_twelve_workers_carry_traffic_and_scale_down_clean(pair):
    gw1, ns = pair["gw1"], pair["ns"]
    gw1.ctl("workers", "set", LIMIT)
    gw1.wait_workers_running(LIMIT, timeout=120)
    # t0 on the top worker (both directions), t1 on two others above eight.
    for sa_id, worker in ((10, 11), (20, 11), (11, 9), (21, 10)):
        gw1.ctl("sa", "move", sa_id, "--worker", worker)
    assert placement(gw1) == {10: 11, 20: 11, 11: 9, 21: 10}
    before = worker_packets(gw1)
    h.ping_until_ok(ns["h1"], hi.H2_ADDR_B)
    # Out through t1 (SA 11, worker 9); the replies go to h1's first address,
    # so they come back through t0 (SA 20, worker 11). Counters are sampled
    # every second.
    h.wait_for(lambda: all(worker_packets(gw1).get(w, 0) > before.get(w, 0) for w in (9, 11)),
               10, 0.3, "packets on workers 9 and 11")
    streams = streams_t0(ns)
    try:
        time.sleep(0.5)
        for target in (8, 11, 10, 11):  # hand-overs between workers above eight
            for sa_id in (10, 20):
                gw1.ctl("sa", "move", sa_id, "--worker", target)
            time.sleep(0.2)
        gw1.ctl("workers", "set", 2)  # every SA leaves workers 2..11 under traffic
        assert set(placement(gw1).values()) <= {0, 1}
        gw1.wait_workers_running(2, timeout=60)
        time.sleep(0.5)
    finally:
        results = h.stop_streams(streams)
    for r in results:
        assert r["sent"] > 500, r
        assert r["lost"] == 0 and r["reordered"] == 0 and r["duplicates"] == 0, r
    h.ping_until_ok(ns["h1"], hi.H2_ADDR_B)
    h.ping_until_ok(ns["h1"], h.H2_ADDR)


def test_workers_beyond_the_limit_refused_naming_the_option(pair):
    gw1 = pair["gw1"]
    before = len(gw1.ctl("show", "workers")["workers"])
    res = gw1.ctl_raw("workers", "set", LIMIT + 1)
    assert res.returncode != 0, res.stdout
    assert "--max-workers" in res.stderr and "1..%d" % LIMIT in res.stderr, res.stderr
    assert len(gw1.ctl("show", "workers")["workers"]) == before


def test_ctld_workers_above_max_workers_refused(tmp_path):
    h.require_root_and_binaries()
    res = subprocess.run([h.find_binary("esgw-ctld"), "--workers", "5", "--max-workers", "4",
                          "--socket", str(tmp_path / "s"), "--config", str(tmp_path / "c"),
                          "--rundir", str(tmp_path)],
                         capture_output=True, text=True, timeout=20)
    assert res.returncode == 2 and "--max-workers" in res.stderr, res.stderr
    res = subprocess.run([h.find_binary("esgw-ctld"), "--max-workers", "1000"],
                         capture_output=True, text=True, timeout=20)
    assert res.returncode == 2 and "--max-workers must be 1.." in res.stderr, res.stderr
