# SPDX-License-Identifier: BSD-3-Clause
"""A Debian 12 container with systemd as PID 1 (systemd-nspawn) and esgw
installed in it the way an operator installs it, for test_systemd_boot.py.

The root is an overlay: the cached tree of tests/systemd/rootfs.sh (systemd,
D-Bus, deploy/runtime-packages) below, this test's writable layer above, into
which deploy/install.sh --destdir puts esgw. The container joins a network
namespace of the test's Topology, so its gateway's ports are veths to the
host's test namespaces; it mounts its own hugetlbfs on /dev/hugepages (the
pages come from the machine's pool). Commands run inside with nsenter (the
container is not registered with machined: there is none on the host).
Everything is named after the Topology's tag, and cleanup() removes what was
made: the container, the overlay mount, the cgroups.
"""

import contextlib
import os
import signal
import subprocess
import time

import esgw_harness as h

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROOTFS_SH = os.path.join(REPO, "tests", "systemd", "rootfs.sh")
INSTALL_SH = os.path.join(REPO, "deploy", "install.sh")
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What DPDK needs beyond systemd-nspawn's default capabilities (a service
# running as root on a real machine has them all):
CAPABILITIES = (
    "CAP_IPC_LOCK",   # net_af_packet maps its rings MAP_LOCKED: 16 MiB a port, past the
                      # 8 MiB RLIMIT_MEMLOCK that binds a process without it
    "CAP_NET_ADMIN",  # esgw-rxtx's TAPs (punt path) and its ports' sysctls
)
BOOT_TIMEOUT = 120


class BootError(Exception):
    """The container never reached a booted state."""


def cannot_run_reason():
    """Why no container can be started here at all (None if it may)."""
    for tool in ("systemd-nspawn", "nsenter", "debootstrap"):
        if not any(os.access(os.path.join(d, tool), os.X_OK)
                   for d in os.environ.get("PATH", "").split(":") + ["/usr/sbin", "/usr/bin"]):
            return "%s is not installed (deploy/setup-host.sh installs it)" % tool
    return None


def cached_rootfs():
    """The cached root tree (built now if its package set is new)."""
    res = subprocess.run([ROOTFS_SH], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=1800)
    if res.returncode != 0 or not res.stdout.strip():
        raise h.HarnessError("tests/systemd/rootfs.sh failed:\n%s" % res.stderr)
    if res.stderr:
        print(res.stderr, end="")
    return res.stdout.strip().splitlines()[-1]


