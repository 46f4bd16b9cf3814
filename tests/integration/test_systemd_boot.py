# SPDX-License-Identifier: BSD-3-Clause
"""The units of deploy/systemd/ at run time, under systemd as PID 1.

A Debian 12 container (systemd-nspawn, systemd_container.py) with esgw
installed by deploy/install.sh --destdir is gateway gw1 of the standard
topology h1 -- gw1 -- gw2 -- h2: the container joins gw1's namespace, so its
ports are the veths to h1 and gw2. gw2 is a standalone esgw on the host
(esgw_harness.Gateway) and decrypts what the container's gateway sends. The
tests run in order on one container:

  1. `systemctl start esgw.target` starts hugepages, ctld, rxtx, router and
     worker 0, each only once the one it is ordered after is ready, none
     failing on the way; the API socket is 0660 and group esgw.
  2. esgwctl inside configures the tunnel; h1 pings h2 through both gateways.
  3. `workers set 2` starts esgw-crypto@1.service through sd-bus, `workers
     set 1` moves its SAs back and stops it, under a numbered stream that
     loses, reorders and duplicates nothing.
  4. `systemctl kill -s KILL` of esgw-crypto@0 and of esgw-rxtx: systemd
     restarts them, the router and the worker follow rxtx, ctld pushes the
     configuration again, traffic resumes, gw2 sees no replayed number.
  5. The CPU drop-ins set each process's affinity and its DPDK lcore; a
     drop-in for one worker instance overrides the template's.
  6. `systemctl reboot` inside and a new boot: esgw.target (enabled) comes
     up with the saved configuration; the SA's outbound sequence numbers
     continue above the floor persisted before, and gw2 accepts them.
  7. `systemctl stop esgw.target` leaves no esgw process, no hugepage file.

They are skipped (with the reason) only when no container can boot here.
"""

import os
import re
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402
import systemd_container as sc  # noqa: E402

ALG = "aes-gcm-128"
RATE = 1000
PORT = 7100
TARGET = "esgw.target"
HUGEPAGES = "esgw-hugepages.service"
CTLD = "esgw-ctld.service"
RXTX = "esgw-rxtx.service"
ROUTER = "esgw-router.service"
WORKER0 = "esgw-crypto@0.service"
WORKER1 = "esgw-crypto@1.service"
GATEWAY_UNITS = (HUGEPAGES, CTLD, RXTX, ROUTER, WORKER0)
# The installed drop-ins (deploy/systemd/*.d/10-cpu.conf): unit -> (CPU, lcore id).
PLACEMENT = {RXTX: (0, 1), ROUTER: (0, 2), WORKER0: (1, 10)}


@pytest.fixture(scope="module")
def sd():
    h.require_root_and_binaries()
    reason = sc.cannot_run_reason()
    if reason:
        pytest.skip("systemd tests: " + reason)
    rootfs = sc.cached_rootfs()
    topo = h.Topology()
    ct = gw1 = None
    gateways = []
    try:
        ns = h.build_standard(topo)
        ct = sc.Container(topo.tag, ns["gw1"])
        ct.prepare(rootfs)
        try:
            ct.boot()
        except sc.BootError:
            # Skipped only if systemd-nspawn cannot boot even a plain
            # container of the same tree: otherwise the failure is ours.
            why = sc.probe(rootfs, topo.tag)
            if why is None:
                raise
            pytest.skip("systemd tests: systemd-nspawn cannot boot a container here: " + why)
        gw1 = sc.SystemdGateway(ct, topo.tag)
        h.ACTIVE_GATEWAYS.append(gw1)
        gw2 = h.Gateway("gw2", ns["gw2"], topo.tag)
        gateways.append(gw2)
        gw2.start()
        h.configure_gw2(gw2, ALG)
        yield {"ns": ns, "ct": ct, "gw1": gw1, "gw2": gw2}
    finally:
        problems = []
        if gw1 in h.ACTIVE_GATEWAYS:
            h.ACTIVE_GATEWAYS.remove(gw1)
        if ct is not None:
            problems += ct.cleanup()
        problems += h.stop_all(gateways, topo)
    assert not problems, "unclean teardown: " + "; ".join(problems)


def wait_active(ct, units, timeout=60):
    h.wait_for(lambda: all(ct.active(u) == "active" for u in units), timeout, 0.3,
               "%s active" % ", ".join(units))


def monotonic(props, name):
    return int(props[name] or 0)


