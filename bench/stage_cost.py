#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-stage cost of one measured trial: from `esgwctl --json show dataplane`
taken before and after it on both gateways, the busy TSC cycles per packet of
each process, and the crypto worker's cycles per encrypted (gw1) and decrypted
(gw2) packet. Prints one JSON object."""
import json
import sys


def totals(path):
    return {p["name"]: p for p in json.load(open(path))["processes"]}


def per_packet(before, after, cycles, packets):
    dc = after[cycles] - before[cycles]
    dp = after[packets] - before[packets]
    return dc / dp if dp > 0 and dc >= 0 else None


def gateway(before_path, after_path):
    before, after = totals(before_path), totals(after_path)
    out = {}
    for name, a in after.items():
        b = before.get(name)
        if b is None or a.get("pid") != b.get("pid"):
            continue  # restarted during the trial: its counters started over
        out[name] = {
            "cycles_per_packet": per_packet(b, a, "busy_cycles", "busy_packets"),
            "encrypt_cycles_per_packet": per_packet(b, a, "encrypt_cycles", "encrypt_packets"),
            "decrypt_cycles_per_packet": per_packet(b, a, "decrypt_cycles", "decrypt_packets"),
            "busy_packets": a["busy_packets"] - b["busy_packets"],
        }
    return out


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: stage_cost.py GW1_BEFORE GW1_AFTER GW2_BEFORE GW2_AFTER")
    print(json.dumps({"gw1": gateway(sys.argv[1], sys.argv[2]),
                      "gw2": gateway(sys.argv[3], sys.argv[4])}))
