# SPDX-License-Identifier: BSD-3-Clause
"""The control plane alone: esgw-ctld in systemd mode (no dataplane forked) on a
private socket and config, driven by esgwctl and by raw protobuf clients; fake
dataplane processes (python) stand in for rxtx/router/crypto to check what ctld
pushes to whom and how it merges their stats.

Run: /usr/bin/python3 -m pytest tests/integration/test_ctl_api.py
Binaries come from $ESGW_BUILD (default /work/main/build)."""
import ipaddress
import json
import os
import random
import shutil
import signal
import socket
import sys
import struct
import subprocess
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

BUILD = os.environ.get("ESGW_BUILD", "/work/main/build")
CTLD = os.path.join(BUILD, "ctl", "esgw-ctld")
ESGWCTL = os.path.join(BUILD, "ctl", "esgwctl")

CBC_KEY = "00112233445566778899aabbccddeeff"
SHA1_KEY = "0102030405060708090a0b0c0d0e0f1011121314"
GCM_KEY = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
GCM_SALT = "cafebabe"

pytestmark = pytest.mark.skipif(
    not (os.access(CTLD, os.X_OK) and os.access(ESGWCTL, os.X_OK)),
    reason="esgw-ctld/esgwctl not built in " + BUILD)


# ---------------------------------------------------------------- helpers

def send_frame(sock, body):
    sock.sendall(struct.pack(">I", len(body)) + body)


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def recv_frame(sock):
    (n,) = struct.unpack(">I", recv_exact(sock, 4))
    return recv_exact(sock, n)


def dp_ip(b):
    """An address of proto/dataplane.proto (4 or 16 bytes) as text; "" for none."""
    return str(ipaddress.ip_address(b)) if b else ""


def dp_prefix(p):
    """A DpPrefix as text "ADDR/LEN", host bits as sent."""
    return "%s/%d" % (dp_ip(p.address), p.length)


class Ctld:
    """One esgw-ctld on private paths under tmp."""

    def __init__(self, tmp, workers=1):
        self.tmp = tmp
        self.sock = str(tmp / "ctl.sock")
        self.config = str(tmp / "state" / "config.pb")
        self.rundir = str(tmp / "run")
        self.log = str(tmp / "ctld.log")
        self.workers = workers
        self.proc = None
        os.makedirs(self.rundir, exist_ok=True)

    def start(self, extra=()):
        args = [CTLD, "--socket", self.sock, "--config", self.config, "--rundir", self.rundir,
                "--workers", str(self.workers), *extra]
        self.proc = subprocess.Popen(args, stdout=open(self.log, "a"), stderr=subprocess.STDOUT)
        deadline = time.time() + 5
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("esgw-ctld exited: " + open(self.log).read())
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.sock)
                s.close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("esgw-ctld did not open its socket")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=10)
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ctl(self, *args, env=None, input=None):
        """esgwctl; the keys of an `sa add` go in on standard input unless
        input is given (then args are as they are)."""
        if input is None:
            args, input = h.stdin_keys(list(args))
        return subprocess.run([ESGWCTL, "--socket", self.sock, *args], capture_output=True,
                              text=True, timeout=60, env=env, input=input)

    def ok(self, *args):
        r = self.ctl(*args)
        assert r.returncode == 0, (args, r.stderr)
        return r.stdout

    def json(self, *args):
        return json.loads(self.ok("--json", *args))

    def logtext(self):
        return open(self.log).read()


@pytest.fixture
def ctld(tmp_path):
    d = Ctld(tmp_path).start()
    yield d
    d.stop()


def basic_config(d):
    d.ok("interface", "add", "wan", "net_af_packet0,iface=hb-wan")
    d.ok("interface", "add", "lan", "net_af_packet1,iface=hb-lan", "mtu", "1400")
    d.ok("interface", "address", "add", "wan", "192.0.2.1/24")
    d.ok("interface", "address", "add", "lan", "10.1.0.1/24")
    d.ok("sa", "add", "10", "spi", "1000", "alg", "aes-cbc-128-sha1-96", "crypto-key", CBC_KEY,
         "integ-key", SHA1_KEY)
    d.ok("sa", "add", "20", "spi", "0x7d0", "alg", "aes-gcm-128", "crypto-key", GCM_KEY,
         "salt", GCM_SALT, "replay-window", "128", "worker", "0")
    d.ok("tunnel", "add", "t0", "local", "192.0.2.1", "remote", "192.0.2.2", "sa-out", "10",
         "sa-in", "20")
    d.ok("route", "add", "10.2.0.0/24", "tunnel", "t0")
    d.ok("route", "add", "0.0.0.0/0", "via", "192.0.2.254", "dev", "wan")


# ---------------------------------------------------------------- CLI and API

def test_help_lists_commands(ctld):
    out = ctld.ok("help")
    for cmd in ["interface add", "interface address add", "route add", "sa add", "sa del",
                "tunnel add", "show interfaces"]:
        assert cmd in out


def test_every_command_and_show(ctld):
    basic_config(ctld)
    ifs = ctld.json("show", "interfaces")["interfaces"]
    assert [i["name"] for i in ifs] == ["wan", "lan"]
    assert ifs[0]["addresses"] == ["192.0.2.1/24"] and ifs[0]["mtu"] == 1500
    assert ifs[1]["mtu"] == 1400 and ifs[1]["port_id"] == -1
    for k in ["devargs", "mac", "rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_missed",
              "tx_errors"]:
        assert k in ifs[0]

    routes = ctld.json("show", "routes")["routes"]
    assert routes[0]["prefix"] == "10.2.0.0/24" and routes[0]["tunnel"] == "t0"
    assert routes[1]["via"] == "192.0.2.254" and routes[1]["interface"] == "wan"

    tunnels = ctld.json("show", "tunnels")["tunnels"]
    assert tunnels == [{"name": "t0", "local": "192.0.2.1", "remote": "192.0.2.2",
                        "sa_out": 10, "sa_in": [20]}]

    sas = {s["id"]: s for s in ctld.json("show", "sa")["sas"]}
    assert sas[10]["spi"] == 1000 and sas[10]["direction"] == "out"
    assert sas[10]["algorithm"] == "aes-cbc-128-sha1-96" and sas[10]["tunnel"] == "t0"
    assert sas[20]["direction"] == "in" and sas[20]["replay_window"] == 128
    assert sas[10]["replay_window"] == 64 and sas[10]["worker"] == 0
    for k in ["packets", "bytes", "seq_out", "replay_top"]:
        assert sas[10][k] == 0
    assert sas[10]["drops"]["auth_failed"] == 0 and sas[10]["drops"]["replay"] == 0

    human = ctld.ok("show", "sa")
    assert "0x000003e8" in human and "1000" in human and "aes-gcm-128" in human

    workers = ctld.json("show", "workers")["workers"]
    assert workers[0]["id"] == 0 and sorted(workers[0]["sas"]) == [10, 20]
    assert workers[0]["state"] == "stopped" and "drops" in workers[0]

    stats = ctld.json("show", "stats")
    roles = [(p["role"], p["worker"]) for p in stats["processes"]]
    assert roles == [("rxtx", -1), ("router", -1), ("crypto", 0)]
    assert stats["processes"][0]["state"] == "stopped"
    assert stats["drops"]["no_sa"] == 0

    cfg = ctld.json("show", "config")["config"]
    assert [s["slot"] for s in cfg["sas"]] == [0, 1]
    text = ctld.ok("show", "config")
    assert CBC_KEY not in text and GCM_KEY not in text
    assert CBC_KEY not in json.dumps(cfg)

    # and delete everything again, in dependency order
    ctld.ok("route", "del", "10.2.0.0/24")
    ctld.ok("route", "del", "0.0.0.0/0")
    ctld.ok("tunnel", "del", "t0")
    ctld.ok("sa", "del", "10")
    ctld.ok("sa", "del", "20")
    ctld.ok("interface", "address", "del", "wan", "192.0.2.1/24")
    ctld.ok("interface", "del", "wan")
    ctld.ok("interface", "del", "lan")
    cfg = ctld.json("show", "config")["config"]
    assert cfg["interfaces"] == [] and cfg["sas"] == [] and cfg["routes"] == []


def test_global_options_anywhere(ctld, tmp_path):
    basic_config(ctld)
    a = subprocess.run([ESGWCTL, "--json", "--socket", ctld.sock, "show", "sa"],
                       capture_output=True, text=True)
    b = subprocess.run([ESGWCTL, "show", "sa", "--json", "--socket", ctld.sock],
                       capture_output=True, text=True)
    env = dict(os.environ, ESGW_SOCKET=ctld.sock)
    c = subprocess.run([ESGWCTL, "show", "sa", "--json"], capture_output=True, text=True,
                       env=env)
    assert a.returncode == b.returncode == c.returncode == 0
    assert json.loads(a.stdout) == json.loads(b.stdout) == json.loads(c.stdout)


