# SPDX-License-Identifier: BSD-3-Clause
"""strongSwan's charon in the test namespaces: with the kernel-esgw plugin
next to an esgw gateway (esgw_harness.Gateway), or with kernel-libipsec as an
independent IKEv2 and ESP peer (userspace ESP on a TUN device, always UDP-
encapsulated).

Every charon has its own strongswan.conf (STRONGSWAN_CONF), vici socket,
swanctl.conf and log under the test's work directory, and reads nothing from
/etc, so several run at once without meeting each other or the host's. The
gateway's charon loads the plugin of $ESGW_BUILD with LD_PRELOAD (charon finds
plugins that are already in the process before it looks in its plugin
folder), so a test never depends on, nor changes, what is installed."""

import os
import signal
import subprocess
import time

import esgw_harness as h
import vici

CHARON = "/usr/sbin/charon-systemd"
SWANCTL = "/usr/sbin/swanctl"
PLUGIN_NAME = "libstrongswan-kernel-esgw.so"
CRYPTO_PLUGINS = "random nonce openssl pem pkcs1 x509 pubkey kdf hmac gcm aes sha1 sha2 gmp"
PSK = "esgw-test-psk-0123456789"


def plugin_path():
    return h.find_binary(PLUGIN_NAME) or os.path.join(h.ESGW_BUILD, "ike", "strongswan",
                                                       PLUGIN_NAME)


def require_ike():
    """Skip where charon or the plugin is missing, unless tests/run.sh said
    the IKE setup ran (ESGW_REQUIRE_IKE=1): then it is a failure."""
    import pytest
    h.require_root_and_binaries()
    missing = [p for p in (CHARON, SWANCTL, plugin_path()) if not os.path.exists(p)]
    if missing:
        msg = "IKE tests need %s (deploy/setup-host.sh --ike)" % ", ".join(missing)
        if os.environ.get("ESGW_REQUIRE_IKE") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


