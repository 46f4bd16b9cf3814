# SPDX-License-Identifier: BSD-3-Clause
"""Crashes of the control daemon and of the DPDK primary: the configuration
survives kill -9 of esgw-ctld, and a dataplane that starts over continues its
outbound sequence numbers above every number sent before (never reusing one
with the same keys, and staying inside the peer's replay window), so the
tunnel works again without operator action."""

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

ALG = "aes-gcm-128"


@pytest.fixture(scope="module")
def pair():
    h.require_root_and_binaries()
    with h.gateway_pair() as (ns, gw1, gw2):
        h.configure_gw1(gw1, ALG)
        h.configure_gw2(gw2, ALG)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2}


def traffic(ns, count=50):
    """Pings h1 -> h2 until one gets through, then `count` more: all must."""
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
    res = h.ping(ns["h1"], h.H2_ADDR, count=count, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert " 0% packet loss" in res.stdout, res.stdout


def config_view(gw):
    """Every configured object, keys left out by the API."""
    return {what: gw.ctl("show", what)
            for what in ("interfaces", "routes", "sa", "tunnels")}


def strip_counters(view):
    keep = {"interfaces": ("name", "devargs", "addresses", "mtu"),
            "routes": ("prefix", "via", "interface", "tunnel"),
            "sa": ("id", "spi", "direction", "algorithm", "tunnel", "worker", "replay_window"),
            "tunnels": ("name", "local", "remote", "sa_out", "sa_in")}
    out = {}
    for what, doc in view.items():
        key = "sas" if what == "sa" else what
        out[what] = sorted(({k: o.get(k) for k in keep[what]} for o in doc[key]),
                           key=lambda o: str(o))
    return out


def wait_dataplane_gone(gw, timeout=10):
    h.wait_for(lambda: not gw.dataplane_processes(), timeout, 0.2,
               "%s: dataplane stopped with its ctld" % gw.name)


def test_ctld_kill9_restores_everything(pair):
    ns, gw1 = pair["ns"], pair["gw1"]
    traffic(ns)
    before = strip_counters(config_view(gw1))
    seq_before = gw1.sa(h.SA_ID_GW1_OUT)["seq_out"]
    assert seq_before > 0

    gw1.kill_ctld()
    # The dataplane does not outlive its supervisor (PR_SET_PDEATHSIG).
    wait_dataplane_gone(gw1)
    gw1.restart_ctld()
    gw1.wait_running()
    assert strip_counters(config_view(gw1)) == before

    # A new dataplane, a new shared memory: the SA continues above what it
    # sent before, and gw2's replay window (far past 1) accepts it.
    traffic(ns)
    seq_after = gw1.sa(h.SA_ID_GW1_OUT)["seq_out"]
    assert seq_after > seq_before + 1000, (seq_before, seq_after)
    assert pair["gw2"].sa(h.SA_ID_GW1_OUT)["drops"]["replay"] == 0


def test_rxtx_crash_restarts_dataplane_and_tunnel_resumes(pair):
    ns, gw1 = pair["ns"], pair["gw1"]
    traffic(ns, count=10)
    seq_before = gw1.sa(h.SA_ID_GW1_OUT)["seq_out"]
    rxtx = [pid for pid, argv in gw1.dataplane_processes()
            if os.path.basename(argv[0]) == "esgw-rxtx"]
    assert len(rxtx) == 1
    t0 = time.monotonic()
    os.kill(rxtx[0], 9)
    # ctld restarts rxtx and, with it, every secondary.
    h.wait_for(lambda: any(os.path.basename(a[0]) == "esgw-rxtx" and p != rxtx[0]
                           for p, a in gw1.dataplane_processes()), 20, 0.2, "rxtx restarted")
    gw1.wait_running()
    traffic(ns, count=10)
    print("tunnel working again %.1f s after kill -9 of esgw-rxtx" % (time.monotonic() - t0))
    assert gw1.sa(h.SA_ID_GW1_OUT)["seq_out"] > seq_before
    assert pair["gw2"].sa(h.SA_ID_GW1_OUT)["drops"]["replay"] == 0
    stats = gw1.ctl("show", "stats")["processes"]
    assert next(p for p in stats if p["role"] == "rxtx")["restarts"] >= 1


def test_sockets_and_files_private(pair):
    """Every dataplane control socket (keys go through crypto-N's) is 0600,
    the API socket 0660, the configuration 0600."""
    gw1 = pair["gw1"]
    socks = sorted(f for f in os.listdir(gw1.rundir) if f.endswith(".sock"))
    assert {"rxtx.sock", "router.sock", "crypto-0.sock"} <= set(socks), socks
    for f in socks:
        assert oct(os.stat(os.path.join(gw1.rundir, f)).st_mode & 0o777) == "0o600", f
    assert oct(os.stat(gw1.socket).st_mode & 0o777) == "0o660"
    assert oct(os.stat(gw1.config).st_mode & 0o777) == "0o600"
