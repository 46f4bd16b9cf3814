# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end test harness for esgw: network namespaces and veth links, an
esgw gateway (esgw-ctld --standalone and its dataplane processes) driven by
esgwctl, and a scapy ESP "peer" that stands where a second gateway would.

Run with /usr/bin/python3 (it has scapy and cryptography). Binaries come from
$ESGW_BUILD (default /work/main/build), in its sub-folders or directly in it.
"""

import contextlib
import ctypes
import glob
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time

ESGW_BUILD = os.environ.get("ESGW_BUILD", "/work/main/build")
WORK_ROOT = os.environ.get("ESGW_TEST_WORKDIR", "/tmp/he")
ROLES = ("esgw-rxtx", "esgw-router", "esgw-crypto", "esgw-ctld")

# Keys of the standard topology. gw1 sends with SA 10 (spi 1000) and receives
# with SA 20 (spi 2000); gw2 is the mirror image. Distinct keys per direction so
# that a swapped key or SPI cannot pass by accident. The 16-byte key is the one
# of the first seed report.
KEYS = {
    "aes-cbc-128-sha1-96": {
        1000: {"crypto": "4339314b55523947594d6d3547666b45",
               "integ": "4339314b55523947594d6d3547666b4501020304"},
        2000: {"crypto": "6b45474d6d3547666b4339314b555239",
               "integ": "0a0b0c0d6b45474d6d3547666b4339314b555239"},
    },
    "aes-gcm-128": {
        1000: {"crypto": "4339314b55523947594d6d3547666b45", "salt": "a1b2c3d4"},
        2000: {"crypto": "6b45474d6d3547666b4339314b555239", "salt": "d4c3b2a1"},
    },
}
ALGORITHMS = tuple(KEYS)
SPI_GW1_OUT = 1000
SPI_GW1_IN = 2000
SA_ID_GW1_OUT = 10
SA_ID_GW1_IN = 20

H1_ADDR, GW1_LAN, GW1_WAN = "192.168.1.1", "192.168.1.2", "192.168.3.1"
GW2_WAN, GW2_LAN, H2_ADDR = "192.168.3.2", "192.168.2.2", "192.168.2.1"
# Host MTU below the WAN's so that ESP overhead fits without fragmentation.
HOST_MTU = 1400


class HarnessError(Exception):
    pass


# Gateways currently running, so that a failing test can attach their logs.
ACTIVE_GATEWAYS = []


# ------------------------------------------------------------------ helpers

def run(cmd, check=True, timeout=30, **kw):
    """Runs a command (a list), returns CompletedProcess with text output."""
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=timeout, **kw)
    if check and res.returncode != 0:
        raise HarnessError("command failed (%d): %s\n%s%s" % (
            res.returncode, " ".join(cmd), res.stdout, res.stderr))
    return res


def nsrun(ns, cmd, **kw):
    return run(["ip", "netns", "exec", ns] + cmd, **kw)


def wait_for(predicate, timeout=10.0, interval=0.1, what="condition"):
    """Polls predicate until it returns something true; returns that value."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # keep polling; report the last error
            last_exc = exc
        if time.monotonic() >= deadline:
            raise HarnessError("timed out after %.1fs waiting for %s%s" % (
                timeout, what, (": %r" % last_exc) if last_exc else ""))
        time.sleep(interval)


def find_binary(name):
    """Path of an esgw executable in $ESGW_BUILD (or one folder below)."""
    for pattern in (os.path.join(ESGW_BUILD, name),
                    os.path.join(ESGW_BUILD, "*", name)):
        for path in sorted(glob.glob(pattern)):
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


def journal_records(path):
    """The payloads of the records of a configuration journal (ctl/config_journal.c):
    4-byte big-endian length, CRC-32, payload; the first names the snapshot.
    Stops at the first torn or corrupt one, as esgw-ctld does."""
    import zlib
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    out, off = [], 0
    while off + 8 <= len(data):
        n, crc = struct.unpack(">II", data[off:off + 8])
        payload = data[off + 8:off + 8 + n]
        if len(payload) != n or zlib.crc32(payload) != crc:
            break
        out.append(payload)
        off += 8 + n
    return out


def saved_config(pb, path):
    """The configuration esgw-ctld saved at path: the snapshot and the changes of
    its journal (path.journal) replayed on it, as esgw-ctld does at start."""
    import zlib
    with open(path, "rb") as f:
        snap = f.read()
    config = pb.Config.FromString(snap)
    records = journal_records(path + ".journal")
    if not records or records[0] != struct.pack(">QI", len(snap), zlib.crc32(snap)):
        return config  # none, or it follows another snapshot
    fields = {"sa": ("sas", lambda o: o.id), "route": ("routes", lambda o: o.prefix),
              "tunnel": ("tunnels", lambda o: o.name),
              "neighbor": ("neighbors", lambda o: (o.interface, o.address))}
    for payload in records[1:]:
        for req in pb.Batch.FromString(payload).requests:
            body = req.WhichOneof("body")
            kind, op = body.rsplit("_", 1)
            field, key = fields[kind]
            arr, obj = getattr(config, field), getattr(req, body)
            k = obj.id if kind == "sa" and op == "del" else key(obj)
            old = [i for i, o in enumerate(arr) if key(o) == k]
            if op == "add" and old:
                arr[old[-1]].CopyFrom(obj)
            elif op == "add":
                arr.add().CopyFrom(obj)
            elif old:
                del arr[old[-1]]
    return config


