#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the JSON of one bench/run.sh run (imb-raw and one esgw-bench file per
algorithm) into the table run.sh prints and bench/RESULTS.md keeps, with each
gateway figure next to the intel-ipsec-mb ceiling as a ratio."""
import argparse
import json
import sys


def ceiling(raw, alg, direction, size):
    for r in raw["results"]:
        if r["alg"] == alg and r["dir"] == direction and r["size"] == size:
            return r
    return None


def mpps(pps):
    return "%.3f" % (pps / 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--imb-raw", required=True)
    ap.add_argument("--bench", nargs="+", required=True, help="ALG=FILE")
    ap.add_argument("--stages", nargs="*", default=[], help="ALG=FILE from stage_cost.py")
    ap.add_argument("--markdown", help="write RESULTS.md here")
    ap.add_argument("--command", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--notes", default="")
    args = ap.parse_args()

    raw = json.load(open(args.imb_raw))
    for r in raw["results"]:
        if r["errors"] or r["auth_failures"]:
            sys.exit("report.py: imb-raw reported failed jobs: %s" % r)
    rows = []
    for item in args.bench:
        alg, path = item.split("=", 1)
        doc = json.load(open(path))
        for p in doc["results"]:
            enc = ceiling(raw, alg, "encrypt", p["size"])
            dec = ceiling(raw, alg, "decrypt", p["size"])
            if enc is None or dec is None:
                sys.exit("report.py: no imb-raw figure for %s %s" % (alg, p["size"]))
            # Packets cross two gateways: one encrypt and one decrypt each, and
            # both crypto workers share CPU 1, so the core's ceiling for the
            # chain is one encrypt plus one decrypt per packet.
            chain = 1.0 / (1.0 / enc["pps"] + 1.0 / dec["pps"])
            z = p["at_zero_loss"]
            f = p["full_speed"]
            rows.append({
                "alg": alg, "size": p["size"], "frame": p["avg_frame_bytes"],
                "enc": enc, "dec": dec, "chain": chain,
                "zero_loss": p["zero_loss_pps"], "full": f, "at": z,
                "ratio": p["zero_loss_pps"] / chain,
                "full_ratio": f["delivered_pps"] / chain,
            })

    head = ("| algorithm | size | imb-raw enc Mpps (cyc/pkt) | imb-raw dec Mpps (cyc/pkt) "
            "| ceiling enc+dec Mpps | esgw zero-loss Mpps | ratio | esgw at full load: "
            "offered / delivered Mpps (loss) | ratio | latency at zero-loss p50 / p99 us |")
    sep = "|" + "---|" * 10
    lines = [head, sep]
    for r in rows:
        lines.append(
            "| %s | %s | %s (%.0f) | %s (%.0f) | %s | %s | %.3f | %s / %s (%.2f%%) | %.3f | %.1f / %.1f |" % (
                r["alg"], r["size"], mpps(r["enc"]["pps"]), r["enc"]["cycles_per_packet"],
                mpps(r["dec"]["pps"]), r["dec"]["cycles_per_packet"], mpps(r["chain"]),
                mpps(r["zero_loss"]), r["ratio"], mpps(r["full"]["offered_pps"]),
                mpps(r["full"]["delivered_pps"]), r["full"]["loss_pct"], r["full_ratio"],
                r["at"]["latency_us"]["p50"], r["at"]["latency_us"]["p99"]))
    stages = {}
    for item in args.stages:
        alg, path = item.split("=", 1)
        stages[alg] = json.load(open(path))
    if any(stages.values()):
        lines += ["", "Per-stage busy TSC cycles per packet during a trial at the zero-loss rate "
                  "(gw1 encrypts, gw2 decrypts):", "",
                  "| algorithm | size | gw1 rxtx | gw1 router | gw1 encrypt (x imb) | gw1 rxtx+router "
                  "| gw2 rxtx | gw2 router | gw2 decrypt (x imb) | gw2 rxtx+router |",
                  "|" + "---|" * 10]
        for r in rows:
            st = stages.get(r["alg"], {}).get(r["size"])
            if not st:
                continue
            def cyc(gw, name, key="cycles_per_packet"):
                v = st[gw].get(name, {}).get(key)
                return v
            def fmt(v):
                return "%.0f" % v if v is not None else "n/a"
            def both(gw):
                a, b = cyc(gw, "rxtx"), cyc(gw, "router")
                return fmt(a + b) if a is not None and b is not None else "n/a"
            enc = cyc("gw1", "crypto-0", "encrypt_cycles_per_packet")
            dec = cyc("gw2", "crypto-0", "decrypt_cycles_per_packet")
            lines.append("| %s | %s | %s | %s | %s%s | %s | %s | %s | %s%s | %s |" % (
                r["alg"], r["size"], fmt(cyc("gw1", "rxtx")), fmt(cyc("gw1", "router")), fmt(enc),
                " (%.2f)" % (enc / r["enc"]["cycles_per_packet"]) if enc else "", both("gw1"),
                fmt(cyc("gw2", "rxtx")), fmt(cyc("gw2", "router")), fmt(dec),
                " (%.2f)" % (dec / r["dec"]["cycles_per_packet"]) if dec else "", both("gw2")))
    table = "\n".join(lines)
    print(table)

    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write("# esgw benchmark results\n\n")
            out.write("Regenerated by `bench/run.sh`; do not edit by hand.\n\n")
            out.write("- command: `%s`\n" % args.command)
            out.write(args.machine)
            out.write("- imb-raw: %s, %s, %s API, %d-packet bursts, %.1f s per point\n" % (
                raw["library"], raw["arch"], raw["api"], raw["burst"], raw["duration"]))
            out.write("- sizes: Ethernet frame bytes with FCS (RFC 2544); imix = %s\n\n" % raw["imix"])
            out.write(table + "\n\n")
            out.write(args.notes)


if __name__ == "__main__":
    main()
