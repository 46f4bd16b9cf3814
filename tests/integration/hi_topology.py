# SPDX-License-Identifier: BSD-3-Clause
"""Two esgw gateways h1 -- gw1 -- gw2 -- h2 (esgw_harness) configured with any
algorithm of esgw's table and SA options (esn, lifetimes), for the algorithm,
ESN, lifetime and rekey tests. Namespaces are named hi<pid>n<k>-*."""

import contextlib
import hashlib

import esgw_harness as h

# enum esp_alg sizes (common/esp_algorithms.h): crypto key, salt, integrity key
ALG_KEYS = {
    "aes-gcm-128": (16, 4, 0), "aes-gcm-256": (32, 4, 0),
    "aes-cbc-128-sha1-96": (16, 0, 20), "aes-cbc-256-sha1-96": (32, 0, 20),
    "aes-cbc-128-sha256-128": (16, 0, 32), "aes-cbc-256-sha256-128": (32, 0, 32),
    "aes-cbc-128-sha512-256": (16, 0, 64), "aes-cbc-256-sha512-256": (32, 0, 64),
    "chacha20-poly1305": (32, 4, 0),
    "null-sha1-96": (0, 0, 20), "null-sha256-128": (0, 0, 32), "null-sha512-256": (0, 0, 64),
}


def key_hex(spi, what, length):
    """Deterministic, distinct per SPI and purpose: both gateways derive the
    same key for one SPI."""
    return hashlib.sha512(("%s-%d" % (what, spi)).encode()).hexdigest()[:2 * length]


def sa_args(sa_id, spi, alg, extra=()):
    klen, slen, ilen = ALG_KEYS[alg]
    args = ["sa", "add", sa_id, "spi", spi, "alg", alg]
    if klen:
        args += ["crypto-key", key_hex(spi, "crypto", klen)]
    if slen:
        args += ["salt", key_hex(spi, "salt", slen)]
    if ilen:
        args += ["integ-key", key_hex(spi, "integ", ilen)]
    return args + list(extra)


def configure(gw, side, alg, out_extra=(), in_extra=()):
    """The standard configuration of gw1 or gw2 with alg: SA 10 (spi 1000)
    carries gw1 -> gw2, SA 20 (spi 2000) gw2 -> gw1."""
    if side == "gw1":
        lan, lan_addr, wan, wan_addr = "gw1-lan", h.GW1_LAN, "gw1-wan", h.GW1_WAN
        local, remote, far = h.GW1_WAN, h.GW2_WAN, "192.168.2.0/24"
        out_id, out_spi, in_id, in_spi = 10, 1000, 20, 2000
    else:
        lan, lan_addr, wan, wan_addr = "gw2-lan", h.GW2_LAN, "gw2-wan", h.GW2_WAN
        local, remote, far = h.GW2_WAN, h.GW1_WAN, "192.168.1.0/24"
        out_id, out_spi, in_id, in_spi = 20, 2000, 10, 1000
    gw.ctl("interface", "add", "lan", "net_af_packet0,iface=%s" % lan)
    gw.ctl("interface", "address", "add", "lan", lan_addr + "/24")
    gw.ctl("interface", "add", "wan", "net_af_packet1,iface=%s" % wan)
    gw.ctl("interface", "address", "add", "wan", wan_addr + "/24")
    gw.ctl(*sa_args(out_id, out_spi, alg, out_extra))
    gw.ctl(*sa_args(in_id, in_spi, alg, in_extra))
    gw.ctl("tunnel", "add", "t0", "local", local, "remote", remote, "sa-out", out_id,
           "sa-in", in_id)
    gw.ctl("route", "add", far, "tunnel", "t0")
    gw.wait_running()
    gw.baseline = gw.process_snapshot()


# A second route-based tunnel t1 beside t0, so that each can sit on a crypto
# worker of its own: 192.168.10.0/24 (behind gw1) <-> 192.168.20.0/24 (behind
# gw2); gw1 sends with SA 11 (spi 1001) and receives with SA 21 (spi 2001).
H1_ADDR_B, GW1_LAN_B = "192.168.10.1", "192.168.10.2"
H2_ADDR_B, GW2_LAN_B = "192.168.20.1", "192.168.20.2"


def second_host_addresses(ns):
    """The hosts' addresses on t1's networks (a gateway_pair prepare step)."""
    h.nsrun(ns["h1"], ["ip", "addr", "add", H1_ADDR_B + "/24", "dev", "h1-eth0"])
    h.nsrun(ns["h2"], ["ip", "addr", "add", H2_ADDR_B + "/24", "dev", "h2-eth0"])


def add_second_tunnel(gw, side, alg):
    """t1 on gw1 or gw2 (already configured with t0), SAs with alg."""
    if side == "gw1":
        lan_addr, local, remote, far = GW1_LAN_B, h.GW1_WAN, h.GW2_WAN, "192.168.20.0/24"
        out_id, out_spi, in_id, in_spi = 11, 1001, 21, 2001
    else:
        lan_addr, local, remote, far = GW2_LAN_B, h.GW2_WAN, h.GW1_WAN, "192.168.10.0/24"
        out_id, out_spi, in_id, in_spi = 21, 2001, 11, 1001
    gw.ctl("interface", "address", "add", "lan", lan_addr + "/24")
    gw.ctl(*sa_args(out_id, out_spi, alg))
    gw.ctl(*sa_args(in_id, in_spi, alg))
    gw.ctl("tunnel", "add", "t1", "local", local, "remote", remote, "sa-out", out_id,
           "sa-in", in_id)
    gw.ctl("route", "add", far, "tunnel", "t1")


@contextlib.contextmanager
def two_tunnel_pair(alg, ctld_args=None):
    """gw1 and gw2 with tunnels t0 and t1 (SAs of alg), both carrying pings;
    yields {"ns", "gw1", "gw2"}; all torn down afterwards."""
    h.require_root_and_binaries()
    kwargs = {"ctld_args": ctld_args} if ctld_args else {}
    with h.gateway_pair(workers=2, prepare=second_host_addresses, **kwargs) as (ns, gw1, gw2):
        h.configure_gw1(gw1, alg)
        h.configure_gw2(gw2, alg)
        add_second_tunnel(gw1, "gw1", alg)
        add_second_tunnel(gw2, "gw2", alg)
        for gw in (gw1, gw2):
            gw.wait_running()
        h.ping_until_ok(ns["h1"], h.H2_ADDR)
        h.ping_until_ok(ns["h2"], h.H1_ADDR)
        h.nsrun(ns["h1"], ["ping", "-c", "1", "-W", "5", "-I", H1_ADDR_B, H2_ADDR_B],
                check=False)
        h.ping_until_ok(ns["h1"], H2_ADDR_B)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2}


def gateway_pair():
    """Started, unconfigured gw1 and gw2 in a fresh topology; all torn down."""
    return h.gateway_pair()