def missing_binaries():
    return [n for n in ROLES + ("esgwctl",) if find_binary(n) is None]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def proc_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def processes_matching(predicate):
    """[(pid, argv)] of live processes whose argv satisfies predicate."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        argv = proc_cmdline(int(entry))
        if argv and predicate(argv):
            found.append((int(entry), argv))
    return found


# ------------------------------------------------------------- namespaces

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


@contextlib.contextmanager
def in_netns(name):
    """Moves the calling thread into a network namespace for the block. Sockets
    created inside stay in that namespace after the block ends."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/%s" % name, os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns(%s)" % name)
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the home namespace")
    finally:
        os.close(target)
        os.close(home)


_run_counter = [0]


def cleanup_stale_namespaces():
    """Deletes namespaces left by earlier runs of this harness whose pytest
    process is gone (names et<pid>n-..., created by nobody else)."""
    res = run(["ip", "netns", "list"], check=False)
    for line in res.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(r"^et(\d+)n\d+-", name)
        if m and not pid_alive(int(m.group(1))):
            kill_namespace_processes(name)
            run(["ip", "netns", "del", name], check=False)


def kill_namespace_processes(ns):
    res = run(["ip", "netns", "pids", ns], check=False)
    for tok in res.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass


def link_mac(ns, dev):
    info = json.loads(run(["ip", "-n", ns, "-j", "link", "show", "dev", dev]).stdout)
    return info[0]["address"]


