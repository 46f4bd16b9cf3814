# SPDX-License-Identifier: BSD-3-Clause
"""CPU placement of esgw-ctld --standalone: --rxtx-cpu, --router-cpu and
--worker-cpus pin each dataplane process where asked (crypto worker N on entry
N mod length of the list, also for a worker added at run time), and a CPU ctld
may not use, or a malformed list, stops ctld at start-up with status 2 and a
message naming the option, before it starts anything."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

PLACEMENT = ["--rxtx-cpu", "1", "--router-cpu", "0", "--worker-cpus", "1,0"]


class PlacedGateway(h.Gateway):
    """A Gateway whose ctld also gets the placement options, under a DPDK file
    prefix of this test's own (hp-...)."""

    def __init__(self, name, netns, tag, workers, ctld_args):
        super().__init__(name, netns, tag, workers=workers, ctld_args=ctld_args)
        self.prefix = "hp-%s%s" % (tag, name)


def cpus_allowed(pid):
    """Cpus_allowed_list of a process's main thread, as a set of CPUs."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                cpus = set()
                for part in line.split(":", 1)[1].strip().split(","):
                    lo, _, hi = part.partition("-")
                    cpus.update(range(int(lo), int(hi or lo) + 1))
                return cpus
    raise AssertionError("no Cpus_allowed_list for pid %d" % pid)


def placement_by_process(gw):
    """{(role, worker): CPUs of its main thread} of every running process."""
    return {(p["role"], p.get("worker", -1)): cpus_allowed(p["pid"])
            for p in gw.ctl("show", "stats")["processes"]}


@pytest.fixture
def placed_gateway():
    """One gateway started with PLACEMENT and 2 workers, and one af_packet
    interface (on a veth pair inside its namespace) so that ctld starts the
    dataplane. Everything is stopped and removed afterwards, also on failure."""
    h.require_root_and_binaries()
    if not {0, 1} <= os.sched_getaffinity(0):
        pytest.skip("needs CPUs 0 and 1")
    topo = h.Topology()
    gateways = []
    try:
        ns = topo.add_ns("gw")
        topo.add_veth(ns, "hp-wan", ns, "hp-far")
        gw = PlacedGateway("gw", ns, topo.tag, 2, PLACEMENT)
        gateways.append(gw)
        gw.start()
        gw.ctl("interface", "add", "wan", "net_af_packet0,iface=hp-wan")
        gw.wait_running()
        yield gw
    finally:
        problems = h.stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


def test_processes_run_on_the_cpus_asked(placed_gateway):
    gw = placed_gateway
    assert placement_by_process(gw) == {
        ("rxtx", -1): {1}, ("router", -1): {0}, ("crypto", 0): {1}, ("crypto", 1): {0}}
    with open(os.path.join(gw.workdir, "ctld.out")) as f:
        assert ("CPU placement: rxtx on CPU 1, router on CPU 0, "
                "crypto workers on CPUs 1,0") in f.read()

    # A worker added at run time takes entry 2 mod 2 of the list: CPU 1.
    gw.ctl("workers", "set", 3)
    gw.workers = 3
    gw.wait_running()
    assert placement_by_process(gw)[("crypto", 2)] == {1}


def test_unavailable_cpu_is_refused(tmp_path):
    if 64 in os.sched_getaffinity(0):
        pytest.skip("CPU 64 is available here")
    err = h.ctld_refused(tmp_path, "--worker-cpus", "64")
    assert err.startswith("esgw-ctld: --worker-cpus: CPU 64 is not available (allowed: "), err
    assert len(err.splitlines()) == 1, err


@pytest.mark.parametrize("option,value,reason", [
    ("--worker-cpus", "1,,2", "empty entry"),
    ("--worker-cpus", "3-1", "goes down"),
    ("--worker-cpus", "x", "not a CPU"),
    ("--worker-cpus", "", "empty list"),
    ("--worker-cpus", "0,1024", "out of range"),
    ("--worker-cpus", "99999999999999999999", "out of range"),
    ("--rxtx-cpu", "0,1", "not one CPU"),
    ("--router-cpu", "-1", "not one CPU"),
])
def test_malformed_cpus_are_refused(tmp_path, option, value, reason):
    err = h.ctld_refused(tmp_path, option, value)
    assert err.startswith("esgw-ctld: %s: " % option) and reason in err, err
    assert len(err.splitlines()) == 1, err
