#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer target for the inbound ESP path with clang
# (-fsanitize=fuzzer,address,undefined) and runs it from the checked-in seed
# corpus. Usage: tests/fuzz/run.sh [RUNS] [extra libFuzzer options]
#   RUNS 0 (or -1) means run until stopped; default 20000 inputs.
# New interesting inputs go to $ESGW_FUZZ_WORK (default /tmp/esgw-fuzz), never
# into the checked-in corpus; crashes are written there too (crash-*).
set -euo pipefail
# The ESP core is every crypto-worker/esp*.c (DPDK-free; see crypto-worker/meson.build).
cd "$(dirname "$0")/../.."
top=$(pwd)
runs=${1:-20000}
shift || true
work=${ESGW_FUZZ_WORK:-/tmp/esgw-fuzz}
bin=$work/fuzz_esp_decap

command -v clang >/dev/null || { echo "tests/fuzz/run.sh: clang not installed (apt-get install -y clang)"; exit 1; }
mkdir -p "$work/corpus"
clang -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	$(pkg-config --cflags libdpdk) -Wno-unused-command-line-argument \
	-I"$top/common" -I"$top/crypto-worker" -I"$top/tests/unit" \
	"$top/tests/fuzz/fuzz_esp_decap.c" "$top"/crypto-worker/esp*.c \
	"$top/common/replay.c" "$top/common/drops.c" \
	-lIPSec_MB -o "$bin"
[ "$runs" -le 0 ] && runs=-1
# The first corpus directory receives new inputs; the seeds stay as they are.
exec "$bin" -runs="$runs" -max_len=1600 -artifact_prefix="$work/" "$@" \
	"$work/corpus" "$top/tests/fuzz/corpus"