class Topology:
    """Network namespaces and veth links of one test, named et<pid>n<k>-<short>
    so parallel runs and other helpers never collide. teardown() removes all."""

    def __init__(self):
        _run_counter[0] += 1
        self.tag = "et%dn%d" % (os.getpid(), _run_counter[0])
        self.namespaces = []
        self.macs = {}

    def ns_name(self, short):
        return "%s-%s" % (self.tag, short)

    def add_ns(self, short):
        name = self.ns_name(short)
        run(["ip", "netns", "add", name])
        self.namespaces.append(name)
        nsrun(name, ["ip", "link", "set", "lo", "up"])
        # No IPv6 chatter (router solicitations, MLD) on the test links.
        nsrun(name, ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1"], check=False)
        return name

    def add_veth(self, ns_a, dev_a, ns_b, dev_b, mtu=None):
        run(["ip", "link", "add", dev_a, "netns", ns_a, "type", "veth",
             "peer", "name", dev_b, "netns", ns_b])
        for ns, dev in ((ns_a, dev_a), (ns_b, dev_b)):
            # With offloads on, af_packet sees 64 KB super-frames and packets with
            # unfinished checksums: off on every end, hosts included.
            nsrun(ns, ["ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off",
                       "gso", "off", "gro", "off"])
            if mtu:
                nsrun(ns, ["ip", "link", "set", dev, "mtu", str(mtu)])
            nsrun(ns, ["ip", "link", "set", dev, "up"])

    def mac(self, ns, dev):
        return link_mac(ns, dev)

    def addr(self, ns, dev, cidr):
        nsrun(ns, ["ip", "addr", "add", cidr, "dev", dev])

    def route(self, ns, *args):
        nsrun(ns, ["ip", "route", "add"] + list(args))

    def teardown(self):
        for name in reversed(self.namespaces):
            kill_namespace_processes(name)
            run(["ip", "netns", "del", name], check=False)
        self.namespaces = []


def build_standard(topo, peer=False):
    """h1 -- gw1 -- gw2 -- h2 (the first seed report's topology). With peer=True
    the gw2 position is a plain namespace "peer" whose kernel owns 192.168.3.2
    (so it answers gw1's ARP) and there is no h2: a scapy peer emulates both.
    Returns a dict of namespace names."""
    ns = {"h1": topo.add_ns("h1"), "gw1": topo.add_ns("gw1")}
    topo.add_veth(ns["h1"], "h1-eth0", ns["gw1"], "gw1-lan")
    nsrun(ns["h1"], ["ip", "link", "set", "h1-eth0", "mtu", str(HOST_MTU)])
    topo.addr(ns["h1"], "h1-eth0", H1_ADDR + "/24")
    topo.route(ns["h1"], "default", "via", GW1_LAN)
    if peer:
        ns["peer"] = topo.add_ns("peer")
        topo.add_veth(ns["gw1"], "gw1-wan", ns["peer"], "peer-wan")
        topo.addr(ns["peer"], "peer-wan", GW2_WAN + "/24")
        return ns
    ns["gw2"] = topo.add_ns("gw2")
    ns["h2"] = topo.add_ns("h2")
    topo.add_veth(ns["gw1"], "gw1-wan", ns["gw2"], "gw2-wan")
    topo.add_veth(ns["gw2"], "gw2-lan", ns["h2"], "h2-eth0")
    nsrun(ns["h2"], ["ip", "link", "set", "h2-eth0", "mtu", str(HOST_MTU)])
    topo.addr(ns["h2"], "h2-eth0", H2_ADDR + "/24")
    topo.route(ns["h2"], "default", "via", GW2_LAN)
    return ns


# ---------------------------------------------------------------- gateway

class Gateway:
    """One esgw instance: esgw-ctld --standalone in a gateway namespace, which
    starts and supervises rxtx, router and the crypto workers."""

    def __init__(self, name, netns, tag, workers=1, ctld_args=()):
        self.name = name
        self.netns = netns
        self.prefix = "%s%s" % (tag, name)          # DPDK --file-prefix
        self.workdir = os.path.join(WORK_ROOT, tag, name)
        self.socket = os.path.join(self.workdir, "ctl.sock")
        # A directory of its own: a test can make it unwritable.
        self.config = os.path.join(self.workdir, "state", "config.pb")
        self.rundir = os.path.join(self.workdir, "run")
        self.logdir = os.path.join(self.workdir, "log")
        self.bindir = os.path.join(self.workdir, "bin")
        self.workers = workers
        self.ctld_args = list(ctld_args)  # more esgw-ctld options (placement...)
        self.proc = None
        self._ctld_out = None
        self.baseline = None

    # -- lifecycle

    def _make_bindir(self):
        """ctld finds the dataplane executables in --bindir; the build keeps them
        in one folder per process, so gather them with symlinks."""
        os.makedirs(self.bindir, exist_ok=True)
        for role in ROLES:
            path = find_binary(role)
            if path is None:
                raise HarnessError("%s not built in %s" % (role, ESGW_BUILD))
            os.symlink(path, os.path.join(self.bindir, role))

    def start(self, timeout=60):
        shutil.rmtree(self.workdir, ignore_errors=True)
        for d in (self.workdir, self.rundir, self.logdir):
            os.makedirs(d, exist_ok=True)
        self._make_bindir()
        ACTIVE_GATEWAYS.append(self)
        self._launch_ctld()
        self.wait_ready(timeout)

    def _launch_ctld(self, workers=True):
        cmd = ["ip", "netns", "exec", self.netns, os.path.join(self.bindir, "esgw-ctld"),
               "--standalone", "--socket", self.socket, "--config", self.config,
               "--rundir", self.rundir, "--file-prefix", self.prefix,
               "--log-dir", self.logdir, "--bindir", self.bindir] + self.ctld_args
        if workers:
            cmd += ["--workers", str(self.workers)]
        if self._ctld_out is None:
            self._ctld_out = open(os.path.join(self.workdir, "ctld.out"), "a")
        # `ip netns exec` execs ctld: the Popen pid is ctld's pid.
        self.proc = subprocess.Popen(cmd, stdout=self._ctld_out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def kill_ctld(self):
        """SIGKILL esgw-ctld, as a crash would; its dataplane follows it down."""
        self.proc.kill()
        self.proc.wait(5)

    def restart_ctld(self, timeout=60):
        """Start esgw-ctld again on the same configuration file, socket and run
        directory, without --workers: the persisted count applies."""
        self._launch_ctld(workers=False)
        self.wait_ready(timeout)

    def check_alive(self):
        """Raises if esgw-ctld is gone (nothing to wait for any more)."""
        if self.proc.poll() is not None:
            raise HarnessError("esgw-ctld exited with %s" % self.proc.returncode)

    def wait_ready(self, timeout=60):
        """Until the API answers. (ctld starts the dataplane only once it has
        interfaces to give esgw-rxtx: see wait_running.)"""
        def ready():
            self.check_alive()
            return isinstance(self.ctl("show", "stats", check=False), dict)
        try:
            wait_for(ready, timeout, 0.2, "%s: API up" % self.name)
        except Exception:
            self.print_logs()
            raise

    def wait_running(self, timeout=60):
        """Until rxtx, router and every crypto worker report "running"."""
        def running():
            self.check_alive()
            stats = self.ctl("show", "stats", check=False)
            if not isinstance(stats, dict):
                return False
            procs = stats.get("processes", [])
            roles = [p.get("role") for p in procs]
            if "rxtx" not in roles or "router" not in roles or \
                    roles.count("crypto") < self.workers:
                return False
            return all(p.get("state") == "running" for p in procs)
        wait_for(running, timeout, 0.3, "%s: all processes running" % self.name)

    def dataplane_processes(self):
        """[(pid, argv)] of this gateway's dataplane processes (by --file-prefix)."""
        def mine(argv):
            for i, a in enumerate(argv[:-1]):
                if a == "--file-prefix" and argv[i + 1] == self.prefix:
                    role = os.path.basename(argv[0])
                    return role.startswith("esgw-") and role != "esgw-ctld"
            return False
        return processes_matching(mine)

    def processes(self):
        """{pid: role} of ctld and the dataplane processes, role = basename of argv[0]."""
        found = {}
        for pid, argv in self.dataplane_processes():
            found[pid] = os.path.basename(argv[0])
        if self.proc is not None and self.proc.poll() is None:
            found[self.proc.pid] = os.path.basename(proc_cmdline(self.proc.pid)[0]
                                                    if proc_cmdline(self.proc.pid) else "?")
        return found

    def stop(self, timeout=20):
        """SIGTERM ctld and wait; then checks nothing of this gateway survived.
        Returns a list of problems (empty when the shutdown was clean)."""
        problems = []
        if self in ACTIVE_GATEWAYS:
            ACTIVE_GATEWAYS.remove(self)
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    problems.append("esgw-ctld did not exit %ds after SIGTERM" % timeout)
                    self.proc.kill()
                    self.proc.wait(5)
            if self.proc.returncode not in (0, -signal.SIGTERM):
                problems.append("esgw-ctld exit status %s" % self.proc.returncode)
        deadline = time.monotonic() + 5
        left = self.dataplane_processes()
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = self.dataplane_processes()
        if left:
            problems.append("processes left after ctld stopped: %s" % (
                ", ".join("%d %s" % (pid, os.path.basename(a[0])) for pid, a in left)))
            for pid, _ in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for f in glob.glob("/dev/hugepages/%smap_*" % self.prefix):
            with contextlib.suppress(OSError):
                os.unlink(f)
        shutil.rmtree("/var/run/dpdk/%s" % self.prefix, ignore_errors=True)
        if self._ctld_out:
            self._ctld_out.close()
            self._ctld_out = None
        return problems

    def logs_text(self, lines=200):
        """The tail of ctld's output and of every process log of this gateway."""
        files = [os.path.join(self.workdir, "ctld.out")] + sorted(
            glob.glob(os.path.join(self.logdir, "*.log")))
        parts = []
        for path in files:
            try:
                with open(path, errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            parts.append("===== %s: %s (last %d lines) =====" % (self.name, path, lines))
            parts.append("\n".join(text.splitlines()[-lines:]))
        return "\n".join(parts)

    def print_logs(self):
        print(self.logs_text())

    # -- control

    def ctl_raw(self, *args, json_out=True, timeout=20):
        """esgwctl with args; the keys of an `sa add` go in on standard input."""
        cmd = [find_binary("esgwctl"), "--socket", self.socket]
        if json_out:
            cmd.append("--json")
        args, keys = stdin_keys([str(a) for a in args])
        return run(cmd + args, check=False, timeout=timeout, input=keys)

    def ctl(self, *args, check=True, json_out=True):
        """Runs esgwctl; returns the parsed JSON document (None when the command
        prints nothing). check=False returns None on failure instead of raising."""
        res = self.ctl_raw(*args, json_out=json_out)
        if res.returncode != 0:
            if check:
                raise HarnessError("esgwctl %s failed (%d): %s" % (
                    " ".join(map(str, args)), res.returncode, res.stderr.strip()))
            return None
        out = res.stdout.strip()
        if not out:
            return None
        if not json_out:
            return out
        try:
            return json.loads(out)
        except ValueError:
            if args and args[0] != "show":
                return out  # a configuration command may acknowledge in words
            if check:
                raise HarnessError("esgwctl %s: not JSON: %r" % (" ".join(map(str, args)), out[:300]))
            return None

    def sa(self, sa_id):
        for sa in self.ctl("show", "sa")["sas"]:
            if sa["id"] == sa_id:
                return sa
        raise HarnessError("%s: no SA %d in show sa" % (self.name, sa_id))

    def sa_drop(self, sa_id, name):
        return self.sa(sa_id)["drops"].get(name, 0)

    def total_drop(self, name):
        return self.ctl("show", "stats")["drops"].get(name, 0)

    def interface(self, name):
        for itf in self.ctl("show", "interfaces")["interfaces"]:
            if itf["name"] == name:
                return itf
        raise HarnessError("%s: no interface %s" % (self.name, name))

    def configure_tunnel(self, alg, lan_dev, lan_addr, wan_dev, wan_addr, local, remote,
                         remote_lan, spi_out, spi_in, sa_out=SA_ID_GW1_OUT,
                         sa_in=SA_ID_GW1_IN, wan_device=None):
        """The standard configuration of one side: two interfaces, two SAs, one
        route-based tunnel and the route to the far LAN through it. The WAN
        is net_af_packet on wan_dev unless wan_device names another DPDK
        device (e.g. a memif)."""
        self.ctl("interface", "add", "lan", "net_af_packet0,iface=%s" % lan_dev)
        self.ctl("interface", "address", "add", "lan", lan_addr)
        self.ctl("interface", "add", "wan", wan_device or "net_af_packet1,iface=%s" % wan_dev)
        self.ctl("interface", "address", "add", "wan", wan_addr)
        for sa_id, spi in ((sa_out, spi_out), (sa_in, spi_in)):
            self.ctl(*sa_add_args(sa_id, spi, alg))
        self.ctl("tunnel", "add", "t0", "local", local, "remote", remote,
                 "sa-out", sa_out, "sa-in", sa_in)
        self.ctl("route", "add", remote_lan, "tunnel", "t0")
        self.wait_running()
        self.baseline = self.process_snapshot()

    def wait_workers_running(self, count, timeout=30):
        """Until exactly count crypto workers exist and all run."""
        def ok():
            ws = self.ctl("show", "workers")["workers"]
            procs = [p for p in self.ctl("show", "stats")["processes"] if p["role"] == "crypto"]
            return len(ws) == count and len(procs) == count and \
                all(p["state"] == "running" for p in procs)
        wait_for(ok, timeout, 0.2, "%s: %d crypto workers running" % (self.name, count))

    def counters(self, role):
        """{name: value} of the named counters of every process of role
        (rxtx, router, crypto) from show stats, summed over processes."""
        total = {}
        for p in self.ctl("show", "stats")["processes"]:
            if p["role"] != role:
                continue
            c = p.get("counters", {})
            for name, value in (c.items() if isinstance(c, dict) else
                                ((x["name"], x["value"]) for x in c)):
                total[name] = total.get(name, 0) + value
        return total

    def counter(self, role, name):
        """One named counter of role's processes (counters()), 0 if none."""
        return self.counters(role).get(name, 0)

    def process_snapshot(self):
        """{(role, worker): (pid, restarts, state)} from show stats. Adding an
        interface restarts rxtx on purpose, so tests compare against the
        snapshot taken after configuration rather than against zero."""
        return {(p["role"], p.get("worker", -1)): (p["pid"], p["restarts"], p["state"])
                for p in self.ctl("show", "stats")["processes"]}

    def assert_no_restarts(self):
        now = self.process_snapshot()
        assert now == self.baseline, "%s: processes changed: %s -> %s" % (
            self.name, self.baseline, now)


KEY_WORDS = ("crypto-key", "integ-key", "salt")


def stdin_keys(args):
    """(args, stdin) for esgwctl: the key values of an `sa add` replaced by
    "-" and fed as standard input, one line each, so no test puts a key on a
    command line (every user of the machine could read it in ps)."""
    if list(args[:2]) != ["sa", "add"]:
        return list(args), None
    out, lines = [], []
    for i, a in enumerate(args):
        if i > 0 and args[i - 1] in KEY_WORDS and a != "-":
            out.append("-")
            lines.append(a + "\n")
        else:
            out.append(a)
    return out, "".join(lines) if lines else None


def drain_socket(sock):
    """Throws away whatever a socket has queued, without blocking."""
    sock.setblocking(False)
    try:
        while True:
            sock.recv(65535)
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)


def require_root_and_binaries():
    """Skip (not fail) where the tests cannot run: not root, or not built."""
    import pytest
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, hugepages)")
    missing = missing_binaries()
    if missing:
        pytest.skip("not built in %s: %s" % (ESGW_BUILD, ", ".join(missing)))


def ctld_refused(tmp_path, *options):
    """Runs esgw-ctld --standalone with options; returns its stderr after
    checking it exited with status 2 at start and left nothing behind."""
    import pytest
    ctld = find_binary("esgw-ctld")
    if ctld is None:
        pytest.skip("esgw-ctld not built in %s" % ESGW_BUILD)
    prefix = "hp-refused%d" % os.getpid()
    sock, rundir = tmp_path / "ctl.sock", tmp_path / "run"
    cmd = [ctld, "--standalone", "--workers", "2", "--socket", str(sock),
           "--config", str(tmp_path / "config.pb"), "--rundir", str(rundir),
           "--log-dir", str(tmp_path / "log"), "--file-prefix", prefix] + list(options)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:  # it did not refuse: stop it and what it started
            proc.terminate()
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 2, (proc.returncode, out, err)
    assert not sock.exists() and not rundir.exists()
    assert not os.path.exists("/var/run/dpdk/%s" % prefix)
    assert not processes_matching(lambda argv: prefix in argv)
    return err


def stop_all(gateways, topo):
    """Stops the gateways, deletes the topology; returns the problems seen
    (an unclean shutdown is a test failure)."""
    problems = []
    for gw in gateways:
        gw_problems = gw.stop()
        if gw_problems:
            gw.print_logs()
            problems += ["%s: %s" % (gw.name, p) for p in gw_problems]
    topo.teardown()
    if not problems:
        # Logs of failed tests are already in their reports.
        shutil.rmtree(os.path.join(WORK_ROOT, topo.tag), ignore_errors=True)
    return problems


@contextlib.contextmanager
def gateway_pair(workers=1, prepare=None, ctld_args=()):
    """h1 -- gw1 -- gw2 -- h2 with both gateways started but not configured.
    prepare(ns), if given, runs on the topology before the gateways start;
    ctld_args are more esgw-ctld options for both. Yields (ns, gw1, gw2);
    everything is torn down afterwards, and an unclean shutdown fails the
    caller."""
    topo = Topology()
    gateways = []
    try:
        ns = build_standard(topo)
        if prepare is not None:
            prepare(ns)
        for name in ("gw1", "gw2"):
            gw = Gateway(name, ns[name], topo.tag, workers=workers, ctld_args=ctld_args)
            gateways.append(gw)
            gw.start()
        yield ns, gateways[0], gateways[1]
    finally:
        problems = stop_all(gateways, topo)
    assert not problems, "unclean shutdown: " + "; ".join(problems)


@contextlib.contextmanager
def configured_pair(alg, workers=1):
    """gateway_pair with both gateways configured for one algorithm (the
    standard tunnel of configure_gw1 and configure_gw2). Yields a dict: ns,
    gw1, gw2."""
    require_root_and_binaries()
    with gateway_pair(workers=workers) as (ns, gw1, gw2):
        configure_gw1(gw1, alg)
        configure_gw2(gw2, alg)
        yield {"ns": ns, "gw1": gw1, "gw2": gw2}


class LinkSniffer:
    """Every frame on one link that a namespace's end of it receives, from an
    AF_PACKET socket and a thread (what the gateway sends there, ESP and
    clear alike); frames() copies, clear() forgets."""

    def __init__(self, netns, dev, ethertype=0x0003):
        with in_netns(netns):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ethertype))
        self.sock.bind((dev, ethertype))
        self.sock.settimeout(0.2)
        self.lock = threading.Lock()
        self._frames = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                frame, addr = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            with self.lock:
                self._frames.append(frame)

    def frames(self):
        with self.lock:
            return list(self._frames)

    def take(self):
        """The frames so far, forgotten."""
        with self.lock:
            got, self._frames = self._frames, []
        return got

    def clear(self):
        self.take()

    def with_bytes(self, needle):
        return [f for f in self.frames() if needle in f]

    def close(self):
        self.stop.set()
        self.thread.join(2)
        self.sock.close()


