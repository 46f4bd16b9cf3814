# SPDX-License-Identifier: BSD-3-Clause
"""Live rates and events (issue 3 points 5 and 6, issue 4 point 3).

h1 -- gw1 -- gw2 -- h2 through an AES-CBC/HMAC-SHA1 tunnel. While h1 pings h2
fast, `esgwctl show dataplane --json` on gw1 shows non-zero packet and bit
rates, busy share and cycles per packet for rxtx, router and the crypto
worker (encrypt and decrypt apart) and per-SA rates; once the traffic stops
the rates fall to about zero. `esgwctl monitor --json` prints a document a
second until SIGINT, which ends it with status 0. `esgwctl events --json`
streams sa_added / sa_removed when an SA comes and goes, and process_exit
(signal 9) then process_restart when a crypto worker is killed with kill -9.
Namespaces and DPDK prefixes start with "hh"; everything is removed after.
"""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

ALG = "aes-cbc-128-sha1-96"
@pytest.fixture(scope="module")
def pair():
    with h.configured_pair(ALG) as p:
        h.ping_until_ok(p["ns"]["h1"], h.H2_ADDR)
        yield p


def esgwctl(gw, *args):
    return [h.find_binary("esgwctl"), "--socket", gw.socket] + [str(a) for a in args]


def dataplane(gw):
    doc = gw.ctl("show", "dataplane")
    return {p["name"]: p for p in doc["processes"]}





def test_show_dataplane_rates_under_traffic(pair):
    gw = pair["gw1"]
    flood = h.ping_flood(pair["ns"], 5)
    try:
        time.sleep(2.6)  # two samples of ctld's 1 s timer inside the flood
        procs = dataplane(gw)
    finally:
        flood.wait(15)
    assert {"rxtx", "router", "crypto-0"} <= set(procs), procs.keys()
    for name in ("rxtx", "router", "crypto-0"):
        p = procs[name]
        assert p["state"] == "running" and p["pid"] > 0, p
        assert 0.5 < p["interval"] < 3.0, p
        # ~500 requests and ~500 replies a second through every stage.
        for key in ("rx_pps", "tx_pps"):
            assert 50 < p[key] < 1e7, (name, key, p)
        for key in ("rx_bps", "tx_bps"):
            assert p[key] > 50 * 8 * 100, (name, key, p)
        assert 0 < p["busy"] <= 1 and abs(p["busy"] + p["idle"] - 1) < 1e-6, p
        assert 0 < p["cycles_per_packet"] < 1e8, p
        assert p["tsc_hz"] > 0 and 0 < p["busy_cycles"] <= p["loop_cycles"], p
        assert p["busy_packets"] > 0, p
        # ~500 packets a second leave every process idle between them: it
        # sleeps, and each wake-up brings a few packets.
        assert p["sleeps"] > 0 and p["wakes_per_second"] > 0, p
        assert 0 < p["packets_per_wake"] < 1e6, p
    worker = procs["crypto-0"]
    assert worker["worker"] == 0
    for way in ("encrypt", "decrypt"):
        assert worker["%s_pps" % way] > 50, worker
        assert 0 < worker["%s_cycles_per_packet" % way] < 1e8, worker
        assert worker["%s_packets" % way] > 0 and worker["%s_cycles" % way] > 0, worker
    # One ESP-core call in 64 is timed again with the thread's context
    # switches around it; those it ran through without one are counted.
    assert worker["esp_sample_packets"] > 0, worker
    assert 0 < worker["esp_sample_cycles"] <= worker["esp_cycles"], worker
    assert worker["esp_sample_switched"] >= 0, worker
    # rxtx and router do no crypto.
    assert procs["router"]["encrypt_packets"] == 0 and procs["rxtx"]["decrypt_packets"] == 0
    sas = {s["id"]: s for s in worker["sas"]}
    assert set(sas) == {h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN}, sas
    for s in sas.values():
        assert s["tunnel"] == "t0" and s["worker"] == 0, s
        assert s["pps"] > 50 and s["bps"] > s["pps"] * 8 * 100, s
        assert s["packets"] > 0 and s["bytes"] > 0, s

    # Quiet again: the rates fall to (about) zero within two samples.
    def quiet():
        p = dataplane(gw)
        w = p["crypto-0"]
        return (w["rx_pps"] == 0 and w["encrypt_pps"] == 0 and w["busy"] == 0 and
                all(s["pps"] == 0 for s in w["sas"]) and p["router"]["rx_pps"] < 5 and
                p["rxtx"]["rx_pps"] < 5 and w["interval"] > 0)
    h.wait_for(quiet, timeout=6, interval=0.5, what="rates back to zero")


def worker_stats(gw, dp, changed):
    """A DpStats query straight to gw's crypto-0, as esgw-ctld's sampler
    (changed: only the SAs changed since the last such answer) or not."""
    req = dp.DpRequest(version=dp.DP_VERSION_CURRENT,
                       stats=dp.DpStatsQuery(sa_changed=changed))
    body = req.SerializeToString()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(os.path.join(gw.rundir, "crypto-0.sock"))
        s.sendall(struct.pack(">I", len(body)) + body)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk = s.recv(65536)
            assert chunk, "control socket closed mid-reply"
            data += chunk
    resp = dp.DpResponse.FromString(data[4:])
    assert resp.status == 0, resp.error
    return resp.stats


