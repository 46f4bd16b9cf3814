#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Measures esgw in memory: the crypto ceiling (imb-raw), then two gateways back
# to back over net_memif with esgw-bench as both LAN hosts, an RFC 2544
# zero-loss search per size and algorithm, a table of each gateway figure next
# to the ceiling as a ratio, and bench/RESULTS.md. Tears everything down, also
# on failure. --smoke: one size, one algorithm, short trials (for tests/run.sh).
#
#   esgw-bench port A --memif-- lan [gw1] wan --memif-- wan [gw2] lan --memif-- esgw-bench port B
#   192.168.1.1        192.168.1.2   192.168.3.1   192.168.3.2   192.168.2.2        192.168.2.1
#
# memif roles: every gateway port is the server (its rxtx listens), except gw2's
# wan, the client of gw1's wan; esgw-bench's ports are clients. The client side
# of a memif sets the ring size (rsize=log2 of the slots, $MEMIF_RING).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${ESGW_BUILD:-$top/build}
run=${ESGW_BENCH_RUNDIR:-/tmp/esgw-bench}
PY=/usr/bin/python3
SIZES=64,512,1400,imix
ALGS=aes-gcm-128,aes-cbc-128-sha1-96
TRIAL=1          # seconds per search trial
STEPS=8          # search trials after the full-speed one
RAW_DURATION=1   # seconds per imb-raw point
STAGE_TRIAL=2    # seconds of the trial the per-stage cycles come from
GEN_CPU=0        # the generator's CPU; the crypto workers are on CPU 1
MEMIF_RING=${MEMIF_RING:-12}
SMOKE=0
OUT=$top/bench/RESULTS.md
WRITE_RESULTS=1
cmdline="bench/run.sh${*:+ $*}"

usage() {
	cat <<EOF
usage: bench/run.sh [--smoke] [--sizes LIST] [--algs LIST] [--trial S] [--steps N]
                    [--gen-cpu N] [--build DIR] [--out FILE | --no-results]
  --smoke        64-byte frames, aes-gcm-128, short trials (~10-20 s); does not
                 write RESULTS.md unless --out is given
  --sizes LIST   frame sizes with FCS, or imix (default $SIZES)
  --algs LIST    aes-gcm-128,aes-cbc-128-sha1-96 (default both)
  --trial S      seconds per search trial (default $TRIAL)
  --steps N      binary-search trials after the full-speed one (default $STEPS)
  --gen-cpu N    CPU of the generator (default $GEN_CPU)
  --build DIR    build directory (default \$ESGW_BUILD or $top/build)
  --out FILE     where to write the results (default bench/RESULTS.md)
EOF
}

out_given=0
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--sizes) SIZES=$2; shift ;;
	--algs) ALGS=$2; shift ;;
	--trial) TRIAL=$2; shift ;;
	--steps) STEPS=$2; shift ;;
	--gen-cpu) GEN_CPU=$2; shift ;;
	--build) build=$2; shift ;;
	--out) OUT=$2; out_given=1; shift ;;
	--no-results) WRITE_RESULTS=0 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
if [ "$SMOKE" -eq 1 ]; then
	SIZES=64 ALGS=aes-gcm-128 TRIAL=0.3 STEPS=3 RAW_DURATION=0.2 STAGE_TRIAL=0.5
	[ "$out_given" -eq 1 ] || WRITE_RESULTS=0
fi

declare -A CTLD_PID=()
say() { printf '\n=== %s\n' "$*"; }
die() { echo "bench/run.sh: $*" >&2; exit 1; }

# Pids of every process started with this DPDK file prefix.
prefix_pids() {
	local prefix=$1 p
	for p in /proc/[0-9]*; do
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q -- "--file-prefix $prefix " &&
			echo "${p#/proc/}"
	done
	return 0
}