def sa_add_args(sa_id, spi, alg):
    k = KEYS[alg][spi]
    args = ["sa", "add", sa_id, "spi", spi, "alg", alg, "crypto-key", k["crypto"]]
    if "integ" in k:
        args += ["integ-key", k["integ"]]
    if "salt" in k:
        args += ["salt", k["salt"]]
    return args


def configure_gw1(gw, alg, wan_device=None):
    gw.configure_tunnel(alg, "gw1-lan", GW1_LAN + "/24", "gw1-wan", GW1_WAN + "/24",
                        GW1_WAN, GW2_WAN, "192.168.2.0/24", SPI_GW1_OUT, SPI_GW1_IN,
                        wan_device=wan_device)


def configure_gw2(gw, alg, wan_device=None):
    # Mirrored: gw2 sends with spi 2000 and receives with spi 1000.
    gw.configure_tunnel(alg, "gw2-lan", GW2_LAN + "/24", "gw2-wan", GW2_WAN + "/24",
                        GW2_WAN, GW1_WAN, "192.168.1.0/24", SPI_GW1_IN, SPI_GW1_OUT,
                        sa_out=SA_ID_GW1_IN, sa_in=SA_ID_GW1_OUT, wan_device=wan_device)


# ---------------------------------------------------------- scapy reference

