#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the JSON of one bench/run.sh run into the tables run.sh prints and
bench/RESULTS.md keeps: esgw next to ipsec-secgw in settings (A) one gateway
on one CPU, (B) the two-gateway chain and (C) latency through the chain, each
esgw figure as a ratio to secgw's (medians over the interleaved pairs, with
min-max); the overload check; each process's CPU time per packet and context
switches per 1,000 packets; the issue 15 targets met or missed; and esgw's own
figures (the crypto ceiling, per-stage cycles, two workers, at rest)."""
import argparse
import json
import statistics
import sys

GATEWAYS = ("esgw", "secgw")
DIRS = ("encrypt", "decrypt")


# --------------------------------------------------------------------------
# Small helpers

def mpps(pps):
    return "%.3f" % (pps / 1e6) if pps is not None else "n/a"


def fmt(v, spec="%.0f"):
    return spec % v if v is not None else "n/a"


def med(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def spread(values, f=mpps):
    """'median (min-max)' of the pairs' values, formatted by f."""
    vals = [v for v in values if v is not None]
    if not vals:
        return "n/a"
    if len(vals) == 1:
        return f(vals[0])
    return "%s (%s-%s)" % (f(statistics.median(vals)), f(min(vals)), f(max(vals)))


def ratio(a, b):
    return a / b if a is not None and b else None


def rfmt(r):
    return "**%.2f**" % r if r is not None else "n/a"


def us(v):
    return "%.0f" % v if v is not None else "n/a"


def split_item(item):
    """'KEY=FILE' -> (KEY, FILE)."""
    key, path = item.split("=", 1)
    return key, path


def ceiling(raw, alg, direction, size):
    if raw is None:
        return None
    for r in raw["results"]:
        if r["alg"] == alg and r["dir"] == direction and r["size"] == size:
            return r
    return None


# --------------------------------------------------------------------------
# What one trial says about the watched processes

def proc_figures(trial, tsc_hz):
    """{process: (cpu cycles per packet, switches per 1000 packets, cpu share)}
    over the trial's transmission, per packet received in it."""
    out = {}
    n = trial.get("proc_packets") or 0
    seconds = trial.get("seconds") or 0
    for p in trial.get("procs", []):
        cpu = cpu_seconds(p)
        if cpu is None:
            continue
        out[p["name"]] = (cpu * tsc_hz / n if n else None,
                          1000.0 * (p["voluntary"] + p["nonvoluntary"]) / n if n else None,
                          cpu / seconds if seconds else None)
    return out


def cpu_seconds(p):
    """A process's CPU time in a trial: the scheduler's run time of its
    threads (schedstat, to the nanosecond), else utime + stime (clock ticks)."""
    return p["run_s"] if p.get("run_s") is not None else p.get("cpu_s")


def total_figures(figs):
    """The gateway's processes together."""
    if not figs:
        return (None, None, None)
    parts = list(zip(*figs.values()))
    return tuple(sum(v) if all(x is not None for x in v) else None for v in parts)


def generator_limited(trial):
    """Nothing lost and the port never refused a packet: the gateway took all
    the generator could make, so its rate is at least this."""
    return trial["tx_refused"] == 0 and trial["loss_pct"] == 0 and trial["sent"] > 0


def search_point(p, tsc_hz):
    f, z, o = p["full_speed"], p["at_zero_loss"], p.get("overload")
    return {
        "full": f["delivered_pps"], "full_offered": f["offered_pps"],
        "full_limited": generator_limited(f), "full_lossless": f["loss_pct"] == 0,
        "zero": p["zero_loss_pps"], "zero_delivered": z.get("delivered_pps"),
        "over": o["delivered_pps"] if o else None,
        "over_offered": o["offered_pps"] if o else None,
        "p50": z["latency_us"]["p50"] if z["latency_us"]["samples"] else None,
        "p99": z["latency_us"]["p99"] if z["latency_us"]["samples"] else None,
        "procs_full": proc_figures(f, tsc_hz), "procs_zero": proc_figures(z, tsc_hz),
        "bad": f.get("wrong_length", 0) + z.get("wrong_length", 0),
        "reordered": f.get("reordered", 0) + z.get("reordered", 0),
    }


def load_runs(path):
    """{(setting, kind, alg, size): {gateway: [point per pair]}} for the
    searches, and {gateway: [latency doc per pair]} for (C)."""
    points, latency = {}, {}
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        doc = json.load(open(r["file"]))
        if r["setting"] == "C":
            latency.setdefault(r["gateway"], []).append(doc)
            continue
        for p in doc["results"]:
            key = (r["setting"], r["kind"], r["alg"], p["size"])
            points.setdefault(key, {}).setdefault(r["gateway"], []).append(
                search_point(p, doc["tsc_hz"]))
    return points, latency


def values(pts, key):
    return [p[key] for p in pts]


