#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Configuration cost against the configuration's size (issue 13): on one
gateway (gw1 of the standard topology, really started), the time of each of
`sa add`, `tunnel add`, `route add` and `sa del` through esgwctl, median of
--repeat, with 10 tunnels configured and with --tunnels; the time `esgwctl -f`
takes to load them; `show sa --json`; and the resident memory of esgw-ctld
and each dataplane process (per tunnel beyond the 10). Run as root from the
tree: ESGW_BUILD=$PWD/build /usr/bin/python3 bench/scale_commands.py."""

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


def per_command(gw, repeat, spare):
    """Median ms of each command, adding and removing tunnel `spare`."""
    times = {"sa add": [], "tunnel add": [], "route add": [], "sa del": []}
    for _ in range(repeat):
        lines = sc.tunnel_lines("gw1", spare)
        sa1, sa2 = lines[0].split(), lines[1].split()
        times["sa add"].append(timed(gw, sa1))
        timed(gw, sa2)
        times["tunnel add"].append(timed(gw, lines[2].split()))
        times["route add"].append(timed(gw, lines[3].split()))
        timed(gw, ["route", "del", sc.net(spare, far=True)])
        timed(gw, ["tunnel", "del", "hub%d" % spare])
        times["sa del"].append(timed(gw, ["sa", "del", sa1[2]]))
        timed(gw, ["sa", "del", sa2[2]])
    return {k: statistics.median(v) for k, v in times.items()}


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
        gw = h.Gateway("gw1", ns["gw1"], topo.tag, workers=args.workers,
                       ctld_args=["--max-sas", str(args.max_sas)] if args.max_sas else [])
        gws.append(gw)
        gw.start()
        load(gw, ["interface add lan net_af_packet0,iface=gw1-lan",
                  "interface address add lan 192.168.1.2/24",
                  "interface add wan net_af_packet1,iface=gw1-wan",
                  "interface address add wan 192.168.3.1/24"])
        gw.wait_running()
        spare = args.tunnels + 1
        load(gw, sc.lines("gw1", 1, 10))
        small = per_command(gw, args.repeat, spare)
        rss_small = rss(gw)
        took = load(gw, sc.lines("gw1", 11, args.tunnels))
        gw.wait_running()
        t = time.monotonic()
        res = gw.ctl_raw("show", "sa", timeout=120)
        show_s = time.monotonic() - t
        assert res.returncode == 0, res.stderr
        big = per_command(gw, args.repeat, spare)
        rss_big = rss(gw)
        print("esgwctl -f of tunnels 11..%d (%d lines): %.2f s" % (
            args.tunnels, 4 * (args.tunnels - 10), took))
        print("show sa --json with %d SAs: %.2f s (%d bytes)" % (
            2 * args.tunnels, show_s, len(res.stdout)))
        print("%-12s %10s %10s %7s" % ("command", "10 tun ms", "%d ms" % args.tunnels, "ratio"))
        for k in small:
            print("%-12s %10.2f %10.2f %7.2f" % (k, small[k], big[k], big[k] / small[k]))
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