def scapy_sa(alg, spi, src, dst):
    """The scapy SecurityAssociation for one direction of the standard SAs;
    src/dst are the outer (tunnel) addresses."""
    from scapy.layers.inet import IP
    from scapy.layers.ipsec import ESP, SecurityAssociation
    k = KEYS[alg][spi]
    if alg == "aes-gcm-128":
        return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-GCM",
                                   crypt_key=bytes.fromhex(k["crypto"] + k["salt"]),
                                   tunnel_header=IP(src=src, dst=dst))
    return SecurityAssociation(ESP, spi=spi, crypt_algo="AES-CBC",
                               crypt_key=bytes.fromhex(k["crypto"]),
                               auth_algo="HMAC-SHA1-96", auth_key=bytes.fromhex(k["integ"]),
                               tunnel_header=IP(src=src, dst=dst))


class ScapyPeer:
    """The far end of gw1's tunnel, in the "peer" namespace whose kernel owns
    192.168.3.2. It receives ESP on a raw IPPROTO_ESP socket (holding that socket
    also keeps the kernel from answering ESP with ICMP protocol-unreachable) and
    sends whole frames to gw1's MAC on an AF_PACKET socket, so that it can send
    anything, malformed packets included."""

    def __init__(self, netns, dev, alg, gw_mac):
        self.netns = netns
        self.dev = dev
        self.alg = alg
        self.gw_mac = gw_mac
        # What gw1 sends (its outbound SA) and what it expects (its inbound SA).
        self.sa_from_gw = scapy_sa(alg, SPI_GW1_OUT, GW1_WAN, GW2_WAN)
        self.sa_to_gw = scapy_sa(alg, SPI_GW1_IN, GW2_WAN, GW1_WAN)
        self.mac = link_mac(netns, dev)
        with in_netns(netns):
            self.esp_sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
            self.l2_sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            self.l2_sock.bind((dev, 0))

    def close(self):
        self.esp_sock.close()
        self.l2_sock.close()

    def drain(self):
        drain_socket(self.esp_sock)

    def recv_esp(self, timeout=5.0, match=None):
        """Next ESP packet from gw1 as a scapy IP packet (match filters on the
        decrypted inner packet when given); None on timeout."""
        from scapy.layers.inet import IP
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.esp_sock.settimeout(left)
            try:
                data = self.esp_sock.recv(65535)
            except socket.timeout:
                return None
            pkt = IP(data)
            if match is None or match(pkt):
                return pkt

    def decrypt(self, outer):
        return self.sa_from_gw.decrypt(outer.copy())  # scapy edits its argument

    def encrypt(self, inner, seq_num=None):
        """An outer IP/ESP packet to gw1 carrying inner, with the next sequence
        number of the inbound SA (or seq_num)."""
        return self.sa_to_gw.encrypt(inner, seq_num=seq_num)

    def send_frame(self, ip_pkt):
        """Sends an IP packet (scapy, or bytes of an IP packet) to gw1's MAC."""
        from scapy.layers.l2 import Ether
        payload = bytes(ip_pkt)
        frame = Ether(dst=self.gw_mac, src=self.mac, type=0x0800) / payload
        self.l2_sock.send(bytes(frame))