def traffic(ns, count=20):
    """h1 pings h2 through both gateways: once until one gets through, then
    `count` more, all answered."""
    h.ping_until_ok(ns["h1"], h.H2_ADDR, timeout=40)
    res = h.ping(ns["h1"], h.H2_ADDR, count=count, timeout=60)
    assert res.returncode == 0 and " 0% packet loss" in res.stdout, res.stdout + res.stderr


def test_target_starts_units_in_order(sd):
    ct = sd["ct"]
    # install.sh installed them as Type=notify (simple only for executables
    # built without libsystemd): "active" means ready.
    for unit in (CTLD, RXTX, ROUTER, WORKER0):
        assert ct.show(unit, "Type")["Type"] == "notify", unit
    ct.systemctl("start", TARGET)
    wait_active(ct, (TARGET,) + GATEWAY_UNITS)
    props = {u: ct.show(u, "ActiveState", "NRestarts", "ExecMainStartTimestampMonotonic",
                        "ActiveEnterTimestampMonotonic", "Result") for u in GATEWAY_UNITS}
    for unit, p in props.items():
        print("%-24s exec %12s active %12s restarts %s" % (
            unit, p["ExecMainStartTimestampMonotonic"], p["ActiveEnterTimestampMonotonic"],
            p.get("NRestarts")))
    # Each unit's process starts only once the unit it is ordered after is
    # ready (Type=notify): rxtx after ctld, the secondaries after rxtx.
    for before, after in ((HUGEPAGES, CTLD), (CTLD, RXTX), (RXTX, ROUTER), (RXTX, WORKER0)):
        assert monotonic(props[before], "ActiveEnterTimestampMonotonic") <= \
            monotonic(props[after], "ExecMainStartTimestampMonotonic"), (before, after, props)
    # And none had to be restarted to get there (a secondary started before
    # the primary is ready dies in EAL init and is restarted).
    for unit in (CTLD, RXTX, ROUTER, WORKER0):
        assert props[unit]["NRestarts"] == "0", (unit, props[unit], ct.journal(unit))
    for unit in (TARGET,) + GATEWAY_UNITS:
        assert ct.systemctl("is-active", unit).stdout.strip() == "active", unit
    mode, group, kind = ct.run(["stat", "-c", "%a %G %F", "/run/esgw/ctl.sock"]).stdout.split(
        None, 2)
    assert (mode, group, kind.strip()) == ("660", "esgw", "socket")


def test_configured_inside_and_traffic_to_second_gateway(sd):
    gw1, gw2 = sd["gw1"], sd["gw2"]
    h.configure_gw1(gw1, ALG)  # esgwctl inside the container
    out = gw1.ctl("show", "interfaces", json_out=False)
    assert "gw1-lan" in out and "gw1-wan" in out, out
    # rxtx made its TAPs to the container's own stack (the punt path) and
    # kept that stack off its ports.
    ct = sd["ct"]
    for port in ("lan", "wan"):
        h.wait_for(lambda: ct.run(["ip", "link", "show", "esgw-" + port], check=False)
                   .returncode == 0, 20, 0.3, "TAP esgw-%s" % port)
        sysctl = ct.run(["sysctl", "-n", "net.ipv4.conf.gw1-%s.arp_ignore" % port,
                         "net.ipv4.conf.gw1-%s.rp_filter" % port]).stdout.split()
        assert sysctl == ["8", "1"], (port, sysctl)
    before = gw2.sa(h.SA_ID_GW1_OUT)["packets"]
    traffic(sd["ns"])
    # gw2 decrypted the container's ESP (SA 10, spi 1000) and h2 answered.
    assert gw2.sa(h.SA_ID_GW1_OUT)["packets"] >= before + 20
    assert gw1.sa(h.SA_ID_GW1_OUT)["packets"] >= 20
    assert gw2.sa_drop(h.SA_ID_GW1_OUT, "auth_failed") == 0


def placement(gw):
    return {sa["id"]: sa["worker"] for sa in gw.ctl("show", "sa")["sas"]}


