#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Configuration cost against the configuration's size (issue 13): the time
of each of `sa add`, `tunnel add`, `route add`, `tunnel set` (a rekey: the
tunnel's outbound SA switched to a new one), `sa move` (the tunnel's
outbound SA handed over to the other crypto worker) and `sa del` through esgwctl,
median of --repeat, with 10 tunnels configured and with --tunnels; the time
`esgwctl -f` takes to load them; `show sa --json`; and the resident memory
of esgw-ctld and each dataplane process (per tunnel beyond the 10). Both
gateways of the standard topology run (really started): gw2 with 10
tunnels, gw1 with --tunnels, and the rounds of commands alternate between
them (gw2, gw1, gw1, gw2, ...), so that the load of a busy machine, which
drifts over the seconds a run takes, falls on both sizes alike. Run as root
from the tree: ESGW_BUILD=$PWD/build /usr/bin/python3 bench/scale_commands.py."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import esgw_harness as h  # noqa: E402
import scale_config as sc  # noqa: E402


def timed(gw, args):
    t = time.monotonic()
    gw.ctl(*args)
    return (time.monotonic() - t) * 1000.0


def load(gw, lines):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "batch")
        sc.write(path, lines)
        t = time.monotonic()
        res = h.run([h.find_binary("esgwctl"), "--socket", gw.socket, "-f", path],
                    check=False, timeout=600)
        took = time.monotonic() - t
    if res.returncode != 0:
        raise h.HarnessError("esgwctl -f: %s" % res.stderr.strip())
    return took


COMMANDS = ("sa add", "tunnel add", "route add", "tunnel set", "sa move", "sa del")


def one_round(gw, side, spare, times):
    """Tunnel `spare` added and removed again on gw (its side of the
    topology: gw1 or gw2), each command timed into times."""
    lines = sc.tunnel_lines(side, spare)
    sa1, sa2 = lines[0].split(), lines[1].split()
    times["sa add"].append(timed(gw, sa1))
    timed(gw, sa2)
    times["tunnel add"].append(timed(gw, lines[2].split()))
    times["route add"].append(timed(gw, lines[3].split()))
    # A rekey of the tunnel's outbound SA: a new SA, the switch, the old out.
    rekeyed = list(sa1)
    rekeyed[2] = str(int(sa1[2]) + 1000000)
    rekeyed[4] = str(int(sa1[4]) + 0x1000000)
    timed(gw, rekeyed)
    times["tunnel set"].append(timed(gw, ["tunnel", "set", "hub%d" % spare, "sa-out", rekeyed[2]]))
    # On worker 1 (a no-op if it is there), then handed over to worker 0.
    timed(gw, ["sa", "move", rekeyed[2], "worker", "1"])
    times["sa move"].append(timed(gw, ["sa", "move", rekeyed[2], "worker", "0"]))
    timed(gw, ["route", "del", sc.net(spare, far=(side == "gw1"))])
    timed(gw, ["tunnel", "del", "hub%d" % spare])
    times["sa del"].append(timed(gw, ["sa", "del", sa1[2]]))
    timed(gw, ["sa", "del", sa2[2]])
    timed(gw, ["sa", "del", rekeyed[2]])


def per_command(small, big, repeat, spare):
    """Median ms of each command on the small gateway (gw2) and the big one
    (gw1), their rounds interleaved (ABBA: neither goes first more often)."""
    ts = {k: [] for k in COMMANDS}
    tb = {k: [] for k in COMMANDS}
    for r in range(repeat):
        order = [(small, "gw2", ts), (big, "gw1", tb)]
        for gw, side, times in (order if r % 2 == 0 else order[::-1]):
            one_round(gw, side, spare, times)
    med = lambda t: {k: statistics.median(v) for k, v in t.items()}  # noqa: E731
    return med(ts), med(tb)


def rss(gw):
    out = {}
    for pid, role in gw.processes().items():
        try:
            with open("/proc/%d/status" % pid) as f:
                kb = int([l for l in f if l.startswith("VmRSS:")][0].split()[1])
        except (OSError, IndexError):
            continue
        name = role
        for p in gw.ctl("show", "stats")["processes"]:
            if p.get("pid") == pid and p["role"] == "crypto":
                name = "esgw-crypto-%d" % p.get("worker", 0)
        out[name] = kb
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tunnels", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-sas", type=int, help="esgw-ctld --max-sas (default its own)")
    args = ap.parse_args()
    topo = h.Topology()
    gws = []
    try:
        ns = h.build_standard(topo)
        ctld_args = ["--max-sas", str(args.max_sas)] if args.max_sas else []
        big = h.Gateway("gw1", ns["gw1"], topo.tag, workers=args.workers, ctld_args=ctld_args)
        small = h.Gateway("gw2", ns["gw2"], topo.tag, workers=args.workers,
                          ctld_args=ctld_args)
        gws += [big, small]
        for gw in gws:
            gw.start()
        load(big, ["interface add lan net_af_packet0,iface=gw1-lan",
                   "interface address add lan %s/24" % h.GW1_LAN,
                   "interface add wan net_af_packet1,iface=gw1-wan",
                   "interface address add wan %s/24" % h.GW1_WAN])
        load(small, ["interface add lan net_af_packet0,iface=gw2-lan",
                     "interface address add lan %s/24" % h.GW2_LAN,
                     "interface add wan net_af_packet1,iface=gw2-wan",
                     "interface address add wan %s/24" % h.GW2_WAN])
        for gw in gws:
            gw.wait_running()
        spare = args.tunnels + 1
        load(big, sc.lines("gw1", 1, 10))
        load(small, sc.lines("gw2", 1, 10))
        rss_small = rss(big)
        took = load(big, sc.lines("gw1", 11, args.tunnels))
        big.wait_running()
        t = time.monotonic()
        res = big.ctl_raw("show", "sa", timeout=120)
        show_s = time.monotonic() - t
        assert res.returncode == 0, res.stderr
        small_ms, big_ms = per_command(small, big, args.repeat, spare)
        rss_big = rss(big)
        print("esgwctl -f of tunnels 11..%d (%d lines): %.2f s" % (
            args.tunnels, 4 * (args.tunnels - 10), took))
        print("show sa --json with %d SAs: %.2f s (%d bytes)" % (
            2 * args.tunnels, show_s, len(res.stdout)))
        print("%-12s %10s %10s %7s" % ("command", "10 tun ms", "%d ms" % args.tunnels, "ratio"))
        for k in COMMANDS:
            print("%-12s %10.2f %10.2f %7.2f" % (k, small_ms[k], big_ms[k],
                                                  big_ms[k] / small_ms[k]))
        print("%-16s %10s %10s %14s" % ("process", "RSS 10 kB", "RSS %d kB" % args.tunnels,
                                        "B/tunnel"))
        for k in sorted(rss_big):
            a, b = rss_small.get(k, 0), rss_big[k]
            print("%-16s %10d %10d %14.0f" % (k, a, b,
                                               (b - a) * 1024.0 / (args.tunnels - 10)))
    finally:
        problems = h.stop_all(gws, topo)
        if problems:
            print("unclean shutdown:", problems)


if __name__ == "__main__":
    main()