PORT_H1 = 9998


def inbound_udp(peer, marker, sport=5555, dport=PORT_H1):
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    return peer.encrypt(IP(src=H2_ADDR, dst=H1_ADDR, ttl=64) /
                        UDP(sport=sport, dport=dport) / Raw(marker))


def send_to_h1_until_received(setup, marker, tries=10):
    """Scapy encrypts UDP 192.168.2.1 -> h1 and sends it to gw1 until h1's socket
    gets it (the first may wait for gw1's ARP of h1). Returns (data, addr)."""
    peer = setup["peer"]
    s = udp_socket(setup["ns"]["h1"], H1_ADDR, PORT_H1, timeout=1.0)
    try:
        for _ in range(tries):
            peer.send_frame(inbound_udp(peer, marker))
            try:
                while True:
                    data, addr = s.recvfrom(2048)
                    if data == marker:
                        return data, addr
            except OSError:  # timeout
                continue
    finally:
        s.close()
    raise AssertionError("h1 never received %r from the scapy peer" % marker)


def udp_socket(netns, addr, port=0, timeout=5.0):
    with in_netns(netns):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    s.settimeout(timeout)
    return s


def peer_wan_sockets(ns):
    """A raw socket on the peer's WAN link (peer-wan) to send frames to gw1,
    and an ESP socket that keeps the peer's kernel from answering ESP with
    ICMP unreachables; with the two links' MACs in a dict."""
    with in_netns(ns["peer"]):
        l2 = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        esp_sink = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
    l2.bind(("peer-wan", 0))
    macs = {"gw_mac": link_mac(ns["gw1"], "gw1-wan"), "peer_mac": link_mac(ns["peer"], "peer-wan")}
    return l2, esp_sink, macs


