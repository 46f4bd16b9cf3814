#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Sets up the machine, builds esgw and runs every test: the C unit tests
# (meson test) and the integration tests with real processes in network
# namespaces (pytest). Ends with one line "N passed, N failed"; exits non-zero
# on any failure. Options: -k EXPR is passed to pytest to select tests.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
build=${ESGW_BUILD:-$top/build}
export ESGW_BUILD=$build
pytest_args=()
[ "${1:-}" = "-k" ] && pytest_args=(-k "$2")

# --ike: charon, the strongSwan source and the kernel-esgw plugin (tests/integration/test_ike*.py).
./deploy/setup-host.sh --ike --build "$build" || { echo "tests/run.sh: machine setup failed"; echo "0 passed, 1 failed"; exit 1; }
export ESGW_REQUIRE_IKE=1

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" >/tmp/esgw-meson-setup.log 2>&1 || {
		cat /tmp/esgw-meson-setup.log; echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$build"; then
	echo "tests/run.sh: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

passed=0
failed=0
# Logs in the build directory: checkouts tested side by side keep theirs apart.
logs=$build/test-logs
mkdir -p "$logs"

# --- unit tests
meson test -C "$build" --no-rebuild --print-errorlogs 2>&1 | tee "$logs/unit.log"
ok=$(awk '/^Ok:/ {print $2}' "$logs/unit.log")
bad=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {s += $NF} END {print s + 0}' "$logs/unit.log")
passed=$((passed + ${ok:-0}))
failed=$((failed + bad))
[ -z "$ok" ] && failed=$((failed + 1))

# --- fuzzing the inbound ESP path and the router's input path (libFuzzer,
# bounded; every seed, the regressions among them, runs first)
for target in esp_decap router; do
	if tests/fuzz/run.sh --target "$target" 20000 >"$logs/fuzz-$target.log" 2>&1; then
		echo "fuzz $target: 20000 inputs, no findings"
		passed=$((passed + 1))
	else
		tail -30 "$logs/fuzz-$target.log"
		failed=$((failed + 1))
	fi
done

# --- integration tests (real processes, namespaces, scapy as the independent ESP peer)
junit=$logs/integration.xml
rm -f "$junit"
/usr/bin/python3 -m pytest -v -p no:cacheprovider --junitxml="$junit" "${pytest_args[@]}" tests/integration
read -r ip ifail < <(/usr/bin/python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print(0, 1); sys.exit()
suites = [root] if root.tag == "testsuite" else list(root)
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
sk = sum(int(s.get("skipped", 0)) for s in suites)
# Every skip says why (e.g. the systemd tests on a machine where
# systemd-nspawn cannot boot), once per reason.
reasons = {}
for case in root.iter("testcase"):
    skipped = case.find("skipped")
    if skipped is not None:
        why = skipped.get("message", "").replace("\n", " ")
        reasons[why] = reasons.get(why, 0) + 1
for why, n in reasons.items():
    print("tests/run.sh: %d skipped: %s" % (n, why), file=sys.stderr)
print(t - f - sk, f)
PY
)
passed=$((passed + ip))
failed=$((failed + ifail))

# Nothing of ours may be left running: esgw processes started from this
# build (other checkouts' gateways on the same machine are not ours).
left=$(for exe in /proc/[0-9]*/exe; do
	t=$(readlink "$exe" 2>/dev/null) || continue
	case "$t" in "$build"/*) pid=${exe#/proc/}; echo "${pid%/exe} $t" ;; esac
done)
if [ -n "$left" ]; then
	echo "tests/run.sh: esgw processes left running:"; echo "$left"
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
