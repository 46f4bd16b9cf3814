# SPDX-License-Identifier: BSD-3-Clause
"""The dataplane processes' scheduler slice (README, Running it): every
process esgw-ctld starts asks for a 100 us slice by default, so that one woken
by a doorbell preempts a busy neighbour on its CPU at once; esgw-ctld
--slice-us N passes another on (0: the kernel's own), and a value the kernel
would not take is refused before anything starts.

The slice is read back from /proc/PID/sched (se.slice, in ns: Linux 6.6 and
later); where the kernel has no such line the check is skipped, the refusals
are tested anyway."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402


def slice_ns(pid):
    """The main thread's scheduler slice in ns, or None if /proc does not say."""
    try:
        with open("/proc/%d/sched" % pid) as f:
            for line in f:
                if line.startswith("se.slice"):
                    return int(line.split(":")[1])
    except OSError:
        pass
    return None


def kernel_reports_slice():
    return slice_ns(os.getpid()) is not None


def test_default_slice_and_slice_us_passed_on():
    h.require_root_and_binaries()
    if not kernel_reports_slice():
        pytest.skip("no se.slice in /proc/PID/sched (kernel before 6.6)")
    topo = h.Topology()
    gateways = []
    try:
        ns = h.build_standard(topo)
        for name, args in (("gw1", []), ("gw2", ["--slice-us", "0"])):
            gw = h.Gateway(name, ns[name], topo.tag, ctld_args=args)
            gateways.append(gw)
            gw.start()
        gw1, gw2 = gateways
        h.configure_gw1(gw1, "aes-gcm-128")  # the dataplane starts with the interfaces
        h.configure_gw2(gw2, "aes-gcm-128")
        for gw in gateways:
            gw.wait_running()
        procs1 = gw1.dataplane_processes()
        procs2 = gw2.dataplane_processes()
        assert {os.path.basename(a[0]) for _, a in procs1} >= {"esgw-rxtx", "esgw-router",
                                                             "esgw-crypto"}
        for pid, argv in procs1:
            assert slice_ns(pid) == 100000, (argv[0], slice_ns(pid))
        for pid, argv in procs2:
            assert "--slice-us" in argv and argv[argv.index("--slice-us") + 1] == "0"
            assert slice_ns(pid) != 100000, (argv[0], slice_ns(pid))
    finally:
        problems = h.stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


@pytest.mark.parametrize("value", ["50", "100001", "-1", "x"])
def test_ctld_slice_us_out_of_range_refused(tmp_path, value):
    h.require_root_and_binaries()
    res = subprocess.run([h.find_binary("esgw-ctld"), "--standalone", "--slice-us", value,
                          "--socket", str(tmp_path / "s"), "--config", str(tmp_path / "c"),
                          "--rundir", str(tmp_path)],
                         capture_output=True, text=True, timeout=20)
    assert res.returncode == 2 and "--slice-us must be 0 or 100..100000" in res.stderr, \
        res.stderr


def test_ctld_slice_us_needs_standalone(tmp_path):
    h.require_root_and_binaries()
    res = subprocess.run([h.find_binary("esgw-ctld"), "--slice-us", "200",
                          "--socket", str(tmp_path / "s"), "--config", str(tmp_path / "c"),
                          "--rundir", str(tmp_path)],
                         capture_output=True, text=True, timeout=20)
    assert res.returncode == 2 and "--slice-us applies to --standalone only" in res.stderr, \
        res.stderr