def received_after(s, send, payload, tries=8):
    """Calls send() until UDP socket s (with a timeout) receives payload, at
    most tries times; returns what it received last (None: nothing)."""
    got = None
    for _ in range(tries):
        send()
        try:
            got, _ = s.recvfrom(2048)
            if got == payload:
                break
        except OSError:
            continue
    return got


def dropped_not_received(gw, s, send, payload, counter):
    """send() once; the gateway counts it as drop counter and payload never
    reaches UDP socket s (which has a timeout)."""
    before = gw.total_drop(counter)
    send()
    wait_for(lambda: gw.total_drop(counter) > before, 10, 0.3, counter)
    try:
        while s.recvfrom(2048)[0] != payload:
            pass
    except OSError:
        return
    raise AssertionError("%r was delivered although %s counted it" % (payload, counter))


def thread_wakes(pid):
    """{thread name: voluntary context switches} of the process's threads."""
    wakes = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                status = dict(l.split(":", 1) for l in f if ":" in l)
        except OSError:
            continue  # a thread that just ended
        name = "%s/%s" % (status["Name"].strip(), tid)
        wakes[name] = int(status["voluntary_ctxt_switches"])
    return wakes


def ping(netns, dst, count=3, timeout=20, size=None):
    if shutil.which("ping") is None:
        raise HarnessError("ping is not installed (apt-get install iputils-ping)")
    cmd = ["ping", "-c", str(count), "-i", "0.2", "-W", "2"]
    if size:
        cmd += ["-s", str(size)]
    return nsrun(netns, cmd + [dst], check=False, timeout=timeout)


def ping_until_ok(netns, dst, timeout=20):
    """The first packets may be lost while ARP resolves: retry a few pings."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = ping(netns, dst, count=1)
        if last.returncode == 0:
            return last
    raise HarnessError("ping %s from %s never succeeded:\n%s%s" % (
        dst, netns, last.stdout if last else "", last.stderr if last else ""))


# ------------------------------------------------ sequence-numbered stream

_STREAM = r'''
import json, signal, socket, struct, sys, time
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
mode = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if mode == "send":
    src, dst, port, rate = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    s.bind((src, 0))
    seq = errors = 0
    pad = b"x" * 100
    print("ready", flush=True)
    start = time.monotonic()
    while not stop:
        due = int((time.monotonic() - start) * rate)
        while seq < due:
            try:
                s.sendto(struct.pack("!Q", seq) + pad, (dst, port))
            except OSError:
                errors += 1  # never sent: the receiver is told by "sent"
                continue
            seq += 1
        time.sleep(0.001)
    print(json.dumps({"sent": seq, "send_errors": errors}), flush=True)
else:
    addr, port = sys.argv[2], int(sys.argv[3])
    # FORCE: past net.core.rmem_max, so a receiver the scheduler leaves out
    # for a moment (two cores, two gateways) does not lose what the tunnel
    # delivered.
    s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
    s.bind((addr, port))
    s.settimeout(0.1)
    seen = set()
    top = -1
    reordered = duplicates = 0
    last = None
    gap = 0.0
    gap_after = -1
    print("ready", flush=True)
    while not stop:
        try:
            data = s.recv(2048)
        except socket.timeout:
            continue
        now = time.monotonic()
        seq = struct.unpack("!Q", data[:8])[0]
        if seq in seen:
            duplicates += 1
            continue
        seen.add(seq)
        if seq < top:
            reordered += 1
        else:
            top = seq
        if last is not None and now - last > gap:
            gap, gap_after = now - last, seq
        last = now
    snmp = [l.split() for l in open("/proc/net/snmp") if l.startswith("Udp:")]
    udp = dict(zip(snmp[0][1:], map(int, snmp[1][1:])))
    print(json.dumps({"received": len(seen), "top": top, "reordered": reordered,
                      "rcvbuf_errors": udp.get("RcvbufErrors", 0),
                      "duplicates": duplicates, "max_gap": gap, "gap_at": gap_after}),
          flush=True)
'''


class Stream:
    """A paced sequence-numbered UDP stream src -> dst at rate packets per
    second, sender and receiver each a process in its namespace (true
    parallelism on two cores; the receiver starts first). stop() returns what
    the receiver counted: lost, reordered, duplicated numbers, the longest
    silence."""

    def __init__(self, name, src_ns, src, dst_ns, dst, port, rate=2000):
        self.name = name
        self.recv = self._spawn(dst_ns, ["recv", dst, str(port)])
        self.send = self._spawn(src_ns, ["send", src, dst, str(port), str(rate)])
        self.result = None

    @staticmethod
    def _spawn(ns, args):
        p = subprocess.Popen(["ip", "netns", "exec", ns, "/usr/bin/python3", "-c", _STREAM] + args,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            raise HarnessError("stream process did not start: %s %s" % (line, p.stderr.read()))
        return p

    @staticmethod
    def _finish(p):
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
        lines = [l for l in out.splitlines() if l.startswith("{")]
        if not lines:
            raise HarnessError("stream process said nothing: %s" % err)
        return json.loads(lines[-1])

    def stop(self, drain=1.5):
        sent = self._finish(self.send)
        time.sleep(drain)  # what is still in flight arrives
        got = self._finish(self.recv)
        got.update(sent)
        got["lost"] = got["sent"] - got["received"]
        got["name"] = self.name
        self.result = got
        print("stream %s: %s" % (self.name, json.dumps(got)))
        return got

    def kill(self):
        for p in (self.send, self.recv):
            if p.poll() is None:
                p.kill()
                p.wait()


def stop_streams(streams):
    """What each stream's receiver counted; every stream's processes end."""
    try:
        return [s.stop() for s in streams]
    finally:
        for s in streams:
            s.kill()


# ------------------------------------------------------------ TCP transfer

def tcp_transfer(src_ns, dst_ns, dst_addr, payload, port=5201, timeout=120):
    """Sends payload over TCP from src_ns to dst_addr in dst_ns; the receiver
    answers with the sha256 of what it got. Returns (sent_digest, received_digest,
    received_len, seconds)."""
    with in_netns(dst_ns):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((dst_addr, port))
    server.listen(1)
    server.settimeout(timeout)
    result = {}

    def serve():
        try:
            conn, _ = server.accept()
            conn.settimeout(timeout)
            h = hashlib.sha256()
            n = 0
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
            result["digest"] = h.hexdigest()
            result["len"] = n
            conn.sendall(h.hexdigest().encode())
            conn.close()
        except Exception as exc:
            result["error"] = repr(exc)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with in_netns(src_ns):
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.settimeout(timeout)
    start = time.monotonic()
    try:
        client.connect((dst_addr, port))
        client.sendall(payload)
        client.shutdown(socket.SHUT_WR)
        echoed = b""
        while True:
            chunk = client.recv(256)
            if not chunk:
                break
            echoed += chunk
    finally:
        client.close()
        t.join(timeout)
        server.close()
    seconds = time.monotonic() - start
    if "error" in result:
        raise HarnessError("TCP receiver: %s" % result["error"])
    return hashlib.sha256(payload).hexdigest(), echoed.decode(), result.get("len"), seconds


# ------------------------------------------------------------------ capture

class Capture:
    """tcpdump -w on a device inside a namespace, packets of one direction
    (optionally only the first snaplen bytes of those a filter selects)."""

    def __init__(self, netns, dev, path, direction="in", snaplen=0, bpf=None):
        self.path = path
        os.chmod(os.path.dirname(os.path.abspath(path)), 0o777)  # tcpdump drops to its user
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", netns, "tcpdump", "-i", dev, "-p", "-n", "-U",
             "-s", str(snaplen), "-Q", direction, "-w", path] + ([bpf] if bpf else []),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on" once the socket is open.
        seen = []
        while True:
            line = self.proc.stderr.readline()
            seen.append(line)
            if "listening" in line:
                break
            if not line:
                self.proc.kill()
                self.proc.wait()
                raise HarnessError("tcpdump did not start: %s" % "".join(seen))

    def stop(self, parse=True):
        """Stops tcpdump; returns the packets (scapy), or None unless parse."""
        if self.proc.poll() is None:
            time.sleep(0.5)  # let the last packets reach the file
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not parse:
            return None
        import scapy.layers.inet  # noqa: F401  (registers Ethernet, IPv4 for rdpcap)
        import scapy.layers.ipsec  # noqa: F401
        import scapy.layers.l2  # noqa: F401
        from scapy.utils import rdpcap
        return rdpcap(self.path)


def esp_headers(path, iv_len=8):
    """[(spi, seq, iv)] of the ESP packets (Ethernet, IPv4, ESP or ESP in UDP
    4500) in a pcap file, in capture order: iv is the first iv_len bytes
    after the ESP header. Parsed by hand: fast on captures of 100k packets."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return out
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ihl = (frame[14] & 0x0f) * 4
        esp = 14 + ihl
        if frame[14 + 9] == 17:  # RFC 3948: ESP after 8 bytes of UDP
            esp += 8
        elif frame[14 + 9] != 50:
            continue
        if len(frame) < esp + 8 + iv_len:
            continue
        spi, seq = struct.unpack("!II", frame[esp:esp + 8])
        out.append((spi, seq, bytes(frame[esp + 8:esp + 8 + iv_len])))
    return out


