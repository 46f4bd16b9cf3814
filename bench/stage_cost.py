#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-stage cost of one measured trial: from `esgwctl --json show dataplane`
taken before and after it on both gateways, the busy TSC cycles per packet of
each process, and the crypto worker's cycles per encrypted (gw1) and decrypted
(gw2) packet. With the CPU snapshots of cpu_usage.py around the same trial, also
each process's CPU share and its CPU time per packet in TSC cycles (what the
process cost, sleeping and spinning included, preemption by others excluded).
Prints one JSON object."""
import json
import sys


def totals(path):
    return {p["name"]: p for p in json.load(open(path))["processes"]}


def per_packet(before, after, cycles, packets):
    dc = after[cycles] - before[cycles]
    dp = after[packets] - before[packets]
    return dc / dp if dp > 0 and dc >= 0 else None


def cpu_shares(cpu_before, cpu_after, gw):
    """{dataplane name: share of one CPU} of the gateway whose prefix ends in -gw."""
    if cpu_before is None:
        return {}, 0.0
    a, b = json.load(open(cpu_before)), json.load(open(cpu_after))
    seconds = b["time"] - a["time"]
    shares, total = {}, 0.0
    for pid, p in b["procs"].items():
        if not p["prefix"].endswith("-" + gw) or pid not in a["procs"]:
            continue
        share = (p["ticks"] - a["procs"][pid]["ticks"]) / b["hz"] / seconds
        total += share
        role = p["role"].replace("esgw-", "")
        shares[role] = share
    return shares, total


def through(before, after, gw):
    """Packets through the gateway in the trial: what its crypto workers
    encrypted (gw1) or decrypted (gw2). rxtx handles each of them twice (RX
    and TX) and gw2's router twice (ESP in, decrypted back), so their costs are
    divided by this, not by the packets they handled."""
    key = "encrypt_packets" if gw == "gw1" else "decrypt_packets"
    return sum(a[key] - before[name][key] for name, a in after.items()
               if name.startswith("crypto") and name in before
               and a.get("pid") == before[name].get("pid"))


def ratio(num, den):
    return num / den if den > 0 and num >= 0 else None


def gateway(gw, before_path, after_path, cpu_before, cpu_after, seconds):
    before, after = totals(before_path), totals(after_path)
    shares, total = cpu_shares(cpu_before, cpu_after, gw)
    n_through = through(before, after, gw)
    out = {"cpu": total, "through_packets": n_through}
    for name, a in after.items():
        b = before.get(name)
        if b is None or a.get("pid") != b.get("pid"):
            continue  # restarted during the trial: its counters started over
        busy = a["busy_cycles"] - b["busy_cycles"]
        packets = n_through
        if name.startswith("crypto"):
            packets = max(a["encrypt_packets"] - b["encrypt_packets"],
                          a["decrypt_packets"] - b["decrypt_packets"])
        share = shares.get(name)
        out[name] = {
            # per packet handled (rxtx: RX and TX each count), as the
            # dataplane reports it
            "cycles_per_packet_handled": per_packet(b, a, "busy_cycles", "busy_packets"),
            # per packet through the gateway (crypto workers: the same)
            "cycles_per_packet": ratio(busy, packets),
            "driver_cycles_per_packet": ratio(a.get("driver_cycles", 0) - b.get("driver_cycles", 0),
                                              packets),
            "esp_cycles_per_packet": ratio(a.get("esp_cycles", 0) - b.get("esp_cycles", 0), packets),
            "encrypt_cycles_per_packet": per_packet(b, a, "encrypt_cycles", "encrypt_packets"),
            "decrypt_cycles_per_packet": per_packet(b, a, "decrypt_cycles", "decrypt_packets"),
            "busy_packets": a["busy_packets"] - b["busy_packets"],
            "cpu": share,
            "cpu_cycles_per_packet": (share * seconds * a["tsc_hz"] / packets
                                      if share is not None and packets > 0 and seconds else None),
        }
    return out


if __name__ == "__main__":
    if len(sys.argv) not in (5, 8):
        sys.exit("usage: stage_cost.py GW1_BEFORE GW1_AFTER GW2_BEFORE GW2_AFTER "
                 "[CPU_BEFORE CPU_AFTER TRIAL_JSON]")
    cpu_b = cpu_a = trial = None
    seconds = 0
    if len(sys.argv) == 8:
        cpu_b, cpu_a = sys.argv[5], sys.argv[6]
        seconds = json.load(open(cpu_a))["time"] - json.load(open(cpu_b))["time"]
        trial = json.load(open(sys.argv[7]))["results"][0]["trial"]
    print(json.dumps({"gw1": gateway("gw1", sys.argv[1], sys.argv[2], cpu_b, cpu_a, seconds),
                      "gw2": gateway("gw2", sys.argv[3], sys.argv[4], cpu_b, cpu_a, seconds),
                      "trial": trial}))