def keys_of(points, setting):
    order = {"encrypt": 0, "decrypt": 1, "chain": 0}
    ks = [k for k in points if k[0] == setting]
    return sorted(ks, key=lambda k: (k[2], int(k[3]) if k[3].isdigit() else 9999, order[k[1]]))


def marked(pts, key, limited_key):
    """Median (min-max), with * when the generator was the limit in a pair."""
    s = spread(values(pts, key))
    if any(p[limited_key] for p in pts):
        s += " \\*"
    return s


# --------------------------------------------------------------------------
# Tables

def rate_table(points, setting, raw):
    lines = []
    chain = setting == "B"
    head = "| algorithm | size | " + ("" if chain else "direction | ")
    head += ("esgw full speed Mpps | secgw full speed Mpps | esgw / secgw | "
             "esgw zero-loss Mpps | secgw zero-loss Mpps | esgw / secgw |")
    ncol = 8 if chain else 9
    if chain:
        head += (" esgw / ceiling (zero-loss) | latency at zero loss p50 / p99 us, esgw | secgw "
                 "| esgw / secgw |")
        ncol += 4
    lines += [head, "|" + "---|" * ncol]
    for key in keys_of(points, setting):
        _, kind, alg, size = key
        e, s = points[key].get("esgw", []), points[key].get("secgw", [])
        row = "| %s | %s | " % (alg, size)
        if not chain:
            row += "%s | " % kind
        row += "%s | %s | %s | %s | %s | %s |" % (
            marked(e, "full", "full_limited"), marked(s, "full", "full_limited"),
            rfmt(ratio(med(values(e, "full")), med(values(s, "full")))),
            spread(values(e, "zero")), spread(values(s, "zero")),
            rfmt(ratio(med(values(e, "zero")), med(values(s, "zero")))))
        if chain:
            enc, dec = ceiling(raw, alg, "encrypt", size), ceiling(raw, alg, "decrypt", size)
            ceil = min(enc["pps"], dec["pps"]) if enc and dec else None
            row += " %s | %s / %s | %s / %s | %s / %s |" % (
                fmt(ratio(med(values(e, "zero")), ceil), "%.3f"),
                us(med(values(e, "p50"))), us(med(values(e, "p99"))),
                us(med(values(s, "p50"))), us(med(values(s, "p99"))),
                fmt(ratio(med(values(e, "p50")), med(values(s, "p50"))), "%.2f"),
                fmt(ratio(med(values(e, "p99")), med(values(s, "p99"))), "%.2f"))
        lines.append(row)
    return lines


def proc_cell(figs_list):
    """Per process, median over pairs: 'rxtx 812 / 3.1' (cycles per packet /
    switches per 1000 packets)."""
    names = sorted({n for figs in figs_list for n in figs})
    parts = []
    for n in names:
        cyc = med([f[n][0] for f in figs_list if n in f])
        cs = med([f[n][1] for f in figs_list if n in f])
        parts.append("%s %s / %s" % (n, fmt(cyc), fmt(cs, "%.1f")))
    return "; ".join(parts) if parts else "n/a"


def proc_table(points, setting, which):
    """CPU time per packet and context switches per 1000 packets, per process
    and for the whole gateway, in the trial at full speed or at zero loss."""
    key_name = "procs_" + which
    chain = setting == "B"
    lines = ["| algorithm | size | " + ("" if chain else "direction | ") +
             "esgw cycles/packet | secgw cycles/packet | esgw / secgw | esgw switches/1000 "
             "| secgw switches/1000 | esgw / secgw | esgw per process (cycles/packet / "
             "switches/1000) | secgw per process |", "|" + "---|" * (10 if chain else 11)]
    for key in keys_of(points, setting):
        _, kind, alg, size = key
        e = [p[key_name] for p in points[key].get("esgw", [])]
        s = [p[key_name] for p in points[key].get("secgw", [])]
        te, ts = [total_figures(f) for f in e], [total_figures(f) for f in s]
        ecyc, scyc = med([t[0] for t in te]), med([t[0] for t in ts])
        ecs, scs = med([t[1] for t in te]), med([t[1] for t in ts])
        row = "| %s | %s | " % (alg, size) + ("" if chain else "%s | " % kind)
        row += "%s | %s | %s | %s | %s | %s | %s | %s |" % (
            spread([t[0] for t in te], fmt), spread([t[0] for t in ts], fmt),
            rfmt(ratio(ecyc, scyc)), spread([t[1] for t in te], lambda v: "%.1f" % v),
            spread([t[1] for t in ts], lambda v: "%.1f" % v), fmt(ratio(ecs, scs), "%.0f"),
            proc_cell(e), proc_cell(s))
        lines.append(row)
    return lines


