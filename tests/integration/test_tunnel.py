# SPDX-License-Identifier: BSD-3-Clause
"""Two esgw gateways back to back (h1 -- gw1 == gw2 -- h2): traffic crosses the
tunnel, only ESP with the right SPIs is seen between the gateways, counters
move, and every gateway runs as four separate processes."""

import os
import struct
import subprocess
import time

import pytest

import esgw_harness as h

MARKER = b"ESGW-PLAINTEXT-MARKER-7f3a"


def sa_packets(gw, sa_id):
    sa = gw.sa(sa_id)
    return sa["packets"], sa["bytes"]


def test_ping_h1_to_h2(tunnel_pair):
    ns = tunnel_pair["ns"]
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
    res = h.ping(ns["h1"], h.H2_ADDR, count=5)
    assert res.returncode == 0, res.stdout + res.stderr
    assert " 0% packet loss" in res.stdout or " 20% packet loss" in res.stdout, res.stdout
    # And back the other way.
    res = h.ping(ns["h2"], h.H1_ADDR, count=3)
    assert res.returncode == 0, res.stdout + res.stderr


def test_sa_counters_rise(tunnel_pair):
    gw1, gw2, ns = tunnel_pair["gw1"], tunnel_pair["gw2"], tunnel_pair["ns"]
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
    before = {(g.name, i): g.sa(i) for g in (gw1, gw2) for i in (h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN)}
    res = h.ping(ns["h1"], h.H2_ADDR, count=5)
    assert res.returncode == 0, res.stdout

    def risen():
        for (name, sa_id), old in before.items():
            gw = gw1 if name == "gw1" else gw2
            new = gw.sa(sa_id)
            if new["packets"] < old["packets"] + 4 or new["bytes"] <= old["bytes"]:
                return False
        return True
    h.wait_for(risen, 10, 0.3, "packets/bytes of all four SAs to rise by >= 4")
    # Outbound sequence numbers follow the packets sent.
    assert gw1.sa(h.SA_ID_GW1_OUT)["seq_out"] >= before[("gw1", h.SA_ID_GW1_OUT)]["seq_out"] + 4
    assert gw2.sa(h.SA_ID_GW1_IN)["seq_out"] >= before[("gw2", h.SA_ID_GW1_IN)]["seq_out"] + 4
    for gw, out_id, in_id in ((gw1, h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN),
                              (gw2, h.SA_ID_GW1_IN, h.SA_ID_GW1_OUT)):
        sas = {s["id"]: s for s in gw.ctl("show", "sa")["sas"]}
        assert sas[out_id]["direction"] == "out"
        assert sas[in_id]["direction"] == "in"
        assert sas[out_id]["algorithm"] == tunnel_pair["alg"]
        assert sas[out_id]["tunnel"] == "t0"
        for sa in sas.values():
            assert sa["drops"].get("auth_failed", 0) == 0
            assert sa["drops"].get("replay", 0) == 0


def _esp_spi_seq(pkt):
    """(spi, seq) of an IPv4/ESP packet read from the raw bytes."""
    from scapy.layers.inet import IP
    ip = pkt[IP]
    raw = bytes(ip.payload)
    return struct.unpack("!II", raw[:8])


def _check_wan_capture(packets, src, dst, spi):
    """Every IPv4 packet captured in one direction is ESP from src to dst with
    the expected SPI and increasing sequence numbers; no frame holds MARKER."""
    from scapy.layers.inet import IP
    esp = 0
    last_seq = 0
    for pkt in packets:
        assert MARKER not in bytes(pkt), "plaintext marker on the WAN: %r" % pkt
        if IP not in pkt:
            continue  # ARP
        ip = pkt[IP]
        assert ip.proto == 50, "non-ESP IPv4 between the gateways: %s" % pkt.summary()
        assert (ip.src, ip.dst) == (src, dst), pkt.summary()
        got_spi, seq = _esp_spi_seq(pkt)
        assert got_spi == spi, "SPI %d, expected %d" % (got_spi, spi)
        assert seq > last_seq, "sequence number %d after %d" % (seq, last_seq)
        last_seq = seq
        esp += 1
    return esp


