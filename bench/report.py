#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the JSON of one bench/run.sh run (imb-raw, esgw-bench and per-stage
files per configuration and algorithm, idle CPU, mode (b), a perf profile) into
the tables run.sh prints and bench/RESULTS.md keeps: each gateway figure next
to the intel-ipsec-mb ceiling as a ratio, and the issue 4 targets met or
missed."""
import argparse
import json
import sys

# Issue 4, point 5: crypto worker cycles per packet over imb-raw's, and rxtx +
# router cycles per packet, in-memory mode.
WORKER_TARGETS = {"64": 1.25, "1400": 1.1}
RXTX_ROUTER_TARGET = 150
CONFIG_TITLES = {"one-worker": "one worker, one SA pair",
                 "two-workers": "two workers, two SA pairs (two tunnels)"}


def ceiling(raw, alg, direction, size):
    for r in raw["results"]:
        if r["alg"] == alg and r["dir"] == direction and r["size"] == size:
            return r
    return None


def mpps(pps):
    return "%.3f" % (pps / 1e6)


def fmt(v, spec="%.0f"):
    return spec % v if v is not None else "n/a"


def split_item(item):
    """'TAG:ALG=FILE' -> (TAG, ALG, FILE)."""
    key, path = item.split("=", 1)
    tag, alg = key.split(":", 1)
    return tag, alg, path


def bench_rows(raw, items):
    rows = []
    for item in items:
        tag, alg, path = split_item(item)
        doc = json.load(open(path))
        for p in doc["results"]:
            enc = ceiling(raw, alg, "encrypt", p["size"])
            dec = ceiling(raw, alg, "decrypt", p["size"])
            if enc is None or dec is None:
                sys.exit("report.py: no imb-raw figure for %s %s" % (alg, p["size"]))
            # Packets cross two gateways: gw1's worker encrypts on one CPU and
            # gw2's decrypts on another (bench/run.sh's placement), so the
            # chain goes at best as fast as one core doing the slower of the
            # two directions.
            chain = min(enc["pps"], dec["pps"])
            f = p["full_speed"]
            rows.append({
                "tag": tag, "alg": alg, "size": p["size"], "enc": enc, "dec": dec,
                "chain": chain, "zero_loss": p["zero_loss_pps"], "full": f,
                "at": p["at_zero_loss"], "ratio": p["zero_loss_pps"] / chain,
                "full_ratio": f["delivered_pps"] / chain,
            })
    return rows


def main_table(rows):
    lines = ["| algorithm | size | imb-raw enc Mpps (cyc/pkt) | imb-raw dec Mpps (cyc/pkt) "
             "| ceiling Mpps | esgw zero-loss Mpps | ratio | esgw at full load: "
             "offered / delivered Mpps (loss) | ratio | latency at zero-loss p50 / p99 us |",
             "|" + "---|" * 10]
    for r in rows:
        lines.append(
            "| %s | %s | %s (%.0f) | %s (%.0f) | %s | %s | %.3f | %s / %s (%.2f%%) | %.3f | %.1f / %.1f |" % (
                r["alg"], r["size"], mpps(r["enc"]["pps"]), r["enc"]["cycles_per_packet"],
                mpps(r["dec"]["pps"]), r["dec"]["cycles_per_packet"], mpps(r["chain"]),
                mpps(r["zero_loss"]), r["ratio"], mpps(r["full"]["offered_pps"]),
                mpps(r["full"]["delivered_pps"]), r["full"]["loss_pct"], r["full_ratio"],
                r["at"]["latency_us"]["p50"], r["at"]["latency_us"]["p99"]))
    return lines


def side_by_side(one, two):
    lines = ["| algorithm | size | ceiling Mpps | 1 worker zero-loss Mpps (ratio) "
             "| 2 workers zero-loss Mpps (ratio) | 1 worker full load delivered Mpps (ratio) "
             "| 2 workers full load delivered Mpps (ratio) |", "|" + "---|" * 7]
    for r in one:
        t = next((x for x in two if x["alg"] == r["alg"] and x["size"] == r["size"]), None)
        if t is None:
            continue
        lines.append("| %s | %s | %s | %s (%.3f) | %s (%.3f) | %s (%.3f) | %s (%.3f) |" % (
            r["alg"], r["size"], mpps(r["chain"]), mpps(r["zero_loss"]), r["ratio"],
            mpps(t["zero_loss"]), t["ratio"], mpps(r["full"]["delivered_pps"]), r["full_ratio"],
            mpps(t["full"]["delivered_pps"]), t["full_ratio"]))
    return lines


def workers(st, gw, key):
    """Crypto workers of a gateway that handled packets in this direction."""
    out = []
    for name in sorted(st[gw]):
        if name.startswith("crypto") and st[gw][name].get(key) is not None:
            out.append((name, st[gw][name]))
    return out


def worker_cell(st, gw, key, imb):
    ws = workers(st, gw, key)
    if not ws:
        return "n/a"
    return " / ".join("%.0f (%.2f; ESP core %s; cpu %s)" % (
        w[key], w[key] / imb, fmt(w.get("esp_cycles_per_packet")), fmt(w["cpu_cycles_per_packet"]))
        for _, w in ws)


def stage_cell(st, gw, name):
    p = st[gw].get(name)
    if not p:
        return "n/a"
    if name == "rxtx":
        return "%s (driver %s; cpu %s)" % (fmt(p["cycles_per_packet"]),
                                           fmt(p.get("driver_cycles_per_packet")),
                                           fmt(p["cpu_cycles_per_packet"]))
    return "%s (cpu %s)" % (fmt(p["cycles_per_packet"]), fmt(p["cpu_cycles_per_packet"]))


def rxtx_router(st, gw):
    a, b = st[gw].get("rxtx", {}), st[gw].get("router", {})
    if a.get("cycles_per_packet") is None or b.get("cycles_per_packet") is None:
        return None
    return a["cycles_per_packet"] + b["cycles_per_packet"]


def stage_table(rows, stages):
    lines = ["| algorithm | size | full load offered / delivered Mpps | gw1 rxtx | gw1 router "
             "| gw1 rxtx+router | gw1 encrypt (x imb) | gw2 rxtx | gw2 router | gw2 rxtx+router "
             "| gw2 decrypt (x imb) | CPU gw1 / gw2 |", "|" + "---|" * 12]
    for r in rows:
        st = stages.get((r["tag"], r["alg"]), {}).get(r["size"])
        if not st:
            continue
        t = st.get("trial") or {}
        lines.append("| %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |" % (
            r["alg"], r["size"], mpps(t.get("offered_pps", 0)), mpps(t.get("delivered_pps", 0)),
            stage_cell(st, "gw1", "rxtx"), stage_cell(st, "gw1", "router"),
            fmt(rxtx_router(st, "gw1")),
            worker_cell(st, "gw1", "encrypt_cycles_per_packet", r["enc"]["cycles_per_packet"]),
            stage_cell(st, "gw2", "rxtx"), stage_cell(st, "gw2", "router"),
            fmt(rxtx_router(st, "gw2")),
            worker_cell(st, "gw2", "decrypt_cycles_per_packet", r["dec"]["cycles_per_packet"]),
            "%.0f%%" % (100 * st["gw1"].get("cpu", 0)), "%.0f%%" % (100 * st["gw2"].get("cpu", 0))))
    return lines


def targets(rows, stages):
    lines = []
    for r in rows:
        if r["tag"] != "one-worker":
            continue
        st = stages.get((r["tag"], r["alg"]), {}).get(r["size"])
        if not st:
            continue
        limit = WORKER_TARGETS.get(r["size"])
        if limit is not None:
            for gw, key, d, what in (("gw1", "encrypt_cycles_per_packet", "enc", "encrypt"),
                                     ("gw2", "decrypt_cycles_per_packet", "dec", "decrypt")):
                ws = workers(st, gw, key)
                imb = r[d]["cycles_per_packet"]
                if not ws:
                    lines.append("- %s %s %s B: crypto worker cycles/packet <= %.2f x imb-raw: "
                                 "not measured" % (r["alg"], what, r["size"], limit))
                    continue
                v = ws[0][1][key]
                lines.append("- %s %s %s B: crypto worker %.0f cycles/packet vs imb-raw %.0f, "
                             "ratio %.2f (target <= %.2f): **%s**" % (
                                 r["alg"], what, r["size"], v, imb, v / imb, limit,
                                 "met" if v / imb <= limit else "missed"))
        for gw in ("gw1", "gw2"):
            v = rxtx_router(st, gw)
            if v is None:
                continue
            driver = st[gw]["rxtx"].get("driver_cycles_per_packet")
            lines.append("- %s %s B %s (%s): rxtx + router %.0f cycles/packet, ratio to 150 "
                         "%.2f (target <= %d): **%s**%s" % (
                             r["alg"], r["size"], gw, "encrypt side" if gw == "gw1" else "decrypt side",
                             v, v / RXTX_ROUTER_TARGET, RXTX_ROUTER_TARGET,
                             "met" if v <= RXTX_ROUTER_TARGET else "missed",
                             "" if driver is None else
                             " (of which %.0f in the ports' driver, memif's copies; %.0f without)"
                             % (driver, v - driver)))
    return lines


def idle_lines(path, gateways):
    d = json.load(open(path))
    lines = []
    for gw in gateways:
        g = d["gateways"].get(gw)
        if g is None:
            continue
        lines.append("- %s at rest: %.2f%% of one CPU over %.0f s (%s)" % (
            gw, 100 * g["cpu"], d["seconds"],
            ", ".join("%s %.2f%%" % (k, 100 * v) for k, v in sorted(g["processes"].items()))))
    return lines


def polling_lines(raw, one, busy_item, idle_path, busy_idle_path, gateways):
    """Point 6: the default adaptive polling next to --busy-poll, the same
    gateways, algorithm and sizes: rates at load, CPU at rest."""
    busy = bench_rows(raw, ["busy-poll:" + busy_item])
    lines = ["| algorithm | size | adaptive zero-loss Mpps | busy-poll zero-loss Mpps "
             "| adaptive full load delivered Mpps | busy-poll full load delivered Mpps |",
             "|" + "---|" * 6]
    for b in busy:
        a = next((r for r in one if r["alg"] == b["alg"] and r["size"] == b["size"]), None)
        if a is None:
            continue
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            b["alg"], b["size"], mpps(a["zero_loss"]), mpps(b["zero_loss"]),
            mpps(a["full"]["delivered_pps"]), mpps(b["full"]["delivered_pps"])))
    if idle_path and busy_idle_path:
        for what, path in (("adaptive", idle_path), ("busy-poll", busy_idle_path)):
            d = json.load(open(path))
            total = sum(d["gateways"][gw]["cpu"] for gw in gateways if gw in d["gateways"])
            lines.append("")
            lines.append("- at rest, %s: %.1f%% of one CPU for both gateways" % (what, 100 * total))
    return lines


def veth_table(raw, item):
    tag, alg, path = split_item(item)
    rows = bench_rows(raw, ["%s:%s=%s" % (tag, alg, path)])
    lines = ["| driver | algorithm | size | ceiling Mpps | esgw zero-loss Mpps | ratio "
             "| full load offered / delivered Mpps (loss) | latency at zero-loss p50 / p99 us |",
             "|" + "---|" * 8]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %.3f | %s / %s (%.2f%%) | %.1f / %.1f |" % (
            tag, r["alg"], r["size"], mpps(r["chain"]), mpps(r["zero_loss"]), r["ratio"],
            mpps(r["full"]["offered_pps"]), mpps(r["full"]["delivered_pps"]),
            r["full"]["loss_pct"], r["at"]["latency_us"]["p50"], r["at"]["latency_us"]["p99"]))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--imb-raw", required=True)
    ap.add_argument("--bench", nargs="+", required=True, help="TAG:ALG=FILE")
    ap.add_argument("--stages", nargs="*", default=[], help="TAG:ALG=FILE from stage_cost.py")
    ap.add_argument("--idle", help="cpu_usage.py diff of the gateways at rest")
    ap.add_argument("--gateways", nargs="*", default=[])
    ap.add_argument("--esp-core", help="esp-core --markdown output")
    ap.add_argument("--busy-poll", help="ALG=FILE: the search with esgw-ctld --busy-poll")
    ap.add_argument("--busy-idle", help="cpu_usage.py diff at rest with --busy-poll")
    ap.add_argument("--veth", help="DRIVER:ALG=FILE, mode (b)")
    ap.add_argument("--veth-note", default="")
    ap.add_argument("--profile", help="perf report output")
    ap.add_argument("--profile-what", default="")
    ap.add_argument("--markdown", help="write RESULTS.md here")
    ap.add_argument("--command", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--settings", default="")
    args = ap.parse_args()

    raw = json.load(open(args.imb_raw))
    for r in raw["results"]:
        if r["errors"] or r["auth_failures"]:
            sys.exit("report.py: imb-raw reported failed jobs: %s" % r)
    rows = bench_rows(raw, args.bench)
    one = [r for r in rows if r["tag"] == "one-worker"]
    two = [r for r in rows if r["tag"] == "two-workers"]
    stages = {}
    for item in args.stages:
        tag, alg, path = split_item(item)
        stages[(tag, alg)] = json.load(open(path))

    out = ["## Mode (a), in memory: %s" % CONFIG_TITLES["one-worker"], ""] + main_table(one)
    if two:
        out += ["", "## Mode (a): %s, next to one worker" % CONFIG_TITLES["two-workers"], ""]
        out += side_by_side(one, two)
    for tag in ("one-worker", "two-workers"):
        tagged = [r for r in rows if r["tag"] == tag]
        if not tagged or not any(stages.get((tag, r["alg"])) for r in tagged):
            continue
        out += ["", "## Per-stage cycles per packet at full load, %s" % CONFIG_TITLES[tag], "",
                "Busy TSC cycles per packet through the gateway from the dataplane's counters "
                "(gw1 encrypts, gw2 decrypts; rxtx handles every packet twice, RX and TX, and "
                "gw2's router twice, ESP in and decrypted back: both counted); `driver`: the part "
                "of rxtx's in the ports' receive and transmit functions (here memif, which copies "
                "every packet); `ESP core`: the part of the worker's in esp_encap_burst / "
                "esp_decap_burst; `(cpu N)`: the process's CPU time per packet in TSC cycles; "
                "`x imb`: the worker's cycles over imb-raw's for the same point; CPU: share of one "
                "CPU used by all of the gateway's processes during the trial.", ""]
        out += stage_table(tagged, stages)
    if args.esp_core:
        out += ["", "## The ESP core alone (bench/esp-core), one core, warm and uncached buffers", "",
                "esp_encap_burst / esp_decap_burst on 32-packet bursts of one SA, no rings, no "
                "mbufs; before each burst the packets are copied into the work buffers (inner "
                "packets, or ESP packets made once), a cost timed alone and subtracted. `ratio`: "
                "esp-core's cycles per packet over imb-raw's (the same run's medians). The "
                "uncached columns run the same bursts with the packets flushed from every cache "
                "level first, the worst case of what reaches a worker from another core: next "
                "to the worker's `ESP core` cycles above, they tell how much of its cost is "
                "waiting for the packets.", ""]
        out += [l.rstrip() for l in open(args.esp_core) if l.strip()]
    tl = targets(one, stages)
    if tl:
        out += ["", "## Issue 4 targets (point 5), one worker, in memory", ""] + tl
    if args.idle:
        out += ["", "## CPU at rest", ""] + idle_lines(args.idle, args.gateways)
    if args.busy_poll:
        out += ["", "## Adaptive polling (the default) next to busy polling (point 6)", "",
                "The same two gateways restarted with `esgw-ctld --busy-poll`: no process ever "
                "sleeps. The zero-loss search and the full-speed trial as above, and the CPU of "
                "both gateways at rest.", ""]
        out += polling_lines(raw, one, args.busy_poll, args.idle, args.busy_idle, args.gateways)
    if args.veth:
        out += ["", "## Mode (b): veth in network namespaces, one worker", ""]
        if args.veth_note:
            out += ["**%s**" % args.veth_note, ""]
        out += veth_table(raw, args.veth)
    if args.profile:
        prof = [l.rstrip() for l in open(args.profile) if l.strip()]
        out += ["", "## Profile: %s" % args.profile_what, "",
                "perf record -e cpu-clock (samples of the CPU clock: this VM exposes no hardware "
                "counters), share of the samples of gw1's rxtx, router and crypto worker, "
                "entries of 1% and more:", "", "```"] + prof[:45] + ["```"]
    text = "\n".join(out)
    print(text)

    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# esgw benchmark results\n\n")
            f.write("Regenerated by `bench/run.sh`; do not edit by hand.\n\n")
            f.write("- command: `%s`\n" % args.command)
            f.write(args.machine)
            f.write("- settings: %s\n" % args.settings)
            f.write("- imb-raw: %s, %s, %s API, %d-packet bursts, %.1f s per point, median of %d runs\n" % (
                raw["library"], raw["arch"], raw["api"], raw["burst"], raw["duration"],
                raw.get("repeat", 1)))
            f.write("- sizes: Ethernet frame bytes with FCS (RFC 2544); imix = %s\n\n" % raw["imix"])
            f.write(text + "\n\n")
            f.write(NOTES)


NOTES = """## How to read it

