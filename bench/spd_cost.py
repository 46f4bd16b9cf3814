#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The router's cost per packet against the number of policies (issue 13,
point 4): gw1 of the standard topology (a plain peer at 192.168.3.2), UDP
from h1 to 10.103.0.1, which no policy matches and the route sends in clear
(a scan would try every policy, twice: the outbound lookup and the check
that clear traffic is not one a policy protects), with --policies counts of
policies configured in turn (`esgwctl -f`, protect policies of networks in
10.1-21.x, three selector shapes). Per count: the router's busy TSC cycles
per packet (`show dataplane --json`: busy_cycles / busy_packets over the
trial). Run as root from the tree:
ESGW_BUILD=$PWD/build /usr/bin/python3 bench/spd_cost.py"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import esgw_harness as h  # noqa: E402

DST = "10.103.0.1"
SENDER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[3])):
    s.sendto(b"x" * 64, (sys.argv[2], 7777))
"""


def policy_lines(first, last):
    lines = []
    for i in range(first, last + 1):
        net = "10.%d.%d" % (1 + i // 250, i % 250)
        rule = ("dst %s.0/24 proto udp" % net, "src 192.168.1.0/24 dst %s.9/32" % net,
                "dst %s.0/24 proto tcp dport 80-90" % net)[i % 3]
        lines.append("policy add p%d %s action protect tunnel t0 sa-out 99 priority %d"
                     % (i, rule, i))
    return lines


def router(gw):
    return [p for p in gw.ctl("show", "dataplane")["processes"] if p["name"] == "router"][0]


def trial(gw, ns, packets):
    before = router(gw)
    h.nsrun(ns["h1"], [sys.executable, "-c", SENDER, h.H1_ADDR, DST, str(packets)],
            timeout=600)
    # A slow router takes fewer than were sent (the port's ring overflows):
    # the trial is over once it takes no more.
    after, last = router(gw), None
    while last is None or after["busy_packets"] != last["busy_packets"]:
        time.sleep(1)
        last, after = after, router(gw)
    n = after["busy_packets"] - before["busy_packets"]
    return (after["busy_cycles"] - before["busy_cycles"]) / n, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default="10,5000", help="counts, ascending (default 10,5000)")
    ap.add_argument("--packets", type=int, default=50000, help="per trial (default 50000)")
    ap.add_argument("--repeat", type=int, default=3, help="trials per count (default 3)")
    args = ap.parse_args()
    counts = [int(c) for c in args.policies.split(",")]
    h.require_root_and_binaries()
    topo = h.Topology()
    gw = None
    try:
        ns = h.build_standard(topo, peer=True)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gw.start()
        h.configure_gw1(gw, "aes-gcm-128")
        gw.ctl("route", "add", "10.0.0.0/8", "via", h.GW2_WAN)
        trial(gw, ns, 1000)  # ARP resolved, caches warm
        have = 0
        print("policies  router cycles/packet (each trial)       packets the router took")
        for count in counts:
            with tempfile.NamedTemporaryFile("w", suffix=".batch") as f:
                f.write("\n".join(policy_lines(have + 1, count)) + "\n")
                f.flush()
                h.run([h.find_binary("esgwctl"), "--socket", gw.socket, "-f", f.name],
                      timeout=600)
            have = count
            gw.wait_running()
            assert len(gw.ctl("show", "policies")["policies"]) == count
            results = [trial(gw, ns, args.packets) for _ in range(args.repeat)]
            print("%8d  %-40s %d" % (count, " ".join("%.0f" % c for c, _ in results),
                                     results[-1][1]))
    finally:
        problems = gw.stop() if gw is not None else []
        topo.teardown()
    if problems:
        print("unclean shutdown: %s" % problems, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
