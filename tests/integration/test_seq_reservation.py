# SPDX-License-Identifier: BSD-3-Clause
"""Outbound sequence numbers as a durable reservation (issue 10, point 2): a
crypto worker never sends a number at or above the floor esgw-ctld has saved
to disk. With esgw-ctld stopped the SA runs up to the floor and holds there;
a dataplane restart meanwhile continues above every number sent before, and
the peer's replay window drops nothing. With the configuration directory
unwritable the SA holds at the floor, counted (seq_hold) and reported (event
sa_seq_held), and goes on once a save succeeds again.

A small reserve (--seq-reserve 2000) makes the floor come within reach of a
ping flood (~500 packets/s) in seconds; the default is 2^24."""

import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

ALG = "aes-gcm-128"
RESERVE = 2000
SA_OUT = h.SA_ID_GW1_OUT


@pytest.fixture(scope="module")
def pair():
    h.require_root_and_binaries()
    with h.gateway_pair(ctld_args=["--seq-reserve", str(RESERVE)]) as (ns, gw1, gw2):
        h.configure_gw1(gw1, ALG)
        h.configure_gw2(gw2, ALG)
        h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2}


def disk_floor(gw, sa_id):
    """Sa.seq_out_floor as saved in gw's configuration file (what survives)."""
    pb = h.esgw_pb2()
    if pb is None:
        pytest.skip("no protoc / python protobuf to read the configuration file")
    cfg = h.saved_config(pb, gw.config)
    return next(s.seq_out_floor for s in cfg.sas if s.id == sa_id)


def peer_top(gw2):
    """The highest sequence number of gw1's SA 10 that gw2 accepted."""
    return gw2.sa(SA_OUT)["replay_top"]


def rxtx_pid(gw):
    pids = [pid for pid, argv in gw.dataplane_processes()
            if os.path.basename(argv[0]) == "esgw-rxtx"]
    assert len(pids) == 1, pids
    return pids[0]


