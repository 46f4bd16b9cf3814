# SPDX-License-Identifier: BSD-3-Clause
"""docs/ARCHITECTURE.md cannot rot: every function it names as `name()` is
defined in the tree (or, for rte_* names, declared by the installed DPDK), and
the README links to it."""
import glob
import os
import re

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(TOP, "docs", "ARCHITECTURE.md")
SOURCE_DIRS = ["common", "rxtx", "router", "crypto-worker", "ctl"]
DPDK_INCLUDE = "/usr/include/dpdk"


def named_functions():
    with open(DOC) as f:
        text = f.read()
    return sorted(set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)\(\)`", text)))


def read_all(paths):
    out = []
    for p in paths:
        with open(p, errors="replace") as f:
            out.append(f.read())
    return "\n".join(out)


def test_every_named_function_exists():
    names = named_functions()
    assert len(names) > 50, "the walks name the functions they pass through"
    ours = read_all(p for d in SOURCE_DIRS for p in glob.glob(os.path.join(TOP, d, "*.[ch]")))
    dpdk = read_all(glob.glob(os.path.join(DPDK_INCLUDE, "**", "*.h"), recursive=True))
    missing = []
    for name in names:
        # A definition: the name, its parameter list, then a body (possibly
        # after the parameters wrap over lines), not only a call.
        definition = re.compile(r"^[A-Za-z_][^;=\n]*\b%s\([^;{]*\)\s*\{" % re.escape(name),
                                re.M)
        if definition.search(ours):
            continue
        if name.startswith("rte_") and re.search(r"\b%s\s*\(" % re.escape(name), dpdk):
            continue
        missing.append(name)
    assert not missing, "docs/ARCHITECTURE.md names functions that do not exist: %s" % missing


def test_readme_links_it():
    with open(os.path.join(TOP, "README.md")) as f:
        assert "docs/ARCHITECTURE.md" in f.read()
