# SPDX-License-Identifier: BSD-3-Clause
"""IKEv2 through a real NAT whose mapping changes under traffic: esgw +
charon (kernel-esgw) against charon + kernel-libipsec behind an nftables
source NAT in a router namespace.

    h1 -- gw1 (esgw, charon kernel-esgw) -- nat ------------- inside
          192.168.1.0/24   192.168.3.1   192.168.3.2|.3   192.168.4.2
                                         (snat)           (charon kernel-libipsec,
                                                           192.168.2.1 on lo)

The peer initiates from behind the NAT. Under numbered streams both ways the
NAT's mapping changes (its SNAT rule moves to other ports, or to another
public address, and its conntrack table is flushed): the peer's ESP arrives
from the new mapping at once, gw1's goes to the old one and is lost until
the peer's DPD tells gw1's charon (the implicit NAT-T update of RFC 7296
2.23 without MOBIKE; with MOBIKE the peer sees the changed NAT-D payloads
and sends UPDATE_SA_ADDRESSES). Either way charon calls update_sa and esgw
moves the SAs in place: the same SPIs and esgw SAs, sequence numbers going
on, no rekey. The loss of the outage is printed, not asserted."""

import time

import pytest

import esgw_harness as h
import ike_harness as ike

INSIDE_ADDR, NAT_INSIDE = "192.168.4.2", "192.168.4.1"
NAT_ADDR, NAT_ADDR2 = h.GW2_WAN, "192.168.3.3"
PEER_LAN = "192.168.2.1"
PEER_ID, GW_ID = "peer.esgw.test", "gw1.esgw.test"
RATE = 200  # datagrams per second each way: libipsec is userspace ESP
FIRST_PORTS, NEXT_PORTS = (20000, 20999), (30000, 30999)
# The peer notices gw1's silence quickly (its DPD starts the update).
SETTINGS = "retransmit_base = 1.0\n  delete_rekeyed_delay = 2"


def nat_rules(ns, addr, ports):
    """Source NAT of the inside network to addr, UDP to a port range."""
    table = """flush ruleset
table ip esgwnat {
  chain post {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "nat-wan" ip saddr 192.168.4.0/24 meta l4proto udp snat to %s:%d-%d
    oifname "nat-wan" ip saddr 192.168.4.0/24 snat to %s
  }
}
""" % (addr, ports[0], ports[1], addr)
    h.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=table)