- **Topology, mode (a)**: esgw-bench port A -> gw1 (encrypt) -> gw2 (decrypt) -> esgw-bench
  port B, every link a `net_memif`. Two esgw instances (`esgw-ctld --standalone --workers 2`),
  placed as the settings line says (`--rxtx-cpu`, `--router-cpu`, `--worker-cpus`; on 2 CPUs
  gw1's rxtx and router share CPU 0 with the generator and its worker 0 is on CPU 1, gw2 the
  other way round). The gateways and the generator share the machine's CPUs: a process
  often waits for the CPU while another runs, so the rates are the scheduler's as much as
  esgw's.
- **Two workers**: two tunnels per gateway, each with its own SA pair on its own worker; gw1
  routes 192.168.2.0/25 and 192.168.2.128/25 into them and the generator alternates its
  destination between .1 and .129. Each gateway's two workers are on different CPUs
  (`--worker-cpus`), but on a 2-CPU machine those CPUs also run the other processes: the
  figure shows the cost of the split more than a scaling gain.
- **Ceiling**: imb-raw runs the same ESP crypto jobs (same algorithm, same ESP payload of the
  frame's inner IPv4 packet, 32-job bursts) with intel-ipsec-mb alone on one core. Every packet
  through the two gateways is encrypted by gw1's worker and decrypted by gw2's, which run on
  different CPUs, so the ceiling for the chain is one core doing the slower direction,
  min(enc, dec); `ratio` is the esgw rate divided by it (the CPUs also run everything else).
- **Zero-loss rate**: RFC 2544-style binary search, loss tolerance 0, first trial at the
  generator's full speed; latency is from the TSC stamp in the payload at transmit to the
  receive poll, at the zero-loss rate.
- **Per-stage cycles**: from `esgwctl --json show dataplane` sampled before and after one more
  trial at the generator's full speed (bursts as full as the load makes them), divided by
  the packets through the gateway (what its workers encrypted or decrypted). TSC cycles
  count wall time: a process preempted inside a busy round (the CPUs are shared) is charged
  for the time it waited; doorbells are rung after a round is counted, so a consumer woken
  on the same CPU is not. `cpu` is immune to preemption but includes the idle polling of a
  process that is not saturated.
- **CPU at rest**: utime + stime of every process of a gateway (ctld, rxtx, router, workers)
  over the interval, configured and with no traffic.
- **Mode (b)**: the same two gateways, each in its own network namespace, the generator in a
  third, every link a veth pair (offloads off), ports through `net_af_xdp` (or `net_af_packet`
  where af_xdp does not start; the table says which).
"""


if __name__ == "__main__":
    main()