def overload_rows(points):
    rows = []
    for setting in ("A", "B"):
        for key in keys_of(points, setting):
            _, kind, alg, size = key
            for gw in GATEWAYS:
                pts = points[key].get(gw, [])
                if not pts:
                    continue
                # Per pair: the overload and full-speed deliveries over the
                # delivery at the zero-loss point of the same search.
                r2 = [ratio(p["over"], p["zero_delivered"]) for p in pts]
                rf = [ratio(p["full"], p["zero_delivered"]) for p in pts]
                lossless = all(p["full_lossless"] for p in pts)
                rows.append({"setting": setting, "kind": kind, "alg": alg, "size": size,
                             "gw": gw, "zero": med(values(pts, "zero_delivered")),
                             "over": med(values(pts, "over")), "full": med(values(pts, "full")),
                             "r2": med(r2), "rf": med(rf), "lossless": lossless,
                             "r2_all": r2, "rf_all": rf})
    return rows


def overload_table(rows):
    lines = ["| setting | algorithm | size | direction | gateway | delivered at zero loss Mpps "
             "| offered 2x zero-loss: delivered Mpps (ratio) | full speed: delivered Mpps (ratio) |",
             "|" + "---|" * 8]
    for r in rows:
        two = ("no loss at full speed" if r["lossless"] else
               "no zero-loss rate found" if r["over"] is None else
               "%s (%s)" % (mpps(r["over"]), spread(r["r2_all"], lambda v: "%.2f" % v)))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s (%s) |" % (
            r["setting"], r["alg"], r["size"], r["kind"], r["gw"], mpps(r["zero"]), two,
            mpps(r["full"]), spread(r["rf_all"], lambda v: "%.2f" % v)))
    return lines


def latency_stats(docs):
    """{rate: {"p50": [...], "p99": [...], "max": [...], "cpu": [...], "delivered": [...]}}"""
    out = {}
    for doc in docs:
        for t in doc["results"][0]["trials"]:
            s = out.setdefault(int(t["rate_asked"]), {k: [] for k in
                                                     ("p50", "p99", "max", "cpu", "delivered")})
            l = t["latency_us"]
            if l["samples"]:
                s["p50"].append(l["p50"])
                s["p99"].append(l["p99"])
                s["max"].append(l["max"])
            figs = proc_figures(t, doc["tsc_hz"])
            s["cpu"].append(total_figures(figs)[2])
            s["delivered"].append(t["delivered_pps"])
    return out


def latency_table(latency):
    e, s = latency_stats(latency.get("esgw", [])), latency_stats(latency.get("secgw", []))
    lines = ["| packets/s | esgw p50 us | secgw p50 us | esgw / secgw | esgw p99 us | secgw p99 us "
             "| esgw / secgw | esgw max us | secgw max us | esgw / secgw "
             "| CPU of both gateways, esgw | secgw | esgw / secgw |", "|" + "---|" * 13]
    for rate in sorted(set(e) | set(s)):
        a, b = e.get(rate, {}), s.get(rate, {})
        cells = []
        for k in ("p50", "p99", "max"):
            cells += [spread(a.get(k, []), us), spread(b.get(k, []), us),
                      rfmt(ratio(med(a.get(k, [])), med(b.get(k, []))))]
        pct = lambda v: "%.1f%%" % (100 * v)
        cells += [spread(a.get("cpu", []), pct), spread(b.get("cpu", []), pct),
                  fmt(ratio(med(a.get("cpu", [])), med(b.get("cpu", []))), "%.3f")]
        lines.append("| %d | %s |" % (rate, " | ".join(cells)))
    return lines, e, s


# --------------------------------------------------------------------------
# esgw's own figures

def workers(st, gw, key):
    """Crypto workers of a gateway that handled packets in this direction."""
    return [(name, st[gw][name]) for name in sorted(st[gw])
            if name.startswith("crypto") and st[gw][name].get(key) is not None]


def worker_cell(st, gw, key, imb):
    ws = workers(st, gw, key)
    if not ws:
        return "n/a"
    return " / ".join("%.0f (%s; ESP core %s, kept its CPU %s; cpu %s; cs %s)" % (
        w[key], fmt(ratio(w[key], imb), "%.2f"), fmt(w.get("esp_cycles_per_packet")),
        fmt(w.get("esp_sample_cycles_per_packet")),
        fmt(w.get("cpu_cycles_per_packet")), fmt(w.get("switches_per_1000"), "%.1f"))
        for _, w in ws)


def stage_cell(st, gw, name):
    p = st[gw].get(name)
    if not p:
        return "n/a"
    extra = "driver %s; " % fmt(p.get("driver_cycles_per_packet")) if name == "rxtx" else ""
    return "%s (%scpu %s; cs %s)" % (fmt(p["cycles_per_packet"]), extra,
                                     fmt(p.get("cpu_cycles_per_packet")),
                                     fmt(p.get("switches_per_1000"), "%.1f"))


