# SPDX-License-Identifier: BSD-3-Clause
"""A hub with 20,000 tunnels (issue 13): both gateways of the standard
topology load 20,000 route-based tunnels (40,000 SAs, 20,000 routes) and
their interfaces from one `esgwctl -f` batch each, applied as one; a batch
with one bad line changes nothing; traffic passes tunnels 1, 10,000 and
20,000 both ways; SA moves and `workers set` with all those SAs configured
lose and reorder nothing; a restart of each process kind (rxtx, router, a
crypto worker, esgw-ctld) restores every tunnel. The configuration is
scale_config.py's (ESGW_HUB_TUNNELS overrides the count)."""

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import scale_config as sc  # noqa: E402

N = int(os.environ.get("ESGW_HUB_TUNNELS", "20000"))
PROBED = (1, N // 2, N)  # the tunnels traffic goes through
RATE = 500
PORT = 7400
INTERFACES = {
    "gw1": ("gw1-lan", h.GW1_LAN, "gw1-wan", h.GW1_WAN),
    "gw2": ("gw2-lan", h.GW2_LAN, "gw2-wan", h.GW2_WAN),
}


def interface_lines(side):
    lan, lan_addr, wan, wan_addr = INTERFACES[side]
    return ["# %s: interfaces, then %d tunnels" % (side, N),
            "interface add lan net_af_packet0,iface=%s" % lan,
            "interface address add lan %s/24" % lan_addr,
            "interface add wan net_af_packet1,iface=%s" % wan,
            "interface address add wan %s/24" % wan_addr,
            ""]


def load(gw, lines, tmp):
    path = os.path.join(tmp, "%s.batch" % gw.name)
    sc.write(path, lines)
    return h.run([h.find_binary("esgwctl"), "--socket", gw.socket, "-f", path],
                 check=False, timeout=600)


def host_addresses(ns):
    for i in PROBED:
        h.nsrun(ns["h1"], ["ip", "addr", "add", sc.host(i, False) + "/32", "dev", "h1-eth0"])
        h.nsrun(ns["h2"], ["ip", "addr", "add", sc.host(i, True) + "/32", "dev", "h2-eth0"])


def counts(gw):
    return (len(gw.ctl("show", "tunnels")["tunnels"]), len(gw.ctl("show", "routes")["routes"]),
            len(gw.ctl("show", "sa")["sas"]))


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    h.require_root_and_binaries()
    tmp = str(tmp_path_factory.mktemp("hub"))
    with h.gateway_pair(workers=2, prepare=host_addresses) as (ns, gw1, gw2):
        took = {}
        for gw in (gw1, gw2):
            lines = interface_lines(gw.name) + [sc.lan_route(gw.name)] + \
                sc.lines(gw.name, 1, N)
            t = time.monotonic()
            res = load(gw, lines, tmp)
            assert res.returncode == 0, res.stderr
            took[gw.name] = time.monotonic() - t
        for gw in (gw1, gw2):
            gw.wait_running(timeout=300)
        print("esgwctl -f of %d tunnels: %s" % (N, took))
        yield {"ns": ns, "gw1": gw1, "gw2": gw2, "tmp": tmp}


def ping_from(ns, src, dst, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        res = h.nsrun(ns, ["ping", "-c", "1", "-W", "2", "-I", src, dst], check=False)
        if res.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError("ping %s -> %s never answered: %s" % (src, dst, res.stdout))


def traffic_both_ways(hub, tunnels=PROBED):
    for i in tunnels:
        ping_from(hub["ns"]["h1"], sc.host(i, False), sc.host(i, True))
        ping_from(hub["ns"]["h2"], sc.host(i, True), sc.host(i, False))


def test_batch_of_20000_tunnels_applied_as_one(hub):
    for gw in (hub["gw1"], hub["gw2"]):
        assert counts(gw) == (N, N + 1, 2 * N)
    sas = {sa["id"]: sa for sa in hub["gw1"].ctl("show", "sa")["sas"]}
    for i in PROBED:
        assert sas[2 * i - 1]["tunnel"] == "hub%d" % i and sas[2 * i - 1]["direction"] == "out"
        assert sas[2 * i]["spi"] == sc.spis(i)[1] and sas[2 * i]["direction"] == "in"


def test_batch_with_one_bad_line_changes_nothing(hub):
    gw1 = hub["gw1"]
    before = counts(gw1)
    lines = sc.lines("gw1", N + 1, N + 100)
    # Line 250: a tunnel whose outbound SA does not exist: esgw-ctld refuses
    # the batch; the 249 requests before it must not stay.
    lines[249] = "tunnel add bad local %s remote %s sa-out 999999 sa-in 999998" % sc.WAN["gw1"]
    res = load(gw1, lines, hub["tmp"])
    assert res.returncode == 1, res.stderr
    assert "line 250" in res.stderr and "999999" in res.stderr and "nothing applied" in \
        res.stderr, res.stderr
    assert counts(gw1) == before
    assert not any(sa["id"] > 2 * N for sa in gw1.ctl("show", "sa")["sas"])
    # A line esgwctl itself cannot parse: nothing is sent (usage, exit 2).
    lines = sc.lines("gw1", N + 1, N + 10)
    lines[7] = "route add 10.250.0.0/33 tunnel hub1"
    res = load(gw1, lines, hub["tmp"])
    assert res.returncode == 2 and "line 8" in res.stderr, res.stderr
    assert counts(gw1) == before
    # Keys in a file other users can read: refused before anything is sent.
    path = os.path.join(hub["tmp"], "open.batch")
    sc.write(path, sc.lines("gw1", N + 1, N + 1))
    os.chmod(path, 0o644)
    res = h.run([h.find_binary("esgwctl"), "--socket", gw1.socket, "-f", path], check=False)
    assert res.returncode == 2 and "chmod 600" in res.stderr, res.stderr
    assert counts(gw1) == before


def test_traffic_through_tunnels_1_middle_and_last(hub):
    traffic_both_ways(hub)
    sas = {sa["id"]: sa for sa in hub["gw1"].ctl("show", "sa")["sas"]}
    for i in PROBED:
        assert sas[2 * i - 1]["packets"] > 0 and sas[2 * i]["packets"] > 0, (i, sas[2 * i])
        assert all(v == 0 for v in sas[2 * i]["drops"].values()), sas[2 * i]["drops"]


def streams(ns):
    """Both directions through the first and the last tunnel."""
    out = []
    for k, i in enumerate((1, N)):
        a, b = sc.host(i, False), sc.host(i, True)
        out.append(h.Stream("hub%d h1->h2" % i, ns["h1"], a, ns["h2"], b, PORT + 2 * k, RATE))
        out.append(h.Stream("hub%d h2->h1" % i, ns["h2"], b, ns["h1"], a, PORT + 2 * k + 1,
                            RATE))
    return out


def test_moves_and_workers_set_lose_nothing(hub):
    gw1, ns = hub["gw1"], hub["ns"]
    traffic_both_ways(hub, (1, N))
    running = streams(ns)
    try:
        time.sleep(0.5)
        for _ in range(2):  # the last tunnel's SAs to the other worker and back
            for sa_id in (2 * N - 1, 2 * N):
                worker = gw1.sa(sa_id)["worker"]
                gw1.ctl("sa", "move", sa_id, "--worker", 1 - worker)
            time.sleep(0.3)
        gw1.ctl("workers", "set", 1)  # 20,000 SAs handed over at once
        gw1.wait_workers_running(1, timeout=120)
        assert {sa["worker"] for sa in gw1.ctl("show", "sa")["sas"]} == {0}
        time.sleep(0.3)
        gw1.ctl("workers", "set", 2)
        gw1.wait_workers_running(2, timeout=120)
        gw1.ctl("sa", "move", 1, "--worker", 1)
        time.sleep(0.5)
    finally:
        results = h.stop_streams(running)
    for r in results:
        assert r["sent"] > 200, r
        assert r["lost"] == 0 and r["reordered"] == 0 and r["duplicates"] == 0, r


def dataplane_pid(gw, role, worker=None):
    for p in gw.ctl("show", "stats")["processes"]:
        if p["role"] == role and (worker is None or p.get("worker") == worker):
            return p["pid"]
    raise AssertionError("%s: no %s" % (gw.name, role))


@pytest.mark.parametrize("kind", ["crypto", "router", "rxtx", "ctld"])
def test_restart_restores_every_tunnel(hub, kind):
    gw1 = hub["gw1"]
    if kind == "ctld":
        gw1.kill_ctld()
        h.wait_for(lambda: not gw1.dataplane_processes(), 20, 0.2, "dataplane gone")
        gw1.restart_ctld(timeout=120)
    else:
        pid = dataplane_pid(gw1, kind, 0 if kind == "crypto" else None)
        os.kill(pid, 9)
        h.wait_for(lambda: dataplane_pid(gw1, kind, 0 if kind == "crypto" else None) != pid,
                   60, 0.3, "%s restarted" % kind)
    gw1.wait_running(timeout=300)
    assert counts(gw1) == (N, N + 1, 2 * N)
    traffic_both_ways(hub)


def test_max_sas_sizes_the_table_and_names_the_option():
    """esgw-ctld --max-sas 4: rxtx's shared table has 4 SA slots, the fifth
    `sa add` is refused with a message that names the option."""
    h.require_root_and_binaries()
    topo = h.Topology()
    gws = []
    try:
        ns = h.build_standard(topo)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag, ctld_args=["--max-sas", "4"])
        gws.append(gw)
        gw.start()
        res = load(gw, interface_lines("gw1") + sc.lines("gw1", 1, 2), gw.workdir)
        assert res.returncode == 0, res.stderr
        gw.wait_running()
        rxtx = [argv for _, argv in gw.dataplane_processes()
                if os.path.basename(argv[0]) == "esgw-rxtx"]
        assert rxtx and "--max-sas" in rxtx[0], rxtx
        assert rxtx[0][rxtx[0].index("--max-sas") + 1] == "4"
        res = gw.ctl_raw(*sc.sa_lines("gw1", 3)[0][0].split())
        assert res.returncode == 1 and "--max-sas" in res.stderr, res.stderr
        assert len(gw.ctl("show", "sa")["sas"]) == 4
    finally:
        problems = h.stop_all(gws, topo)
    assert not problems, problems
