# SPDX-License-Identifier: BSD-3-Clause
"""IKEv2 through strongSwan: esgw + charon (kernel-esgw) against charon +
kernel-libipsec, an independent IKEv2 and ESP implementation (userspace ESP,
always UDP-encapsulated: it fakes NAT detection).

    h1 -- gw1 (esgw, charon kernel-esgw) -- peer (charon kernel-libipsec,
          192.168.1.0/24 ============= 192.168.2.0/24   192.168.2.1 on lo)

One topology for the module, the tests in order: PSK establishment, traffic
both ways, CHILD_SA rekeys (from either side) under numbered streams both
ways with zero loss, IKE_SA rekey, a soft byte lifetime rekeyed before the
hard one, delete from either side, esgw-ctld restarted (SAs restored, no
new negotiation), charon restarted (stale SAs removed), DPD."""

import os
import time

import pytest

import esgw_harness as h
import ike_harness as ike


PEER_LAN = "192.168.2.1"
RATE = 200  # datagrams per second each way: libipsec is userspace ESP
GW_CONF = dict(local=h.GW1_WAN, remote=h.GW2_WAN,
               children={"net": ("192.168.1.0/24", "192.168.2.0/24", "")})
PEER_CONF = dict(local=h.GW2_WAN, remote=h.GW1_WAN,
                 children={"net": ("192.168.2.0/24", "192.168.1.0/24", "")})
# Quick failure detection for DPD, and rekeyed SAs kept only briefly.
SETTINGS = "retransmit_base = 1.0\n  delete_rekeyed_delay = 2"


@pytest.fixture(scope="module")
def setup():
    ike.require_ike()
    topo = h.Topology()
    gateways, charons = [], []
    try:
        ns = h.build_standard(topo, peer=True)
        h.nsrun(ns["peer"], ["ip", "addr", "add", PEER_LAN + "/32", "dev", "lo"])
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gateways.append(gw)
        gw.start()
        ike.configure_ike_gateway(gw, "gw1-lan", h.GW1_LAN + "/24", "gw1-wan",
                                  h.GW1_WAN + "/24", [("192.168.2.0/24", h.GW2_WAN)])
        c_gw = ike.Charon("gw1", ns["gw1"], gw.workdir, "esgw", esgw_socket=gw.socket,
                          settings=SETTINGS)
        c_peer = ike.Charon("peer", ns["peer"], gw.workdir, "libipsec", settings=SETTINGS)
        charons += [c_gw, c_peer]
        c_gw.start(ike.swanctl_conf(**GW_CONF))
        c_peer.start(ike.swanctl_conf(**PEER_CONF))
        yield {"ns": ns, "gw": gw, "charon": c_gw, "peer": c_peer}
    finally:
        for c in charons:
            print(c.log_text())
            c.stop()
        problems = h.stop_all(gateways, topo)
    assert not problems, "; ".join(problems)


def initiate(setup, side="charon"):
    c = setup[side]
    res = c.swanctl("--initiate", "--child", "net", check=False, timeout=90)
    assert res.returncode == 0, "initiate failed:\n%s%s" % (res.stdout[-2000:], res.stderr)
    h.wait_for(lambda: setup["charon"].established() and setup["peer"].established(), 30, 0.3,
               "both charons: IKE_SA and CHILD_SA up")
    wait_esgw_matches_charon(setup)


def ensure_up(setup):
    if not setup["charon"].established():
        initiate(setup)


def wait_esgw_matches_charon(setup, timeout=20):
    """esgw holds exactly the SAs of charon's INSTALLED CHILD_SAs."""
    def same():
        want = set()
        for spi_in, spi_out in setup["charon"].spis():
            want |= {spi_in, spi_out}
        return want and {sa["spi"] for sa in ike.ike_owned(setup["gw"])} == want
    h.wait_for(same, timeout, 0.3, "esgw's IKE SAs == charon's")


def udp_roundtrip(setup, marker):
    """A datagram h1 -> peer LAN and one back, each retried a few times."""
    ns = setup["ns"]
    for src_ns, src, dst_ns, dst in ((ns["h1"], h.H1_ADDR, ns["peer"], PEER_LAN),
                                     (ns["peer"], PEER_LAN, ns["h1"], h.H1_ADDR)):
        rx = h.udp_socket(dst_ns, dst, 9000, timeout=1.0)
        tx = h.udp_socket(src_ns, src)
        try:
            for _ in range(10):
                tx.sendto(marker, (dst, 9000))
                try:
                    if rx.recv(2048) == marker:
                        break
                except OSError:
                    continue
            else:
                raise AssertionError("%s -> %s: %r never arrived" % (src, dst, marker))
        finally:
            rx.close()
            tx.close()