def test_workers_scale_through_sdbus(sd):
    ct, ns, gw1 = sd["ct"], sd["ns"], sd["gw1"]
    stream = h.Stream("h1->h2", ns["h1"], h.H1_ADDR, ns["h2"], h.H2_ADDR, PORT, RATE)
    try:
        time.sleep(0.5)
        gw1.ctl("workers", "set", 2)
        wait_active(ct, (WORKER1,))
        gw1.workers = 2
        gw1.wait_running()
        units = ct.systemctl("list-units", "--no-legend", "--plain", "esgw-crypto@*").stdout
        assert re.search(r"^esgw-crypto@1\.service\s+loaded\s+active\s+running", units, re.M), units
        assert "systemd: StartUnit %s" % WORKER1 in ct.journal(CTLD)
        for sa_id in (h.SA_ID_GW1_OUT, h.SA_ID_GW1_IN):
            gw1.ctl("sa", "move", sa_id, "--worker", 1)
        time.sleep(1.0)  # worker 1 carries the stream
        assert placement(gw1) == {h.SA_ID_GW1_OUT: 1, h.SA_ID_GW1_IN: 1}
        gw1.ctl("workers", "set", 1)
        assert placement(gw1) == {h.SA_ID_GW1_OUT: 0, h.SA_ID_GW1_IN: 0}
        h.wait_for(lambda: ct.active(WORKER1) in ("inactive", "unknown"), 30, 0.3,
                   "%s stopped" % WORKER1)
        gw1.workers = 1
        gw1.wait_running()
        assert [p["worker"] for p in gw1.ctl("show", "stats")["processes"]
                if p["role"] == "crypto"] == [0]
        time.sleep(1.0)
    finally:
        result = stream.stop()
        stream.kill()
    assert "systemd: StopUnit %s" % WORKER1 in ct.journal(CTLD)
    units = ct.systemctl("list-units", "--no-legend", "--plain", "esgw-crypto@*").stdout
    assert WORKER1 not in units, units
    assert result["sent"] > RATE, result
    assert result["lost"] == 0 and result["reordered"] == 0 and result["duplicates"] == 0, result


def pids_known_to_ctld(gw):
    return {(p["role"], p.get("worker", -1)): p["pid"] for p in gw.ctl("show", "stats")["processes"]}


def test_killed_units_restart_and_traffic_resumes(sd):
    ct, ns, gw1, gw2 = sd["ct"], sd["ns"], sd["gw1"], sd["gw2"]
    for victim, followers, bystanders in ((WORKER0, (), (RXTX, ROUTER)),
                                          (RXTX, (ROUTER, WORKER0), ())):
        pids = {u: ct.main_pid(u) for u in (RXTX, ROUTER, WORKER0)}
        restarts = int(ct.show(victim, "NRestarts")["NRestarts"])
        replay = gw2.sa_drop(h.SA_ID_GW1_OUT, "replay")
        ct.systemctl("kill", "--signal=KILL", victim)
        # systemd restarts the victim (Restart=always); what is bound to it
        # (BindsTo=) was stopped and comes back with new processes.
        h.wait_for(lambda: ct.active(victim) == "active" and
                   int(ct.show(victim, "NRestarts")["NRestarts"]) == restarts + 1,
                   30, 0.2, "%s restarted by systemd" % victim)
        wait_active(ct, (RXTX, ROUTER, WORKER0))
        for unit in (victim,) + followers:
            assert ct.main_pid(unit) != pids[unit], unit
        for unit in bystanders:
            assert ct.main_pid(unit) == pids[unit], unit
        # ctld sees the new processes and pushes them their configuration:
        # show stats names the new pids, and the tunnel works.
        gw1.wait_running()
        h.wait_for(lambda: pids_known_to_ctld(gw1) == {
            ("rxtx", -1): ct.main_pid(RXTX), ("router", -1): ct.main_pid(ROUTER),
            ("crypto", 0): ct.main_pid(WORKER0)}, 10, 0.3, "ctld knows the new processes")
        traffic(ns, count=10)
        assert gw2.sa_drop(h.SA_ID_GW1_OUT, "replay") == replay, victim


def lcores_of(argv):
    return argv[argv.index("--lcores") + 1]


def affinity(ct, pid):
    """The CPU mask (an int) of every thread of a process, as taskset -p prints it."""
    masks = set()
    for tid in ct.run(["ls", "/proc/%d/task" % pid]).stdout.split():
        out = ct.run(["taskset", "-p", tid]).stdout
        masks.add(int(out.rsplit(":", 1)[1].strip(), 16))
    return masks


def cmdline(ct, pid):
    return ct.run(["cat", "/proc/%d/cmdline" % pid]).stdout.split("\0")


