#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""CPU time of a gateway's processes, from /proc: `snapshot OUT PREFIX...`
records the CPU time of every process started with `--file-prefix PREFIX`
(esgw-ctld and the dataplane it runs, or ipsec-secgw): utime + stime to the
nanosecond, the scheduler's run time summed over its threads
(/proc/PID/task/TID/schedstat); `diff A B` prints, per prefix and per
process, the share of one CPU used between the two snapshots as JSON. Used
for the cost at rest."""
import json
import os
import sys
import time


def run_ns(pid):
    """Nanoseconds on a CPU of all the process's threads."""
    total = 0
    for tid in os.listdir("/proc/%s/task" % pid):
        try:
            total += int(open("/proc/%s/task/%s/schedstat" % (pid, tid)).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total


def processes(prefixes):
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        argv = [a.decode(errors="replace") for a in argv if a]
        for i, a in enumerate(argv[:-1]):
            if a == "--file-prefix" and argv[i + 1] in prefixes:
                role = os.path.basename(argv[0])
                if "--worker" in argv:
                    role += "-" + argv[argv.index("--worker") + 1]
                try:
                    out[pid] = {"prefix": argv[i + 1], "role": role, "run_ns": run_ns(pid)}
                except OSError:
                    pass  # ended meanwhile
                break
    return out


def snapshot(path, prefixes):
    json.dump({"time": time.monotonic(), "procs": processes(set(prefixes))}, open(path, "w"))


def diff(a_path, b_path):
    a, b = json.load(open(a_path)), json.load(open(b_path))
    seconds = b["time"] - a["time"]
    gateways = {}
    for pid, p in b["procs"].items():
        before = a["procs"].get(pid)
        if before is None:
            continue  # started in between: not comparable
        share = (p["run_ns"] - before["run_ns"]) / 1e9 / seconds
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