def stage_table(raw, stages):
    lines = ["| algorithm | size | full load offered / delivered Mpps | gw1 rxtx | gw1 router "
             "| gw1 encrypt (x imb) | gw2 rxtx | gw2 router | gw2 decrypt (x imb) "
             "| CPU gw1 / gw2 |", "|" + "---|" * 10]
    for alg, per_size in stages:
        for size, st in per_size.items():
            t = st.get("trial") or {}
            enc, dec = ceiling(raw, alg, "encrypt", size), ceiling(raw, alg, "decrypt", size)
            others = st.get("stage_trials_pps") or []
            lines.append("| %s | %s | %s / %s%s | %s | %s | %s | %s | %s | %s | %.0f%% / %.0f%% |" % (
                alg, size, mpps(t.get("offered_pps", 0)), mpps(t.get("delivered_pps", 0)),
                " (trials %s)" % ", ".join(mpps(x) for x in others) if len(others) > 1 else "",
                stage_cell(st, "gw1", "rxtx"), stage_cell(st, "gw1", "router"),
                worker_cell(st, "gw1", "encrypt_cycles_per_packet",
                            enc["cycles_per_packet"] if enc else None),
                stage_cell(st, "gw2", "rxtx"), stage_cell(st, "gw2", "router"),
                worker_cell(st, "gw2", "decrypt_cycles_per_packet",
                            dec["cycles_per_packet"] if dec else None),
                100 * st["gw1"].get("cpu", 0), 100 * st["gw2"].get("cpu", 0)))
    return lines


def two_worker_table(points, raw, items):
    lines = ["| algorithm | size | ceiling Mpps | 1 worker zero-loss Mpps | 2 workers zero-loss Mpps "
             "| 1 worker full load delivered Mpps | 2 workers full load delivered Mpps |",
             "|" + "---|" * 7]
    for item in items:
        alg, path = split_item(item)
        for p in json.load(open(path))["results"]:
            one = points.get(("B", "chain", alg, p["size"]), {}).get("esgw", [])
            enc, dec = ceiling(raw, alg, "encrypt", p["size"]), ceiling(raw, alg, "decrypt", p["size"])
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                alg, p["size"], mpps(min(enc["pps"], dec["pps"])) if enc and dec else "n/a",
                mpps(med(values(one, "zero"))), mpps(p["zero_loss_pps"]),
                mpps(med(values(one, "full"))), mpps(p["full_speed"]["delivered_pps"])))
    return lines


def scale_table(items):
    """TUNNELS:PAIR=FILE searches of the chain (a bare TUNNELS=FILE is pair
    1): for each count and size, the median of the pairs (min-max), and its
    ratio to the fewest tunnels' median, as esgw / secgw elsewhere; in
    brackets the range of the pairs' own ratios. The gateways' CPU time per
    packet at full load shows what a packet costs apart from the
    machine's scheduling."""
    runs = {}  # (tunnels, pair) -> {size: point}
    for item in items:
        key, path = split_item(item)
        n, _, pair = key.partition(":")
        doc = json.load(open(path))
        runs[(int(n), int(pair or 1))] = {p["size"]: search_point(p, doc["tsc_hz"])
                                          for p in doc["results"]}
    counts = sorted({n for n, _ in runs})
    pairs = sorted({pair for _, pair in runs})
    base_n = counts[0]
    lines = ["| tunnels | size | full load delivered Mpps | ratio (pairs) | zero-loss Mpps "
             "| ratio (pairs) | CPU cycles/packet, both gateways, full load | ratio (pairs) |",
             "|" + "---|" * 8]
    sizes = []
    for pts in runs.values():
        sizes += [s for s in pts if s not in sizes]

    def cycles(pt):
        return total_figures(pt["procs_full"])[0]

    for n in counts:
        for size in sizes:
            got = [(runs[(n, pr)][size], runs.get((base_n, pr), {}).get(size))
                   for pr in pairs if size in runs.get((n, pr), {})]
            if not got:
                continue
            base = [runs[(base_n, pr)][size] for pr in pairs if size in runs.get((base_n, pr), {})]
            cells = []
            for f, shown in ((lambda pt: pt["full"], mpps), (lambda pt: pt["zero"], mpps),
                             (cycles, fmt)):
                r = ratio(med([f(pt) for pt, _ in got]), med([f(pt) for pt in base]))
                each = spread([ratio(f(pt), f(b)) if b else None for pt, b in got],
                              lambda x: "%.2f" % x)
                cells += [spread([f(pt) for pt, _ in got], shown),
                          "%s (%s)" % (rfmt(r), each.split(" (")[-1].rstrip(")")
                                       if " (" in each else each)]
            lines.append("| %d | %s | %s |" % (n, size, " | ".join(cells)))
    return lines


def raw_table(raw):
    lines = ["| algorithm | direction | size | Mpps | cycles/packet |", "|" + "---|" * 5]
    for r in raw["results"]:
        lines.append("| %s | %s | %s | %s | %.0f |" % (r["alg"], r["dir"], r["size"],
                                                      mpps(r["pps"]), r["cycles_per_packet"]))
    return lines