cleanup() {
	local rc=$?
	set +e
	for gw in "${!CTLD_PID[@]}"; do
		kill -TERM "${CTLD_PID[$gw]}" 2>/dev/null
	done
	for gw in "${!CTLD_PID[@]}"; do
		for _ in $(seq 1 75); do
			kill -0 "${CTLD_PID[$gw]}" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "${CTLD_PID[$gw]}" 2>/dev/null
	done
	for prefix in esgw-bench-gw1 esgw-bench-gw2 esgw-bench-gen; do
		left=$(prefix_pids "$prefix")
		if [ -n "$left" ]; then
			echo "bench/run.sh: processes of $prefix left, killing: $left" >&2
			kill -KILL $left 2>/dev/null
		fi
		rm -f /dev/hugepages/${prefix}map_*
		rm -rf "/var/run/dpdk/$prefix"
	done
	if [ "$rc" -ne 0 ] && [ -d "$run" ]; then
		for f in "$run"/gw*/ctld.out "$run"/gw*/log/*.log "$run"/*.err; do
			[ -f "$f" ] || continue
			echo "----- $f (last 20 lines)" >&2
			tail -n 20 "$f" >&2
		done
	fi
	rm -rf "$run"
	[ "$rc" -eq 0 ] && echo "bench/run.sh: OK" || echo "bench/run.sh: FAILED" >&2
	exit "$rc"
}

[ "$(id -u)" -eq 0 ] || die "must run as root (hugepages, DPDK)"
trap cleanup EXIT
trap 'exit 130' INT TERM

say "host setup and build"
"$top/deploy/setup-host.sh"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
targets="rxtx/esgw-rxtx router/esgw-router crypto-worker/esgw-crypto ctl/esgw-ctld ctl/esgwctl
	bench/esgw-bench bench/imb-raw"
ninja -C "$build" $targets >"$run.build.log" 2>&1 ||
	{ tail -n 30 "$run.build.log" >&2; die "build failed: ninja -C $build"; }
rm -f "$run.build.log"
rm -rf "$run"
mkdir -p "$run/bin"
for role in esgw-ctld esgw-rxtx esgw-router esgw-crypto esgwctl esgw-bench imb-raw; do
	exe=$(ls "$build"/*/"$role" 2>/dev/null | head -n 1 || true)
	[ -n "$exe" ] || die "$role not built in $build"
	ln -sf "$exe" "$run/bin/$role"
done
esgwctl() { local gw=$1; shift; "$run/bin/esgwctl" --socket "$run/$gw/ctl.sock" "$@"; }

say "crypto ceiling: imb-raw, ${RAW_DURATION} s per point"
"$run/bin/imb-raw" --size "$SIZES" --alg "$ALGS" --duration "$RAW_DURATION" --json \
	>"$run/imb-raw.json" 2>"$run/imb-raw.err" || die "imb-raw failed"
"$PY" -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%-20s %-8s %-5s %8.3f Mpps %7.1f cycles/packet" % (r["alg"], r["dir"], r["size"], r["pps"] / 1e6, r["cycles_per_packet"]))' "$run/imb-raw.json"

say "start two gateways (esgw-ctld --standalone)"
for gw in gw1 gw2; do
	mkdir -p "$run/$gw/run" "$run/$gw/log"
	"$run/bin/esgw-ctld" --standalone --socket "$run/$gw/ctl.sock" \
		--config "$run/$gw/config.pb" --rundir "$run/$gw/run" \
		--file-prefix "esgw-bench-$gw" --log-dir "$run/$gw/log" --workers 1 \
		--bindir "$run/bin" >"$run/$gw/ctld.out" 2>&1 &
	CTLD_PID[$gw]=$!
done
all_running() { # gw
	esgwctl "$1" --json show stats 2>/dev/null | "$PY" -c '
import json, sys
p = json.load(sys.stdin)["processes"]
sys.exit(0 if {"rxtx", "router", "crypto"} <= {x["role"] for x in p}
         and all(x["state"] == "running" for x in p) else 1)' 2>/dev/null
}
wait_running() { # gw
	for i in $(seq 1 120); do
		all_running "$1" && return 0
		kill -0 "${CTLD_PID[$1]}" 2>/dev/null || die "esgw-ctld of $1 exited"
		sleep 0.25
	done
	die "$1 not running after 30 s"
}

