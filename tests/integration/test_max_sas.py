# SPDX-License-Identifier: BSD-3-Clause
"""More SAs than the default 65,536 (issue 13): both gateways of the standard
topology run with esgw-ctld --max-sas 70000 and load, in one `esgwctl -f`
batch each, 32,767 route-based tunnels (scale_config.py's addressing holds
that many) with 2,000 SAs without a tunnel among them, 67,534 SAs in all, so
the tunnels after the spare SAs have runtime slots above 65,535 in every
process (ctld, esgw-rxtx's shared table, the router, the crypto workers).
Traffic passes the first, the first above 65,535 and the last tunnel both
ways, the other gateway being the peer that checks it; filling the table
gives the API error that names --max-sas; a --max-sas the host's hugepages
cannot hold is refused at start with the memory it needs."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import scale_config as sc  # noqa: E402
import test_hub as hub_test  # noqa: E402

MAX_SAS = 70000
N = 32767               # tunnels: the most scale_config's /24s allow
BEFORE_SPARE = 32000    # tunnels before the spare SAs
SPARE = 2000            # SAs without a tunnel, between them
PROBED = (1, BEFORE_SPARE + 1, N)
SPARE_ID = 100001       # ids (and SPI 0x300000 + k) of the spare SAs
CAP = 1 << 24           # ESGW_MAX_SAS_CAP


def spare_lines(first, last):
    out = []
    for k in range(first, last + 1):
        key, salt = sc.keys(k, 0x300000 + k)
        out.append("sa add %d spi %d alg aes-gcm-128 crypto-key %s salt %s" % (
            SPARE_ID + k, 0x300000 + k, key, salt))
    return out


def host_addresses(ns):
    for i in PROBED:
        h.nsrun(ns["h1"], ["ip", "addr", "add", sc.host(i, False) + "/32", "dev", "h1-eth0"])
        h.nsrun(ns["h2"], ["ip", "addr", "add", sc.host(i, True) + "/32", "dev", "h2-eth0"])


def slot_of(sas, sa_id):
    return sas[sa_id]["slot"]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    h.require_root_and_binaries()
    tmp = str(tmp_path_factory.mktemp("max_sas"))
    with h.gateway_pair(workers=2, prepare=host_addresses,
                        ctld_args=["--max-sas", str(MAX_SAS)]) as (ns, gw1, gw2):
        for gw in (gw1, gw2):
            lines = hub_test.interface_lines(gw.name) + [sc.lan_route(gw.name)] + \
                sc.lines(gw.name, 1, BEFORE_SPARE) + spare_lines(0, SPARE - 1) + \
                sc.lines(gw.name, BEFORE_SPARE + 1, N)
            res = hub_test.load(gw, lines, tmp)
            assert res.returncode == 0, res.stderr
        for gw in (gw1, gw2):
            gw.wait_running(timeout=300)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2, "tmp": tmp}


def test_rxtx_gets_max_sas_and_its_memory(big):
    for gw in (big["gw1"], big["gw2"]):
        rxtx = [argv for _, argv in gw.dataplane_processes()
                if os.path.basename(argv[0]) == "esgw-rxtx"]
        assert rxtx, gw.dataplane_processes()
        argv = rxtx[0]
        assert argv[argv.index("--max-sas") + 1] == str(MAX_SAS), argv
        # 256 MiB for the default 65,536 slots, 896 bytes more per slot above.
        extra = ((MAX_SAS - 65536) * 896 + (1 << 20) - 1) >> 20
        assert argv[argv.index("-m") + 1] == str(256 + extra), argv


def test_more_than_65536_sas_configured(big):
    for gw in (big["gw1"], big["gw2"]):
        sas = {sa["id"]: sa for sa in gw.ctl("show", "sa")["sas"]}
        assert len(sas) == 2 * N + SPARE
        assert len(gw.ctl("show", "tunnels")["tunnels"]) == N
        assert max(sa["slot"] for sa in sas.values()) == 2 * N + SPARE - 1
    sas = {sa["id"]: sa for sa in big["gw1"].ctl("show", "sa")["sas"]}
    for i in (BEFORE_SPARE + 1, N):
        assert slot_of(sas, 2 * i - 1) > 65535 and slot_of(sas, 2 * i) > 65535, sas[2 * i]


def test_traffic_through_slots_above_65535(big):
    hub_test.traffic_both_ways(big, PROBED)
    for gw in (big["gw1"], big["gw2"]):
        sas = {sa["id"]: sa for sa in gw.ctl("show", "sa")["sas"]}
        for i in PROBED:
            for sa_id in (2 * i - 1, 2 * i):
                assert sas[sa_id]["packets"] > 0, (gw.name, i, sas[sa_id])
                assert all(v == 0 for v in sas[sa_id]["drops"].values()), sas[sa_id]


def test_full_table_names_max_sas(big):
    """Last in the module: it fills gw1's table."""
    gw1 = big["gw1"]
    held = len(gw1.ctl("show", "sa")["sas"])
    path = os.path.join(big["tmp"], "fill.batch")
    sc.write(path, spare_lines(SPARE, SPARE + MAX_SAS - held - 1))
    res = h.run([h.find_binary("esgwctl"), "--socket", gw1.socket, "-f", path],
                check=False, timeout=600)
    assert res.returncode == 0, res.stderr
    assert len(gw1.ctl("show", "sa")["sas"]) == MAX_SAS
    res = gw1.ctl_raw(*spare_lines(SPARE + MAX_SAS, SPARE + MAX_SAS)[0].split())
    assert res.returncode == 1, res.stderr
    assert "all %d SA slots are in use" % MAX_SAS in res.stderr, res.stderr
    assert "--max-sas" in res.stderr, res.stderr
    assert len(gw1.ctl("show", "sa")["sas"]) == MAX_SAS
    hub_test.traffic_both_ways(big, (N,))  # and the gateway still works


