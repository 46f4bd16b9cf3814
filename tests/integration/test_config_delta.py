# SPDX-License-Identifier: BSD-3-Clause
"""Changes pushed alone (DpConfigDelta, issue 13): after a sequence of single
commands that add tunnels, delete some from the middle of the router's tunnel
table (the last one moves into the hole) and add one back, the router and the
crypto workers, which applied each change in place, carry traffic through
every tunnel both ways; a restart of the router and of a worker (each then
gets the whole configuration) leaves them in the same state: the same SAs on
the same workers and slots, the same traffic. A rekey (`tunnel set`) and a
move of an SA's outer addresses (`sa update`) are changes in place too, the
tunnel replaced where it is with the routes into it, and so is a move of an
SA to another worker (`sa move`). A change the router
does not apply in place (a route by next hop) falls back to a whole push."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import scale_config as sc  # noqa: E402
from test_hub import interface_lines, load, ping_from  # noqa: E402

TUNNELS = range(1, 9)
KEPT = (1, 3, 4, 6, 7, 8, 2)  # after deleting 2 and 5 and adding 2 back


def host_addresses(ns):
    for i in TUNNELS:
        h.nsrun(ns["h1"], ["ip", "addr", "add", sc.host(i, False) + "/32", "dev", "h1-eth0"])
        h.nsrun(ns["h2"], ["ip", "addr", "add", sc.host(i, True) + "/32", "dev", "h2-eth0"])


def command(gw, line):
    gw.ctl(*line.split())


def delete_tunnel(gw, i):
    _, (sa_out, sa_in) = sc.sa_lines(gw.name, i)
    command(gw, "route del %s" % sc.net(i, far=(gw.name == "gw1")))
    command(gw, "tunnel del hub%d" % i)
    command(gw, "sa del %d" % sa_out)
    command(gw, "sa del %d" % sa_in)


def traffic(ns, tunnels):
    for i in tunnels:
        ping_from(ns["h1"], sc.host(i, False), sc.host(i, True))
        ping_from(ns["h2"], sc.host(i, True), sc.host(i, False))


def placement(gw):
    """What the workers hold of each SA, and the configuration's objects."""
    sas = {sa["id"]: (sa["worker"], sa["slot"], sa["spi"], sa["tunnel"])
           for sa in gw.ctl("show", "sa")["sas"]}
    return sas, gw.ctl("show", "config")


def log_count(gw, needle):
    return gw.logs_text(lines=100000).count(needle)


def router_pid(gw):
    return next(p["pid"] for p in gw.ctl("show", "stats")["processes"] if p["role"] == "router")


def worker_pid(gw, worker):
    return next(p["pid"] for p in gw.ctl("show", "stats")["processes"]
                if p["role"] == "crypto" and p.get("worker") == worker)


@pytest.fixture
def pair(tmp_path):
    h.require_root_and_binaries()
    with h.gateway_pair(workers=2, prepare=host_addresses) as (ns, gw1, gw2):
        for gw in (gw1, gw2):
            res = load(gw, interface_lines(gw.name) + [sc.lan_route(gw.name)] +
                       sc.lines(gw.name, 1, 1), str(tmp_path))
            assert res.returncode == 0, res.stderr
        for gw in (gw1, gw2):
            gw.wait_running(timeout=120)
        yield ns, gw1, gw2


def test_changes_in_place_equal_a_whole_push(pair):
    ns, gw1, gw2 = pair
    in_place = log_count(gw1, "applied in place")
    for gw in (gw1, gw2):
        for line in sc.lines(gw.name, 2, 8):
            command(gw, line)
        delete_tunnel(gw, 2)  # the router's last tunnel (8) moves into its place
        delete_tunnel(gw, 5)
        for line in sc.tunnel_lines(gw.name, 2):
            command(gw, line)
    # Every one of those 7 * 4 + 2 * 4 + 4 changes went in place.
    h.wait_for(lambda: log_count(gw1, "applied in place") >= in_place + 40, 20, 0.2,
               "the router's changes in place")
    traffic(ns, KEPT)
    before = placement(gw1)
    assert sorted(t["name"] for t in before[1]["config"]["tunnels"]) == \
        sorted("hub%d" % i for i in KEPT)
    # The same state from the whole configuration: the router, then worker 1.
    for pid_of in (router_pid, lambda gw: worker_pid(gw, 1)):
        pid = pid_of(gw1)
        os.kill(pid, 9)
        h.wait_for(lambda: pid_of(gw1) != pid, 60, 0.3, "restarted")
        gw1.wait_running(timeout=120)
        traffic(ns, KEPT)
        assert placement(gw1) == before
    for i in KEPT:
        assert gw1.sa(2 * i)["packets"] > 0, i