memif() { # name role socket [client options]
	local o="net_$1,role=$2,socket=$run/$3,socket-abstract=no,id=0"
	[ "$2" = client ] && o="$o,rsize=$MEMIF_RING"
	echo "$o"
}
# gw1 first: its wan is the server gw2's wan connects to, and adding an
# interface restarts that gateway's dataplane (which drops memif peers).
esgwctl gw1 interface add lan "$(memif memif0 server gw1-lan.sock)"
esgwctl gw1 interface add wan "$(memif memif1 server wan.sock)"
esgwctl gw1 interface address add lan 192.168.1.2/24
esgwctl gw1 interface address add wan 192.168.3.1/24
wait_running gw1
esgwctl gw2 interface add lan "$(memif memif0 server gw2-lan.sock)"
esgwctl gw2 interface add wan "$(memif memif1 client wan.sock)"
esgwctl gw2 interface address add lan 192.168.2.2/24
esgwctl gw2 interface address add wan 192.168.3.2/24
wait_running gw2

KEY=4339314b55523947594d6d3547666b45
INTEG=4339314b55523947594d6d3547666b4543393134
SALT=01020304
configure_sas() { # alg
	local alg=$1 gw keys
	case $alg in
	aes-gcm-128) keys="crypto-key $KEY salt $SALT" ;;
	aes-cbc-128-sha1-96) keys="crypto-key $KEY integ-key $INTEG" ;;
	*) die "unknown algorithm $alg" ;;
	esac
	for gw in gw1 gw2; do
		esgwctl $gw route del 192.168.0.0/16 >/dev/null 2>&1 || true
		esgwctl $gw tunnel del t0 >/dev/null 2>&1 || true
		esgwctl $gw sa del 10 >/dev/null 2>&1 || true
		esgwctl $gw sa del 20 >/dev/null 2>&1 || true
	done
	esgwctl gw1 sa add 10 spi 1000 alg "$alg" $keys
	esgwctl gw1 sa add 20 spi 2000 alg "$alg" $keys
	esgwctl gw1 tunnel add t0 local 192.168.3.1 remote 192.168.3.2 sa-out 10 sa-in 20
	esgwctl gw2 sa add 10 spi 2000 alg "$alg" $keys
	esgwctl gw2 sa add 20 spi 1000 alg "$alg" $keys
	esgwctl gw2 tunnel add t0 local 192.168.3.2 remote 192.168.3.1 sa-out 10 sa-in 20
	# One covering route each way, replaced per algorithm with the tunnel.
	esgwctl gw1 route add 192.168.0.0/16 tunnel t0
	esgwctl gw2 route add 192.168.0.0/16 tunnel t0
}

generator() { # esgw-bench options...
	"$run/bin/esgw-bench" --file-prefix esgw-bench-gen --in-memory --no-pci -m 64 \
		--lcores "40@$GEN_CPU" \
		--vdev "$(memif memif0 client gw1-lan.sock)" \
		--vdev "$(memif memif1 client gw2-lan.sock)" \
		-- --addr-a 192.168.1.1 --gateway-a 192.168.1.2 --dst 192.168.2.1 "$@"
}