USAGE_ERRORS = [
    (["interface", "address", "add", "wan", "10.0.0.300/24"], "address"),
    (["interface", "address", "add", "wan"], "missing"),
    (["route", "add", "10.2.0.0/33", "via", "1.2.3.4"], "prefix"),
    (["route", "add", "10.2.0.0/24", "via", "1.2.3"], "next hop"),
    (["route", "add", "10.2.0.0/24"], "missing"),
    (["sa", "add", "30", "spi", "3000", "alg", "aes-ctr", "crypto-key", CBC_KEY], "algorithm"),
    (["sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key", "zz" * 16,
      "salt", GCM_SALT], "hex"),
    (["sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY],
     "salt"),
    (["sa", "add", "30", "spi", "3000", "alg", "aes-cbc-128-sha1-96", "crypto-key", CBC_KEY],
     "integ-key"),
    (["sa", "add", "30", "spi", "0", "alg", "aes-cbc-128-sha1-96", "crypto-key", CBC_KEY,
      "integ-key", SHA1_KEY], "SPI"),
    (["sa", "add", "30", "alg", "aes-gcm-128", "crypto-key", GCM_KEY + GCM_SALT], "spi"),
    (["sa", "add", "30", "spi", "3000", "alg"], "missing"),
    (["tunnel", "add", "t1", "local", "1.1.1.1", "remote", "2.2.2.2", "sa-out", "10"], "sa-in"),
    (["tunnel", "add", "t1", "local", "1.1.1", "remote", "2.2.2.2", "sa-out", "10",
      "sa-in", "20"], "local"),
    (["tunnel", "add", "t1", "local", "1.1.1.1", "remote", "2.2.2.2", "sa-out", "10",
      "sa-in", "20,,x"], "sa-in"),
    (["interface", "add", "x" * 33, "net_af_packet5"], "longer"),
    (["frobnicate"], "unknown command"),
    (["show", "everything"], "unknown item"),
    ([], "missing command"),
]


@pytest.mark.parametrize("args,needle", USAGE_ERRORS)
def test_usage_errors(ctld, args, needle):
    basic_config(ctld)
    before = ctld.ok("--json", "show", "config")
    r = ctld.ctl(*args)
    assert r.returncode == 2, r
    assert r.stderr.startswith("esgwctl: ") and needle.lower() in r.stderr.lower(), r.stderr
    assert r.stderr.count("\n") == 1
    assert ctld.ok("--json", "show", "config") == before


REFUSALS = [
    (["interface", "add", "wan", "net_af_packet9"], "already exists"),
    (["interface", "add", "wan2", "net_af_packet0,iface=other"], "already used by interface wan"),
    (["interface", "del", "nope"], "does not exist"),
    (["interface", "del", "wan"], "route 0.0.0.0/0"),
    (["interface", "address", "add", "wan", "192.0.2.1/24"], "already has"),
    (["interface", "address", "del", "wan", "192.0.2.9/24"], "has no address"),
    (["interface", "address", "add", "nope", "1.2.3.4/24"], "does not exist"),
    (["route", "add", "10.2.0.0/24", "tunnel", "t0"], "already exists"),
    (["route", "add", "10.3.0.0/24", "tunnel", "nope"], "tunnel nope does not exist"),
    (["route", "add", "10.3.0.0/24", "via", "1.2.3.4", "dev", "nope"], "interface nope"),
    (["route", "add", "10.3.0.1/24", "via", "1.2.3.4"], "beyond its length"),
    (["route", "del", "10.9.0.0/24"], "does not exist"),
    (["sa", "add", "10", "spi", "5000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY + GCM_SALT],
     "SA 10 already exists"),
    (["sa", "add", "30", "spi", "1000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY + GCM_SALT],
     "used by SA 10"),
    (["sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY + GCM_SALT,
      "worker", "1"], "worker 1 does not exist"),
    (["sa", "del", "10"], "tunnel t0"),
    (["sa", "del", "99"], "does not exist"),
    (["tunnel", "add", "t1", "local", "1.1.1.1", "remote", "2.2.2.2", "sa-out", "10",
      "sa-in", "20"], "tunnel t0"),
    (["tunnel", "add", "t1", "local", "1.1.1.1", "remote", "2.2.2.2", "sa-out", "77",
      "sa-in", "20"], "SA 77 does not exist"),
    (["tunnel", "del", "t0"], "route 10.2.0.0/24"),
    (["tunnel", "del", "nope"], "does not exist"),
]


@pytest.mark.parametrize("args,needle", REFUSALS)
def test_ctld_refusals(ctld, args, needle):
    basic_config(ctld)
    before = ctld.ok("--json", "show", "config")
    r = ctld.ctl(*args)
    assert r.returncode == 1, r
    assert r.stderr.startswith("esgwctl: ") and needle in r.stderr, r.stderr
    assert ctld.ok("--json", "show", "config") == before


def test_gcm_key_forms_and_slots(ctld):
    ctld.ok("sa", "add", "1", "spi", "0x1001", "alg", "aes-gcm-128", "crypto-key",
            GCM_KEY + GCM_SALT)
    ctld.ok("sa", "add", "2", "spi", "0x1002", "alg", "aes-gcm-128", "crypto-key", GCM_KEY,
            "salt", GCM_SALT)
    ctld.ok("sa", "add", "3", "spi", "0x1003", "alg", "aes-cbc-128-sha1-96", "crypto-key",
            CBC_KEY, "integ-key", SHA1_KEY)
    slots = {s["id"]: s["slot"] for s in ctld.json("show", "config")["config"]["sas"]}
    assert slots == {1: 0, 2: 1, 3: 2}
    ctld.ok("sa", "del", "2")
    ctld.ok("sa", "add", "4", "spi", "0x1004", "alg", "aes-cbc-128-sha1-96", "crypto-key",
            CBC_KEY, "integ-key", SHA1_KEY)
    slots = {s["id"]: s["slot"] for s in ctld.json("show", "config")["config"]["sas"]}
    assert slots == {1: 0, 3: 2, 4: 1}  # lowest free slot
    # slots survive a restart unchanged
    ctld.stop()
    ctld.start()
    assert {s["id"]: s["slot"] for s in ctld.json("show", "config")["config"]["sas"]} == slots


def test_least_loaded_placement(tmp_path):
    d = Ctld(tmp_path, workers=3).start()
    try:
        for i in range(1, 7):
            d.ok("sa", "add", str(i), "spi", str(1000 + i), "alg", "aes-gcm-128", "crypto-key",
                 GCM_KEY + GCM_SALT)
        d.ok("sa", "add", "7", "spi", "2000", "alg", "aes-gcm-128", "crypto-key",
             GCM_KEY + GCM_SALT, "worker", "2")
        workers = {w["id"]: sorted(w["sas"]) for w in d.json("show", "workers")["workers"]}
        assert [len(workers[w]) for w in range(3)] == [2, 2, 3] and 7 in workers[2]
    finally:
        d.stop()


def test_persistence_across_kill9(ctld):
    basic_config(ctld)
    before = ctld.json("show", "config")
    ctld.stop(signal.SIGKILL)
    ctld.start()
    assert ctld.json("show", "config") == before
    assert oct(os.stat(ctld.config).st_mode & 0o777) == "0o600"  # it holds keys


def test_truncated_config_falls_back_to_prev(ctld):
    """A snapshot that does not parse is kept as .bad and the one before it
    (.prev) used; the journal, which follows the unusable snapshot, is not
    replayed on .prev. A start compacts the journal into a new snapshot."""
    basic_config(ctld)
    ctld.stop()
    ctld.start()  # compacted: the snapshot is basic_config
    good = ctld.json("show", "config")
    ctld.ok("sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key",
            GCM_KEY + GCM_SALT)
    ctld.stop()
    ctld.start()  # compacted again: .prev is basic_config
    ctld.stop()
    data = open(ctld.config, "rb").read()
    for cut in (len(data) - 1, len(data) - 2, len(data) - 5, len(data) // 2, 0):
        with open(ctld.config, "wb") as f:
            f.write(data[:cut])
        ctld.start()
        # .prev is the snapshot before the last compaction
        assert ctld.json("show", "config") == good, cut
        assert os.path.exists(ctld.config + ".bad")
        assert "unusable" in ctld.logtext()
        ctld.stop()
        os.unlink(ctld.config + ".bad")
        # put the newest back for the next cut
        with open(ctld.config, "wb") as f:
            f.write(data)


def sc_write(path, lines):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")


def journal_with_sa_30(ctld):
    """basic_config in a snapshot, SA 30 added after it: the journal's last
    record. The configuration before it, and the journal's bytes."""
    basic_config(ctld)
    ctld.stop()
    ctld.start()  # compacted: the snapshot is basic_config, the journal empty
    good = ctld.json("show", "config")
    ctld.ok("route", "add", "10.3.0.0/24", "tunnel", "t0")
    mid = ctld.json("show", "config")
    ctld.ok("sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key",
            GCM_KEY + GCM_SALT)
    ctld.stop()
    with open(ctld.config + ".journal", "rb") as f:
        data = f.read()
    assert len(h.journal_records(ctld.config + ".journal")) == 3  # snapshot id, 2 changes
    return good, mid, data


@pytest.mark.parametrize("damage", ["torn", "corrupt"])
def test_journal_torn_or_corrupt_record_refused(ctld, pb, damage):
    """A journal whose last record was cut short (a crash mid-append) or does
    not match its CRC is refused from that record on, with a message naming
    the file and the offset; the state of the last good record is restored
    and compacted into the snapshot, the journal kept as .journal.bad."""
    good, mid, data = journal_with_sa_30(ctld)
    last = len(data) - len(h.journal_records(ctld.config + ".journal")[-1]) - 8
    damaged = data[:-3] if damage == "torn" else \
        data[:last + 12] + bytes([data[last + 12] ^ 0xff]) + data[last + 13:]
    with open(ctld.config + ".journal", "wb") as f:
        f.write(damaged)
    ctld.start()
    assert ctld.json("show", "config") == mid
    log = ctld.logtext()
    assert "%s.journal: record at offset %d is %s" % (ctld.config, last, damage) in log, log
    assert os.path.exists(ctld.config + ".journal.bad")
    # What was restored is in the snapshot now, alone.
    assert len(h.journal_records(ctld.config + ".journal")) == 1
    assert [r.prefix for r in pb.Config.FromString(open(ctld.config, "rb").read()).routes] == \
        [r["prefix"] for r in mid["config"]["routes"]]
    ctld.stop()
    ctld.start()
    assert ctld.json("show", "config") == mid
    assert good != mid


def test_journal_replayed_and_compacted(ctld, pb):
    """Changes after the snapshot are in the journal only, replayed at start
    and then compacted into a snapshot that loads alone; a change whose
    record would take the journal past its bound is saved as a snapshot."""
    good, mid, data = journal_with_sa_30(ctld)
    snapshot = open(ctld.config, "rb").read()
    assert not any(s.id == 30 for s in pb.Config.FromString(snapshot).sas)
    assert any(s.id == 30 for s in h.saved_config(pb, ctld.config).sas)
    ctld.start()
    after = ctld.json("show", "config")
    assert any(s["id"] == 30 for s in after["config"]["sas"])
    assert len(h.journal_records(ctld.config + ".journal")) == 1
    assert any(s.id == 30 for s in pb.Config.FromString(open(ctld.config, "rb").read()).sas)
    # One batch larger than the bound: saved whole, the journal starts anew.
    batch = ["route add 10.%d.%d.0/24 tunnel t0" % (100 + k // 250, k % 250)
             for k in range(4000)]
    path = os.path.join(os.path.dirname(ctld.config), "routes.batch")
    sc_write(path, batch)
    ctld.ok("-f", path)
    assert len(h.journal_records(ctld.config + ".journal")) == 1
    assert len(pb.Config.FromString(open(ctld.config, "rb").read()).routes) == \
        len(after["config"]["routes"]) + 4000
    ctld.stop()
    ctld.start()
    assert len(ctld.json("show", "config")["config"]["routes"]) == \
        len(after["config"]["routes"]) + 4000


def test_journal_replays_rekey_and_sa_update(ctld):
    """A rekey (`tunnel set`) and an `sa update` are journaled as the tunnel
    and SA they replace and their changed copies; a restart replays them to
    the same configuration."""
    basic_config(ctld)
    ctld.stop()
    ctld.start()  # compacted: the snapshot is basic_config, the journal empty
    ctld.ok("sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key",
            GCM_KEY + GCM_SALT)
    ctld.ok("tunnel", "set", "t0", "sa-out", "30", "sa-in", "20")
    ctld.ok("sa", "update", "30", "encap", "udp", "sport", "4600")
    ctld.ok("sa", "del", "10")
    after = ctld.json("show", "config")
    t0 = [t for t in after["config"]["tunnels"] if t["name"] == "t0"][0]
    sa30 = [s for s in after["config"]["sas"] if s["id"] == 30][0]
    assert t0["sa_out"] == 30 and sa30["udp_encap"] and sa30["udp_sport"] == 4600, after
    assert len(h.journal_records(ctld.config + ".journal")) == 5  # snapshot id, 4 changes
    ctld.stop()
    ctld.start()
    assert ctld.json("show", "config") == after


def test_config_files_are_private_and_never_followed(ctld, tmp_path):
    """The configuration, .prev and .bad stay 0600 even if a file was wider
    before; the temporary file is created anew (O_EXCL), never written
    through a link someone left in its place."""
    basic_config(ctld)
    os.chmod(ctld.config, 0o644)  # e.g. copied in by hand
    target = tmp_path / "elsewhere"
    for tmp in (".tmp", ".journal.tmp"):
        os.symlink(str(target), ctld.config + tmp)
    ctld.ok("route", "add", "10.9.0.0/24", "via", "192.0.2.254")  # journaled
    ctld.stop()
    ctld.start()  # compacted: a new snapshot and journal, through .tmp files
    ctld.ok("route", "add", "10.10.0.0/24", "via", "192.0.2.254")
    assert not target.exists(), "the save wrote through a symbolic link"
    for tmp in (".tmp", ".journal.tmp"):
        assert not os.path.islink(ctld.config + tmp)
    for f in (ctld.config, ctld.config + ".prev", ctld.config + ".journal"):
        assert oct(os.stat(f).st_mode & 0o777) == "0o600", f
    ctld.stop()
    ctld.start()  # compacted: .prev has the routes
    ctld.stop()
    os.chmod(ctld.config + ".prev", 0o644)
    with open(ctld.config, "r+b") as f:
        f.truncate(3)  # unusable: set aside as .bad, .prev used
    ctld.start()
    for f in (ctld.config, ctld.config + ".prev", ctld.config + ".bad"):
        assert oct(os.stat(f).st_mode & 0o777) == "0o600", f
    assert ctld.json("show", "routes")["routes"]


def test_run_directory_checked(tmp_path):
    """Sockets that carry keys are made only in a directory nobody else can
    change; their modes are 0660 (API) and 0600 (dataplane)."""
    for mode, owner, needle in ((0o777, 0, "writable by every user"),
                                (0o775, 0, "writable by its group"),
                                (0o755, 65534, "belongs to uid 65534")):
        d = Ctld(tmp_path)
        os.chmod(d.rundir, mode)
        os.chown(d.rundir, owner, 0)
        d.proc = subprocess.Popen([CTLD, "--socket", d.sock, "--config", d.config,
                                   "--rundir", d.rundir], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        out = d.proc.communicate(timeout=10)[0]
        assert d.proc.returncode == 1 and needle in out, out
        os.chmod(d.rundir, 0o755)
        os.chown(d.rundir, 0, 0)
    os.symlink(str(tmp_path / "run"), str(tmp_path / "run-link"))
    d = Ctld(tmp_path)
    d.rundir = str(tmp_path / "run-link")
    d.proc = subprocess.Popen([CTLD, "--socket", d.sock, "--config", d.config, "--rundir",
                               d.rundir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    out = d.proc.communicate(timeout=10)[0]
    assert d.proc.returncode == 1 and "symbolic link" in out, out
    d = Ctld(tmp_path).start()
    try:
        assert oct(os.stat(d.sock).st_mode & 0o777) == "0o660"
    finally:
        d.stop()


NOBODY_DP = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
print("ready", flush=True)
got = 0
while True:
    c, _ = s.accept()
    while True:
        data = c.recv(65536)
        if not data:
            break
        got += len(data)
        print("got %d" % got, flush=True)
"""


def test_keys_only_to_a_dataplane_socket_of_ours(tmp_path, pb):
    """A process of another user listening where crypto-0's socket should be
    gets nothing: ctld checks the peer (SO_PEERCRED) before it pushes keys."""
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs root and setpriv")
    import tempfile
    spot = tempfile.mkdtemp(prefix="esgw-nobody-")
    os.chmod(spot, 0o777)
    d = Ctld(tmp_path)
    fake = subprocess.Popen(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                             "--clear-groups", "/usr/bin/python3", "-c", NOBODY_DP,
                             os.path.join(spot, "s")], stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout.readline().strip() == "ready"
        os.rename(os.path.join(spot, "s"), os.path.join(d.rundir, "crypto-0.sock"))
        d.start()
        d.ok("sa", "add", "10", "spi", "1000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY,
             "salt", GCM_SALT)
        h_wait(lambda: "is not ours" in d.logtext(), 10)
        assert "crypto-0" in d.logtext() and "uid 65534" in d.logtext()
    finally:
        d.stop()
        fake.kill()
        out = fake.communicate(timeout=10)[0]
        shutil.rmtree(spot, ignore_errors=True)
    assert "got" not in out, "a DpConfig went to another user's process: " + out


def test_garbage_config_without_prev_starts_empty(tmp_path):
    d = Ctld(tmp_path)
    os.makedirs(os.path.dirname(d.config))
    with open(d.config, "wb") as f:
        f.write(os.urandom(300))
    d.start()
    try:
        cfg = d.json("show", "config")["config"]
        assert cfg["interfaces"] == [] and cfg["sas"] == []
        assert os.path.exists(d.config + ".bad")
        d.ok("interface", "add", "wan", "net_af_packet0")
    finally:
        d.stop()


def test_sigterm_exits_cleanly(tmp_path):
    d = Ctld(tmp_path).start()
    assert d.stop() == 0
    assert not os.path.exists(d.sock)


def test_idle_does_not_spin(ctld):
    basic_config(ctld)
    pid = ctld.proc.pid

    def cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    t0 = cpu()
    time.sleep(3)
    assert cpu() - t0 < 0.1


# ---------------------------------------------------------------- key input

def saved_keys(d, pb, sa_id):
    sa = next(s for s in h.saved_config(pb, d.config).sas if s.id == sa_id)
    return sa.crypto_key.hex(), sa.integ_key.hex(), sa.salt.hex()


def wait_cmdline(pid, what):
    """/proc/PID/cmdline once PID runs `what` (not the forked python yet)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read()
        if what.encode() in cmd:
            return cmd
        time.sleep(0.01)
    raise AssertionError("pid %d never ran %s" % (pid, what))


def test_keys_from_stdin_and_key_file(ctld, pb, tmp_path):
    base = ["sa", "add", "40", "spi", "4000", "alg", "aes-cbc-128-sha1-96"]
    # Standard input, one line per '-', in order; keys not on the command line
    # while esgwctl runs (it waits for them here).
    p = subprocess.Popen([ESGWCTL, "--socket", ctld.sock] + base +
                         ["integ-key", "-", "crypto-key", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cmd = wait_cmdline(p.pid, "esgwctl")
    assert CBC_KEY.encode() not in cmd and SHA1_KEY.encode() not in cmd
    out, err = p.communicate(SHA1_KEY + "\n" + CBC_KEY + "\n", timeout=30)
    assert p.returncode == 0 and err == "", err
    assert saved_keys(ctld, pb, 40) == (CBC_KEY, SHA1_KEY, "")

    # A key file: mode 0600, the caller's; comments and blank lines allowed.
    kf = tmp_path / "sa41.keys"
    kf.write_text("# SA 41\ncrypto-key %s\n\nsalt %s\n" % (GCM_KEY, GCM_SALT))
    kf.chmod(0o600)
    r = ctld.ctl("sa", "add", "41", "spi", "4001", "alg", "aes-gcm-128", "key-file", str(kf),
                 input="")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert saved_keys(ctld, pb, 41) == (GCM_KEY, "", GCM_SALT)

    before = ctld.ok("--json", "show", "config")
    for mode, needle in ((0o644, "mode 0644"), (0o640, "mode 0640"), (0o604, "mode 0604")):
        kf.chmod(mode)
        r = ctld.ctl("sa", "add", "42", "spi", "4002", "alg", "aes-gcm-128", "key-file",
                     str(kf), input="")
        assert r.returncode == 2 and needle in r.stderr and "refused" in r.stderr, r.stderr
    kf.chmod(0o600)
    os.chown(str(kf), 65534, 65534)  # nobody's file: not ours, not root's
    r = ctld.ctl("sa", "add", "42", "spi", "4002", "alg", "aes-gcm-128", "key-file", str(kf),
                 input="")
    assert r.returncode == 2 and "owned by uid 65534" in r.stderr, r.stderr
    os.chown(str(kf), 0, 0)
    link = tmp_path / "link.keys"
    link.symlink_to(kf)
    r = ctld.ctl("sa", "add", "42", "spi", "4002", "alg", "aes-gcm-128", "key-file", str(link),
                 input="")
    assert r.returncode == 2 and "key-file" in r.stderr, r.stderr
    # A bad line is named by number, never shown (it may be a key).
    kf.write_text("crypto-key %s\nsalt: %s\n" % (GCM_KEY, GCM_SALT))
    r = ctld.ctl("sa", "add", "42", "spi", "4002", "alg", "aes-gcm-128", "key-file", str(kf),
                 input="")
    assert r.returncode == 2 and "line 2" in r.stderr and GCM_SALT not in r.stderr, r.stderr
    r = ctld.ctl("sa", "add", "42", "spi", "4002", "alg", "aes-gcm-128", "crypto-key", "-",
                 "salt", "-", input=GCM_KEY + "\n")
    assert r.returncode == 2 and "no line on standard input" in r.stderr, r.stderr
    assert ctld.ok("--json", "show", "config") == before

    # On the command line: still accepted, with a warning, and wiped from
    # the argument memory as soon as it is read (here while esgwctl waits
    # for the salt on standard input).
    p = subprocess.Popen([ESGWCTL, "--socket", ctld.sock, "sa", "add", "43", "spi", "4003",
                          "alg", "aes-gcm-128", "crypto-key", GCM_KEY, "salt", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_cmdline(p.pid, "esgwctl")
    err_line = p.stderr.readline()
    assert "warning" in err_line and "visible" in err_line, err_line

    def wiped():
        with open("/proc/%d/cmdline" % p.pid, "rb") as f:
            return GCM_KEY.encode() not in f.read()
    h_wait(wiped, 5)  # esgwctl now waits for the salt: the key is gone
    out, err = p.communicate(GCM_SALT + "\n", timeout=30)
    assert p.returncode == 0, err
    assert saved_keys(ctld, pb, 43) == (GCM_KEY, "", GCM_SALT)


# ---------------------------------------------------------------- raw socket

def raw_request(d, body):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(d.sock)
    send_frame(s, body)
    return s


def test_raw_protocol_errors(ctld, pb):
    # not a Request
    s = raw_request(ctld, b"\xff\xff\xff\xff\x0f")
    r = pb.Response.FromString(recv_frame(s))
    assert r.status == pb.STATUS_MALFORMED and r.error
    # the same connection still serves good requests
    req = pb.Request(version=1, show=pb.ShowRequest(what=pb.ShowRequest.WHAT_SAS))
    send_frame(s, req.SerializeToString())
    assert pb.Response.FromString(recv_frame(s)).status == pb.STATUS_OK
    s.close()
    # wrong version
    s = raw_request(ctld, pb.Request(version=7, show=pb.ShowRequest(what=1)).SerializeToString())
    r = pb.Response.FromString(recv_frame(s))
    assert r.status == pb.STATUS_VERSION_MISMATCH
    s.close()
    # no body
    s = raw_request(ctld, pb.Request(version=1).SerializeToString())
    r = pb.Response.FromString(recv_frame(s))
    assert r.status != pb.STATUS_OK and r.error
    s.close()
    # a show of nothing
    s = raw_request(ctld, pb.Request(version=1, show=pb.ShowRequest(what=42))
                    .SerializeToString())
    assert pb.Response.FromString(recv_frame(s)).status == pb.STATUS_INVALID_ARGUMENT
    s.close()
    # oversized frame: an error, then the connection is closed
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(ctld.sock)
    s.sendall(struct.pack(">I", (64 << 20) + 1) + b"x" * 100)  # ESGW_FRAME_MAX + 1
    r = pb.Response.FromString(recv_frame(s))
    assert r.status == pb.STATUS_MALFORMED
    assert s.recv(10) == b""
    s.close()
    # raw API without worker set places on worker 0; bad key length refused
    sa = pb.Sa(id=5, spi=5000, algorithm=pb.ALGORITHM_AES_GCM_128, crypto_key=b"k" * 15,
               salt=b"s" * 4)
    s = raw_request(ctld, pb.Request(version=1, sa_add=sa).SerializeToString())
    r = pb.Response.FromString(recv_frame(s))
    assert r.status == pb.STATUS_INVALID_ARGUMENT and "16-byte" in r.error
    s.close()
    assert ctld.alive()


def test_random_bytes_never_crash(ctld, pb):
    basic_config(ctld)
    before = ctld.ok("--json", "show", "config")
    rnd = random.Random(1234)
    for i in range(300):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(ctld.sock)
        kind = i % 3
        if kind == 0:   # raw noise, possibly a huge length
            s.sendall(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 64))))
        elif kind == 1:  # well-framed noise
            send_frame(s, bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 200))))
            try:
                recv_frame(s)
            except (ConnectionError, socket.timeout):
                pass
        else:  # a mutated valid request
            body = bytearray(pb.Request(version=1, tunnel_del=pb.NameRef(name="t0"))
                             .SerializeToString())
            body[rnd.randrange(len(body))] = rnd.getrandbits(8)
            send_frame(s, bytes(body))
            try:
                recv_frame(s)
            except (ConnectionError, socket.timeout):
                pass
        s.close()
    assert ctld.alive()
    after = ctld.ok("--json", "show", "config")
    # a mutated tunnel_del may only have failed (t0 is referenced by a route)
    assert after == before


def test_many_clients_at_once(ctld, pb):
    socks = []
    for _ in range(20):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(ctld.sock)
        socks.append(s)
    req = pb.Request(version=1, show=pb.ShowRequest(what=pb.ShowRequest.WHAT_WORKERS))
    for s in socks:  # half a frame on each first
        body = req.SerializeToString()
        s.sendall(struct.pack(">I", len(body)) + body[:1])
    for s in socks:
        s.sendall(req.SerializeToString()[1:])
    for s in socks:
        assert pb.Response.FromString(recv_frame(s)).status == pb.STATUS_OK
        s.close()


def test_client_that_never_reads_cannot_stall_others(ctld, pb):
    """One client floods requests and never reads a reply: ctld neither blocks
    on it nor lets it hold the others up (each other request is answered
    within 1 s while the flood runs), and disconnects it once its queued
    replies pass the bound."""
    basic_config(ctld)
    body = pb.Request(version=1, show=pb.ShowRequest(what=pb.ShowRequest.WHAT_CONFIG)) \
        .SerializeToString()
    burst = (struct.pack(">I", len(body)) + body) * 200
    flood = socket.socket(socket.AF_UNIX)
    flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    flood.connect(ctld.sock)
    sent = [0]
    ended = threading.Event()

    def pump():
        try:
            while True:
                flood.sendall(burst)
                sent[0] += 200
        except OSError:
            pass  # disconnected by ctld
        finally:
            ended.set()

    threading.Thread(target=pump, daemon=True).start()
    h_wait(lambda: sent[0] >= 1000, 10)
    other = pb.Request(version=1, show=pb.ShowRequest(what=pb.ShowRequest.WHAT_WORKERS)) \
        .SerializeToString()
    answered = 0
    while not ended.is_set() or answered < 20:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(1.0)  # the acceptance bound: answered within 1 s
        s.connect(ctld.sock)
        send_frame(s, other)
        assert pb.Response.FromString(recv_frame(s)).status == pb.STATUS_OK
        s.close()
        answered += 1
        assert answered < 10000, "the flooding client was never disconnected"
    assert ended.wait(30), "the flooding client was never disconnected"
    print("flood: %d requests sent before the disconnect; %d other requests answered"
          % (sent[0], answered))
    assert "does not read its replies" in ctld.logtext()
    flood.close()
    assert ctld.alive()


def test_idle_clients_time_out(tmp_path, pb):
    d = Ctld(tmp_path).start(extra=("--idle-timeout", "0.5"))
    try:
        silent = socket.socket(socket.AF_UNIX)
        silent.settimeout(10)
        silent.connect(d.sock)
        half = socket.socket(socket.AF_UNIX)
        half.settimeout(10)
        half.connect(d.sock)
        half.sendall(struct.pack(">I", 100) + b"x" * 10)  # a frame never finished
        sub = socket.socket(socket.AF_UNIX)
        sub.settimeout(10)
        sub.connect(d.sock)
        send_frame(sub, pb.Request(version=1, events_subscribe=pb.EventsSubscribe())
                   .SerializeToString())
        assert pb.Response.FromString(recv_frame(sub)).status == pb.STATUS_OK
        assert silent.recv(10) == b"" and half.recv(10) == b""  # closed by ctld
        # A subscriber waits for events: it is not idle. It still gets them.
        d.ok("interface", "add", "wan", "net_af_packet0,iface=hb-wan")
        ev = pb.Response.FromString(recv_frame(sub))
        assert ev.event.kind == pb.EVENT_KIND_INTERFACE_ADDED and ev.event.name == "wan"
        for s in (silent, half, sub):
            s.close()
    finally:
        d.stop()


def test_keys_never_logged(ctld):
    basic_config(ctld)
    ctld.ctl("sa", "add", "10", "spi", "7777", "alg", "aes-gcm-128", "crypto-key",
             "deadbeef" * 5)
    log = ctld.logtext().lower()
    for key in [CBC_KEY, SHA1_KEY, GCM_KEY, GCM_SALT, "deadbeef"]:
        assert key not in log


# ---------------------------------------------------------------- fake dataplane

class FakeDp:
    """Listens on <rundir>/<name>.sock like a dataplane process: records every
    DpConfig, answers DpStats with canned values."""

    def __init__(self, pb, dp, rundir, name, stats=None, on_limits=None):
        self.pb = pb
        self.dp = dp
        self.path = os.path.join(rundir, name + ".sock")
        self.name = name
        self.configs = []
        self.versions = set()  # DpRequest.version of every request
        # DpSeqLimits received, each with what on_limits() said right then.
        self.limits = []
        self.on_limits = on_limits
        self.stats = stats
        self.refuse = False
        self.conns = []
        self.lock = threading.Lock()
        self.srv = socket.socket(socket.AF_UNIX)
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.srv.bind(self.path)
        self.srv.listen(4)
        self.running = True
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.srv.settimeout(0.2)
        while self.running:
            try:
                c, _ = self.srv.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self.conn, args=(c,), daemon=True).start()

    def conn(self, c):
        pb, dp = self.pb, self.dp
        try:
            while True:
                req = dp.DpRequest.FromString(recv_frame(c))
                resp = dp.DpResponse()
                self.versions.add(req.version)
                if req.WhichOneof("body") == "config":
                    with self.lock:
                        self.configs.append(req.config)
                    if self.refuse:
                        resp.status = pb.STATUS_INVALID_ARGUMENT
                        resp.error = "refused by test"
                elif req.WhichOneof("body") == "seq_limits":
                    seen = self.on_limits() if self.on_limits else None
                    with self.lock:
                        self.limits.append((req.seq_limits, seen))
                elif self.stats is not None:
                    resp.stats.CopyFrom(self.stats)
                    if self.configs:
                        resp.stats.generation = self.configs[-1].generation
                send_frame(c, resp.SerializeToString())
        except (ConnectionError, OSError):
            pass

    def close(self):
        self.running = False
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
        self.srv.close()
        if os.path.exists(self.path):
            os.unlink(self.path)

    def wait_config(self, pred, timeout=5):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if self.configs and pred(self.configs[-1]):
                    return self.configs[-1]
            time.sleep(0.05)
        raise AssertionError("%s: no matching config; got %s" % (self.name, self.configs[-1:]))


def test_fake_dataplane_push_and_stats(tmp_path, pb, dp):
    d = Ctld(tmp_path, workers=2)
    drops = [pb.Counter(name="auth_failed", value=3), pb.Counter(name="replay", value=1)]
    crypto0_stats = dp.DpStats(
        role="crypto", worker=0, pid=4242,
        counters=[pb.Counter(name="packets_encrypted", value=100),
                  pb.Counter(name="packets_decrypted", value=50),
                  pb.Counter(name="bytes", value=9000),
                  pb.Counter(name="auth_failed", value=3)],
        sas=[dp.DpSaStats(id=10, slot=0, packets=100, bytes=8000, seq_out=100, drops=drops),
             dp.DpSaStats(id=20, slot=1, packets=50, bytes=1000, replay_top=50)])
    rxtx_stats = dp.DpStats(role="rxtx", worker=-1, pid=4240, ports=[
        dp.DpPortStats(port_id=0, device="net_af_packet0", mac="02:00:00:00:00:01",
                       rx_packets=7, tx_packets=8, rx_bytes=700, tx_bytes=800)],
        counters=[pb.Counter(name="rx_packets", value=7), pb.Counter(name="no_mbuf", value=2)])
    router_stats = dp.DpStats(role="router", worker=-1, pid=4241,
                              counters=[pb.Counter(name="no_sa", value=5)])
    fakes = {"rxtx": FakeDp(pb, dp, d.rundir, "rxtx", rxtx_stats),
             "router": FakeDp(pb, dp, d.rundir, "router", router_stats),
             "crypto-0": FakeDp(pb, dp, d.rundir, "crypto-0", crypto0_stats)}
    d.start()
    try:
        basic_config(d)
        d.ok("sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key",
             GCM_KEY + GCM_SALT, "worker", "1")
        router = fakes["router"].wait_config(lambda c: len(c.sas) == 3)
        assert [dp_prefix(r.prefix) for r in router.routes] == ["10.2.0.0/24", "0.0.0.0/0"]
        assert router.tunnels[0].name == "t0" and router.workers == 2
        assert [i.device for i in router.interfaces] == ["net_af_packet0", "net_af_packet1"]
        for sa in router.sas:
            assert sa.crypto_key == b"" and sa.integ_key == b"" and sa.salt == b""
        by_id = {s.id: s for s in router.sas}
        assert by_id[10].direction == pb.DIRECTION_OUTBOUND
        assert dp_ip(by_id[10].local) == "192.0.2.1"
        assert dp_ip(by_id[10].remote) == "192.0.2.2" and by_id[10].tunnel == "t0"
        assert by_id[20].direction == pb.DIRECTION_INBOUND and by_id[30].worker == 1

        c0 = fakes["crypto-0"].wait_config(lambda c: len(c.sas) == 2)
        assert sorted(s.id for s in c0.sas) == [10, 20]  # not SA 30 (worker 1)
        k = {s.id: s for s in c0.sas}
        assert k[10].crypto_key.hex() == CBC_KEY and k[10].integ_key.hex() == SHA1_KEY
        assert k[20].crypto_key.hex() == GCM_KEY and k[20].salt.hex() == GCM_SALT
        assert dp_ip(k[10].remote) == "192.0.2.2" and len(c0.interfaces) == 0
        assert len(c0.routes) == 0

        rx = fakes["rxtx"].wait_config(lambda c: len(c.interfaces) == 2)
        assert len(rx.sas) == 0 and len(rx.routes) == 0
        gens = [c.generation for c in fakes["router"].configs]
        assert gens == sorted(gens) and len(set(gens)) == len(gens)

        # stats merge; crypto-1 does not exist: stopped, zeros, show still works
        sas = {s["id"]: s for s in d.json("show", "sa")["sas"]}
        assert sas[10]["packets"] == 100 and sas[10]["drops"]["auth_failed"] == 3
        assert sas[10]["seq_out"] == 100 and sas[20]["replay_top"] == 50
        assert sas[30]["packets"] == 0 and sas[30]["worker"] == 1
        human = d.ok("show", "sa")
        assert "auth_failed 3" in human and "replay 1" in human
        ifs = {i["name"]: i for i in d.json("show", "interfaces")["interfaces"]}
        assert ifs["wan"]["port_id"] == 0 and ifs["wan"]["rx_packets"] == 7
        assert ifs["wan"]["mac"] == "02:00:00:00:00:01" and ifs["lan"]["port_id"] == -1
        workers = {w["id"]: w for w in d.json("show", "workers")["workers"]}
        assert workers[0]["state"] == "running" and workers[0]["pid"] == 4242
        assert workers[0]["packets_encrypted"] == 100 and workers[0]["bytes"] == 9000
        assert workers[0]["drops"]["replay"] == 1  # from the SA counters
        assert workers[1]["state"] == "stopped" and workers[1]["sas"] == [30]
        stats = d.json("show", "stats")
        assert stats["drops"]["no_sa"] == 5 and stats["drops"]["no_mbuf"] == 2
        assert stats["drops"]["auth_failed"] == 3 and stats["drops"]["replay"] == 1
        procs = {(p["role"], p["worker"]): p for p in stats["processes"]}
        assert procs[("rxtx", -1)]["counters"]["rx_packets"] == 7
        assert procs[("crypto", 1)]["state"] == "stopped"

        # crypto-1 appears: the reconcile timer pushes its SAs within ~1 s
        c1 = FakeDp(pb, dp, d.rundir, "crypto-1")
        fakes["crypto-1"] = c1
        cfg = c1.wait_config(lambda c: [s.id for s in c.sas] == [30], timeout=4)
        assert cfg.sas[0].crypto_key.hex() == GCM_KEY

        # the router restarts: it gets the whole config again
        fakes["router"].close()
        time.sleep(0.2)
        fakes["router"] = FakeDp(pb, dp, d.rundir, "router")
        fakes["router"].wait_config(lambda c: len(c.sas) == 3, timeout=4)

        # a refused push is retried until accepted
        fakes["rxtx"].refuse = True
        d.ok("interface", "address", "add", "lan", "10.1.1.1/24")
        n = len(fakes["rxtx"].configs)
        time.sleep(2.5)
        assert len(fakes["rxtx"].configs) > n
        fakes["rxtx"].refuse = False
        gen = fakes["router"].configs[-1].generation
        fakes["rxtx"].wait_config(lambda c: c.generation == gen, timeout=4)
        assert "refused configuration" in d.logtext()
        log = d.logtext().lower()
        assert GCM_KEY not in log and CBC_KEY not in log
    finally:
        d.stop()
        for f in fakes.values():
            f.close()


def test_fake_dataplane_addresses_in_binary(tmp_path, pb, dp):
    """What the dataplane gets of the API's text (proto/dataplane.proto): every
    address 4 or 16 bytes in network byte order, every prefix bytes and a
    length (an interface's with its host bits, a route's and a selector's
    without), a selector "any" absent, a MAC 6 bytes; IPv4 and IPv6 alike, to
    the router, the crypto worker and rxtx; and the channel's own version."""
    d = Ctld(tmp_path)
    fakes = {name: FakeDp(pb, dp, d.rundir, name) for name in ["rxtx", "router", "crypto-0"]}
    d.start()
    try:
        basic_config(d)
        d.ok("interface", "address", "add", "wan", "2001:DB8:3:0::1/64")
        d.ok("sa", "add", "30", "spi", "3000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY,
             "salt", GCM_SALT)
        d.ok("sa", "add", "40", "spi", "4000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY,
             "salt", GCM_SALT)
        d.ok("tunnel", "add", "t6", "local", "2001:db8:3::1", "remote", "2001:db8:3::2",
             "sa-out", "30", "sa-in", "40")
        d.ok("route", "add", "2001:db8:2::/64", "tunnel", "t6")
        d.ok("route", "add", "::/0", "via", "2001:db8:3::fe", "dev", "wan")
        d.ok("policy", "add", "p1", "src", "10.1.0.7/24", "dst", "10.2.0.0/24", "action",
             "protect", "tunnel", "t0", "sa-out", "10")
        d.ok("policy", "add", "p2", "action", "bypass")
        d.ok("neighbor", "add", "wan", "192.0.2.254", "02:00:00:00:00:FE")
        d.ok("neighbor", "add", "wan", "2001:db8:3::fe", "02:00:00:00:06:fe")

        router = fakes["router"].wait_config(lambda c: len(c.neighbors) == 2)
        wan = next(i for i in router.interfaces if i.name == "wan")
        assert [(len(a.address), dp_prefix(a)) for a in wan.addresses] == [
            (4, "192.0.2.1/24"), (16, "2001:db8:3::1/64")]
        routes = {dp_prefix(r.prefix): r for r in router.routes}
        assert sorted(routes) == ["0.0.0.0/0", "10.2.0.0/24", "2001:db8:2::/64", "::/0"]
        assert dp_ip(routes["0.0.0.0/0"].via) == "192.0.2.254" and routes["::/0"].interface == "wan"
        assert len(routes["::/0"].via) == 16 and dp_ip(routes["::/0"].via) == "2001:db8:3::fe"
        assert routes["2001:db8:2::/64"].tunnel == "t6" and routes["10.2.0.0/24"].via == b""
        tunnels = {t.name: t for t in router.tunnels}
        assert (dp_ip(tunnels["t0"].local), dp_ip(tunnels["t0"].remote)) == ("192.0.2.1",
                                                                                "192.0.2.2")
        assert len(tunnels["t6"].local) == 16 and dp_ip(tunnels["t6"].remote) == "2001:db8:3::2"
        assert list(tunnels["t6"].sa_in) == [40] and tunnels["t6"].sa_out == 30
        policies = {p.name: p for p in router.policies}
        assert dp_prefix(policies["p1"].src) == "10.1.0.0/24"  # host bits cleared
        assert dp_prefix(policies["p1"].dst) == "10.2.0.0/24"
        assert policies["p1"].action == pb.Policy.ACTION_PROTECT and policies["p1"].sa_out == 10
        assert not policies["p2"].HasField("src") and not policies["p2"].HasField("dst")
        macs = {dp_ip(n.address): n.mac for n in router.neighbors}
        assert macs == {"192.0.2.254": bytes.fromhex("0200000000fe"),
                        "2001:db8:3::fe": bytes.fromhex("0200000006fe")}
        sas = {s.id: s for s in router.sas}
        assert dp_ip(sas[40].remote) == "2001:db8:3::2" and sas[40].crypto_key == b""

        worker = fakes["crypto-0"].wait_config(lambda c: len(c.sas) == 4)
        k = {s.id: s for s in worker.sas}
        assert len(k[30].local) == 16 and dp_ip(k[30].local) == "2001:db8:3::1"
        assert dp_ip(k[10].local) == "192.0.2.1" and len(k[10].local) == 4

        rx = fakes["rxtx"].wait_config(lambda c: any(len(i.addresses) == 2
                                                     for i in c.interfaces))
        wan = next(i for i in rx.interfaces if i.name == "wan")
        assert [dp_prefix(a) for a in wan.addresses] == ["192.0.2.1/24", "2001:db8:3::1/64"]
        assert fakes["router"].versions == {dp.DP_VERSION_CURRENT} == {2}
        assert fakes["rxtx"].versions == fakes["crypto-0"].versions == {2}
    finally:
        d.stop()
        for f in fakes.values():
            f.close()


def test_fake_worker_sequence_reservation(tmp_path, pb, dp):
    """What ctld pushes a crypto worker for its sequence numbers: the first
    runtime starts at 0 below a floor saved with the sa add; a floor is raised
    (saved first, then pushed as a limit) when the worker comes within half
    a reserve; every later DpSa starts at the saved floor; the AEAD IV mask is
    drawn once and never changes, across pushes and a ctld restart."""
    d = Ctld(tmp_path)

    def saved_floor():
        return {s.id: s.seq_out_floor for s in h.saved_config(pb, d.config).sas}

    stats = dp.DpStats(role="crypto", worker=0, pid=4343,
                       sas=[dp.DpSaStats(id=10, slot=0, seq_out=0, seq_out_max=99)])
    worker = FakeDp(pb, dp, d.rundir, "crypto-0", stats, on_limits=saved_floor)
    d.start(extra=("--seq-reserve", "100"))
    try:
        d.ok("sa", "add", "10", "spi", "1000", "alg", "aes-gcm-128", "crypto-key", GCM_KEY,
             "salt", GCM_SALT, "worker", "0")
        first = worker.wait_config(lambda c: len(c.sas) == 1).sas[0]
        assert first.seq_out_start == 0 and first.seq_limit == 100 and first.iv_mask != 0
        assert saved_floor()[10] == 100
        # The worker nears its limit: ctld saves 60 + 100, then pushes it.
        stats.sas[0].seq_out = 60

        def raised():
            with worker.lock:
                return [(m, seen) for m, seen in worker.limits
                        if m.limits and m.limits[0].seq_limit == 160]
        msg, seen = h_wait(raised, 5)[0]
        lim = msg.limits[0]
        assert (lim.slot, lim.spi, lim.instance) == (0, 1000, first.instance)
        assert seen[10] >= 160, "limit %d pushed before it was on disk (%s)" % (
            lim.seq_limit, seen)
        stats.sas[0].seq_out_max = 159  # the worker took it: nothing more to send
        d.ok("interface", "add", "wan", "net_af_packet0,iface=hb-wan")  # any change
        again = worker.wait_config(lambda c: c.sas and c.sas[0].seq_limit == 160).sas[0]
        # A runtime made from this push follows one that may have used up to
        # the floor: it starts there.
        assert again.seq_out_start == 160 and again.iv_mask == first.iv_mask
        d.stop()
        n = len(worker.configs)
        d.start(extra=("--seq-reserve", "100"))
        after = worker.wait_config(lambda c: len(worker.configs) > n and len(c.sas) == 1).sas[0]
        assert after.iv_mask == first.iv_mask and after.instance == first.instance
        assert after.seq_out_start >= 160 and after.seq_limit >= 160
    finally:
        d.stop()
        worker.close()


def h_wait(pred, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("condition not met in %.0f s" % timeout)


# ---------------------------------------------------------------- standalone supervision

FAKE_PROCESS = r'''#!/usr/bin/python3
# A stand-in for esgw-rxtx/router/crypto: records its command line, serves the
# control socket like common/dp_ctl.c, exits 0 on SIGTERM.
import os, signal, socket, struct, sys
import dataplane_pb2 as dp
role = os.path.basename(sys.argv[0])[len("esgw-"):]
app = sys.argv[sys.argv.index("--") + 1:]
rundir = app[app.index("--rundir") + 1]
name = role if role != "crypto" else "crypto-" + app[app.index("--worker") + 1]
path = os.path.join(rundir, name + ".sock")
with open(os.path.join(rundir, name + ".args"), "w") as f:
    f.write(" ".join(sys.argv[1:]))
def bye(*_):
    try:
        os.unlink(path)
    except OSError:
        pass
    os._exit(0)
signal.signal(signal.SIGTERM, bye)
srv = socket.socket(socket.AF_UNIX)
try:
    os.unlink(path)
except OSError:
    pass
srv.bind(path)
srv.listen(4)
generation = 0
def recv_exact(c, n):
    d = b""
    while len(d) < n:
        x = c.recv(n - len(d))
        if not x:
            raise ConnectionError()
        d += x
    return d
while True:
    c, _ = srv.accept()
    try:
        while True:
            (n,) = struct.unpack(">I", recv_exact(c, 4))
            req = dp.DpRequest.FromString(recv_exact(c, n))
            resp = dp.DpResponse()
            if req.WhichOneof("body") == "config":
                generation = req.config.generation
            else:
                resp.stats.role = role
                resp.stats.pid = os.getpid()
                resp.stats.generation = generation
            body = resp.SerializeToString()
            c.sendall(struct.pack(">I", len(body)) + body)
    except (ConnectionError, OSError):
        c.close()
'''


def test_standalone_supervision_with_fake_processes(tmp_path, pb):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for role in ["rxtx", "router", "crypto"]:
        p = bindir / ("esgw-" + role)
        p.write_text(FAKE_PROCESS)
        p.chmod(0o755)
    pb_dir = os.path.dirname(pb.__file__)
    d = Ctld(tmp_path, workers=2)
    env = dict(os.environ, PYTHONPATH=pb_dir)
    args = [CTLD, "--socket", d.sock, "--config", d.config, "--rundir", d.rundir,
            "--workers", "2", "--standalone", "--bindir", str(bindir), "--log-dir",
            str(tmp_path / "logs"), "--file-prefix", "hbtest"]
    d.proc = subprocess.Popen(args, stdout=open(d.log, "a"), stderr=subprocess.STDOUT, env=env)

    def procs():
        return {(p["role"], p["worker"]): p for p in d.json("show", "stats")["processes"]}

    def wait_all_running(timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            ps = procs()
            if all(p["state"] == "running" for p in ps.values()):
                return ps
            time.sleep(0.1)
        raise AssertionError("not all running: %s\n%s" % (procs(), d.logtext()))

    try:
        deadline = time.time() + 5
        while not os.path.exists(d.sock) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.2)
        # nothing to forward yet: nothing started
        assert all(p["state"] == "stopped" and p["pid"] == 0 for p in procs().values())
        assert not os.path.exists(os.path.join(d.rundir, "rxtx.args"))

        d.ok("interface", "add", "wan", "net_af_packet0,iface=hb-wan")
        ps = wait_all_running()
        rx_args = open(os.path.join(d.rundir, "rxtx.args")).read()
        assert rx_args == ("--file-prefix hbtest --proc-type primary --lcores 1@0 --no-pci "
                           "-m 256 --vdev net_af_packet0,iface=hb-wan,framecnt=4096 -- --rundir "
                           + d.rundir + " --max-sas 65536 --max-workers 64")
        # af_packet: a 4096-frame ring; --max-sas: the SA table's size,
        # esgw-ctld's --max-sas (default 65,536); --max-workers: the worker
        # rings, esgw-ctld's --max-workers (default 64 on a machine of fewer CPUs)
        assert open(os.path.join(d.rundir, "router.args")).read() == (
            "--file-prefix hbtest --proc-type secondary --lcores 2@0 --no-pci -- --rundir "
            + d.rundir)
        assert open(os.path.join(d.rundir, "crypto-1.args")).read() == (
            "--file-prefix hbtest --proc-type secondary --lcores 11@1 --no-pci -- --rundir "
            + d.rundir + " --worker 1")
        assert os.path.exists(tmp_path / "logs" / "rxtx.log")

        # a crashed worker comes back; the others are untouched
        os.kill(ps[("crypto", 1)]["pid"], signal.SIGKILL)
        time.sleep(0.3)
        ps2 = wait_all_running()
        assert ps2[("crypto", 1)]["restarts"] == 1
        assert ps2[("crypto", 1)]["pid"] != ps[("crypto", 1)]["pid"]
        assert ps2[("router", -1)]["pid"] == ps[("router", -1)]["pid"]
        workers = d.json("show", "workers")["workers"]
        assert workers[1]["pid"] == ps2[("crypto", 1)]["pid"]

        # rxtx dies: everything restarts
        os.kill(ps2[("rxtx", -1)]["pid"], signal.SIGKILL)
        time.sleep(0.5)
        ps3 = wait_all_running()
        assert ps3[("rxtx", -1)]["restarts"] == 1
        assert ps3[("router", -1)]["pid"] != ps2[("router", -1)]["pid"]

        # a new port set restarts the dataplane with both vdevs
        d.ok("interface", "add", "lan", "net_af_packet1,iface=hb-lan")
        time.sleep(0.5)
        wait_all_running()
        assert ("--vdev net_af_packet0,iface=hb-wan,framecnt=4096 "
                "--vdev net_af_packet1,iface=hb-lan,framecnt=4096") in \
            open(os.path.join(d.rundir, "rxtx.args")).read()
        pids = [p["pid"] for p in procs().values()]
    finally:
        rc = d.stop()
    assert rc == 0
    for pid in pids:
        assert not os.path.exists("/proc/%d" % pid) or \
            open("/proc/%d/stat" % pid).read().split()[2] == "Z"
    assert not os.path.exists(d.sock)


def test_refused_peer_is_closed_at_once(tmp_path, pb):
    """A peer that fails the credential check gets PERMISSION_DENIED and the
    connection is closed right away: it holds no client slot."""
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs root and setpriv")
    # Reachable for nobody: only the credential check stands in its way.
    import tempfile
    open_dir = tempfile.mkdtemp(prefix="esgw-refuse-")
    os.chmod(open_dir, 0o755)
    ctld = Ctld(tmp_path)
    ctld.sock = os.path.join(open_dir, "ctl.sock")
    ctld.start()
    try:
        os.chmod(ctld.sock, 0o666)
        refused_many_times(ctld, pb)
        if os.access(ESGWCTL, os.X_OK, effective_ids=False):
            # esgwctl says why, whether its request went out before the close or not.
            for _ in range(10):
                r = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                                    "--clear-groups", ESGWCTL, "--socket", ctld.sock, "show",
                                    "sa"], capture_output=True, text=True, timeout=20)
                assert r.returncode == 1 and "permission denied" in r.stderr, r.stderr
    finally:
        ctld.stop()
        shutil.rmtree(open_dir, ignore_errors=True)


def refused_many_times(ctld, pb):
    client = r"""
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
body = bytes.fromhex(sys.argv[2])
try:
    s.sendall(struct.pack(">I", len(body)) + body)
except OSError:
    pass
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.hex())
"""
    body = pb.Request(version=1, show=pb.ShowRequest(what=pb.ShowRequest.WHAT_SAS))
    for _ in range(80):  # more than the 64 client slots
        r = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                            "--clear-groups", "/usr/bin/python3", "-c", client, ctld.sock,
                            body.SerializeToString().hex()],
                           capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr  # EOF came (no 5 s timeout)
        data = bytes.fromhex(r.stdout)
        resp = pb.Response.FromString(data[4:])
        assert resp.status == pb.STATUS_PERMISSION_DENIED, resp
    ctld.ok("show", "sa")  # the slots are all free


def test_unprivileged_user_is_refused(ctld):
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs root and setpriv")
    r = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups",
                        ESGWCTL, "--socket", ctld.sock, "show", "sa"], capture_output=True,
                       text=True)
    assert r.returncode == 1 and r.stderr.startswith("esgwctl: ")
    assert "ermission denied" in r.stderr


# ------------------------------------------------ what the dataplane can hold

def test_refuses_what_the_dataplane_cannot_hold(ctld, pb):
    """Issue 9, point 5: a configuration the router's tables cannot hold (or
    that it could not apply) is refused at the API with STATUS_INVALID_ARGUMENT
    and the limit in the message, and nothing changes; what fits is taken."""
    basic_config(ctld)

    def refused(args, needle):
        before = ctld.ok("--json", "show", "config")
        r = ctld.ctl(*args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert needle in r.stderr, (args, r.stderr)
        assert ctld.ok("--json", "show", "config") == before

    # Addresses: wan has one; 15 more fit (16, IPv4 and IPv6 together).
    for i in range(15):
        ctld.ok("interface", "address", "add", "wan",
                ("2001:db8:77::%d/64" % i) if i % 2 else ("198.51.100.%d/32" % i))
    refused(["interface", "address", "add", "wan", "198.51.100.99/32"], "at most 16 addresses")
    # NAT-T: 4500 and 7 other local ports fit; an 8th other one does not.
    for k in range(7):
        ctld.ok("sa", "add", str(100 + k), "spi", str(6000 + k), "alg", "aes-gcm-128",
                "crypto-key", GCM_KEY + GCM_SALT, "encap", "udp", "sport", str(4600 + k))
    ctld.ok("sa", "add", "120", "spi", "6100", "alg", "aes-gcm-128", "crypto-key",
            GCM_KEY + GCM_SALT, "encap", "udp", "sport", "4600")  # a port already counted
    refused(["sa", "add", "121", "spi", "6101", "alg", "aes-gcm-128", "crypto-key",
             GCM_KEY + GCM_SALT, "encap", "udp", "sport", "4700"], "at most 8")
    # A next hop the router could not place (no interface subnet holds it).
    refused(["route", "add", "10.9.0.0/24", "via", "203.0.113.1"], "not on the subnet")
    refused(["route", "add", "2001:db8:9::/64", "via", "2001:db8:99::1"], "not on the subnet")
    refused(["route", "add", "10.9.0.0/24", "via", "192.0.2.1"], "not on the subnet")  # ours
    ctld.ok("route", "add", "10.9.0.0/24", "via", "192.0.2.254")
    ctld.ok("route", "add", "2001:db8:9::/64", "via", "2001:db8:77::99")
    refused(["interface", "address", "del", "wan", "192.0.2.1/24"], "route 10.9.0.0/24")
    # One SA, one direction.
    refused(["tunnel", "add", "t9", "local", "192.0.2.1", "remote", "192.0.2.9",
             "sa-out", "100", "sa-in", "100"], "both its sa-out and an sa-in")
    refused(["tunnel", "set", "t0", "sa-in", "20,10"], "both its sa-out and an sa-in")
    # Static neighbours: 256 fit, the 257th does not (raw API, one connection).
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(ctld.sock)
    try:
        for i in range(257):
            n = pb.Neighbor(interface="lan", address="10.1.%d.%d" % (i // 200, 1 + i % 200),
                            mac="02:00:00:00:%02x:%02x" % (i >> 8, i & 255))
            send_frame(s, pb.Request(version=1, neighbor_add=n).SerializeToString())
            r = pb.Response.FromString(recv_frame(s))
            if i < 256:
                assert r.status == pb.STATUS_OK, (i, r.error)
            else:
                assert r.status == pb.STATUS_INVALID_ARGUMENT and "256" in r.error, r.error
        # The same refusals by status code over the raw API.
        send_frame(s, pb.Request(version=1, address_add=pb.AddressChange(
            interface="wan", address="198.51.100.98/32")).SerializeToString())
        r = pb.Response.FromString(recv_frame(s))
        assert r.status == pb.STATUS_INVALID_ARGUMENT and "16" in r.error
    finally:
        s.close()
    assert len(ctld.json("show", "config")["config"]["neighbors"]) == 256
    assert ctld.alive()


def hub_tunnel_lines(i):
    """sa add x2, tunnel add, route add of tunnel i (SAs 2i-1 out, 2i in)."""
    return ["sa add %d spi %d alg aes-gcm-128 crypto-key %s salt %s" % (
                2 * i - 1, 0x1000 + i, GCM_KEY, GCM_SALT),
            "sa add %d spi %d alg aes-gcm-128 crypto-key %s salt %s" % (
                2 * i, 0x2000 + i, GCM_KEY, GCM_SALT),
            "tunnel add t%d local 192.0.2.1 remote 198.51.100.%d sa-out %d sa-in %d" % (
                i, i, 2 * i - 1, 2 * i),
            "route add 10.%d.0.0/24 tunnel t%d" % (i, i)]


def hub_tunnel_del_lines(i):
    return ["route del 10.%d.0.0/24" % i, "tunnel del t%d" % i, "sa del %d" % (2 * i - 1),
            "sa del %d" % (2 * i)]


def check_found(ctld, present, absent):
    """Every object of the tunnels present is found by each key it is
    indexed by (SA id and SPI, tunnel name and SAs, route prefix and
    tunnel); those of the tunnels absent by none."""
    def refused(line, why):
        r = ctld.ctl(*line.split())
        assert r.returncode != 0 and why in r.stderr, (line, r.stderr)

    for i in present:
        sa_out, sa_in, tun, route = hub_tunnel_lines(i)
        refused(sa_out, "SA %d already exists" % (2 * i - 1))
        refused(sa_in.replace("sa add %d " % (2 * i), "sa add 9999 "),
                "SPI %d (0x%08x) is already used by SA %d" % (0x2000 + i, 0x2000 + i, 2 * i))
        refused(tun, "tunnel t%d already exists" % i)
        refused(tun.replace("t%d " % i, "x%d " % i, 1),
                "SA %d is already the outbound SA of tunnel t%d" % (2 * i - 1, i))
        refused("tunnel add x%d local 192.0.2.1 remote 198.51.100.1 sa-out 9998 sa-in %d" % (
            i, 2 * i), "sa-out: SA 9998 does not exist")
        refused("sa del %d" % (2 * i), "SA %d is used by tunnel t%d" % (2 * i, i))
        refused(route, "route 10.%d.0.0/24 already exists" % i)
        refused("tunnel del t%d" % i, "tunnel t%d is used by route 10.%d.0.0/24" % (i, i))
    for i in absent:
        refused("sa del %d" % (2 * i - 1), "SA %d does not exist" % (2 * i - 1))
        refused("tunnel del t%d" % i, "tunnel t%d does not exist" % i)
        refused("route del 10.%d.0.0/24" % i, "10.%d.0.0/24" % i)
    cfg = ctld.json("show", "config")["config"]
    assert sorted(s["id"] for s in cfg["sas"]) == sorted(
        x for i in present for x in (2 * i - 1, 2 * i))
    assert sorted(t["name"] for t in cfg["tunnels"]) == sorted("t%d" % i for i in present)
    assert sorted(r["prefix"] for r in cfg["routes"]) == sorted(
        "10.%d.0.0/24" % i for i in present)


def test_deletes_front_middle_end_undone_and_replayed(ctld):
    """A delete moves the last object of its array into the deleted one's
    place (O(1), ctl/change.c) and the hash indexes follow it: after deletes
    from the front, the middle and the end of each array, every object left
    is found by each of its keys and none deleted is. A batch refused at its
    last line after deletes and adds is undone exactly (the same
    configuration, in the same order, and still found by every key); a
    restart replays the journal to the same configuration."""
    path = str(ctld.tmp / "hub.batch")
    sc_write(path, [l for i in range(1, 11) for l in hub_tunnel_lines(i)])
    ctld.ok("-f", path)
    ctld.stop()
    ctld.start()  # the snapshot holds tunnels 1..10; what follows is journaled
    present = list(range(1, 11))
    check_found(ctld, present, [])
    # Tunnel 1's objects are at the front, 5's in the middle, 10's at the end
    # of their arrays; then the front and the end again (moved objects there).
    for i in (1, 5, 10, 2, 9):
        for line in hub_tunnel_del_lines(i):
            ctld.ok(*line.split())
        present.remove(i)
        check_found(ctld, present, [1, 5, 10, 2, 9][:[1, 5, 10, 2, 9].index(i) + 1])
    ctld.ok(*hub_tunnel_lines(5)[0].split())  # a deleted id, added again: appended
    ctld.ok(*hub_tunnel_lines(5)[1].split())
    for line in hub_tunnel_lines(5)[2:]:
        ctld.ok(*line.split())
    present.append(5)
    before = ctld.json("show", "config")
    # Refused at the last line, after deletes from the front, middle and end,
    # adds, and a delete of an object it added: nothing changed.
    for bad in (["sa del 9999"], ["sa add 3 spi 77 alg aes-gcm-128 crypto-key %s salt %s" % (
            GCM_KEY, GCM_SALT)]):
        batch = hub_tunnel_del_lines(3) + hub_tunnel_del_lines(6) + \
            hub_tunnel_lines(11) + hub_tunnel_lines(12) + hub_tunnel_del_lines(11) + \
            hub_tunnel_del_lines(5) + hub_tunnel_lines(1) + bad
        sc_write(path, batch)
        r = ctld.ctl("-f", path)
        assert r.returncode != 0, r.stdout
        assert ctld.json("show", "config") == before
        check_found(ctld, present, [1, 2, 9, 10, 11, 12])
    # The same batch without its bad line: applied, journaled, and a
    # restart replays it to the same configuration, in the same order.
    sc_write(path, batch[:-1])
    ctld.ok("-f", path)
    present = [4, 7, 8, 12, 1]
    check_found(ctld, present, [2, 3, 5, 6, 9, 10, 11])
    for line in hub_tunnel_del_lines(8) + hub_tunnel_lines(2):
        ctld.ok(*line.split())
    present = [4, 7, 12, 1, 2]
    after = ctld.json("show", "config")
    assert len(h.journal_records(ctld.config + ".journal")) > 1  # not compacted yet
    ctld.stop()
    ctld.start()
    assert ctld.json("show", "config") == after
    check_found(ctld, present, [3, 5, 6, 8, 9, 10, 11])
