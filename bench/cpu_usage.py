#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""CPU time of a gateway's processes, from /proc: `snapshot OUT PREFIX...`
records utime+stime (all threads) of every process started with
`--file-prefix PREFIX` (esgw-ctld and the dataplane it runs); `diff A B`
prints, per prefix and per process, the share of one CPU used between the two
snapshots as JSON. Used for the idle cost at rest and the cost at load."""
import json
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def processes(prefixes):
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            stat = open("/proc/%s/stat" % pid).read()
        except OSError:
            continue
        argv = [a.decode(errors="replace") for a in argv if a]
        for i, a in enumerate(argv[:-1]):
            if a == "--file-prefix" and argv[i + 1] in prefixes:
                fields = stat.rsplit(")", 1)[1].split()
                role = os.path.basename(argv[0])
                if "--worker" in argv:
                    role += "-" + argv[argv.index("--worker") + 1]
                out[pid] = {"prefix": argv[i + 1], "role": role,
                            "ticks": int(fields[11]) + int(fields[12])}
                break
    return out


def snapshot(path, prefixes):
    json.dump({"time": time.monotonic(), "hz": HZ, "procs": processes(set(prefixes))},
              open(path, "w"))


def diff(a_path, b_path):
    a, b = json.load(open(a_path)), json.load(open(b_path))
    seconds = b["time"] - a["time"]
    gateways = {}
    for pid, p in b["procs"].items():
        before = a["procs"].get(pid)
        if before is None:
            continue  # started in between: not comparable
        share = (p["ticks"] - before["ticks"]) / HZ / seconds
        g = gateways.setdefault(p["prefix"], {"cpu": 0.0, "processes": {}})
        g["cpu"] += share
        g["processes"][p["role"]] = round(share, 4)
    for g in gateways.values():
        g["cpu"] = round(g["cpu"], 4)
    return {"seconds": round(seconds, 3), "gateways": gateways}


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "snapshot":
        snapshot(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "diff":
        print(json.dumps(diff(sys.argv[2], sys.argv[3])))
    else:
        sys.exit("usage: cpu_usage.py snapshot OUT PREFIX... | diff BEFORE AFTER")
