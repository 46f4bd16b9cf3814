# SPDX-License-Identifier: BSD-3-Clause
"""pytest fixtures for the esgw end-to-end tests: the standard two-gateway
topology and the one-gateway topology with a scapy peer, built per algorithm
and torn down (processes, namespaces, hugepage files) even when a test fails."""

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402


def pytest_configure(config):
    h.cleanup_stale_namespaces()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test gets the logs of every running gateway in its report."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for gw in list(h.ACTIVE_GATEWAYS):
            rep.sections.append(("esgw %s logs" % gw.name, gw.logs_text()))


def _require_root_and_binaries():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, hugepages)")
    missing = h.missing_binaries()
    if missing:
        pytest.skip("not built in %s: %s" % (h.ESGW_BUILD, ", ".join(missing)))


def _stop_all(gateways, topo):
    problems = []
    for gw in gateways:
        gw_problems = gw.stop()
        if gw_problems:
            gw.print_logs()
            problems += ["%s: %s" % (gw.name, p) for p in gw_problems]
    topo.teardown()
    if not problems:
        # Logs of failed tests are already in their reports.
        shutil.rmtree(os.path.join(h.WORK_ROOT, topo.tag), ignore_errors=True)
    return problems


@pytest.fixture(scope="module", params=h.ALGORITHMS)
def tunnel_pair(request):
    """h1 -- gw1 -- gw2 -- h2 with both gateways configured for one algorithm.
    Yields a dict: alg, ns (namespace names), gw1, gw2, topo."""
    _require_root_and_binaries()
    alg = request.param
    topo = h.Topology()
    gateways = []
    try:
        ns = h.build_standard(topo)
        gw1 = h.Gateway("gw1", ns["gw1"], topo.tag)
        gateways.append(gw1)
        gw1.start()
        gw2 = h.Gateway("gw2", ns["gw2"], topo.tag)
        gateways.append(gw2)
        gw2.start()
        h.configure_gw1(gw1, alg)
        h.configure_gw2(gw2, alg)
        yield {"alg": alg, "ns": ns, "gw1": gw1, "gw2": gw2, "topo": topo}
    finally:
        problems = _stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


@pytest.fixture(scope="module", params=h.ALGORITHMS)
def peer_setup(request):
    """h1 -- gw1 -- scapy peer (192.168.3.2, emulating gw2 and h2), gw1
    configured for one algorithm. Yields a dict: alg, ns, gw1, peer, topo."""
    _require_root_and_binaries()
    alg = request.param
    topo = h.Topology()
    gateways = []
    peer = None
    try:
        ns = h.build_standard(topo, peer=True)
        gw1 = h.Gateway("gw1", ns["gw1"], topo.tag)
        gateways.append(gw1)
        gw1.start()
        h.configure_gw1(gw1, alg)
        # net_af_packet takes the MAC of the Linux interface it binds to.
        gw_mac = h.link_mac(ns["gw1"], "gw1-wan")
        peer = h.ScapyPeer(ns["peer"], "peer-wan", alg, gw_mac)
        yield {"alg": alg, "ns": ns, "gw1": gw1, "peer": peer, "topo": topo}
    finally:
        if peer is not None:
            peer.close()
        problems = _stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)
