# SPDX-License-Identifier: BSD-3-Clause
"""A port that falls behind pushes back instead of dropping (rxtx/tx_hold.c).

gw1's WAN is a memif server; its peer, DPDK's testpmd in rxonly mode, takes
the frames. Plain IP routed from h1 to the WAN through a static neighbour:
- with the peer running, every frame goes out and nothing is held or lost;
- with the peer stopped (SIGSTOP), its ring fills and the port refuses
  frames: rxtx holds them, and after 10 ms without the port taking anything
  gives them up, once (`tx_stalls` 1), counting them as `tx_failed`; every
  frame the router sent to the port is either sent or counted;
- with the peer running again, the port takes frames again at once.
Counts only: nothing here depends on timing."""
import os
import signal
import subprocess
import time

import pytest

from esgw_harness import (GW1_LAN, H1_ADDR, Gateway, Topology, nsrun,
                          require_root_and_binaries, stop_all, wait_for)

TESTPMD = "/usr/bin/dpdk-testpmd"
PEER_MAC = "02:00:00:00:03:02"
DST_NET, DST = "10.9.0.0/16", "10.9.0.1"


def counters(gw, role):
    for p in gw.ctl("show", "stats")["processes"]:
        if p.get("role") == role:
            return p["counters"]
    raise AssertionError("no %s in show stats" % role)


def rxtx_counters(gw):
    return counters(gw, "rxtx")


def router_counters(gw):
    return counters(gw, "router")


def send_udp(ns, count):
    script = ("import socket\n"
              "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
              "for i in range(%d):\n"
              "    s.sendto(b'x' * 64, (%r, 9))\n" % (count, DST))
    nsrun(ns, ["/usr/bin/python3", "-c", script])


def start_peer(sock, tag):
    """testpmd as the memif client of gw1's WAN, taking every frame."""
    # Two lcores: the main one and one forwarding (taking) the frames.
    cmd = [TESTPMD, "-l", "0,1", "--no-pci", "-m", "128", "--file-prefix", tag + "pmd",
           "--vdev", "net_memif0,role=client,socket=%s,socket-abstract=no,id=0,rsize=10" % sock,
           "--", "--forward-mode=rxonly", "--auto-start", "--no-mlockall",
           "--total-num-mbufs=4096"]
    # Non-interactive testpmd runs until its standard input says so.
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def test_full_port_holds_then_gives_up_once():
    require_root_and_binaries()
    if not os.access(TESTPMD, os.X_OK):
        pytest.skip("dpdk-testpmd (Debian's dpdk-dev) is not installed")
    topo = Topology()
    gateways, peer = [], None
    try:
        h1, gwns = topo.add_ns("h1"), topo.add_ns("gw1")
        topo.add_veth(h1, "h1-eth0", gwns, "gw1-lan")
        topo.addr(h1, "h1-eth0", H1_ADDR + "/24")
        topo.route(h1, "default", "via", GW1_LAN)
        gw = Gateway("gw1", gwns, topo.tag)
        gateways.append(gw)
        gw.start()
        sock = os.path.join(gw.workdir, "wan.sock")
        gw.ctl("interface", "add", "lan", "net_af_packet0,iface=gw1-lan")
        gw.ctl("interface", "address", "add", "lan", GW1_LAN + "/24")
        gw.ctl("interface", "add", "wan", "net_memif0,role=server,socket=%s,"
               "socket-abstract=no,id=0" % sock)
        gw.ctl("interface", "address", "add", "wan", "192.168.3.1/24")
        gw.ctl("neighbor", "add", "wan", "192.168.3.2", PEER_MAC)
        gw.ctl("route", "add", DST_NET, "via", "192.168.3.2")
        gw.wait_running()
        peer = start_peer(sock, topo.tag)

        # Peer running: everything goes out (the first frames may wait for the
        # memif connection: send until some arrive).
        def went_out(n0):
            send_udp(h1, 50)
            return rxtx_counters(gw)["tx_packets"] - n0 >= 50
        n0 = rxtx_counters(gw)["tx_packets"]
        wait_for(lambda: went_out(n0), timeout=30, interval=0.5, what="frames out of the memif WAN")
        before = rxtx_counters(gw)
        send_udp(h1, 500)
        wait_for(lambda: rxtx_counters(gw)["tx_packets"] - before["tx_packets"] >= 500,
                 timeout=20, what="500 frames out")
        after = rxtx_counters(gw)
        assert after.get("tx_failed", 0) == before.get("tx_failed", 0)
        assert after["tx_stalls"] == before["tx_stalls"]

        # Peer stopped: the ring (1,024 slots) fills, the rest is held, then
        # given up once.
        os.kill(peer.pid, signal.SIGSTOP)
        before, rbefore = rxtx_counters(gw), router_counters(gw)
        send_udp(h1, 3000)
        wait_for(lambda: rxtx_counters(gw)["tx_stalls"] > before["tx_stalls"], timeout=20,
                 what="the stopped peer's port given up")
        time.sleep(0.5)  # let the router finish with what h1 sent
        after, rafter = rxtx_counters(gw), router_counters(gw)
        assert after["tx_stalls"] - before["tx_stalls"] == 1, (before, after)
        assert after["tx_held"] > before["tx_held"], (before, after)
        failed = after.get("tx_failed", 0) - before.get("tx_failed", 0)
        sent = after["tx_packets"] - before["tx_packets"]
        routed = rafter["tx_packets"] - rbefore["tx_packets"]
        assert failed > 0 and sent <= 1024, (before, after)
        assert sent + failed == routed, (sent, failed, routed)

        # Peer running again: the port takes frames at once, nothing more lost.
        os.kill(peer.pid, signal.SIGCONT)
        before = rxtx_counters(gw)
        n0 = before["tx_packets"]
        wait_for(lambda: went_out(n0), timeout=30, interval=0.5, what="frames out again")
        after = rxtx_counters(gw)
        assert after.get("tx_failed", 0) == before.get("tx_failed", 0), (before, after)
    finally:
        if peer is not None:
            os.kill(peer.pid, signal.SIGCONT)
            peer.kill()
            peer.wait()
        problems = stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)
