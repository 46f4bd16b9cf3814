# SPDX-License-Identifier: BSD-3-Clause
"""esgw-rxtx on its own: it starts on an af_packet port inside a network
namespace, becomes ready (control socket), counts frames a peer namespace sends,
answers DpStats, sleeps when idle, lets a DPDK secondary attach, refuses a
missing interface with a clear message, and exits 0 on SIGTERM.

Run as root: /usr/bin/python3 -m pytest tests/integration/test_rxtx.py
Binaries come from $ESGW_BUILD (default /work/main/build)."""
import glob
import os
import shutil
import signal
import socket
import struct
import subprocess
import time

import pytest

BUILD = os.environ.get("ESGW_BUILD", "/work/main/build")
RXTX = os.path.join(BUILD, "rxtx", "esgw-rxtx")
NS_GW, NS_PEER = "hc-rxtx-gw", "hc-rxtx-peer"
DEV_GW, DEV_PEER = "hc-rx0", "hc-rx1"
PREFIX = "hc-rxtx"
# Per pytest process: checkouts tested side by side do not share it.
RUNDIR = "/tmp/hc/rx%d" % os.getpid()
# What esgw-ctld passes (BRIEF), plus a base address far from where ASLR puts
# the secondaries' own mappings.
EAL_PRIMARY = ["--proc-type", "primary", "--lcores", "1@0", "--no-pci", "-m", "256",
               "--base-virtaddr", "0x4000000000"]


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def in_ns(ns, *cmd):
    return ["ip", "netns", "exec", ns, *cmd]


# ------------------------------------------------------------ minimal protobuf

def varint(buf, pos):
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def decode(buf):
    """Wire format -> {field number: [int or bytes, ...]}."""
    fields, pos = {}, 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        num, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 2:
            n, pos = varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        fields.setdefault(num, []).append(value)
    return fields


def one(fields, num, default):
    return fields.get(num, [default])[0]


# DpRequest{version=DP_VERSION_CURRENT (2), stats=DpStatsQuery{}}: field 1 varint, field 11 empty.
DP_STATS_REQUEST = b"\x08\x02\x5a\x00"
PORT_FIELDS = {1: "port_id", 2: "device", 3: "mac", 4: "rx_packets", 5: "tx_packets",
               6: "rx_bytes", 7: "tx_bytes", 8: "rx_missed", 9: "tx_errors"}


def dp_stats(sock_path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(sock_path)
        s.sendall(struct.pack(">I", len(DP_STATS_REQUEST)) + DP_STATS_REQUEST)
        head = b""
        while len(head) < 4:
            head += s.recv(4 - len(head))
        (n,) = struct.unpack(">I", head)
        body = b""
        while len(body) < n:
            chunk = s.recv(n - len(body))
            assert chunk, "control socket closed mid-reply"
            body += chunk
    resp = decode(body)
    assert one(resp, 1, 0) == 0, f"status {one(resp, 1, 0)}: {one(resp, 2, b'')!r}"
    stats = decode(one(resp, 3, b""))
    counters = {}
    for c in stats.get(4, []):
        c = decode(c)
        counters[one(c, 1, b"").decode()] = one(c, 2, 0)
    ports = []
    for p in stats.get(5, []):
        p = decode(p)
        port = {name: one(p, num, b"" if num in (2, 3) else 0)
                for num, name in PORT_FIELDS.items()}
        port["device"], port["mac"] = port["device"].decode(), port["mac"].decode()
        ports.append(port)
    return {"role": one(stats, 1, b"").decode(), "pid": one(stats, 3, 0),
            "counters": counters, "ports": ports}


# ------------------------------------------------------------ fixtures

def remove_dpdk_leftovers():
    """A primary's hugepage files outlive it (secondaries map them by name)."""
    for f in glob.glob(f"/dev/hugepages/{PREFIX}map_*"):
        os.unlink(f)
    shutil.rmtree(f"/var/run/dpdk/{PREFIX}", ignore_errors=True)


@pytest.fixture(scope="module")
def topology():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, hugepages)")
    assert os.access(RXTX, os.X_OK), f"{RXTX} not built (set ESGW_BUILD)"
    for ns in (NS_GW, NS_PEER):
        sh("ip", "netns", "del", ns, check=False)
    sh("ip", "netns", "add", NS_GW)
    sh("ip", "netns", "add", NS_PEER)
    try:
        sh("ip", "link", "add", DEV_GW, "netns", NS_GW, "type", "veth",
           "peer", "name", DEV_PEER, "netns", NS_PEER)
        for ns, dev in ((NS_GW, DEV_GW), (NS_PEER, DEV_PEER)):
            # Offloads off, or af_packet sees 64 KB super-frames (DESIGN).
            sh(*in_ns(ns, "ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off",
                      "gso", "off", "gro", "off"))
            # No IPv6 autoconfiguration chatter during the idle measurement.
            sh(*in_ns(ns, "sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1"))
            sh("ip", "-n", ns, "link", "set", dev, "up")
        yield
    finally:
        for ns in (NS_GW, NS_PEER):
            sh("ip", "netns", "del", ns, check=False)


def start_rxtx(iface, rundir=RUNDIR):
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    remove_dpdk_leftovers()
    log = open(os.path.join(rundir, "rxtx.log"), "w+")
    proc = subprocess.Popen(
        in_ns(NS_GW, RXTX, "--file-prefix", PREFIX, *EAL_PRIMARY,
              "--vdev", f"net_af_packet0,iface={iface}", "--", "--rundir", rundir),
        stdout=log, stderr=subprocess.STDOUT)
    return proc, log


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def read_log(log):
    log.flush()
    log.seek(0)
    return log.read()