_PB = []


def esgw_pb2():
    """The esgw_pb2 module generated from proto/esgw.proto (protoc, python
    protobuf), once per run; None when either is missing."""
    if not _PB:
        proto_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto")
        out = os.path.join(WORK_ROOT, "pb-%d" % os.getpid())
        os.makedirs(out, exist_ok=True)
        try:
            run(["protoc", "--python_out", out, "-I", proto_dir,
                 os.path.join(proto_dir, "esgw.proto")])
            import sys
            sys.path.insert(0, out)
            import esgw_pb2 as pb  # noqa: E402
            _PB.append(pb)
        except (OSError, HarnessError, ImportError):
            _PB.append(None)
    return _PB[0]


# ------------------------------------------------------ traffic and events

def ping_flood(ns, seconds, interval="0.002", size=1000, src=None, dst=H2_ADDR):
    """Pings dst (h2) from h1 (from address src) about 500 times a second for
    `seconds` (background)."""
    return subprocess.Popen(["ip", "netns", "exec", ns["h1"], "ping", "-q", "-i", interval,
                             "-s", str(size), "-w", str(seconds)] +
                            (["-I", src] if src else []) + [dst],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class EventStream:
    """`esgwctl --json events` in the background; lines parsed into a queue."""

    def __init__(self, gw):
        self.proc = subprocess.Popen(
            [find_binary("esgwctl"), "--socket", gw.socket, "--json", "events"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.events = queue.Queue()
        self.seen = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            if line.strip():
                self.events.put(json.loads(line))

    def expect(self, match, timeout=10.0, what="event"):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %s in %.0f s; seen: %s" % (what, timeout, self.seen))
            try:
                ev = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(ev)
            if match(ev):
                return ev

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        return self.proc.returncode
