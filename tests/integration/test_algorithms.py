# SPDX-License-Identifier: BSD-3-Clause
"""Every algorithm through two esgw gateways (h1 -- gw1 -- gw2 -- h2), ESN on
in one direction and off in the other, so each algorithm's encap meets its own
decap in a real dataplane both ways. (Byte-exact agreement with scapy, both
directions and around 2^32, is in the unit vectors: tests/unit/esp_vectors.h.)
Also: `sa add` refuses an unsupported algorithm or key length, and a hard
packet lifetime stops an SA with sa_expired drops."""

import pytest

import esgw_harness as h
import hi_topology as hi


@pytest.mark.parametrize("alg", sorted(hi.ALG_KEYS))
def test_algorithm_both_ways(alg):
    h.require_root_and_binaries()
    with hi.gateway_pair() as (ns, gw1, gw2):
        # SA 10 carries gw1 -> gw2 with ESN, SA 20 gw2 -> gw1 without.
        hi.configure(gw1, "gw1", alg, out_extra=("esn", "on"))
        hi.configure(gw2, "gw2", alg, in_extra=("esn", "on"))
        h.ping_until_ok(ns["h1"], h.H2_ADDR)
        res = h.ping(ns["h2"], h.H1_ADDR, count=5)
        assert res.returncode == 0, res.stdout
        for gw in (gw1, gw2):
            sas = {s["id"]: s for s in gw.ctl("show", "sa")["sas"]}
            assert sas[10]["algorithm"] == alg and sas[10]["esn"] is True
            assert sas[20]["esn"] is False
            assert sas[10]["packets"] > 0 and sas[20]["packets"] > 0
            drops = gw.ctl("show", "stats")["drops"]
            assert drops.get("auth_failed", 0) == 0 and drops.get("replay", 0) == 0
            gw.assert_no_restarts()


def test_refused_and_expired():
    h.require_root_and_binaries()
    with hi.gateway_pair() as (ns, gw1, gw2):
        # Unsupported algorithm and wrong key lengths: refused by esgwctl,
        # and by esgw-ctld when a client skips esgwctl's checks (key length).
        r = gw1.ctl_raw("sa", "add", 50, "spi", 5000, "alg", "aes-ctr-128", "crypto-key", "00" * 16)
        assert r.returncode != 0 and "unknown algorithm" in r.stderr
        r = gw1.ctl_raw(*hi.sa_args(51, 5001, "aes-gcm-256")[:-4], "crypto-key", "00" * 16,
                        "salt", "00" * 4)
        assert r.returncode != 0 and "aes-gcm-256 needs a 32-byte crypto-key" in r.stderr
        r = gw1.ctl_raw("sa", "add", 52, "spi", 5002, "alg", "aes-cbc-128-sha512-256",
                        "crypto-key", "00" * 16, "integ-key", "00" * 20)
        assert r.returncode != 0 and "64-byte integ-key" in r.stderr
        r = gw1.ctl_raw(*hi.sa_args(53, 5003, "aes-gcm-128"), "lifetime-soft-packets", 10,
                        "lifetime-hard-packets", 5)
        assert r.returncode != 0 and "must be below" in r.stderr
        r = gw1.ctl_raw(*hi.sa_args(54, 5004, "aes-gcm-128"), "replay-window", 8192)
        assert r.returncode != 0

        # gw1 -> gw2 SA with a hard limit of 6 packets, soft at 3.
        hi.configure(gw1, "gw1", "chacha20-poly1305",
                     out_extra=("lifetime-soft-packets", 3, "lifetime-hard-packets", 6,
                                "lifetime-hard-seconds", 3600))
        hi.configure(gw2, "gw2", "chacha20-poly1305")
        sa = gw1.sa(10)
        assert sa["lifetime_hard"] == {"bytes": 0, "packets": 6, "seconds": 3600}
        h.ping(ns["h1"], h.H2_ADDR, count=10, timeout=30)
        sa = h.wait_for(lambda: (lambda s: s if s["hard_expired"] else None)(gw1.sa(10)),
                        10, 0.5, "SA 10 hard-expired")
        assert sa["soft_expired"] and sa["packets"] == 6
        assert sa["drops"]["sa_expired"] >= 1
        assert gw1.total_drop("sa_expired") >= 1
