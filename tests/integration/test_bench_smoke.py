# SPDX-License-Identifier: BSD-3-Clause
"""bench/run.sh --smoke runs two gateways and the generator and prints
well-formed figures. Speed is never asserted here: machines are noisy."""
import os
import re
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_bench_smoke():
    p = subprocess.run([os.path.join(TOP, "bench/run.sh"), "--smoke", "--no-results"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    row = re.search(r"^\| aes-gcm-128 \| 64 \| ([0-9.]+) \(\d+\) \| ([0-9.]+) \(\d+\) \| "
                    r"([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|", p.stdout, re.M)
    assert row, p.stdout[-3000:]
    assert float(row.group(1)) > 0 and float(row.group(2)) > 0