def streams(setup, port):
    ns = setup["ns"]
    return [h.Stream("h1->peer", ns["h1"], h.H1_ADDR, ns["peer"], PEER_LAN, port, rate=RATE),
            h.Stream("peer->h1", ns["peer"], PEER_LAN, ns["h1"], h.H1_ADDR, port + 1, rate=RATE)]


def stop_streams(ss):
    results = [s.stop() for s in ss]
    for r in results:
        assert r["received"] > 0, r
    return results


def rekey_under_streams(setup, side, port):
    """Rekey the CHILD_SA from side while numbered streams run both ways;
    returns the streams' results once esgw holds only the new SAs."""
    c = setup[side]
    before = setup["charon"].spis()
    ss = streams(setup, port)
    try:
        time.sleep(1.5)
        c.swanctl("--rekey", "--child", "net", timeout=60)
        h.wait_for(lambda: setup["charon"].spis() and not setup["charon"].spis() & before,
                   30, 0.3, "a new CHILD_SA")
        wait_esgw_matches_charon(setup, timeout=30)  # the rekeyed SAs are gone
        time.sleep(1.0)
    finally:
        results = stop_streams(ss)
    return results


def test_established_with_psk(setup):
    initiate(setup)
    gw = setup["gw"]
    sas = ike.ike_owned(gw)
    assert len(sas) == 2 and {s["direction"] for s in sas} == {"in", "out"}, sas
    for sa in sas:  # libipsec's ESP is always in UDP: ports charon chose
        assert sa["udp_encap"] and sa["udp_sport"] == 4500 and sa["udp_dport"] == 4500, sa
        assert sa["algorithm"] == "aes-gcm-128" and sa["tunnel"].startswith("ike-"), sa
    tunnels = [t for t in gw.ctl("show", "tunnels")["tunnels"] if t.get("owner") == "ike"]
    assert len(tunnels) == 1 and tunnels[0]["remote"] == h.GW2_WAN, tunnels
    policies = [p for p in gw.ctl("show", "policies")["policies"] if p.get("owner") == "ike"]
    assert [(p["src"], p["dst"], p["action"]) for p in policies] == [
        ("192.168.1.0/24", "192.168.2.0/24", "protect")], policies


def test_traffic_both_ways(setup):
    ensure_up(setup)
    gw = setup["gw"]
    udp_roundtrip(setup, b"ike-both-ways")
    h.ping_until_ok(setup["ns"]["h1"], PEER_LAN)
    for sa in ike.ike_owned(gw):
        assert sa["packets"] > 0, sa
    # query_sa: charon sees esgw's counters (bytes in and out of its CHILD_SA)
    child = h.wait_for(lambda: [c for c in setup["charon"].children()
                                if int(c["packets-in"]) > 0 and int(c["packets-out"]) > 0],
                       10, 0.5, "charon's CHILD_SA counters from esgw")
    assert child


@pytest.mark.parametrize("side", ["charon", "peer"])
def test_child_rekey_under_stream_loses_nothing(setup, side):
    ensure_up(setup)
    results = rekey_under_streams(setup, side, 7100 if side == "charon" else 7200)
    losses = {r["name"]: r["lost"] for r in results}
    print("CHILD_SA rekey initiated by %s: lost %s" % (side, losses))
    assert all(v == 0 for v in losses.values()), results
    assert all(r["reordered"] == 0 for r in results if "reordered" in r), results
    for sa in ike.ike_owned(setup["gw"]):
        assert sa["drops"]["sa_expired"] == 0 and sa["drops"]["auth_failed"] == 0, sa


def test_ike_rekey_keeps_child(setup):
    ensure_up(setup)
    c = setup["charon"]
    before = c.established()
    spis = c.spis()
    c.swanctl("--rekey", "--ike", "gw", timeout=60)
    h.wait_for(lambda: (c.established() or {}).get("uniqueid") not in (None, before["uniqueid"]),
               30, 0.3, "a new IKE_SA")
    assert c.spis() == spis  # the CHILD_SA moved over, esgw untouched
    wait_esgw_matches_charon(setup)
    udp_roundtrip(setup, b"after-ike-rekey")


