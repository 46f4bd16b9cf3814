#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-stage cost of one measured trial (or, --median, which of several
trials' outputs to report): from `esgwctl --json show dataplane`
taken before and after it on both gateways, the busy TSC cycles per packet of
each process, and the crypto worker's cycles per encrypted (gw1) and decrypted
(gw2) packet. From the trial's own /proc readings (esgw-bench --watch), each
process's CPU share, its CPU time per packet in TSC cycles (what the process
cost, sleeping and spinning included, waiting for the CPU excluded) and its
context switches per 1,000 packets. Prints one JSON object."""
import json
import sys


def totals(path):
    return {p["name"]: p for p in json.load(open(path))["processes"]}


def per_packet(before, after, cycles, packets):
    dc = after[cycles] - before[cycles]
    dp = after[packets] - before[packets]
    return dc / dp if dp > 0 and dc >= 0 else None


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


def procs_of(trial, gw):
    """{role: /proc entry} of the gateway's processes ("gw1.rxtx" -> "rxtx")."""
    out = {}
    for p in (trial or {}).get("procs", []):
        name, _, role = p["name"].partition(".")
        cpu = p["run_s"] if p.get("run_s") is not None else p.get("cpu_s")
        if name == gw and cpu is not None:
            out[role] = dict(p, cpu=cpu)
    return out


def gateway(gw, before_path, after_path, trial, tsc_hz):
    before, after = totals(before_path), totals(after_path)
    procs = procs_of(trial, gw)
    seconds = (trial or {}).get("seconds") or 0
    delivered = (trial or {}).get("proc_packets") or 0
    n_through = through(before, after, gw)
    out = {"cpu": sum(p["cpu"] for p in procs.values()) / seconds if seconds else 0,
           "through_packets": n_through}
    for name, a in after.items():
        b = before.get(name)
        if b is None or a.get("pid") != b.get("pid"):
            continue  # restarted during the trial: its counters started over
        busy = a["busy_cycles"] - b["busy_cycles"]
        packets = n_through
        if name.startswith("crypto"):
            packets = max(a["encrypt_packets"] - b["encrypt_packets"],
                          a["decrypt_packets"] - b["decrypt_packets"])
        p = procs.get(name)
        out[name] = {
            # per packet handled (rxtx: RX and TX each count), as the
            # dataplane reports it
            "cycles_per_packet_handled": per_packet(b, a, "busy_cycles", "busy_packets"),
            # per packet through the gateway (crypto workers: the same)
            "cycles_per_packet": ratio(busy, packets),
            "driver_cycles_per_packet": ratio(a.get("driver_cycles", 0) - b.get("driver_cycles", 0),
                                              packets),
            "esp_cycles_per_packet": ratio(a.get("esp_cycles", 0) - b.get("esp_cycles", 0), packets),
            # the sampled ESP-core calls that kept their CPU (stage_cycles.h)
            "esp_sample_cycles_per_packet": per_packet(b, a, "esp_sample_cycles",
                                                       "esp_sample_packets"),
            "esp_sample_packets": a.get("esp_sample_packets", 0) - b.get("esp_sample_packets", 0),
            "esp_sample_switched": a.get("esp_sample_switched", 0) - b.get("esp_sample_switched", 0),
            "encrypt_cycles_per_packet": per_packet(b, a, "encrypt_cycles", "encrypt_packets"),
            "decrypt_cycles_per_packet": per_packet(b, a, "decrypt_cycles", "decrypt_packets"),
            "busy_packets": a["busy_packets"] - b["busy_packets"],
            "cpu": p["cpu"] / seconds if p and seconds else None,
            # over the transmission, per packet the generator received in it
            "cpu_cycles_per_packet": (p["cpu"] * tsc_hz / delivered
                                      if p and delivered > 0 else None),
            "switches_per_1000": (1000.0 * (p["voluntary"] + p["nonvoluntary"]) / delivered
                                  if p and delivered > 0 else None),
        }
    return out


def median_trial(paths):
    """Of several trials' outputs, the one with the median delivered rate
    (the lower middle of an even count), with every trial's rate beside it."""
    docs = sorted((json.load(open(p)) for p in paths), key=lambda d: d["trial"]["delivered_pps"])
    doc = docs[(len(docs) - 1) // 2]
    doc["stage_trials_pps"] = [d["trial"]["delivered_pps"] for d in docs]
    return doc


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--median":
        print(json.dumps(median_trial(sys.argv[2:])))
        sys.exit(0)
    if len(sys.argv) != 6:
        sys.exit("usage: stage_cost.py GW1_BEFORE GW1_AFTER GW2_BEFORE GW2_AFTER TRIAL_JSON\n"
                 "       stage_cost.py --median STAGE_JSON...")
    doc = json.load(open(sys.argv[5]))
    trial = doc["results"][0]["trials"][0]
    print(json.dumps({"gw1": gateway("gw1", sys.argv[1], sys.argv[2], trial, doc["tsc_hz"]),
                      "gw2": gateway("gw2", sys.argv[3], sys.argv[4], trial, doc["tsc_hz"]),
                      "trial": trial}))