# Per-stage cycles per packet: one more trial per size at the zero-loss rate
# found, between two samples of the dataplane's cycle counters on each gateway.
measure_stages() { # alg
	local alg=$1 size rate out="$run/stages-$alg.json" sep=""
	if ! esgwctl gw1 --json show dataplane >/dev/null 2>&1; then
		echo '{}' >"$out"
		echo "(esgwctl show dataplane not available: no per-stage cycles)"
		return 0
	fi
	echo "{" >"$out"
	IFS=, read -r -a size_list <<<"$SIZES"
	for size in "${size_list[@]}"; do
		rate=$("$PY" -c '
import json, sys
for p in json.load(open(sys.argv[1]))["results"]:
    if p["size"] == sys.argv[2]:
        print(max(int(p["zero_loss_pps"]), 1000))' "$run/bench-$alg.json" "$size")
		esgwctl gw1 --json show dataplane >"$run/dp-gw1-before.json"
		esgwctl gw2 --json show dataplane >"$run/dp-gw2-before.json"
		generator --size "$size" --rate "$rate" --duration "$STAGE_TRIAL" --json \
			>"$run/stage-trial.json" 2>>"$run/bench-$alg.err" ||
			die "esgw-bench failed for $alg $size (per-stage trial)"
		sleep 1.2 # ctld samples the counters about once a second
		esgwctl gw1 --json show dataplane >"$run/dp-gw1-after.json"
		esgwctl gw2 --json show dataplane >"$run/dp-gw2-after.json"
		printf '%s"%s":' "$sep" "$size" >>"$out"
		"$PY" "$top/bench/stage_cost.py" "$run"/dp-gw1-{before,after}.json \
			"$run"/dp-gw2-{before,after}.json >>"$out"
		sep=,
	done
	echo "}" >>"$out"
}

bench_files=()
stage_files=()
IFS=, read -r -a alg_list <<<"$ALGS"
for alg in "${alg_list[@]}"; do
	say "$alg: esgw-bench zero-loss search, sizes $SIZES, ${TRIAL} s trials"
	configure_sas "$alg"
	generator --size "$SIZES" --search --trial "$TRIAL" --steps "$STEPS" --label "$alg" --json \
		>"$run/bench-$alg.json" 2>"$run/bench-$alg.err" ||
		die "esgw-bench failed for $alg"
	"$PY" -c '
import json, sys
for p in json.load(open(sys.argv[1]))["results"]:
    f, z = p["full_speed"], p["at_zero_loss"]
    print("%-5s full speed: offered %.3f delivered %.3f Mpps (loss %.2f%%); zero-loss %.3f Mpps, p50 %.1f us p99 %.1f us" % (
        p["size"], f["offered_pps"] / 1e6, f["delivered_pps"] / 1e6, f["loss_pct"], p["zero_loss_pps"] / 1e6,
        z["latency_us"]["p50"], z["latency_us"]["p99"]))' "$run/bench-$alg.json"
	bench_files+=("$alg=$run/bench-$alg.json")
	stage_files+=("$alg=$run/stages-$alg.json")
	measure_stages "$alg"
done

say "esgw next to the crypto ceiling"
machine="- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -r)
- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)
- esgw: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet 2>/dev/null || echo ' (uncommitted changes)')
"
notes="## How to read it

- **Topology (in memory)**: esgw-bench port A -> gw1 (encrypt) -> gw2 (decrypt) -> esgw-bench
  port B, every link a \`net_memif\` (memif rings of 2^$MEMIF_RING slots, set by the client side).
  Two esgw instances (\`esgw-ctld --standalone\`, one crypto worker each), each with rxtx and
  router on CPU 0 and its crypto worker on CPU 1; esgw-bench runs on CPU $GEN_CPU. Both gateways
  and the generator share the machine's $(nproc) CPUs.
- **Ceiling**: imb-raw runs the same ESP crypto jobs (same algorithm, same ESP payload of the
  frame's inner IPv4 packet, 32-job bursts) with intel-ipsec-mb alone on one core. Every packet
  through the two gateways costs one encrypt and one decrypt on CPU 1, so the ceiling for the
  chain is 1 / (1/enc + 1/dec); \`ratio\` is the esgw rate divided by it.
- **Zero-loss rate**: RFC 2544-style binary search, ${TRIAL} s trials, loss tolerance 0, first
  trial at the generator's full speed, at most $STEPS more; latency is from the TSC stamp in
  the payload at transmit to the receive poll, at the zero-loss rate.
- **Per-stage cycles**: busy TSC cycles per packet of each process, from \`esgwctl --json show
  dataplane\` sampled before and after one more ${STAGE_TRIAL} s trial at the zero-loss rate;
  \`x imb\` is the crypto worker's cycles per packet over imb-raw's for the same point.
- Not measured yet: two workers with two SAs, mode (b) through veth with \`net_af_xdp\`.
"
results_args=()
[ "$WRITE_RESULTS" -eq 1 ] && results_args=(--markdown "$OUT")
"$PY" "$top/bench/report.py" --imb-raw "$run/imb-raw.json" --bench "${bench_files[@]}" \
	--stages "${stage_files[@]}" \
	--command "$cmdline" --machine "$machine" --notes "$notes" "${results_args[@]}"
[ "$WRITE_RESULTS" -eq 1 ] && echo "written: $OUT"
exit 0
