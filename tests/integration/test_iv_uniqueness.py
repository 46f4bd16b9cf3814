# SPDX-License-Identifier: BSD-3-Clause
"""IVs and sequence numbers by construction (issue 10, acceptance 1): one
AES-GCM SA and one ChaCha20-Poly1305 SA carry traffic while gw1 takes many
configuration pushes (each rebuilds every SA of a worker), SA moves between
its two workers, kill -9 of each worker and one dataplane restart (kill -9
of esgw-rxtx). A capture of the WAN shows no (SPI, IV) pair and no (SPI,
sequence number) pair twice, and for each SA the IV XOR the sequence number
is one constant: the IV follows from the sequence number and a value that
lives as long as the SA, nothing drawn again on the way. gw2 (the peer)
decrypts everything it gets: no authentication failure, no replay drop.

Topology: h1 -- gw1 -- gw2 -- h2 with two tunnels: t0 (GCM, gw1's SA 10,
spi 1000) and t1 (ChaCha20-Poly1305, SA 11, spi 1001); a ping flood through
each."""

import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import hi_topology as hi  # noqa: E402

ALG_T0 = "aes-gcm-128"
ALG_T1 = "chacha20-poly1305"
SAS = {10: h.SPI_GW1_OUT, 11: 1001}  # gw1's outbound SA id -> SPI (gw2's inbound SA id)


@pytest.fixture(scope="module")
def pair():
    h.require_root_and_binaries()
    with h.gateway_pair(workers=2, prepare=hi.second_host_addresses) as (ns, gw1, gw2):
        hi.configure(gw1, "gw1", ALG_T0)
        hi.configure(gw2, "gw2", ALG_T0)
        hi.add_second_tunnel(gw1, "gw1", ALG_T1)
        hi.add_second_tunnel(gw2, "gw2", ALG_T1)
        for gw in (gw1, gw2):
            gw.wait_running()
        h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
        h.nsrun(ns["h1"], ["ping", "-c", "1", "-W", "5", "-I", hi.H1_ADDR_B, hi.H2_ADDR_B],
                check=False)
        h.ping_until_ok(ns["h1"], hi.H2_ADDR_B, timeout=30)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2}


def peer_tops(gw2):
    """Highest sequence number gw2 accepted on each of gw1's SAs."""
    tops = {sa["id"]: sa["replay_top"] for sa in gw2.ctl("show", "sa")["sas"]}
    return {sa_id: tops[sa_id] for sa_id in SAS}


def wait_traffic(gw2, before, what, packets=300):
    """Until both SAs carried more packets to gw2 than before."""
    h.wait_for(lambda: all(peer_tops(gw2)[i] >= before[i] + packets for i in SAS), 60, 0.3,
               "traffic on both SAs after %s" % what)
    return peer_tops(gw2)


def crypto_pid(gw1, worker):
    for p in gw1.ctl("show", "stats")["processes"]:
        if p["role"] == "crypto" and p["worker"] == worker and p["state"] == "running":
            return p["pid"]
    return None


def test_no_iv_or_sequence_number_twice(pair, tmp_path):
    ns, gw1, gw2 = pair["ns"], pair["gw1"], pair["gw2"]
    cap = h.Capture(ns["gw2"], "gw2-wan", str(tmp_path / "wan.pcap"), snaplen=96, bpf="esp")
    floods = [h.ping_flood(ns, 900),
              h.ping_flood(ns, 900, src=hi.H1_ADDR_B, dst=hi.H2_ADDR_B)]
    done = {"pushes": 0, "moves": 0, "worker kills": 0, "dataplane restarts": 0}
    try:
        tops = wait_traffic(gw2, peer_tops(gw2), "the start")
        for rnd in range(3):
            for i in range(8):  # every push rebuilds every SA of every worker
                prefix = "10.99.%d.0/24" % (rnd * 8 + i)
                gw1.ctl("route", "add", prefix, "via", h.GW2_WAN)
                gw1.ctl("route", "del", prefix)
                done["pushes"] += 2
            for i in range(4):
                gw1.ctl("sa", "move", 10, "--worker", (rnd + i) % 2)
                gw1.ctl("sa", "move", 11, "--worker", (rnd + i + 1) % 2)
                done["moves"] += 2
            tops = wait_traffic(gw2, tops, "round %d of pushes and moves" % rnd)
            victim = crypto_pid(gw1, rnd % 2)
            os.kill(victim, signal.SIGKILL)
            h.wait_for(lambda: crypto_pid(gw1, rnd % 2) not in (None, victim), 30, 0.2,
                       "crypto-%d restarted" % (rnd % 2))
            done["worker kills"] += 1
            tops = wait_traffic(gw2, tops, "the kill of crypto-%d" % (rnd % 2))
        rxtx = [pid for pid, argv in gw1.dataplane_processes()
                if os.path.basename(argv[0]) == "esgw-rxtx"]
        os.kill(rxtx[0], signal.SIGKILL)
        h.wait_for(lambda: any(os.path.basename(a[0]) == "esgw-rxtx" and p != rxtx[0]
                               for p, a in gw1.dataplane_processes()), 30, 0.2,
                   "rxtx restarted")
        gw1.wait_running()
        done["dataplane restarts"] += 1
        tops = wait_traffic(gw2, tops, "the dataplane restart")
        for i in range(4):  # and the new dataplane goes through it all again
            gw1.ctl("route", "add", "10.98.%d.0/24" % i, "via", h.GW2_WAN)
            gw1.ctl("sa", "move", 10 + i % 2, "--worker", i % 2)
            done["pushes"] += 1
            done["moves"] += 1
        wait_traffic(gw2, tops, "the last pushes and moves")
    finally:
        for f in floods:
            f.kill()
            f.wait()
        cap.stop(parse=False)
    print("gw1 went through %s" % done)

    headers = h.esp_headers(cap.path)
    for sa_id, spi in SAS.items():
        packets = [(seq, int.from_bytes(iv, "big")) for s, seq, iv in headers if s == spi]
        seqs = [seq for seq, _ in packets]
        ivs = [iv for _, iv in packets]
        masks = {seq ^ iv for seq, iv in packets}
        print("SPI %d: %d packets, sequence numbers %d..%d, %d distinct IVs, %d IV mask(s)"
              % (spi, len(packets), min(seqs), max(seqs), len(set(ivs)), len(masks)))
        assert len(packets) > 2000, (spi, len(packets))
        assert len(set(seqs)) == len(seqs), "SPI %d: a sequence number went out twice" % spi
        assert len(set(ivs)) == len(ivs), "SPI %d: an IV went out twice" % spi
        assert len(masks) == 1, "SPI %d: IV XOR seq changed: %s" % (spi, sorted(masks)[:4])
        drops = gw2.sa(sa_id)["drops"]
        assert drops["auth_failed"] == 0 and drops["replay"] == 0, (sa_id, drops)
