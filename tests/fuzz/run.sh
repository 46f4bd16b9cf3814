#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds a libFuzzer target with clang (-fsanitize=fuzzer,address,undefined)
# and runs it from its checked-in seed corpus.
# Usage: tests/fuzz/run.sh [--target esp_decap|router] [RUNS] [extra libFuzzer options]
#   esp_decap (the default): the inbound ESP path of the crypto worker alone;
#   router: the router's whole input path with a configured router on DPDK
#   (in memory, no hugepages) and the crypto worker behind it.
#   RUNS 0 (or -1) means run until stopped; default 20000 inputs.
# New interesting inputs go to $ESGW_FUZZ_WORK (default $ESGW_BUILD/fuzz when
# ESGW_BUILD is set, as tests/run.sh does, else /tmp/esgw-fuzz; the router's
# in router/ below it), never into the checked-in corpus; crashes are
# written there too (crash-*).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
target=esp_decap
if [ "${1:-}" = "--target" ]; then
	target=$2
	shift 2
fi
runs=${1:-20000}
shift || true
fuzz_work=${ESGW_FUZZ_WORK:-${ESGW_BUILD:+$ESGW_BUILD/fuzz}}
fuzz_work=${fuzz_work:-/tmp/esgw-fuzz}
command -v clang >/dev/null || { echo "tests/fuzz/run.sh: clang not installed (apt-get install -y clang)"; exit 1; }
flags=(-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
	-Wno-unused-command-line-argument)

case "$target" in
esp_decap)
	# The ESP core is every crypto-worker/esp*.c (DPDK-free; see crypto-worker/meson.build).
	work=$fuzz_work
	bin=$work/fuzz_esp_decap
	corpus=$top/tests/fuzz/corpus
	mkdir -p "$work/corpus"
	clang "${flags[@]}" $(pkg-config --cflags libdpdk) \
		-I"$top/common" -I"$top/crypto-worker" -I"$top/tests/unit" \
		"$top/tests/fuzz/fuzz_esp_decap.c" "$top"/crypto-worker/esp*.c \
		"$top/common/replay.c" "$top/common/drops.c" \
		-lIPSec_MB -o "$bin"
	max_len=1600
	;;
router)
	# esgw-router without its main.c, esgw-crypto without its main.c, the
	# common code they link, and the protobuf-c code of proto/esgw.proto and
	# proto/dataplane.proto (the configuration pushes the target builds).
	work=$fuzz_work/router
	bin=$work/fuzz_router
	corpus=$top/tests/fuzz/corpus_router
	mkdir -p "$work/corpus" "$work/proto"
	protoc-c --proto_path="$top/proto" --c_out="$work/proto" "$top/proto/esgw.proto" \
		"$top/proto/dataplane.proto"
	router_src=$(ls "$top"/router/*.c | grep -v '/main\.c$')
	worker_src=$(ls "$top"/crypto-worker/*.c | grep -v '/main\.c$')
	# shellcheck disable=SC2086
	clang "${flags[@]}" -D_GNU_SOURCE $(pkg-config --cflags libdpdk libprotobuf-c) \
		-I"$top/common" -I"$top/router" -I"$top/crypto-worker" -I"$work/proto" \
		"$top/tests/fuzz/fuzz_router.c" $router_src $worker_src \
		"$top"/common/*.c \
		"$work/proto/esgw.pb-c.c" "$work/proto/dataplane.pb-c.c" \
		$(pkg-config --libs libdpdk libprotobuf-c) -lIPSec_MB -lpthread -o "$bin"
	max_len=8192
	;;
*)
	echo "tests/fuzz/run.sh: unknown target '$target' (esp_decap or router)"
	exit 2
	;;
esac
[ "$runs" -le 0 ] && runs=-1
# The first corpus directory receives new inputs; the seeds stay as they are.
exec "$bin" -runs="$runs" -max_len=$max_len -artifact_prefix="$work/" "$@" \
	"$work/corpus" "$corpus"