def build(topo):
    ns = {"h1": topo.add_ns("h1"), "gw1": topo.add_ns("gw1"), "nat": topo.add_ns("nat"),
          "inside": topo.add_ns("inside")}
    topo.add_veth(ns["h1"], "h1-eth0", ns["gw1"], "gw1-lan")
    h.nsrun(ns["h1"], ["ip", "link", "set", "h1-eth0", "mtu", str(h.HOST_MTU)])
    topo.addr(ns["h1"], "h1-eth0", h.H1_ADDR + "/24")
    topo.route(ns["h1"], "default", "via", h.GW1_LAN)
    topo.add_veth(ns["gw1"], "gw1-wan", ns["nat"], "nat-wan")
    topo.addr(ns["nat"], "nat-wan", NAT_ADDR + "/24")
    topo.addr(ns["nat"], "nat-wan", NAT_ADDR2 + "/24")
    topo.add_veth(ns["nat"], "nat-in", ns["inside"], "inside-eth0")
    topo.addr(ns["nat"], "nat-in", NAT_INSIDE + "/24")
    topo.addr(ns["inside"], "inside-eth0", INSIDE_ADDR + "/24")
    topo.route(ns["inside"], "default", "via", NAT_INSIDE)
    h.nsrun(ns["inside"], ["ip", "addr", "add", PEER_LAN + "/32", "dev", "lo"])
    h.nsrun(ns["nat"], ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
    nat_rules(ns["nat"], NAT_ADDR, FIRST_PORTS)
    return ns


@pytest.fixture(params=["port", "address"])
def setup(request):
    """A fresh topology per case: "port" moves the mapping to other ports
    (peers without MOBIKE: the implicit update), "address" to another public
    address (MOBIKE)."""
    ike.require_ike()
    if h.run(["which", "nft", "conntrack"], check=False).returncode != 0:
        pytest.fail("nft and conntrack are needed (deploy/setup-host.sh --ike)")
    change = request.param
    mobike = "yes" if change == "address" else "no"
    topo = h.Topology()
    gateways, charons = [], []
    try:
        ns = build(topo)
        gw = h.Gateway("gw1", ns["gw1"], topo.tag)
        gateways.append(gw)
        gw.start()
        ike.configure_ike_gateway(gw, "gw1-lan", h.GW1_LAN + "/24", "gw1-wan",
                                  h.GW1_WAN + "/24", [("192.168.2.0/24", NAT_ADDR)])
        c_gw = ike.Charon("gw1", ns["gw1"], gw.workdir, "esgw", esgw_socket=gw.socket,
                          settings=SETTINGS)
        c_peer = ike.Charon("peer", ns["inside"], gw.workdir, "libipsec", settings=SETTINGS)
        charons += [c_gw, c_peer]
        c_gw.start(ike.swanctl_conf(
            h.GW1_WAN, "%any", {"net": ("192.168.1.0/24", "192.168.2.0/24", "")},
            local_id=GW_ID, remote_id=PEER_ID, extra_conn="mobike = %s" % mobike))
        c_peer.start(ike.swanctl_conf(
            INSIDE_ADDR, h.GW1_WAN, {"net": ("192.168.2.0/24", "192.168.1.0/24", "")},
            local_id=PEER_ID, remote_id=GW_ID,
            extra_conn="mobike = %s\n    dpd_delay = 2s" % mobike))
        yield {"ns": ns, "gw": gw, "charon": c_gw, "peer": c_peer, "change": change}
    finally:
        for c in charons:
            print(c.log_text(250))
            c.stop()
        problems = h.stop_all(gateways, topo)
    assert not problems, "; ".join(problems)


def esgw_sas(gw):
    return {sa["spi"]: sa for sa in ike.ike_owned(gw)}


def outbound(sas):
    return [sa for sa in sas.values() if sa["direction"] == "out"][0]


def streams(setup, port):
    ns = setup["ns"]
    return [h.Stream("h1->peer", ns["h1"], h.H1_ADDR, ns["inside"], PEER_LAN, port, rate=RATE),
            h.Stream("peer->h1", ns["inside"], PEER_LAN, ns["h1"], h.H1_ADDR, port + 1,
                   rate=RATE)]


def test_nat_mapping_change_moves_sas_in_place(setup):
    gw, c, peer, ns = setup["gw"], setup["charon"], setup["peer"], setup["ns"]
    res = peer.swanctl("--initiate", "--child", "net", check=False, timeout=90)
    assert res.returncode == 0, "initiate failed:\n%s%s" % (res.stdout[-2000:], res.stderr)
    h.wait_for(lambda: c.established() and peer.established(), 30, 0.3, "both charons up")
    spis = c.spis()
    want = {s for pair in spis for s in pair}
    h.wait_for(lambda: set(esgw_sas(gw)) == want, 20, 0.3, "esgw's SAs == charon's")
    before = esgw_sas(gw)
    out = outbound(before)
    assert out["udp_encap"] and FIRST_PORTS[0] <= out["udp_dport"] <= FIRST_PORTS[1], out
    # charon's MOBIKE compares the NAT-D payloads of a DPD with those of its
    # first DPD (not IKE_SA_INIT's, which ran on port 500): let the idle
    # peer send one before the mapping changes, as any long-lived peer has.
    h.wait_for(lambda: peer.grep_log("sending DPD request"), 30, 0.3, "the peer's first DPD")
    h.ping_until_ok(ns["h1"], PEER_LAN)

    ss = streams(setup, 7400)
    try:
        h.wait_for(lambda: outbound(esgw_sas(gw))["packets"] > out["packets"] + 2 * RATE,
                   20, 0.2, "the stream through the tunnel")
        seq_before = outbound(esgw_sas(gw))["seq_out"]
        changed_at = time.monotonic()
        new_addr = NAT_ADDR2 if setup["change"] == "address" else NAT_ADDR
        nat_rules(ns["nat"], new_addr, NEXT_PORTS)
        h.nsrun(ns["nat"], ["conntrack", "-F"], check=False)

        def moved():
            sas = esgw_sas(gw)
            o = outbound(sas)
            return set(sas) == want and NEXT_PORTS[0] <= o["udp_dport"] <= NEXT_PORTS[1] and o
        moved_out = h.wait_for(moved, 60, 0.2, "esgw's SAs moved to the new NAT mapping")
        moved_after = time.monotonic() - changed_at
        tunnel = [t for t in gw.ctl("show", "tunnels")["tunnels"] if t.get("owner") == "ike"][0]
        assert tunnel["remote"] == new_addr, tunnel
        # traffic over the moved SAs, both ways, before the streams stop
        h.wait_for(lambda: outbound(esgw_sas(gw))["seq_out"] > moved_out["seq_out"] + RATE,
                   20, 0.2, "outbound over the moved SA")
        time.sleep(1.0)
    finally:
        results = [s.stop() for s in ss]
    after = esgw_sas(gw)
    assert set(after) == want and c.spis() == spis and peer.spis() == {
        (o, i) for i, o in spis}, (after.keys(), c.spis(), peer.spis())
    for spi, sa in after.items():  # same esgw SAs, state carried on
        assert sa["id"] == before[spi]["id"] and sa["packets"] > before[spi]["packets"], sa
        assert sa["drops"]["auth_failed"] == 0 and sa["drops"]["replay"] == 0, sa
    assert outbound(after)["seq_out"] > seq_before > 0
    for r in results:
        assert r["received"] > 0 and r["reordered"] == 0, r
    moves = c.grep_log("moved in place")
    assert len(moves) >= 2, "no update_sa reached esgw"
    assert not c.grep_log("CREATE_CHILD_SA") and not peer.grep_log("CREATE_CHILD_SA")  # no rekey
    assert c.grep_log("remote endpoint changed")
    mobike = bool(peer.grep_log("initiating MOBIKE update"))
    assert mobike == (setup["change"] == "address")  # the path each case is built for
    path = "MOBIKE UPDATE_SA_ADDRESSES" if mobike else "the implicit NAT-T update"
    print("NAT %s change: SAs moved in place after %.1f s via %s; lost %s; longest gap %s" % (
        setup["change"], moved_after, path, {r["name"]: r["lost"] for r in results},
        {r["name"]: round(r["max_gap"], 2) for r in results}))
    print("".join(moves))
