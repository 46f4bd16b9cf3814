# SPDX-License-Identifier: BSD-3-Clause
"""The systemd units of deploy/systemd/ pass `systemd-analyze verify`.

deploy/install.sh installs the executables and the units into a staging root
(DESTDIR), and systemd-analyze verifies each unit with --root, so it checks the
ExecStart executables that install.sh put there. PID 1 here is not systemd:
nothing is started, the standalone supervisor is what the other tests run.
A deliberately broken copy of a unit must fail, or the test proves nothing.
"""

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import esgw_harness as h  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UNIT_SRC = os.path.join(REPO, "deploy", "systemd")
UNITDIR = "etc/systemd/system"
# A template unit is verified through one of its instances.
UNITS = ["esgw.target", "esgw-ctld.service", "esgw-hugepages.service", "esgw-rxtx.service",
         "esgw-router.service", "esgw-crypto@0.service", "esgw-crypto@7.service"]
STOCK_UNITS = "/lib/systemd/system"


def verify(root, unit):
    """(ok, output): ok if systemd-analyze exits 0 and says nothing about an
    esgw unit (it only warns, exit 0, on unknown keys and bad values)."""
    res = subprocess.run(["systemd-analyze", "verify", "--root=%s" % root, unit],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=60)
    complaints = [line for line in res.stdout.splitlines() if "esgw" in line]
    return res.returncode == 0 and not complaints, res.stdout


@pytest.fixture(scope="module")
def staged_root(tmp_path_factory):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    missing = h.missing_binaries()
    if missing:
        pytest.skip("not built in %s: %s" % (h.ESGW_BUILD, ", ".join(missing)))
    root = str(tmp_path_factory.mktemp("hh-systemd-root"))
    # verify --root resolves the units' dependencies (sysinit.target, ...) in
    # the root: give it the distribution's units.
    os.makedirs(os.path.join(root, "usr/lib/systemd"))
    shutil.copytree(STOCK_UNITS, os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
    env = dict(os.environ, DESTDIR=root, ESGW_BUILD=h.ESGW_BUILD, PREFIX="/usr/local")
    res = subprocess.run([os.path.join(REPO, "deploy", "install.sh")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=120)
    assert res.returncode == 0, "install.sh failed:\n" + res.stdout
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_install_layout(staged_root):
    for exe in ("esgw-ctld", "esgwctl", "esgw-rxtx", "esgw-router", "esgw-crypto"):
        assert os.access(os.path.join(staged_root, "usr/local/bin", exe), os.X_OK), exe
    assert os.access(os.path.join(staged_root, "usr/local/libexec/esgw/esgw-hugepages"),
                     os.X_OK)
    assert os.path.isfile(os.path.join(staged_root, "etc/esgw/esgw.env"))
    for name in os.listdir(UNIT_SRC):
        assert os.path.exists(os.path.join(staged_root, UNITDIR, name)), name


@pytest.mark.parametrize("unit", UNITS)
def test_unit_verifies(staged_root, unit):
    ok, out = verify(staged_root, unit)
    assert ok, "systemd-analyze verify %s:\n%s" % (unit, out)


def test_units_are_wired_together(staged_root):
    """What the design relies on: every unit is part of the target, the
    secondaries are bound to the primary, CPU placement is in drop-ins."""
    def read(name):
        with open(os.path.join(staged_root, UNITDIR, name)) as f:
            return f.read()
    for name in ("esgw-ctld.service", "esgw-rxtx.service", "esgw-router.service",
                 "esgw-crypto@.service", "esgw-hugepages.service"):
        assert "PartOf=esgw.target" in read(name), name
    for name in ("esgw-router.service", "esgw-crypto@.service"):
        text = read(name)
        assert "BindsTo=esgw-rxtx.service" in text and "After=esgw-rxtx.service" in text
        assert "Restart=always" in text
    assert "$ESGW_VDEVS" in read("esgw-rxtx.service")
    assert "EnvironmentFile=-/run/esgw/rxtx.env" in read("esgw-rxtx.service")
    for dropin in ("esgw-rxtx.service.d", "esgw-router.service.d", "esgw-crypto@.service.d"):
        with open(os.path.join(staged_root, UNITDIR, dropin, "10-cpu.conf")) as f:
            assert "CPUAffinity=" in f.read()


@pytest.mark.parametrize("breakage", ["missing-binary", "bad-value", "unknown-key"])
def test_broken_unit_fails(staged_root, breakage):
    """The check can fail: a copy of the router unit broken on purpose."""
    src = os.path.join(staged_root, UNITDIR, "esgw-router.service")
    with open(src) as f:
        text = f.read()
    if breakage == "missing-binary":
        text = text.replace("/usr/local/bin/esgw-router", "/usr/local/bin/esgw-no-such")
    elif breakage == "bad-value":
        text = text.replace("Restart=always", "Restart=sometimes")
    else:
        text = text.replace("RestartSec=1", "RestartSec=1\nRestartSecs=1")
    broken = "esgw-broken-%s.service" % breakage
    path = os.path.join(staged_root, UNITDIR, broken)
    with open(path, "w") as f:
        f.write(text)
    try:
        ok, out = verify(staged_root, broken)
        assert not ok, "a broken unit passed verification:\n" + out
    finally:
        os.unlink(path)
