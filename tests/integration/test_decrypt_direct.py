# SPDX-License-Identifier: BSD-3-Clause
"""Decrypted packets straight from the crypto worker to rxtx (router/egress.c,
crypto-worker/egress.c): once the router has forwarded a decrypted packet
between two inner addresses, the SA's worker sends the next ones of that pair
out of the LAN port itself. Through h1 -- gw1 == gw2 -- h2: gw2 decrypts
h1 -> h2. The way is taken, nothing is lost or reordered when it is invalidated
again and again (configuration pushes) and taken anew, a TTL that runs out
still gets its ICMP error, and a configured policy keeps every decrypted
packet in the router (policies match more than the addresses)."""

import time

import pytest

import esgw_harness as h

ALG = "aes-gcm-128"
PORT = 47000
RATE = 2000


@pytest.fixture(scope="module")
def pair():
    h.require_root_and_binaries()
    with h.gateway_pair() as (ns, gw1, gw2):
        h.configure_gw1(gw1, ALG)
        h.configure_gw2(gw2, ALG)
        h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=30)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2}


def direct(gw):
    return gw.counters("crypto").get("decrypted_direct", 0)


def stream(ns, seconds, during=None):
    """h1 -> h2 for seconds, during() called meanwhile; what the receiver counted."""
    s = h.Stream("h1->h2", ns["h1"], h.H1_ADDR, ns["h2"], h.H2_ADDR, PORT, RATE)
    try:
        end = time.time() + seconds
        if during is not None:
            during()
        time.sleep(max(0.0, end - time.time()))
        return s.stop()
    finally:
        s.kill()


def test_decrypted_packets_go_straight_to_rxtx(pair):
    gw2 = pair["gw2"]
    before, written = direct(gw2), gw2.counters("router").get("egress_entries_written", 0)
    r = stream(pair["ns"], 3)
    assert r["lost"] == 0 and r["reordered"] == 0 and r["duplicates"] == 0, r
    # All but the first few of each pair's packets (and any the worker saw
    # before the router's entry) go direct.
    assert direct(gw2) - before >= r["received"] * 0.8, (direct(gw2) - before, r)
    assert gw2.counters("router").get("egress_entries_written", 0) > written


def test_order_holds_while_the_way_is_invalidated(pair):
    """Every configuration push invalidates what the router wrote down: the
    next packets go through the router, then direct again. rxtx holds a
    routed packet until the worker's direct ones before it are out, and the
    worker goes direct only once the routed ones are out."""
    gw2 = pair["gw2"]
    invalidations = gw2.counters("router").get("egress_invalidations", 0)
    before = direct(gw2)

    def pushes():
        for i in range(20):
            gw2.ctl("route", "add", "10.77.%d.0/24" % i, "tunnel", "t0")
            time.sleep(0.05)
        for i in range(20):
            gw2.ctl("route", "del", "10.77.%d.0/24" % i)
            time.sleep(0.05)

    r = stream(pair["ns"], 5, pushes)
    assert r["lost"] == 0 and r["reordered"] == 0 and r["duplicates"] == 0, r
    assert gw2.counters("router").get("egress_invalidations", 0) >= invalidations + 40
    assert direct(gw2) - before >= r["received"] * 0.5, (direct(gw2) - before, r)


def test_ttl_running_out_in_the_tunnel_gets_its_icmp_error(pair):
    """TTL 2 from h1: gw1 makes it 1, gw2 decrypts it and must not forward it,
    though packets of the same addresses go direct: the router drops it
    (ttl_expired) and sends the time exceeded error."""
    ns, gw2 = pair["ns"], pair["gw2"]
    stream(ns, 1)  # the way h1 -> h2 is written down
    errors = gw2.counters("router").get("icmp_errors_sent", 0)
    expired = gw2.ctl("show", "stats")["drops"].get("ttl_expired", 0)
    h.run(["ip", "netns", "exec", ns["h1"], "ping", "-c", "3", "-i", "0.2", "-W", "1", "-t", "2",
           h.H2_ADDR], check=False)
    h.wait_for(lambda: gw2.ctl("show", "stats")["drops"].get("ttl_expired", 0) >= expired + 3,
               10, 0.2, "gw2: three ttl_expired drops")
    assert gw2.counters("router").get("icmp_errors_sent", 0) >= errors + 3


def test_a_policy_keeps_decrypted_packets_in_the_router(pair):
    gw2 = pair["gw2"]
    gw2.ctl("policy", "add", "open", "dst", "192.168.9.9/32", "action", "bypass")
    try:
        before = direct(gw2)
        r = stream(pair["ns"], 2)
        assert r["lost"] == 0 and r["reordered"] == 0, r
        assert direct(gw2) == before
    finally:
        gw2.ctl("policy", "del", "open")
    r = stream(pair["ns"], 2)
    assert r["lost"] == 0 and r["reordered"] == 0, r
    assert direct(gw2) > before
