# SPDX-License-Identifier: BSD-3-Clause
"""bench/run.sh --smoke runs esgw and ipsec-secgw side by side in settings
(A) one gateway on one CPU, (B) the chain, (C) latency and (S) the chain
with 1 and 100 tunnels, and prints
well-formed tables with every esgw figure next to secgw's. Speed is never
asserted here: machines are noisy."""
import os
import re
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUM = r"([0-9.]+)(?: \\\*)?"  # a rate, maybe marked as the generator's limit
RATIO = r"\*\*([0-9.]+)\*\*"


def test_bench_smoke():
    env = dict(os.environ)
    # Distinct DPDK prefixes and run directory: other runs may be going on.
    env["ESGW_BENCH_PREFIX"] = "et%db" % os.getpid()
    env["ESGW_BENCH_RUNDIR"] = "/tmp/et%dbench" % os.getpid()
    p = subprocess.run([os.path.join(TOP, "bench/run.sh"), "--smoke", "--no-results"],
                       capture_output=True, text=True, timeout=600, env=env)
    out = p.stdout
    said = "\n".join(l for l in p.stderr.splitlines() if l.startswith("bench/run.sh:"))
    assert p.returncode == 0, out[-3000:] + "\n--- what bench/run.sh said:\n" + said + \
        "\n--- stderr, last lines:\n" + p.stderr[-2000:]
    for direction in ("encrypt", "decrypt"):
        row = re.search(r"^\| aes-gcm-128 \| 64 \| %s \| %s \| %s \| %s \|" % (
            direction, NUM, NUM, RATIO), out, re.M)
        assert row, "(A) %s row missing:\n%s" % (direction, out[-3000:])
        assert float(row.group(1)) > 0 and float(row.group(2)) > 0, row.group(0)
    chain = re.search(r"^\| aes-gcm-128 \| 64 \| %s \| %s \| %s \|" % (NUM, NUM, RATIO), out, re.M)
    assert chain and float(chain.group(1)) > 0 and float(chain.group(2)) > 0, out[-3000:]
    latency = re.search(r"^\| 10000 \| ([0-9]+) \| ([0-9]+) \| %s \|" % RATIO, out, re.M)
    assert latency, "(C) row missing:\n" + out[-3000:]
    # Each process's CPU time per packet and context switches, both gateways.
    assert re.search(r"gwA\.rxtx [0-9]+ / [0-9.]+", out), out[-3000:]
    assert re.search(r"sgwA [0-9]+ / [0-9.]+", out), out[-3000:]
    assert "## Issue 15 targets" in out
    # The machine's cost of a context switch, to read the switches by, and of
    # a line that has left the cache, which setting S's tunnels pay.
    assert re.search(r"^a process hands CPU [0-9]+ to another: [0-9]+ ns \([0-9]+-[0-9]+\)$", out,
                     re.M), out[:3000]
    assert re.search(r"^a line of a 64 MiB set on CPU [0-9]+: [0-9]+ ns alone, [0-9.]+ ns with 32 in "
                     r"flight$", out, re.M), out[:3000]
    # (S) the chain with 1 and 100 tunnels, as ratios to the 1-tunnel figure
    # (then the pairs' own ratios in brackets). A ratio is n/a where the
    # 1-tunnel figure is 0 (a short smoke search may find none).
    maybe = r"(?:%s|n/a)(?: \([^)]*\))?" % RATIO
    scale = re.search(r"^\| 100 \| 64 \| %s \| %s \| %s \| %s \|" % (NUM, maybe, NUM, maybe),
                      out, re.M)
    assert scale and float(scale.group(1)) > 0, "(S) row missing:\n" + out[-3000:]