def test_saved_slots_above_max_sas_refused_at_start(big, tmp_path):
    """gw1's saved configuration (70,000 SAs) with a --max-sas below its
    slots: esgw-ctld refuses to start and leaves the file as it is."""
    import shutil
    copy = str(tmp_path / "saved.pb")
    for suffix in ("", ".journal"):
        if os.path.exists(big["gw1"].config + suffix):
            shutil.copy(big["gw1"].config + suffix, copy + suffix)
    size = os.path.getsize(copy)
    err = h.ctld_refused(tmp_path, "--max-sas", "65536", "--config", copy)
    assert "in runtime slot %d: --max-sas 65536 is too small" % (MAX_SAS - 1) in err, err
    assert "--max-sas %d or more" % MAX_SAS in err, err
    # Not taken for damage: not moved aside, not replaced by an empty one
    # (the journal may have been compacted into it, which only adds).
    assert not os.path.exists(copy + ".bad") and os.path.getsize(copy) >= size


def hugepages_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Hugetlb:"):
                return int(line.split()[1]) // 1024
    return None


def test_max_sas_above_the_cap_refused(tmp_path):
    err = h.ctld_refused(tmp_path, "--max-sas", str(CAP + 1))
    assert "--max-sas must be 1..%d" % CAP in err, err


def test_max_sas_beyond_the_hugepages_refused_at_start(tmp_path):
    need = 256 + ((CAP - 65536) * 896 >> 20)
    have = hugepages_mib()
    if have is None or have >= need:
        pytest.skip("the host reserves %s MiB of hugepages: the cap's SAs fit" % have)
    err = h.ctld_refused(tmp_path, "--max-sas", str(CAP))
    assert "--max-sas %d needs %d MiB of hugepage memory" % (CAP, need) in err, err
    assert "the host reserves %d MiB" % have in err, err
