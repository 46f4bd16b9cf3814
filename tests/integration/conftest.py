# SPDX-License-Identifier: BSD-3-Clause
"""pytest fixtures for the esgw end-to-end tests: the standard two-gateway
topology and the one-gateway topology with a scapy peer, built per algorithm
and torn down (processes, namespaces, hugepage files) even when a test fails,
and esgw_pb2 and dataplane_pb2 (the messages of proto/esgw.proto, the public
API, and proto/dataplane.proto, ctld's channel to the dataplane, for Python)."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")


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


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """esgw_pb2 generated from proto/esgw.proto (protoc + python protobuf),
    with dataplane_pb2 beside it."""
    out = tmp_path_factory.mktemp("pb")
    try:
        subprocess.run(["protoc", "--python_out", str(out), "-I", PROTO_DIR,
                        os.path.join(PROTO_DIR, "esgw.proto"),
                        os.path.join(PROTO_DIR, "dataplane.proto")], check=True)
        sys.path.insert(0, str(out))
        import esgw_pb2  # noqa: E402
    except (OSError, subprocess.CalledProcessError, ImportError) as e:
        pytest.skip("no protoc/python protobuf: %s" % e)
    return esgw_pb2


@pytest.fixture(scope="session")
def dp(pb):
    """dataplane_pb2: the messages of proto/dataplane.proto (generated with pb)."""
    import dataplane_pb2  # noqa: E402
    return dataplane_pb2


@pytest.fixture(scope="module", params=h.ALGORITHMS)
def tunnel_pair(request):
    """h1 -- gw1 -- gw2 -- h2 with both gateways configured for one algorithm.
    Yields a dict: alg, ns (namespace names), gw1, gw2."""
    h.require_root_and_binaries()
    alg = request.param
    with h.gateway_pair() as (ns, gw1, gw2):
        h.configure_gw1(gw1, alg)
        h.configure_gw2(gw2, alg)
        yield {"alg": alg, "ns": ns, "gw1": gw1, "gw2": gw2}


@pytest.fixture(scope="module", params=h.ALGORITHMS)
def peer_setup(request):
    """h1 -- gw1 -- scapy peer (192.168.3.2, emulating gw2 and h2), gw1
    configured for one algorithm. Yields a dict: alg, ns, gw1, peer, topo."""
    h.require_root_and_binaries()
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
        problems = h.stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)