def idle_lines(path, what):
    d = json.load(open(path))
    lines = []
    total = 0.0
    for gw, g in sorted(d["gateways"].items()):
        total += g["cpu"]
        lines.append("- %s %s at rest: %.2f%% of one CPU over %.0f s (%s)" % (
            what, gw, 100 * g["cpu"], d["seconds"],
            ", ".join("%s %.2f%%" % (k, 100 * v) for k, v in sorted(g["processes"].items()))))
    return lines, total


def polling_lines(points, busy_item, idle_path, busy_idle_path):
    """The default adaptive polling next to --busy-poll, the same gateways,
    algorithm and sizes: rates at load, CPU at rest."""
    alg, path = split_item(busy_item)
    lines = ["| algorithm | size | adaptive zero-loss Mpps | busy-poll zero-loss Mpps "
             "| adaptive full load delivered Mpps | busy-poll full load delivered Mpps |",
             "|" + "---|" * 6]
    for p in json.load(open(path))["results"]:
        one = points.get(("B", "chain", alg, p["size"]), {}).get("esgw", [])
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            alg, p["size"], mpps(med(values(one, "zero"))), mpps(p["zero_loss_pps"]),
            mpps(med(values(one, "full"))), mpps(p["full_speed"]["delivered_pps"])))
    for what, f in (("adaptive", idle_path), ("busy-poll", busy_idle_path)):
        if f:
            d = json.load(open(f))
            lines += ["", "- at rest, %s: %.1f%% of one CPU for both gateways" % (
                what, 100 * sum(g["cpu"] for g in d["gateways"].values()))]
    return lines


def veth_table(item):
    tag, path = split_item(item)
    lines = ["| driver | algorithm | size | esgw zero-loss Mpps | full load offered / delivered Mpps "
             "(loss) | latency at zero-loss p50 / p99 us |", "|" + "---|" * 6]
    doc = json.load(open(path))
    for p in doc["results"]:
        f, z = p["full_speed"], p["at_zero_loss"]
        lines.append("| %s | %s | %s | %s | %s / %s (%.2f%%) | %.1f / %.1f |" % (
            tag.split(":")[0], doc["label"], p["size"], mpps(p["zero_loss_pps"]),
            mpps(f["offered_pps"]), mpps(f["delivered_pps"]), f["loss_pct"],
            z["latency_us"]["p50"], z["latency_us"]["p99"]))
    return lines


# --------------------------------------------------------------------------
# Issue 15's targets

def verdict(ok):
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