def test_soft_byte_lifetime_rekeys_before_hard(setup):
    """gw1's CHILD_SA rekeys after 150 kB (hard limit 3 MB); the peer sets no
    byte limit, so only esgw's soft expiry event can start the rekey."""
    c = setup["charon"]
    c.swanctl("--terminate", "--ike", "gw", timeout=60)
    h.wait_for(lambda: not ike.ike_owned(setup["gw"]), 20, 0.3, "esgw: no IKE SAs")
    conf = dict(GW_CONF, children={"net": ("192.168.1.0/24", "192.168.2.0/24",
                                           "rekey_bytes = 150000\n        rand_bytes = 0\n"
                                           "        life_bytes = 3000000")})
    c.write_config(ike.swanctl_conf(**conf))
    c.swanctl("--load-all", "--file", c.swanctl_conf)
    initiate(setup)
    first = c.spis()
    sa = ike.ike_owned(setup["gw"])[0]
    assert sa["lifetime_soft"]["bytes"] and sa["lifetime_hard"]["bytes"] == 3000000, sa
    ss = streams(setup, 7300)  # ~50 kB/s each way: the soft limit in ~3 s
    try:
        h.wait_for(lambda: c.spis() and not c.spis() & first, 40, 0.5,
                   "a rekey started by the soft byte lifetime")
        wait_esgw_matches_charon(setup, timeout=30)
    finally:
        results = stop_streams(ss)
    assert c.grep_log("reached its soft lifetime"), "no soft expiry event reached charon"
    for sa in ike.ike_owned(setup["gw"]):
        assert not sa["hard_expired"] and sa["drops"]["sa_expired"] == 0, sa
    print("soft byte lifetime rekey: lost %s" % {r["name"]: r["lost"] for r in results})
    assert all(r["lost"] == 0 for r in results), results
    # back to the plain configuration
    c.write_config(ike.swanctl_conf(**GW_CONF))
    c.swanctl("--load-all", "--file", c.swanctl_conf)


@pytest.mark.parametrize("side", ["peer", "charon"])
def test_delete_from_either_side_empties_esgw(setup, side):
    ensure_up(setup)
    setup[side].swanctl("--terminate", "--ike", "gw", timeout=60)
    h.wait_for(lambda: not ike.ike_owned(setup["gw"]), 20, 0.3, "esgw: no IKE SAs")
    gw = setup["gw"]
    assert not [t for t in gw.ctl("show", "tunnels")["tunnels"] if t.get("owner") == "ike"]
    assert not [p for p in gw.ctl("show", "policies")["policies"] if p.get("owner") == "ike"]


def test_ctld_restart_restores_sas_without_renegotiation(setup):
    ensure_up(setup)
    gw, c = setup["gw"], setup["charon"]
    ike_sa = c.established()
    spis = c.spis()
    inits = len(c.grep_log("initiating IKE_SA"))
    gw.kill_ctld()
    gw.restart_ctld()
    gw.wait_running()
    wait_esgw_matches_charon(setup, timeout=30)
    udp_roundtrip(setup, b"after-ctld-restart")
    assert c.established()["uniqueid"] == ike_sa["uniqueid"] and c.spis() == spis
    assert len(c.grep_log("initiating IKE_SA")) == inits
    assert c.grep_log("kernel-esgw: connected to esgw-ctld")


def test_charon_restart_removes_stale_sas(setup):
    ensure_up(setup)
    gw, c = setup["gw"], setup["charon"]
    assert ike.ike_owned(gw)
    c.kill()  # charon crashes: its SAs stay in esgw until it is back
    assert ike.ike_owned(gw)
    c.start()
    h.wait_for(lambda: not ike.ike_owned(gw), 20, 0.3, "stale IKE SAs removed")
    assert not [t for t in gw.ctl("show", "tunnels")["tunnels"] if t.get("owner") == "ike"]
    # the peer still has its half: clear it so the next test starts clean
    setup["peer"].swanctl("--terminate", "--ike", "gw", check=False, timeout=30)


def test_dpd_notices_dead_peer(setup):
    c = setup["charon"]
    conf = dict(GW_CONF, extra_conn="dpd_delay = 2s")
    c.write_config(ike.swanctl_conf(**conf))
    c.swanctl("--load-all", "--file", c.swanctl_conf)
    h.wait_for(lambda: not setup["peer"].established(), 20, 0.3, "peer clean")
    initiate(setup)
    setup["peer"].kill()  # dead: no answer to DPD, no more ESP
    h.wait_for(lambda: not ike.ike_owned(setup["gw"]), 60, 0.5,
               "DPD: charon gave up on the peer and esgw's SAs went")
    assert not c.established()