def _own_cgroup_dirs(leaf):
    """Where a new cgroup `leaf` goes below this process's own cgroup, in the
    unified hierarchy and in systemd's named v1 hierarchy, whichever are
    mounted. systemd-nspawn without a host systemd puts its payload below its
    own cgroup: a cgroup of our own keeps two containers apart."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fstype, _, options = right.split()[:3]
            point = left.split()[4]
            if fstype == "cgroup2":
                mounts.setdefault("", point)
            elif fstype == "cgroup" and "name=systemd" in options.split(","):
                mounts.setdefault("name=systemd", point)
    dirs = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controllers in mounts:
                dirs.append(os.path.join(mounts[controllers] + path, leaf))
    return dirs


class Container:
    """One systemd-nspawn container booted on the esgw-installed overlay, in
    network namespace netns with what DPDK needs; netns None boots it the
    plain way (the issue's `systemd-nspawn --register=no --keep-unit -D ROOT
    -b`), which probe() uses."""

    def __init__(self, tag, netns, name="gw1"):
        self.machine = "%s-%s" % (tag, name)
        self.netns = netns
        self.workdir = os.path.join(h.WORK_ROOT, tag, "container-" + name)
        self.root = os.path.join(self.workdir, "root")
        self.upper = os.path.join(self.workdir, "upper")
        self.overlay_work = os.path.join(self.workdir, "work")
        self.console = os.path.join(self.workdir, "console.log")
        self.cgroups = _own_cgroup_dirs("esgw-" + self.machine)
        self.mounted = False
        self.proc = None
        self.leader = None
        self.boots = 0
        self.exit_statuses = []  # systemd-nspawn's, one per boot that ended

    # -- file system

    def prepare(self, rootfs, install=True):
        """The overlay on the cached tree, and esgw installed into it."""
        for d in (self.root, self.upper, self.overlay_work):
            os.makedirs(d, exist_ok=True)
        h.run(["mount", "-t", "overlay", "overlay", "-o",
               "lowerdir=%s,upperdir=%s,workdir=%s" % (rootfs, self.upper, self.overlay_work),
               self.root])
        self.mounted = True
        if install:
            h.run([INSTALL_SH, "--build", h.ESGW_BUILD, "--destdir", self.root], timeout=120)

    def path(self, inside):
        """The host path of a file inside the container."""
        return os.path.join(self.root, inside.lstrip("/"))

    # -- life cycle

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def boot(self, timeout=BOOT_TIMEOUT):
        """Boots and waits until systemd says the boot is over (running or
        degraded). Raises BootError if it never gets there."""
        for d in self.cgroups:
            os.makedirs(d, exist_ok=True)
        join = "".join('echo $$ > "%s/cgroup.procs" && ' % d for d in self.cgroups)
        nspawn = ["systemd-nspawn", "--register=no", "--keep-unit", "--boot",
                  "--directory=" + self.root, "--machine=" + self.machine,
                  "--console=read-only"]
        if self.netns is not None:
            nspawn += [
                # Joins the test's namespace; --private-network on top makes
                # /proc/sys/net writable, as on a machine (rxtx sets
                # rp_filter and arp_ignore on its ports).
                "--network-namespace-path=/run/netns/" + self.netns, "--private-network",
                # ...which also narrows /sys to a few folders: EAL init fails
                # ("Cannot init VFIO") without /sys/module.
                "--bind-ro=/sys/module",
                "--capability=" + ",".join(CAPABILITIES),
                "--link-journal=no", "--resolv-conf=off", "--timezone=off"]
        self.boots += 1
        log = open(self.console, "a")
        log.write("===== boot %d: %s\n" % (self.boots, " ".join(nspawn)))
        log.flush()
        self.proc = subprocess.Popen(["sh", "-c", join + 'exec "$@"', "sh"] + nspawn,
                                     stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.leader = None
        deadline = time.monotonic() + timeout
        state = None
        while state is None:
            if self.proc.poll() is not None:
                raise BootError("systemd-nspawn exited with %s\n%s" % (
                    self.proc.returncode, self.console_tail()))
            if time.monotonic() > deadline:
                raise BootError("%s not booted after %d s\n%s" % (
                    self.machine, timeout, self.console_tail()))
            try:
                self.leader = self.leader or self._find_leader()
                state = self.leader and self._booted(deadline)
            except (OSError, subprocess.TimeoutExpired):
                pass  # PID 1 not there yet, or not answering yet
            if state is None:
                time.sleep(0.2)
        if state != "running":
            print("%s booted %s:\n%s" % (self.machine, state,
                                         self.systemctl("--failed", "--no-pager",
                                                        check=False).stdout))

    def _find_leader(self):
        """systemd-nspawn's child that runs systemd: the container's PID 1."""
        for task in os.listdir("/proc/%d/task" % self.proc.pid):
            with open("/proc/%d/task/%s/children" % (self.proc.pid, task)) as f:
                for pid in f.read().split():
                    with open("/proc/%s/comm" % pid) as c:
                        if c.read().strip() == "systemd":
                            return int(pid)
        return None

    def _booted(self, deadline):
        """"running" or "degraded" once the boot is over, else None."""
        res = self.run(["systemctl", "is-system-running", "--wait"], check=False,
                       timeout=max(1.0, deadline - time.monotonic()))
        state = res.stdout.strip()
        return state if state in ("running", "degraded") else None

    def _wait_exit(self, timeout):
        try:
            self.exit_statuses.append(self.proc.wait(timeout))
            return True
        except subprocess.TimeoutExpired:
            return False

    def reboot(self, timeout=BOOT_TIMEOUT):
        """`systemctl reboot` inside: systemd shuts everything down and
        systemd-nspawn exits (status 133, "reboot"); then boot again on the
        same root. Returns nspawn's exit status."""
        self.run(["systemctl", "reboot"], check=False)
        if not self._wait_exit(timeout):
            raise h.HarnessError("%s did not go down after systemctl reboot\n%s" % (
                self.machine, self.console_tail()))
        self.boot(timeout)
        return self.exit_statuses[-1]

    def shutdown(self, timeout=60):
        """Powers the container off (SIGTERM to systemd-nspawn makes it ask
        PID 1 for a clean shutdown), by force if that does not end it.
        Returns a list of problems."""
        problems = []
        if not self.running():
            return problems
        self.proc.send_signal(signal.SIGTERM)
        if self._wait_exit(timeout):
            return problems
        problems.append("%s did not power off in %d s" % (self.machine, timeout))
        # PID 1's death ends every process of the container's PID namespace.
        if self.leader:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.leader, signal.SIGKILL)
        self.proc.kill()
        self._wait_exit(10)
        return problems

    def cleanup(self):
        """Shut down, unmount, remove the cgroups. Returns a list of problems
        (the files stay in the workdir: the Topology's teardown removes them)."""
        problems = self.shutdown()
        if self.mounted:
            res = h.run(["umount", self.root], check=False)
            if res.returncode != 0:
                problems.append("umount %s: %s" % (self.root, res.stderr.strip()))
                h.run(["umount", "-l", self.root], check=False)
            self.mounted = False
        for top in self.cgroups:
            if not os.path.isdir(top):
                continue
            for attempt in range(50):
                try:
                    for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
                        os.rmdir(dirpath)
                    break
                except OSError as exc:
                    if attempt == 49:
                        problems.append("cgroup %s not removed: %s" % (top, exc))
                    time.sleep(0.1)
        return problems

    # -- inside

    def run(self, cmd, check=True, timeout=60):
        """Runs cmd (a list) inside the container: its namespaces, its root,
        a clean environment."""
        if not self.leader:
            raise h.HarnessError("%s is not running" % self.machine)
        return h.run(["nsenter", "--target", str(self.leader), "--all", "--",
                      "env", "-i", "PATH=" + CONTAINER_PATH, "LANG=C"] + list(cmd),
                     check=check, timeout=timeout)

    def systemctl(self, *args, check=True, timeout=60):
        return self.run(["systemctl"] + list(args), check=check, timeout=timeout)

    def show(self, unit, *props):
        """{property: value} of `systemctl show` for one unit."""
        res = self.systemctl("show", unit, *["--property=" + p for p in props])
        return dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)

    def active(self, unit):
        return self.systemctl("is-active", unit, check=False).stdout.strip()

    def main_pid(self, unit):
        return int(self.show(unit, "MainPID")["MainPID"])

    def processes(self):
        """{pid: comm} of the container's processes (PIDs as seen inside)."""
        out = self.run(["ps", "-e", "-o", "pid=,comm="]).stdout
        return {int(pid): comm for pid, _, comm in
                (line.strip().partition(" ") for line in out.splitlines()) if pid}

    def journal(self, *units, lines=300):
        args = ["journalctl", "--boot", "--no-pager", "--output=short-monotonic",
                "--lines=%d" % lines]
        for unit in units:
            args.append("--unit=" + unit)
        res = self.run(args, check=False)
        return res.stdout + res.stderr

    def console_tail(self, lines=60):
        try:
            with open(self.console, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


class SystemdGateway(h.Gateway):
    """The esgw inside the container, driven like a harness Gateway (ctl,
    wait_running, configure_tunnel...): esgwctl runs inside the container,
    systemd supervises, nothing is started here."""

    def __init__(self, container, tag, workers=1):
        super().__init__("gw1", container.netns, tag, workers=workers)
        self.container = container

    def check_alive(self):
        if not self.container.running():
            raise h.HarnessError("container %s is down" % self.container.machine)

    def ctl_raw(self, *args, json_out=True, timeout=20):
        cmd = ["esgwctl"] + (["--json"] if json_out else []) + [str(a) for a in args]
        return self.container.run(cmd, check=False, timeout=timeout)

    def logs_text(self, lines=200):
        parts = ["===== %s: console (last lines) =====" % self.container.machine,
                 self.container.console_tail(lines)]
        if self.container.running():
            parts += ["===== %s: journal of the esgw units =====" % self.container.machine,
                      self.container.journal("esgw*", lines=lines)]
        return "\n".join(parts)


def probe(rootfs, tag):
    """None if a plain container boots the cached tree here, else why not:
    tells "systemd-nspawn cannot boot at all" (a reason to skip) from "our
    container's options or esgw's files break the boot" (a failure)."""
    ct = Container(tag, None, name="probe")
    try:
        ct.prepare(rootfs, install=False)
        ct.boot()
        return None
    except (BootError, h.HarnessError) as exc:
        return str(exc)
    finally:
        ct.cleanup()
