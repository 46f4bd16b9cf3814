# SPDX-License-Identifier: BSD-3-Clause
"""The configuration of a hub with many route-based tunnels between the two
gateways of the standard topology (h1 -- gw1 -- gw2 -- h2), as `esgwctl -f`
lines: tunnel i (1..n) carries 10.A.B.0/24 (h1's side, A.B = i) <->
10.(128+A).B.0/24 (h2's side), with AES-GCM-128 SAs of keys of its own.
gw1's SAs are 2i-1 (out, SPI 0x100000+i) and 2i (in, SPI 0x200000+i); gw2
mirrors them. Used by test_hub.py and bench/scale_commands.py."""

import hashlib

WAN = {"gw1": ("192.168.3.1", "192.168.3.2"), "gw2": ("192.168.3.2", "192.168.3.1")}
LAN_PEER = {"gw1": "192.168.1.1", "gw2": "192.168.2.1"}  # h1, h2


def net(i, far):
    """The /24 of tunnel i on h1's side (far False) or h2's side (far True)."""
    a, b = i >> 8, i & 255
    return "10.%d.%d.0/24" % (a + (128 if far else 0), b)


def host(i, far):
    """An address of that /24 (h1 or h2 holds it for traffic)."""
    return net(i, far).replace(".0/24", ".1")


def keys(i, spi):
    d = hashlib.sha256(b"esgw hub %d %d" % (i, spi)).hexdigest()
    return d[:32], d[32:40]


def spis(i):
    return 0x100000 + i, 0x200000 + i


def sa_lines(side, i, worker=None):
    """The two `sa add` lines of tunnel i on one side (out first); on the
    given crypto worker, or (None) where esgw-ctld puts them."""
    gw1_out, gw1_in = spis(i)
    out_spi, in_spi = (gw1_out, gw1_in) if side == "gw1" else (gw1_in, gw1_out)
    ids = (2 * i - 1, 2 * i) if side == "gw1" else (2 * i, 2 * i - 1)
    lines = []
    for sa_id, spi in zip(ids, (out_spi, in_spi)):
        key, salt = keys(i, spi)
        lines.append("sa add %d spi %d alg aes-gcm-128 crypto-key %s salt %s%s" % (
            sa_id, spi, key, salt, "" if worker is None else " worker %d" % worker))
    return lines, ids


def tunnel_lines(side, i, worker=None):
    """sa add x2, tunnel add, route add of tunnel i."""
    lines, (sa_out, sa_in) = sa_lines(side, i, worker)
    local, remote = WAN[side]
    lines.append("tunnel add hub%d local %s remote %s sa-out %d sa-in %d" % (
        i, local, remote, sa_out, sa_in))
    lines.append("route add %s tunnel hub%d" % (net(i, far=(side == "gw1")), i))
    return lines


def lines(side, first, last, worker=None):
    """Tunnels first..last of one side, their SAs on worker (None: where
    esgw-ctld puts them)."""
    out = []
    for i in range(first, last + 1):
        out += tunnel_lines(side, i, worker)
    return out


def lan_route(side):
    """The local side's /9 of tunnel networks, to its host."""
    return "route add %s via %s" % ("10.0.0.0/9" if side == "gw1" else "10.128.0.0/9",
                                    LAN_PEER[side])


def write(path, text_lines):
    """A batch file only its owner can read (it holds keys)."""
    import os
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(text_lines) + "\n")


def delete_lines(side, first, last):
    """What removes tunnels first..last of one side (route, tunnel, SAs)."""
    out = []
    for i in range(first, last + 1):
        _, ids = sa_lines(side, i)
        out += ["route del %s" % net(i, far=(side == "gw1")), "tunnel del hub%d" % i,
                "sa del %d" % ids[0], "sa del %d" % ids[1]]
    return out


if __name__ == "__main__":
    # bench/run.sh: scale_config.py add|del SIDE FIRST LAST [WORKER] > FILE (esgwctl -f)
    import sys
    verb, side, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if verb == "add":
        print("\n".join(lines(side, first, last, int(sys.argv[5]) if len(sys.argv) > 5 else None)))
    else:
        print("\n".join(delete_lines(side, first, last)))