class Charon:
    """One charon-systemd in a namespace. kernel is "esgw" (the plugin, talking
    to esgw_socket) or "libipsec"."""

    def __init__(self, name, netns, workdir, kernel, esgw_socket=None, settings=""):
        self.name = name
        self.netns = netns
        self.workdir = os.path.join(workdir, "charon-" + name)
        self.kernel = kernel
        self.esgw_socket = esgw_socket
        self.settings = settings
        self.conf = os.path.join(self.workdir, "strongswan.conf")
        self.swanctl_conf = os.path.join(self.workdir, "swanctl.conf")
        self.vici = os.path.join(self.workdir, "charon.vici")
        self.log = os.path.join(self.workdir, "charon.log")
        self.proc = None
        self._out = None

    def write_config(self, swanctl_conf):
        os.makedirs(self.workdir, exist_ok=True)
        if self.kernel == "esgw":
            kernel = "kernel-esgw kernel-netlink"
            plugins = "kernel-esgw { socket = %s }\n" % self.esgw_socket
        else:
            kernel = "kernel-libipsec kernel-netlink"
            plugins = ""
        with open(self.conf, "w") as f:
            f.write("""# written by tests/integration/ike_harness.py
charon {
  load = %(crypto)s %(kernel)s socket-default vici
  filelog {
    main { path = %(log)s
           time_format = %%T
           default = 1
           knl = 2
           flush_line = yes }
  }
  journal { default = -1 }
  retransmit_timeout = 2
  retransmit_tries = 3
  plugins {
    vici { socket = unix://%(vici)s }
    %(plugins)s
  }
  %(settings)s
}
""" % {"crypto": CRYPTO_PLUGINS, "kernel": kernel, "log": self.log, "vici": self.vici,
                "plugins": plugins, "settings": self.settings})
        with open(self.swanctl_conf, "w") as f:
            f.write(swanctl_conf)

    def env(self):
        env = ["env", "STRONGSWAN_CONF=" + self.conf]
        if self.kernel == "esgw":
            env.append("LD_PRELOAD=" + plugin_path())
        return env

    def start(self, swanctl_conf=None, timeout=30):
        if swanctl_conf is not None:
            self.write_config(swanctl_conf)
        if self._out is None:
            self._out = open(os.path.join(self.workdir, "charon.out"), "a")
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.netns] + self.env() + [CHARON],
                                     stdout=self._out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        h.wait_for(self._vici_up, timeout, 0.2, "%s: charon's vici socket" % self.name)
        self.swanctl("--load-all", "--file", self.swanctl_conf)

    def _vici_up(self):
        if self.proc.poll() is not None:
            raise h.HarnessError("charon %s exited with %s:\n%s" % (
                self.name, self.proc.returncode, self.log_text()))
        try:
            vici.call(self.vici, "version", timeout=5)
            return True
        except OSError:
            return False

    def swanctl(self, *args, check=True, timeout=60):
        return h.run(["ip", "netns", "exec", self.netns] + self.env()[:2] +
                     [SWANCTL] + list(args) + ["--uri", "unix://" + self.vici],
                     check=check, timeout=timeout)

    def list_sas(self):
        return vici.list_sas(self.vici)

    def established(self, ike="gw"):
        """The ESTABLISHED IKE_SA named ike with at least one INSTALLED child, or None."""
        for sa in self.list_sas():
            if sa["name"] == ike and sa.get("state") == "ESTABLISHED" and any(
                    c.get("state") == "INSTALLED" for c in sa.get("child-sas", {}).values()):
                return sa
        return None

    def children(self, ike="gw", state="INSTALLED"):
        """[child_sa dict] of the IKE_SA named ike in a state."""
        out = []
        for sa in self.list_sas():
            if sa["name"] == ike:
                out += [c for c in sa.get("child-sas", {}).values() if c.get("state") == state]
        return out

    def spis(self, ike="gw"):
        """{(spi_in, spi_out)} of the INSTALLED CHILD_SAs, as ints."""
        return {(int(c["spi-in"], 16), int(c["spi-out"], 16)) for c in self.children(ike)}

    def log_text(self, lines=150):
        parts = []
        for path in (self.log, os.path.join(self.workdir, "charon.out")):
            try:
                with open(path, errors="replace") as f:
                    parts.append("===== charon %s: %s =====\n%s" % (
                        self.name, path, "\n".join(f.read().splitlines()[-lines:])))
            except OSError:
                pass
        return "\n".join(parts)

    def grep_log(self, text):
        try:
            with open(self.log, errors="replace") as f:
                return [line for line in f if text in line]
        except OSError:
            return []

    def kill(self):
        """SIGKILL, as a crash would."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, timeout=20):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self._out:
            self._out.close()
            self._out = None


def swanctl_conf(local, remote, children, proposals="aes128gcm16-sha256-x25519",
                 esp="aes128gcm16-x25519", extra_conn="", start_action="none"):
    """A swanctl.conf with one connection "gw" (PSK) and the given children:
    {name: (local_ts, remote_ts, extra lines)}."""
    child_text = ""
    for name, (lts, rts, extra) in children.items():
        child_text += """      %s {
        local_ts = %s
        remote_ts = %s
        esp_proposals = %s
        start_action = %s
        %s
      }
""" % (name, lts, rts, esp, start_action, extra)
    return """connections {
  gw {
    version = 2
    local_addrs = %(local)s
    remote_addrs = %(remote)s
    proposals = %(proposals)s
    local { auth = psk
            id = %(local)s }
    remote { auth = psk
             id = %(remote)s }
    %(extra)s
    children {
%(children)s    }
  }
}
secrets {
  ike-gw { id-1 = %(local)s
           id-2 = %(remote)s
           secret = "%(psk)s" }
}
""" % {"local": local, "remote": remote, "proposals": proposals, "extra": extra_conn,
       "children": child_text, "psk": PSK}


def ike_owned(gw):
    """The SAs esgw shows as owned by IKE."""
    return [sa for sa in gw.ctl("show", "sa")["sas"] if sa.get("owner") == "ike"]


def configure_ike_gateway(gw, lan_dev, lan_addr, wan_dev, wan_addr, routes):
    """Interfaces and routes only: SAs, tunnels and policies come from charon."""
    gw.ctl("interface", "add", "lan", "net_af_packet0,iface=%s" % lan_dev)
    gw.ctl("interface", "address", "add", "lan", lan_addr)
    gw.ctl("interface", "add", "wan", "net_af_packet1,iface=%s" % wan_dev)
    gw.ctl("interface", "address", "add", "wan", wan_addr)
    for prefix, via in routes:
        gw.ctl("route", "add", prefix, "via", via)
    gw.wait_running()
    # charon binds to the punt TAP's address: wait until rxtx made it.
    h.wait_for(lambda: wan_addr.split("/")[0] in h.nsrun(
        gw.netns, ["ip", "-4", "addr", "show", "dev", "esgw-wan"], check=False).stdout,
        30, 0.2, "%s: TAP esgw-wan with %s" % (gw.name, wan_addr))
    gw.baseline = gw.process_snapshot()