def test_tcp_transfer_is_encrypted_on_wan(tunnel_pair, tmp_path):
    gw1, gw2, ns = tunnel_pair["gw1"], tunnel_pair["gw2"], tunnel_pair["ns"]
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
    before_out = gw1.sa(h.SA_ID_GW1_OUT)["packets"]
    before_in = gw2.sa(h.SA_ID_GW1_OUT)["packets"]
    # Marker-rich payload with random bytes between, ~3 MB.
    block = MARKER + os.urandom(1000)
    payload = block * 3000
    # Each capture is on the receiving end of the WAN link: packets gw1 -> gw2
    # arrive on gw2-wan, gw2 -> gw1 on gw1-wan.
    cap_12 = h.Capture(ns["gw2"], "gw2-wan", str(tmp_path / "gw1_to_gw2.pcap"))
    cap_21 = h.Capture(ns["gw1"], "gw1-wan", str(tmp_path / "gw2_to_gw1.pcap"))
    try:
        sent, received, n, seconds = h.tcp_transfer(ns["h1"], ns["h2"], h.H2_ADDR, payload,
                                                     timeout=150)
    finally:
        pk_12 = cap_12.stop()
        pk_21 = cap_21.stop()
    assert n == len(payload)
    assert received == sent, "payload corrupted across the tunnel"
    print("%s: %d bytes in %.1fs = %.1f Mbit/s" % (tunnel_pair["alg"], n, seconds,
                                                    n * 8 / seconds / 1e6))
    esp_12 = _check_wan_capture(pk_12, h.GW1_WAN, h.GW2_WAN, h.SPI_GW1_OUT)
    esp_21 = _check_wan_capture(pk_21, h.GW2_WAN, h.GW1_WAN, h.SPI_GW1_IN)
    # Data direction: at least one ESP packet per 1400-byte segment (less
    # what the capture itself may have missed).
    assert esp_12 >= len(payload) // 1400 * 0.8, "only %d ESP packets gw1->gw2" % esp_12
    assert esp_21 > 0, "no ESP (TCP ACKs) gw2->gw1"
    h.wait_for(lambda: gw1.sa(h.SA_ID_GW1_OUT)["packets"] >= before_out + esp_12 * 0.9,
               10, 0.3, "gw1 outbound SA packets to count the transfer")
    h.wait_for(lambda: gw2.sa(h.SA_ID_GW1_OUT)["packets"] >= before_in + esp_12 * 0.9,
               10, 0.3, "gw2 inbound SA packets to count the transfer")


def test_show_workers(tunnel_pair):
    for gw in (tunnel_pair["gw1"], tunnel_pair["gw2"]):
        workers = gw.ctl("show", "workers")["workers"]
        w0 = [w for w in workers if w["id"] == 0]
        assert len(w0) == 1, workers
        w0 = w0[0]
        assert w0["state"] == "running"
        assert w0["pid"] > 0 and h.pid_alive(w0["pid"])
        argv = h.proc_cmdline(w0["pid"])
        assert os.path.basename(argv[0]) == "esgw-crypto", argv
        assert "--worker" in argv and argv[argv.index("--worker") + 1] == "0", argv
        assert sorted(w0["sas"]) == [h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN]
        for key in ("packets_encrypted", "packets_decrypted", "bytes", "drops"):
            assert key in w0, key


def test_processes_are_separate(tunnel_pair):
    ps = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], stdout=subprocess.PIPE,
                        text=True, check=True).stdout
    print(ps)
    all_pids = set()
    for gw in (tunnel_pair["gw1"], tunnel_pair["gw2"]):
        procs = gw.processes()  # {pid: role}
        roles = sorted(procs.values())
        assert roles == sorted(h.ROLES), "%s: %s" % (gw.name, procs)
        assert not (all_pids & set(procs)), "gateways share a process"
        all_pids |= set(procs)
        # ps agrees: each pid is listed with its role's executable.
        for pid, role in procs.items():
            line = [l for l in ps.splitlines() if l.split()[0] == str(pid)]
            assert line and role in line[0], "ps: %d %s missing" % (pid, role)
        # The dataplane processes are ctld's children in standalone mode and
        # share the gateway's own DPDK file prefix.
        for pid, argv in gw.dataplane_processes():
            with open("/proc/%d/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            assert ppid == gw.proc.pid, "%s %d: parent %d, not ctld %d" % (
                argv[0], pid, ppid, gw.proc.pid)
    for gw in (tunnel_pair["gw1"], tunnel_pair["gw2"]):
        stats = gw.ctl("show", "stats")
        assert {p["role"] for p in stats["processes"]} >= {"rxtx", "router", "crypto"}
        for p in stats["processes"]:
            assert p["state"] == "running", p
            assert p["pid"] in gw.processes(), "show stats pid %d not a live process" % p["pid"]
        # Nothing crashed since the gateway was configured.
        gw.assert_no_restarts()


@pytest.mark.parametrize("size", [56, 1300])
def test_ping_sizes(tunnel_pair, size):
    ns = tunnel_pair["ns"]
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
    res = h.ping(ns["h1"], h.H2_ADDR, count=3, size=size)
    assert res.returncode == 0, res.stdout + res.stderr


def test_resting_processes_wake_only_for_their_timers(tunnel_pair):
    """With no traffic a crypto worker sleeps until its doorbell rings (1 s
    safety timeout), the router as long unless a neighbour request or a
    reassembly waits (its timers then run every 100 ms), and their control
    watchers until a request comes (they had a 200 ms timeout): each
    process's threads wake 4-7 times a second, for ctld's statistics
    requests, not the 15-20 times they did with 100 ms sleeps and the
    watchers' 200 ms polls. Counts, not time: voluntary context switches
    over 3 s."""
    gw = tunnel_pair["gw1"]
    procs = {pid: role for pid, role in gw.processes().items()
             if role in ("esgw-crypto", "esgw-router")}
    time.sleep(1)  # the tests before sent traffic: past its last packet
    before = {pid: h.thread_wakes(pid) for pid in procs}
    time.sleep(3)
    rates = {}
    for pid, role in procs.items():
        after = h.thread_wakes(pid)
        rates[pid] = {t: (after[t] - before[pid].get(t, 0)) / 3 for t in after}
        print(role, pid, rates[pid])
    for pid, role in procs.items():
        assert sum(rates[pid].values()) < 12, "%s woke %s a second" % (role, rates[pid])