def test_cpu_dropins_take_effect(sd):
    ct, gw1 = sd["ct"], sd["gw1"]
    for unit, (cpu, lcore) in PLACEMENT.items():
        pid = ct.main_pid(unit)
        assert affinity(ct, pid) == {1 << cpu}, unit
        assert lcores_of(cmdline(ct, pid)) == "%d@%d" % (lcore, cpu), unit
    # A drop-in for one instance overrides the template's: worker 1 on CPU 0
    # (CPUAffinity= lines add up: the empty one resets the template's CPU 1).
    dropin = ct.path("/etc/systemd/system/%s.d/20-cpu.conf" % WORKER1)
    os.makedirs(os.path.dirname(dropin), exist_ok=True)
    with open(dropin, "w") as f:
        f.write("[Service]\nCPUAffinity=\nCPUAffinity=0\nEnvironment=ESGW_CRYPTO_CPU=0\n")
    try:
        ct.systemctl("daemon-reload")
        gw1.ctl("workers", "set", 2)
        wait_active(ct, (WORKER1,))
        pid = ct.main_pid(WORKER1)
        assert affinity(ct, pid) == {1 << 0}
        assert lcores_of(cmdline(ct, pid)) == "11@0"
        assert affinity(ct, ct.main_pid(WORKER0)) == {1 << 1}
    finally:
        gw1.ctl("workers", "set", 1)
        os.unlink(dropin)
        os.rmdir(os.path.dirname(dropin))
        ct.systemctl("daemon-reload")
    h.wait_for(lambda: ct.active(WORKER1) in ("inactive", "unknown"), 30, 0.3,
               "%s stopped" % WORKER1)


def persisted_floor(ct, pb, sa_id):
    """seq_out_floor of an SA in the configuration file ctld saved."""
    config = h.saved_config(pb, ct.path("/var/lib/esgw/config.pb"))
    return next(sa.seq_out_floor for sa in config.sas if sa.id == sa_id)


def test_reboot_restores_configuration_and_sequence(sd, pb):
    ct, ns, gw1, gw2 = sd["ct"], sd["ns"], sd["gw1"], sd["gw2"]
    ct.systemctl("enable", TARGET)
    traffic(ns)
    config = gw1.ctl("show", "config")
    seq = gw1.sa(h.SA_ID_GW1_OUT)["seq_out"]
    # ctld raises the floor within a second of seeing the counter.
    floor = h.wait_for(lambda: persisted_floor(ct, pb, h.SA_ID_GW1_OUT) > seq and
                       persisted_floor(ct, pb, h.SA_ID_GW1_OUT), 10, 0.3, "a persisted floor")
    replay = gw2.sa_drop(h.SA_ID_GW1_OUT, "replay")
    decrypted = gw2.sa(h.SA_ID_GW1_OUT)["packets"]
    status = ct.reboot()
    print("systemd-nspawn exited with %s on reboot" % status)
    wait_active(ct, (TARGET,) + GATEWAY_UNITS)
    gw1.wait_ready()
    gw1.wait_running()
    assert gw1.ctl("show", "config") == config
    traffic(ns)
    after = gw1.sa(h.SA_ID_GW1_OUT)["seq_out"]
    print("SA %d: seq %d before the reboot, floor %d, seq %d after" % (
        h.SA_ID_GW1_OUT, seq, floor, after))
    assert after > floor, (seq, floor, after)
    assert gw2.sa(h.SA_ID_GW1_OUT)["packets"] > decrypted
    assert gw2.sa_drop(h.SA_ID_GW1_OUT, "replay") == replay


def test_stop_target_leaves_nothing(sd):
    ct = sd["ct"]
    # systemctl returns once the target is down; its parts stop after it,
    # the secondaries first, rxtx, then ctld (the reverse of their order).
    ct.systemctl("stop", TARGET)
    h.wait_for(lambda: all(ct.active(u) in ("inactive", "unknown")
                           for u in (TARGET,) + GATEWAY_UNITS), 60, 0.3,
               "every esgw unit stopped")
    esgw = {pid: comm for pid, comm in ct.processes().items() if comm.startswith("esgw")}
    assert not esgw, esgw
    # The container's own hugetlbfs: only esgw uses it.
    left = ct.run(["ls", "-A", "/dev/hugepages"]).stdout.split()
    assert not left, left
    assert ct.run(["test", "-e", "/run/esgw/dpdk/esgw"], check=False).returncode != 0