def test_sampler_asks_for_changed_sas_only(pair, dp):
    """Each second esgw-ctld asks the workers for the SAs changed since its
    last question only, so a hub's idle SAs cost nothing; a full question
    still lists every SA, and show dataplane every SA of the worker."""
    gw = pair["gw1"]
    both = {h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN}
    full = worker_stats(gw, dp, False)
    assert not full.sa_changed and {s.id for s in full.sas} == both, full

    def quiet_pair():  # two questions with nothing between: the second lists none
        worker_stats(gw, dp, True)
        again = worker_stats(gw, dp, True)
        assert again.sa_changed, again
        return len(again.sas) == 0
    h.wait_for(quiet_pair, timeout=10, interval=0.5, what="an answer without SAs")

    def ping_listed():  # ctld's own 1 s question may take the change first: again
        h.ping(pair["ns"]["h1"], h.H2_ADDR, count=1)
        return {s.id for s in worker_stats(gw, dp, True).sas} == both
    h.wait_for(ping_listed, timeout=20, interval=0.1, what="both SAs listed after a ping")
    sas = {s["id"]: s for s in dataplane(gw)["crypto-0"]["sas"]}
    assert set(sas) == both and all(s["packets"] > 0 for s in sas.values()), sas


def test_show_dataplane_table(pair):
    out = pair["gw1"].ctl("show", "dataplane", json_out=False)
    assert "PROCESS" in out and "crypto-0" in out and "CYC/PKT" in out, out
    assert "SA" in out and "t0" in out, out


def test_monitor_json_one_line_per_second(pair):
    gw = pair["gw1"]
    mon = subprocess.Popen(esgwctl(gw, "--json", "monitor"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    mon.send_signal(signal.SIGINT)
    out, err = mon.communicate(timeout=10)
    assert mon.returncode == 0, (mon.returncode, err)
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) >= 2, out
    times = []
    for line in lines:
        doc = json.loads(line)
        assert {p["name"] for p in doc["processes"]} >= {"rxtx", "router", "crypto-0"}
        times.append(doc["time"])
    assert all(0.5 < b - a < 2.0 for a, b in zip(times, times[1:])), times


def test_monitor_human_redraws(pair):
    gw = pair["gw1"]
    mon = subprocess.Popen(esgwctl(gw, "monitor"), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    mon.send_signal(signal.SIGINT)
    out, err = mon.communicate(timeout=10)
    assert mon.returncode == 0, (mon.returncode, err)
    assert out.count("\033[2J") >= 2 and "PROCESS" in out, out


def worker_pid(gw, worker=0):
    for p in gw.ctl("show", "stats")["processes"]:
        if p["role"] == "crypto" and p["worker"] == worker:
            return p["pid"]
    raise AssertionError("no crypto worker %d" % worker)


def test_events_stream(pair):
    gw = pair["gw1"]
    stream = h.EventStream(gw)
    try:
        time.sleep(1.0)  # subscribed (nothing is replayed from before)
        assert stream.proc.poll() is None, stream.proc.stderr.read()
        gw.ctl("sa", "add", 99, "spi", 9999, "alg", "aes-gcm-128", "crypto-key",
               "00112233445566778899aabbccddeeff01020304")
        ev = stream.expect(lambda e: e["kind"] == "sa_added", what="sa_added")
        assert ev["sa"] == 99 and ev["worker"] == 0 and ev["seq"] > 0, ev
        gw.ctl("sa", "del", 99)
        ev = stream.expect(lambda e: e["kind"] == "sa_removed", what="sa_removed")
        assert ev["sa"] == 99, ev

        old = worker_pid(gw)
        os.kill(old, signal.SIGKILL)
        ev = stream.expect(lambda e: e["kind"] == "process_exit" and e["pid"] == old,
                           what="process_exit of the killed worker")
        assert ev["name"] == "crypto-0" and ev["role"] == "crypto" and ev["worker"] == 0, ev
        assert ev["signal"] == signal.SIGKILL and ev["exit_status"] == -1, ev
        ev = stream.expect(lambda e: e["kind"] == "process_restart" and
                           e["name"] == "crypto-0", what="process_restart of crypto-0")
        assert ev["pid"] > 0 and ev["pid"] != old and ev["restarts"] >= 1, ev
        gw.wait_running()
        # The tunnel works again (its SAs were re-pushed to the new worker).
        h.ping_until_ok(pair["ns"]["h1"], h.H2_ADDR)
        seqs = [e["seq"] for e in stream.seen]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
        assert all(e["events_dropped"] == 0 for e in stream.seen), stream.seen
    finally:
        rc = stream.stop()
    assert rc == 0, stream.proc.stderr.read()


def test_events_human_output(pair):
    gw = pair["gw1"]
    proc = subprocess.Popen(esgwctl(gw, "events"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        gw.ctl("route", "add", "10.99.0.0/16", "via", h.GW2_WAN)
        gw.ctl("route", "del", "10.99.0.0/16")
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "route_added" in out and "10.99.0.0/16: via 192.168.3.2" in out, out
    assert "route_removed" in out, out
