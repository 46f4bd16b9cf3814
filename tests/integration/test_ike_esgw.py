# SPDX-License-Identifier: BSD-3-Clause
"""esgw + charon against esgw + charon: no NAT, so raw ESP (no UDP), and two
CHILD_SAs with different traffic selectors, the fourth seed report's
`tunnel 2 ... protocol tcp` as a TCP-only second child, which the plugin
places on another crypto worker than the first. The plugin also refuses to
load into a charon of another strongSwan version."""

import os

import pytest

import esgw_harness as h
import ike_harness as ike

CHILDREN_GW1 = {"net": ("192.168.1.0/24", "192.168.2.0/24", ""),
                "tcp": ("192.168.1.0/24[tcp]", "192.168.2.0/24[tcp]", "")}
CHILDREN_GW2 = {"net": ("192.168.2.0/24", "192.168.1.0/24", ""),
                "tcp": ("192.168.2.0/24[tcp]", "192.168.1.0/24[tcp]", "")}
# The fourth seed report's proposals (aes256/sha1, modp2048) for IKE and ESP.
IKE_PROPOSALS = "aes256-sha1-modp2048"
ESP_PROPOSALS = "aes256-sha1-modp2048"


@pytest.fixture(scope="module")
def pair():
    ike.require_ike()
    charons = []

    def prepare(ns):
        pass

    with h.gateway_pair(workers=2, prepare=prepare) as (ns, gw1, gw2):
        try:
            ike.configure_ike_gateway(gw1, "gw1-lan", h.GW1_LAN + "/24", "gw1-wan",
                                      h.GW1_WAN + "/24", [("192.168.2.0/24", h.GW2_WAN)])
            ike.configure_ike_gateway(gw2, "gw2-lan", h.GW2_LAN + "/24", "gw2-wan",
                                      h.GW2_WAN + "/24", [("192.168.1.0/24", h.GW1_WAN)])
            c1 = ike.Charon("gw1", ns["gw1"], gw1.workdir, "esgw", esgw_socket=gw1.socket)
            c2 = ike.Charon("gw2", ns["gw2"], gw2.workdir, "esgw", esgw_socket=gw2.socket)
            charons += [c1, c2]
            c1.start(ike.swanctl_conf(h.GW1_WAN, h.GW2_WAN, CHILDREN_GW1, IKE_PROPOSALS,
                                      ESP_PROPOSALS))
            c2.start(ike.swanctl_conf(h.GW2_WAN, h.GW1_WAN, CHILDREN_GW2, IKE_PROPOSALS,
                                      ESP_PROPOSALS))
            for child in ("net", "tcp"):
                res = c1.swanctl("--initiate", "--child", child, check=False, timeout=90)
                assert res.returncode == 0, res.stdout[-2000:]
            h.wait_for(lambda: len(c1.children()) == 2 and len(c2.children()) == 2, 30, 0.3,
                       "two CHILD_SAs on both sides")
            h.wait_for(lambda: len(ike.ike_owned(gw1)) == 4 and len(ike.ike_owned(gw2)) == 4,
                       20, 0.3, "four IKE SAs in each esgw")
            yield {"ns": ns, "gw1": gw1, "gw2": gw2, "c1": c1, "c2": c2}
        finally:
            for c in charons:
                print(c.log_text())
                c.stop()


def sas_by_child(gw, charon):
    """{child name: [esgw SA dicts]} by the SPIs charon shows."""
    esgw = {sa["spi"]: sa for sa in ike.ike_owned(gw)}
    out = {}
    for c in charon.children():
        out[c["name"]] = [esgw[int(c["spi-in"], 16)], esgw[int(c["spi-out"], 16)]]
    return out


def test_raw_esp_two_children_on_two_workers(pair):
    for gw, c in ((pair["gw1"], pair["c1"]), (pair["gw2"], pair["c2"])):
        by_child = sas_by_child(gw, c)
        assert set(by_child) == {"net", "tcp"}, by_child
        for sas in by_child.values():
            for sa in sas:
                assert not sa["udp_encap"], sa  # no NAT between them: plain ESP
                assert sa["algorithm"] == "aes-cbc-256-sha1-96", sa
            assert len({sa["worker"] for sa in sas}) == 1, sas  # a child stays together
        workers = {name: sas[0]["worker"] for name, sas in by_child.items()}
        assert workers["net"] != workers["tcp"], workers
        policies = {p["protocol"]: p for p in gw.ctl("show", "policies")["policies"]
                    if p.get("owner") == "ike"}
        assert set(policies) == {"tcp", "any"}, policies
        # the TCP-only child is more specific: evaluated first
        assert policies["tcp"]["priority"] < policies["any"]["priority"], policies


def test_tcp_goes_through_the_tcp_child_the_rest_through_net(pair):
    ns, gw1 = pair["ns"], pair["gw1"]
    before = {name: sas[1]["bytes"] for name, sas in sas_by_child(gw1, pair["c1"]).items()}
    payload = os.urandom(300000)
    sent, got, n, _ = h.tcp_transfer(ns["h1"], ns["h2"], h.H2_ADDR, payload, port=5301)
    assert sent == got and n == len(payload)
    h.ping_until_ok(ns["h1"], h.H2_ADDR)
    after = {name: sas[1]["bytes"] for name, sas in sas_by_child(gw1, pair["c1"]).items()}
    assert after["tcp"] - before["tcp"] >= len(payload), (before, after)
    assert 0 < after["net"] - before["net"] < len(payload) // 10, (before, after)
    for gw in (gw1, pair["gw2"]):
        for sa in ike.ike_owned(gw):
            assert sa["drops"]["policy_mismatch"] == 0 and sa["drops"]["auth_failed"] == 0, sa


def test_refuses_another_strongswan_version(pair, tmp_path):
    status = tmp_path / "status"
    status.write_text("Package: libstrongswan\nStatus: install ok installed\n"
                      "Version: 5.9.7-1\n\n")
    c = ike.Charon("other", pair["ns"]["gw1"], str(tmp_path), "esgw",
                   esgw_socket=pair["gw1"].socket,
                   settings="plugins { kernel-esgw { dpkg_status = %s } }" % status)
    try:
        c.start(ike.swanctl_conf(h.GW1_WAN, h.GW2_WAN, {}))
        lines = c.grep_log("kernel-esgw: built for strongSwan")
        assert lines and "5.9.8" in lines[0] and "5.9.7" in lines[0], c.log_text()
    finally:
        c.stop()