def test_route_by_next_hop_is_a_whole_push(pair):
    ns, gw1, _ = pair
    whole = log_count(gw1, "applied:")
    command(gw1, "route add 10.99.0.0/16 via %s" % sc.LAN_PEER["gw1"])
    h.wait_for(lambda: log_count(gw1, "applied:") > whole, 20, 0.2, "a whole push")
    whole = log_count(gw1, "applied:")
    command(gw1, "route del 10.99.0.0/16")
    h.wait_for(lambda: log_count(gw1, "applied:") > whole, 20, 0.2, "a whole push")
    traffic(ns, (1,))


def test_rekey_sa_update_and_move_in_place(pair):
    """Both directions of tunnel 1 rekeyed on both gateways (new SAs added,
    `tunnel set` to them, the old ones deleted), with tunnels 2..4 after it
    in the router's table; then `sa update` of gw1's new outbound SA to the
    addresses it already has, and both new SAs of gw1 handed over to the
    other worker and back (`sa move`): every change in place (no whole
    push), the routes into each tunnel still lead into it, traffic flows
    through the new SAs only."""
    ns, gw1, gw2 = pair
    for gw in (gw1, gw2):
        for line in sc.lines(gw.name, 2, 4):
            command(gw, line)
    traffic(ns, (1, 2, 3, 4))
    whole = {gw.name: log_count(gw, "applied:") for gw in (gw1, gw2)}
    in_place = log_count(gw1, "applied in place")
    new = {}
    for gw in (gw1, gw2):
        lines, (sa_out, sa_in) = sc.sa_lines(gw.name, 1)
        fresh = []
        for line, old in zip(lines, (sa_out, sa_in)):
            words = line.split()
            words[2] = str(old + 100000)           # a new id
            words[4] = str(int(words[4]) + 0x10)   # a new SPI, the same on both sides
            command(gw, " ".join(words))
            fresh.append(old + 100000)
        new[gw.name] = fresh
        command(gw, "tunnel set hub1 sa-out %d sa-in %d,%d" % (fresh[0], sa_in, fresh[1]))
    for gw in (gw1, gw2):
        _, (sa_out, sa_in) = sc.sa_lines(gw.name, 1)
        command(gw, "tunnel set hub1 sa-in %d" % new[gw.name][1])
        command(gw, "sa del %d" % sa_out)
        command(gw, "sa del %d" % sa_in)
    command(gw1, "sa update %d local %s remote %s" % (new["gw1"][0], *sc.WAN["gw1"]))
    for sa_id in new["gw1"]:  # handed over to the other worker, and back
        for _ in range(2):
            worker = gw1.sa(sa_id)["worker"]
            command(gw1, "sa move %d worker %d" % (sa_id, 1 - worker))
            assert gw1.sa(sa_id)["worker"] == 1 - worker
    h.wait_for(lambda: log_count(gw1, "applied in place") >= in_place + 11, 20, 0.2,
               "the router's changes in place")
    for gw in (gw1, gw2):
        assert log_count(gw, "applied:") == whole[gw.name], "a whole push on %s" % gw.name
        tunnels = {t["name"]: t for t in gw.ctl("show", "config")["config"]["tunnels"]}
        assert tunnels["hub1"]["sa_out"] == new[gw.name][0], tunnels["hub1"]
    traffic(ns, (1, 2, 3, 4))
    for gw in (gw1, gw2):
        for sa_id in new[gw.name]:
            assert gw.sa(sa_id)["packets"] > 0, (gw.name, sa_id)