def dead(pid):
    """Gone, or a zombie its stopped parent has not reaped yet."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_ctld_stopped_dataplane_restart_continues_above(pair, tmp_path):
    ns, gw1, gw2 = pair["ns"], pair["gw1"], pair["gw2"]
    replay_before = gw2.sa(SA_OUT)["drops"]["replay"]
    cap = h.Capture(ns["gw2"], "gw2-wan", str(tmp_path / "wan.pcap"), snaplen=96, bpf="esp")
    flood = h.ping_flood(ns, 240)
    stopped = False
    try:
        # Past the first floor: ctld has raised (and saved) it at least once.
        h.wait_for(lambda: gw1.sa(SA_OUT)["seq_out"] > RESERVE + RESERVE // 2, 60, 0.2,
                   "SA 10 past its first floor")
        os.kill(gw1.proc.pid, signal.SIGSTOP)  # ctld down: nobody raises the floor
        stopped = True
        floor = disk_floor(gw1, SA_OUT)
        # The worker runs up to the last number below the saved floor and
        # holds there; the peer never sees one at or above it.
        h.wait_for(lambda: peer_top(gw2) == floor - 1, 60, 0.2,
                   "gw1 holding just below its floor %d (peer at %d)" % (floor, peer_top(gw2)))
        # The dataplane starts over while ctld is down: a new shared memory,
        # every runtime slot gone.
        victim = rxtx_pid(gw1)
        os.kill(victim, signal.SIGKILL)
        h.wait_for(lambda: dead(victim), 10, 0.1, "rxtx gone")
        assert peer_top(gw2) == floor - 1
        os.kill(gw1.proc.pid, signal.SIGCONT)
        stopped = False
        # ctld restarts the dataplane, which starts at the floor (above every
        # number used), saves a higher one and goes on.
        h.wait_for(lambda: peer_top(gw2) > floor, 90, 0.3,
                   "gw1's SA 10 above floor %d after the restart" % floor)
        h.wait_for(lambda: sum(1 for spi, seq, _ in h.esp_headers(cap.path)
                               if spi == h.SPI_GW1_OUT and seq > floor) > 200, 60, 0.5,
                   "200 packets above the floor in the capture")
    finally:
        if stopped:
            os.kill(gw1.proc.pid, signal.SIGCONT)
        flood.kill()
        flood.wait()
        cap.stop(parse=False)
    gw1.wait_running()
    seqs = [seq for spi, seq, _ in h.esp_headers(cap.path) if spi == h.SPI_GW1_OUT]
    assert len(seqs) > RESERVE, len(seqs)
    assert len(set(seqs)) == len(seqs), "a sequence number was sent twice"
    split = next((i for i, s in enumerate(seqs) if s >= floor), len(seqs))
    print("floor %d: %d packets below it, then %d from %s; peer at %d" % (
        floor, split, len(seqs) - split, seqs[split:split + 1], peer_top(gw2)))
    assert split < len(seqs), "nothing above the floor on the wire"
    # Up to just below the floor, then (after the restart) above it only.
    assert max(seqs[:split]) == floor - 1 and min(seqs[split:]) > floor
    assert gw2.sa(SA_OUT)["drops"]["replay"] == replay_before
    assert gw2.sa(SA_OUT)["drops"]["auth_failed"] == 0


@pytest.fixture
def unwritable(pair):
    """Makes gw1's configuration directory read-only (a read-only bind mount:
    root writes through any file mode) until undone, or the test ends. The
    mount is made in esgw-ctld's own mount namespace (`ip netns exec` gave it
    one of its own)."""
    state = os.path.dirname(pair["gw1"].config)
    ns_of_ctld = ["nsenter", "--mount", "--target", str(pair["gw1"].proc.pid), "--"]
    mounted = []

    def make_readonly():
        h.run(ns_of_ctld + ["mount", "--bind", state, state])
        mounted.append(state)
        h.run(ns_of_ctld + ["mount", "-o", "remount,bind,ro", state])

    def undo():
        while mounted:
            h.run(ns_of_ctld + ["umount", mounted.pop()])

    yield make_readonly, undo
    undo()


def test_unwritable_config_dir_holds_at_floor(pair, unwritable):
    ns, gw1, gw2 = pair["ns"], pair["gw1"], pair["gw2"]
    make_readonly, undo = unwritable
    events = h.EventStream(gw1)
    flood = h.ping_flood(ns, 240)
    try:
        start = gw1.sa(SA_OUT)["seq_out"]
        h.wait_for(lambda: gw1.sa(SA_OUT)["seq_out"] > start + 200, 30, 0.2, "traffic")
        make_readonly()
        ev = events.expect(lambda e: e["kind"] == "sa_seq_held" and e["sa"] == SA_OUT,
                           timeout=60, what="sa_seq_held event")
        print("event: %s" % ev)
        assert "floor" in ev["detail"] and "Read-only" in ev["detail"], ev
        sa = h.wait_for(lambda: (lambda s: s if s["drops"]["seq_hold"] > 50 else None)(
            gw1.sa(SA_OUT)), 30, 0.2, "seq_hold drops counted")
        floor = disk_floor(gw1, SA_OUT)
        # What ctld shows is what is on disk, and the SA stands just below it.
        assert sa["seq_out_floor"] == floor, (sa, floor)
        assert sa["seq_out"] == floor - 1 and sa["seq_out_max"] == floor - 1, sa
        assert peer_top(gw2) == floor - 1
        held = sa["drops"]["seq_hold"]
        h.wait_for(lambda: gw1.sa(SA_OUT)["drops"]["seq_hold"] > held + 50, 30, 0.2,
                   "still holding")
        assert gw1.sa(SA_OUT)["seq_out"] == floor - 1 and peer_top(gw2) == floor - 1
        assert gw1.total_drop("seq_hold") >= held  # also counted per worker
        undo()
        # Saves work again: a higher floor, and the SA goes on.
        h.wait_for(lambda: peer_top(gw2) > floor + 100, 60, 0.3, "SA 10 going on")
        assert disk_floor(gw1, SA_OUT) > floor
    finally:
        flood.kill()
        flood.wait()
        events.stop()
    assert gw2.sa(SA_OUT)["drops"]["replay"] == 0
