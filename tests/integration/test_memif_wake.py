# SPDX-License-Identifier: BSD-3-Clause
"""A sleeping rxtx is woken by its memif peer (rxtx/memif_irq.c, port_watch.c),
and by a frame on an af_packet port, itself, without a helper thread.

h1 -- gw1 ==memif== gw2 -- h2: the gateways' WANs are a memif pair (gw1 the
server, gw2 the client), their LANs af_packet, one GCM tunnel. Counts, not
time:
- each rxtx puts its memif port in interrupt mode (its log says so);
- at rest, rxtx's threads wake a few times a second (its 100 ms safety
  timeout, ctld's statistics requests), not the 100-150 a second that its
  10 ms polls of a memif port took;
- pings through the tunnel 200 ms apart each reach a gw2 that rested since
  the last one: gw2's rxtx is woken by gw1 writing the memif ring's eventfd
  (`memif_wakeups`), and every ping is answered.
"""
import os
import stat
import time

from esgw_harness import (H2_ADDR, configure_gw1, configure_gw2, gateway_pair, ping,
                          ping_until_ok, require_root_and_binaries, thread_wakes)

ALG = "aes-gcm-128"
PINGS = 10


def rxtx_counter(gw, name):
    for p in gw.ctl("show", "stats")["processes"]:
        if p.get("role") == "rxtx":
            return p["counters"].get(name, 0)
    raise AssertionError("no rxtx in show stats")


def rxtx_pid(gw):
    return next(pid for pid, role in gw.processes().items() if role == "esgw-rxtx")


def test_memif_peer_wakes_a_resting_rxtx():
    require_root_and_binaries()
    with gateway_pair() as (ns, gw1, gw2):
        sock = os.path.join(gw1.workdir, "wan.sock")
        memif = "net_memif0,role=%s,socket=" + sock + ",socket-abstract=no,id=0,mac=%s"
        configure_gw1(gw1, ALG, wan_device=memif % ("server", "02:00:00:00:03:01"))
        configure_gw2(gw2, ALG, wan_device=memif % ("client", "02:00:00:00:03:02"))
        ping_until_ok(ns["h1"], H2_ADDR, timeout=30)  # memif connected, ARP done
        for gw in (gw1, gw2):
            assert "port 1: memif, woken by the peer while rxtx sleeps (interrupt mode)" \
                in gw.logs_text(lines=1000), gw.logs_text()

        time.sleep(1)  # past the last ping's packets
        pids = {gw.name: rxtx_pid(gw) for gw in (gw1, gw2)}
        before = {name: thread_wakes(pid) for name, pid in pids.items()}
        time.sleep(3)
        for name, pid in pids.items():
            after = thread_wakes(pid)
            rate = {t: (after[t] - before[name].get(t, 0)) / 3 for t in after}
            print(name, "rxtx wake-ups a second", rate)
            assert sum(rate.values()) < 40, "%s's rxtx woke %s a second" % (name, rate)

        woken = rxtx_counter(gw2, "memif_wakeups")
        result = ping(ns["h1"], H2_ADDR, count=PINGS)
        print(result.stdout)
        assert result.returncode == 0 and " 0% packet loss" in result.stdout, result.stdout
        woken = rxtx_counter(gw2, "memif_wakeups") - woken
        # One per echo request, unless it arrived while gw2 was awake for
        # its safety timeout or a statistics request.
        assert woken >= PINGS // 2, "gw2 woken by its memif %d times for %d pings" % (
            woken, PINGS)
        assert rxtx_counter(gw2, "port_wakeups") >= woken


def test_af_packet_frame_wakes_rxtx_itself():
    """h1 -- gw1 == gw2 -- h2 on af_packet ports. rxtx sleeps in ppoll() on
    its ports' sockets and its doorbell FIFO (esgw.bell in DPDK's runtime
    directory), not on a futex rung by a thread of its own that watched the
    ports: pings 200 ms apart each wake gw1's resting rxtx through its LAN
    socket (`port_wakeups`), and no other thread of rxtx wakes once per
    ping. Counts, not time."""
    require_root_and_binaries()
    with gateway_pair() as (ns, gw1, gw2):
        configure_gw1(gw1, ALG)
        configure_gw2(gw2, ALG)
        ping_until_ok(ns["h1"], H2_ADDR, timeout=30)
        for gw in (gw1, gw2):
            bell = "/var/run/dpdk/%s/esgw.bell" % gw.prefix
            assert stat.S_ISFIFO(os.stat(bell).st_mode), bell
        time.sleep(1)
        pid = rxtx_pid(gw1)
        names = [t.split("/")[0] for t in thread_wakes(pid)]
        assert "esgw-ports" not in names, names
        woken = rxtx_counter(gw1, "port_wakeups")
        before = thread_wakes(pid)
        result = ping(ns["h1"], H2_ADDR, count=PINGS)
        after = thread_wakes(pid)
        print(result.stdout)
        assert result.returncode == 0 and " 0% packet loss" in result.stdout, result.stdout
        woken = rxtx_counter(gw1, "port_wakeups") - woken
        assert woken >= PINGS // 2, "gw1's rxtx woken by a port %d times for %d pings" % (
            woken, PINGS)
        # The main thread and the control watcher (ctld's requests, a few
        # a second); DPDK's interrupt and multi-process threads: none.
        others = {t: after[t] - before.get(t, 0) for t in after
                  if not t.startswith(("esgw-rxtx/", "esgw-ctl"))}
        print("rxtx's other threads' wake-ups:", others)
        assert all(n < PINGS // 2 for n in others.values()), others