def target_lines(points, over_rows, lat_e, lat_s, idle_total, raw, stages):
    lines = []
    for setting, what in (("A", "one gateway, one CPU, full speed"), ("B", "chain")):
        for key in keys_of(points, setting):
            _, kind, alg, size = key
            e, s = points[key].get("esgw", []), points[key].get("secgw", [])
            checks = [("full speed", "full")] if setting == "A" else [
                ("full load", "full"), ("zero loss", "zero")]
            for label, k in checks:
                r = ratio(med(values(e, k)), med(values(s, k)))
                lines.append("- (%s) %s %s B%s, %s: esgw / secgw %s (target >= 1.0): %s" % (
                    setting, alg, size, "" if setting == "B" else " " + kind, label,
                    fmt(r, "%.2f"), verdict(None if r is None else r >= 1.0)))
    for r in over_rows:
        if r["gw"] != "esgw":
            continue
        worst = min([v for v in (r["r2"], r["rf"]) if v is not None], default=None)
        lines.append("- overload (%s) %s %s B %s: delivered at 2x zero-loss %s, at full speed %s "
                     "of the zero-loss point (target >= 0.95): %s" % (
                         r["setting"], r["alg"], r["size"], r["kind"],
                         "n/a (no loss at full speed)" if r["lossless"] else fmt(r["r2"], "%.2f"),
                         fmt(r["rf"], "%.2f"), verdict(None if worst is None else worst >= 0.95)))
    for rate in (1000, 10000):
        a, b = lat_e.get(rate), lat_s.get(rate)
        if not a or not b:
            continue
        for k in ("p50", "p99"):
            r = ratio(med(a[k]), med(b[k]))
            lines.append("- (C) %d packets/s %s: esgw / secgw %s (target <= 1.1): %s" % (
                rate, k, fmt(r, "%.2f"), verdict(None if r is None else r <= 1.1)))
    if idle_total is not None:
        lines.append("- two idle esgw gateways, all processes: %.2f%% of one CPU (target < 2%%): %s"
                     % (100 * idle_total, verdict(idle_total < 0.02)))
    lines.append("- ping h1 -> h2 in the demo under 1 ms: not measured by bench/run.sh "
                 "(deploy/demo.sh prints it)")
    for alg, per_size in stages:
        for size, st in per_size.items():
            if size not in ("64", "1400"):
                continue
            for gw, key, d in (("gw1", "encrypt_cycles_per_packet", "encrypt"),
                               ("gw2", "decrypt_cycles_per_packet", "decrypt")):
                imb = ceiling(raw, alg, d, size)
                ws = workers(st, gw, key)
                if not ws or imb is None:
                    continue
                w = ws[0][1]
                esp = w.get("esp_sample_cycles_per_packet")
                r = ratio(esp, imb["cycles_per_packet"])
                lines.append("- crypto worker %s %s %s B: %s cycles/packet in the ESP core on the "
                             "sampled calls that kept their CPU (%s packets; %s calls left out, "
                             "switched out inside; all calls, wall time: %s) vs imb-raw %.0f, "
                             "ratio %s (target <= 1.3): %s" % (
                                 alg, d, size, fmt(esp), w.get("esp_sample_packets", 0),
                                 w.get("esp_sample_switched", 0),
                                 fmt(w.get("esp_cycles_per_packet")), imb["cycles_per_packet"],
                                 fmt(r, "%.2f"), verdict(None if r is None else r <= 1.3)))
    return lines


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True, help="bench/run.sh's runs.jsonl")
    ap.add_argument("--imb-raw")
    ap.add_argument("--stages", nargs="*", default=[], help="TAG:ALG=FILE from stage_cost.py")
    ap.add_argument("--two-workers", nargs="*", default=[], help="ALG=FILE")
    ap.add_argument("--scale", nargs="*", default=[], help="TUNNELS=FILE: the chain with a hub's tunnels")
    ap.add_argument("--scale-idle", nargs="*", default=[],
                    help="TUNNELS=FILE: cpu_usage.py diff of each scale chain at rest")
    ap.add_argument("--idle", help="cpu_usage.py diff of the esgw gateways at rest")
    ap.add_argument("--idle-secgw", help="the same for the ipsec-secgw gateways")
    ap.add_argument("--esp-core", help="esp-core --markdown output")
    ap.add_argument("--busy-poll", help="ALG=FILE: the search with esgw-ctld --busy-poll")
    ap.add_argument("--busy-idle", help="cpu_usage.py diff at rest with --busy-poll")
    ap.add_argument("--veth", help="DRIVER:ALG=FILE")
    ap.add_argument("--veth-note", default="")
    ap.add_argument("--profile", help="perf report output")
    ap.add_argument("--profile-what", default="")
    ap.add_argument("--markdown", help="write RESULTS.md here")
    ap.add_argument("--command", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--settings", default="")
    ap.add_argument("--note", default="", help="a line about this run, e.g. the machine's state")
    args = ap.parse_args()

    raw = json.load(open(args.imb_raw)) if args.imb_raw else None
    for r in (raw or {}).get("results", []):
        if r["errors"] or r["auth_failures"]:
            sys.exit("report.py: imb-raw reported failed jobs: %s" % r)
    points, latency = load_runs(args.runs)
    for key, per_gw in points.items():
        for gw, pts in per_gw.items():
            if any(p["bad"] or p["reordered"] for p in pts):
                print("report.py: warning: %s %s: ESP frames of the wrong length or reordered "
                      "packets seen" % (gw, "/".join(key)), file=sys.stderr)
    stages = {"one-worker": [], "two-workers": []}
    for item in args.stages:
        key, path = split_item(item)
        tag, alg = key.split(":", 1)
        stages[tag].append((alg, json.load(open(path))))

    out = []
    if any(k[0] == "A" for k in points):
        out += ["## (A) One gateway, one CPU: esgw next to ipsec-secgw", "",
                "The generator on one CPU, the whole gateway on the other (every esgw process; "
                "ipsec-secgw's one lcore). Encrypt: plaintext in, ESP frames of the right length "
                "counted at the far port; decrypt: valid ESP with growing sequence numbers in. "
                "Delivered Mpps, median of the pairs (min-max); `*`: in some pair the gateway "
                "took everything the generator made without loss (the generator was the limit).",
                ""] + rate_table(points, "A", raw)
        out += ["", "### (A) What each process costs, at full speed", "",
                "CPU time (utime + stime to the ns: schedstat run time) in TSC cycles per packet "
                "delivered, and "
                "context switches (voluntary + nonvoluntary, all threads) per 1,000 packets, over "
                "the trial's transmission; whole gateway, then per process (medians of the pairs).",
                ""] + proc_table(points, "A", "full")
        out += ["", "### (A) What each process costs, at the zero-loss rate", ""]
        out += proc_table(points, "A", "zero")
    if any(k[0] == "B" for k in points):
        out += ["", "## (B) The two-gateway chain: esgw next to ipsec-secgw", "",
                "generator -> gw1 (encrypt) -> gw2 (decrypt) -> generator, on both CPUs. "
                "`esgw / ceiling`: esgw's zero-loss rate over one core's imb-raw rate for the "
                "slower direction.", ""] + rate_table(points, "B", raw)
        out += ["", "### (B) What each process costs, at full load", ""]
        out += proc_table(points, "B", "full")
        out += ["", "### (B) What each process costs, at the zero-loss rate", ""]
        out += proc_table(points, "B", "zero")
    over = overload_rows(points)
    if over:
        out += ["", "## Overload: offered twice the zero-loss rate, and full speed", "",
                "Delivered rate over the rate delivered at the zero-loss point of the same "
                "search (per pair, median (min-max)). A gateway that loses nothing at full "
                "speed takes only what it forwards (the memif ring pushes back on the "
                "generator): it cannot be overloaded.", ""] + overload_table(over)
    lat_e = lat_s = {}
    if latency:
        lines, lat_e, lat_s = latency_table(latency)
        out += ["", "## (C) Latency through the chain at fixed rates", "",
                "From the TSC stamp at transmit to the receive poll, every packet of the trial; "
                "CPU: both gateways' processes together, share of one CPU, over the trial.", ""]
        out += lines
    idle_total = None
    if args.idle or args.idle_secgw:
        out += ["", "## CPU at rest", ""]
        if args.idle:
            lines, idle_total = idle_lines(args.idle, "esgw")
            out += lines
        if args.idle_secgw:
            out += idle_lines(args.idle_secgw, "ipsec-secgw")[0]
    tl = target_lines(points, over, lat_e, lat_s, idle_total, raw, stages["one-worker"])
    if tl:
        out += ["", "## Issue 15 targets", ""] + tl
    if raw:
        out += ["", "## The crypto ceiling: imb-raw, one core", ""] + raw_table(raw)
    for tag, title in (("one-worker", "one worker, one SA pair"),
                       ("two-workers", "two workers, two SA pairs (two tunnels)")):
        if stages[tag]:
            out += ["", "## esgw per-stage cycles per packet at full load, %s" % title, "",
                    "Busy TSC cycles per packet through the gateway from the dataplane's counters, "
                    "in the full-load trial with the median delivered rate (trials: each one's) "
                    "(gw1 encrypts, gw2 decrypts; rxtx handles every packet twice, RX and TX, and "
                    "gw2's router twice: both counted); `driver`: the part of rxtx's in the ports' "
                    "receive and transmit functions; `ESP core`: the part of the worker's in "
                    "esp_encap_burst / esp_decap_burst, and `kept its CPU`: the same over the "
                    "calls sampled (one in 64) that ran without a context switch of the worker "
                    "(getrusage around them), the cost on a core of its own; `cpu`: the process's CPU time per packet "
                    "in TSC cycles and `cs` its context switches per 1,000 packets (/proc); "
                    "`x imb`: the worker's cycles over imb-raw's; CPU: share of one CPU used by "
                    "all of the gateway's processes during the trial.", ""]
            out += stage_table(raw, stages[tag])
    if args.two_workers:
        out += ["", "## esgw: two workers, two SA pairs (two tunnels), next to one worker", ""]
        out += two_worker_table(points, raw, args.two_workers)
    if args.scale:
        out += ["", "## esgw: the chain with 1 to thousands of tunnels (aes-gcm-128)", "",
                "The generator's destinations spread over every tunnel's network in turn "
                "(`esgw-bench --dst-count`), so each packet uses another SA. One chain per tunnel "
                "count, configured at the start (one `esgwctl -f` batch per gateway), placed as "
                "(B)'s; the chains not measured are frozen, and each pair measures every count "
                "(ascending, then descending in the next pair). Figures: median of the pairs "
                "(min-max); ratio: that median over the fewest tunnels' median, as esgw / secgw "
                "elsewhere, and in brackets the range of each pair's own ratio (a single trial "
                "here varies by about a fifth either way with nothing changed).", ""]
        out += scale_table(args.scale)
    if args.scale_idle:
        out += ["", "### The same chains at rest", "",
                "Each chain's two gateways over a few seconds without traffic, the tunnels "
                "configured, measured as `CPU at rest` measures (B)'s gateways.", ""]
        for item in sorted(args.scale_idle, key=lambda i: int(i.split("=", 1)[0])):
            n, path = item.split("=", 1)
            out += idle_lines(path, "%s tunnel%s:" % (n, "" if n == "1" else "s"))[0]
    if args.esp_core:
        out += ["", "## The ESP core alone (bench/esp-core), one core, warm and uncached buffers", "",
                "esp_encap_burst / esp_decap_burst on 32-packet bursts of one SA, no rings, no "
                "mbufs; `ratio`: esp-core's cycles per packet over imb-raw's (the same run's "
                "medians); uncached: the packets flushed from every cache level first.", ""]
        out += [l.rstrip() for l in open(args.esp_core) if l.strip()]
    if args.busy_poll:
        out += ["", "## esgw: adaptive polling (the default) next to busy polling", ""]
        out += polling_lines(points, args.busy_poll, args.idle, args.busy_idle)
    if args.veth:
        out += ["", "## esgw through veth in network namespaces, one worker", ""]
        if args.veth_note:
            out += ["**%s**" % args.veth_note, ""]
        out += veth_table(args.veth)
    if args.profile:
        prof = [l.rstrip() for l in open(args.profile) if l.strip()]
        out += ["", "## Profile: %s" % args.profile_what, "",
                "perf record -e cpu-clock (this VM exposes no hardware counters), share of the "
                "samples of gw1's rxtx, router and crypto worker, entries of 1% and more:", "",
                "```"] + prof[:45] + ["```"]
    text = "\n".join(out)
    print(text)

    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# esgw benchmark results\n\n")
            f.write("Regenerated by `bench/run.sh`; do not edit by hand.\n\n")
            f.write("- command: `%s`\n" % args.command)
            f.write(args.machine)
            f.write("- settings: %s\n" % args.settings)
            if args.note:
                f.write("- note: %s\n" % args.note)
            if raw:
                f.write("- imb-raw: %s, %s, %s API, %d-packet bursts, %.1f s per point, "
                        "median of %d runs\n" % (raw["library"], raw["arch"], raw["api"],
                                                 raw["burst"], raw["duration"],
                                                 raw.get("repeat", 1)))
            f.write("- sizes: Ethernet frame bytes with FCS (RFC 2544)\n\n")
            f.write(text + "\n\n")
            f.write(NOTES)


NOTES = """## How to read it

- **Same traffic for both**: one generator (esgw-bench), memif links with rings of the
  size in the settings line (the generator, a memif client, sets it), the same SAs, keys,
  addresses and routes; ipsec-secgw is DPDK 22.11's example from Debian's dpdk-doc
  sources, built by bench/secgw.sh with two edits for memif ports (no RX checksum
  offload request, no 9-s wait for links), run with one lcore, the librte_ipsec path
  (`-l`), a 64-packet replay window (`-w 64`) and crypto_aesni_mb.
- **Interleaved**: for each point the runs alternate esgw, secgw, esgw, secgw...; the
  gateway not measured is stopped (SIGSTOP) so that it takes no CPU; tables show the
  median of the pairs and (min-max). The machine is shared: see the load average.
- **Zero-loss rate**: RFC 2544-style binary search, loss tolerance 0, first trial at the
  generator's full speed. **Full speed**: that first trial, the generator sending as fast
  as the link takes packets (and napping 20 us whenever the gateway's ring is full, not
  to take the CPU it shares with a gateway). Before it, 0.5 s at full speed that is not
  counted (`esgw-bench --prime`): the memif rings' buffers are first touched then, and
  the page faults had made the first trial after connecting deliver about a third of
  the next ones, for ipsec-secgw and esgw alike.
- **Latency at zero loss** ((B)'s table): measured in the trial at the zero-loss rate.
  A gateway that loses nothing at full speed has its zero-loss point at full speed,
  where the generator keeps the memif rings in front of the slower stage full: that
  latency is mostly the wait behind 2^14 frames in each full ring (about 10 ms a ring at
  1.6 Mpps), not the gateways' own; one that loses at full speed is measured below it,
  with no standing queue. Setting (C) compares latencies at the same fixed rates.
- **CPU time per packet**: each process's CPU time over the transmission, in TSC cycles,
  divided by the packets delivered in it. The time is utime + stime to the nanosecond: the
  scheduler's run time of each of its threads (/proc/PID/task/TID/schedstat); /proc/PID/stat's
  utime + stime, in 10-ms ticks, too coarse for half-second trials, is in the JSON as `cpu_s`. Immune to waiting for the CPU (a
  preempted process is not charged), so it projects to a machine with a core per
  process; it includes polling that found nothing (ipsec-secgw never sleeps).
  **Context switches per 1,000 packets**: voluntary (the process slept, e.g. on a
  doorbell) plus nonvoluntary (it was preempted), summed over its threads. What
  each costs on this machine is in the settings line (`bench/cpu-switch`: a
  process hands its CPU to another with a futex wake and a sleep, as esgw's do).
- **Per-stage cycles** (esgw only): from `esgwctl --json show dataplane` around each of
  a few more trials at full speed (the settings line's stage_trials), of which the one
  with the median delivered rate is shown (every trial's rate in brackets); TSC cycles
  count wall time, so a process preempted inside a
  busy round is charged for the time it waited. Except `kept its CPU`, the ESP core's
  cycles per packet over the calls each crypto worker sampled (one in 64) with its
  thread's context switches read before and after (getrusage): only those during which
  it was not switched out count, so preemption is left out and interrupts stay in, as on
  a core of its own; the issue 15 target line uses it and names the sample.
- **CPU at rest**: utime + stime of every process of a gateway over the interval,
  configured and with no traffic.
"""


if __name__ == "__main__":
    main()