@pytest.fixture(scope="module")
def rxtx(topology):
    proc, log = start_rxtx(DEV_GW)
    sock = os.path.join(RUNDIR, "rxtx.sock")
    try:
        deadline = time.time() + 30
        while not os.path.exists(sock):
            assert proc.poll() is None, "esgw-rxtx exited:\n" + read_log(log)
            assert time.time() < deadline, "no control socket after 30 s:\n" + read_log(log)
            time.sleep(0.1)
        yield {"proc": proc, "sock": sock, "log": log}
    finally:
        stop(proc)
        log.close()
        remove_dpdk_leftovers()


def gw_mac():
    out = sh("ip", "-n", NS_GW, "-o", "link", "show", DEV_GW).stdout
    return out.split("link/ether ")[1].split()[0]


def proc_pid(rxtx):
    """The esgw-rxtx pid (Popen's is `ip netns exec`, which execs it)."""
    return dp_stats(rxtx["sock"])["pid"]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def send_frames(count):
    """Broadcast frames from the peer namespace through a raw socket."""
    script = (
        "import socket\n"
        "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
        f"s.bind(({DEV_PEER!r}, 0))\n"
        "f = b'\\xff' * 6 + b'\\x02\\x00\\x00\\x00\\x00\\x01' + b'\\x08\\x00' + bytes(46)\n"
        f"for _ in range({count}):\n"
        "    s.send(f)\n")
    sh(*in_ns(NS_PEER, "/usr/bin/python3", "-c", script))


# ------------------------------------------------------------ tests

def test_ready_with_port(rxtx):
    stats = dp_stats(rxtx["sock"])
    assert stats["role"] == "rxtx"
    assert len(stats["ports"]) == 1
    port = stats["ports"][0]
    assert port["port_id"] == 0
    assert port["device"] == "net_af_packet0"
    assert port["mac"] == gw_mac()
    for name in ("rx_packets", "tx_packets", "ring_full", "tx_failed", "auth_failed"):
        assert name in stats["counters"], name
    log = read_log(rxtx["log"])
    assert "port 0 net_af_packet0: mac " + gw_mac() in log


def test_idle_costs_no_cpu(rxtx):
    pid = proc_pid(rxtx)
    time.sleep(1)  # past the first ~100 ms of quiet, after which sleeps get longer
    before = cpu_ticks(pid)
    time.sleep(3)
    used = (cpu_ticks(pid) - before) / os.sysconf("SC_CLK_TCK")
    assert used / 3 < 0.02, f"idle esgw-rxtx used {used / 3:.1%} of a CPU"


def test_rx_counts_frames(rxtx):
    before = dp_stats(rxtx["sock"])
    send_frames(200)
    deadline = time.time() + 5
    while True:
        after = dp_stats(rxtx["sock"])
        if after["ports"][0]["rx_packets"] - before["ports"][0]["rx_packets"] >= 200:
            break
        assert time.time() < deadline, f"RX did not rise: {before} -> {after}"
        time.sleep(0.1)
    got = after["counters"]["rx_packets"] - before["counters"]["rx_packets"]
    assert got >= 200
    assert after["ports"][0]["rx_bytes"] - before["ports"][0]["rx_bytes"] >= 200 * 60
    # Nobody consumes router_in here, but 200 frames fit in the ring.
    assert after["counters"]["ring_full"] == 0


def test_kernel_ring_drops_are_counted(rxtx):
    """A starved rxtx (SIGSTOP) lets af_packet's kernel ring overflow. The
    driver does not report those drops; rxtx reads them from its sockets, so
    every frame sent is either received or counted as rx_missed."""
    pid = proc_pid(rxtx)
    before = dp_stats(rxtx["sock"])
    os.kill(pid, signal.SIGSTOP)
    try:
        send_frames(3000)  # the ring holds 512 frames by default
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.time() + 5
    while True:
        after = dp_stats(rxtx["sock"])
        got = after["ports"][0]["rx_packets"] - before["ports"][0]["rx_packets"]
        missed = after["ports"][0]["rx_missed"] - before["ports"][0]["rx_missed"]
        if got + missed >= 3000 or time.time() > deadline:
            break
        time.sleep(0.1)
    assert missed > 0, (got, missed)
    assert got + missed == 3000, (got, missed)
    assert after["counters"]["rx_missed"] - before["counters"]["rx_missed"] == missed


def test_secondary_attaches(rxtx):
    """A DPDK secondary maps the primary's memory and sees port and rings."""
    out = sh("timeout", "30", "dpdk-proc-info", "--file-prefix", PREFIX, "--no-pci",
             "--", "--stats", "--show-ring", check=False)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "NIC statistics for port 0" in text
    for ring in ("esgw.router_in", "esgw.crypto.0", "esgw.crypto.7", "esgw.tx.0"):
        assert f"<{ring}>" in text, ring
    # The secondary left the primary working.
    assert dp_stats(rxtx["sock"])["role"] == "rxtx"


def test_sigterm_exits_cleanly(rxtx):
    assert stop(rxtx["proc"]) == 0, read_log(rxtx["log"])
    assert not os.path.exists(rxtx["sock"])


def test_missing_interface_is_named(topology):
    rundir = RUNDIR + "-bad"
    proc, log = start_rxtx("hc-nope", rundir)
    try:
        assert proc.wait(30) != 0
        text = read_log(log)
        assert "port net_af_packet0: iface hc-nope not found" in text, text
        assert not os.path.exists(os.path.join(rundir, "rxtx.sock"))
    finally:
        stop(proc)
        log.close()
        remove_dpdk_leftovers()
        shutil.rmtree(rundir, ignore_errors=True)
