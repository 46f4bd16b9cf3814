#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Measures esgw: the crypto ceiling (imb-raw); then (a) in memory, two gateways
# back to back over net_memif with esgw-bench as both LAN hosts, one worker and
# one SA pair, then two workers and two SA pairs; an RFC 2544 zero-loss search
# per size and algorithm, per-stage cycles at full load, CPU at rest and at
# load, the issue 4 targets met or missed, a profile of what remains; (b) the
# same gateways through veth in network namespaces with net_af_xdp. Prints a
# table of every figure next to the ceiling as a ratio and writes
# bench/RESULTS.md. Tears everything down, also on failure. --smoke: one size,
# one algorithm, short trials, no veth and no profile (for tests/run.sh).
#
#   esgw-bench port A --memif-- lan [gw1] wan --memif-- wan [gw2] lan --memif-- esgw-bench port B
#   192.168.1.1        192.168.1.2   192.168.3.1   192.168.3.2   192.168.2.2        192.168.2.1
#
# memif roles: every gateway port is the server (its rxtx listens), except gw2's
# wan, the client of gw1's wan; esgw-bench's ports are clients. The client side
# of a memif sets the ring size (rsize=log2 of the slots, $MEMIF_RING).
# Mode (b) is the same picture with a veth pair for each link, the generator
# in namespace $PFX-gen and each gateway in its own namespace.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${ESGW_BUILD:-$top/build}
run=${ESGW_BENCH_RUNDIR:-/tmp/esgw-bench}
# DPDK file prefixes and namespace names start with this (parallel runs differ).
PFX=${ESGW_BENCH_PREFIX:-esgw-bench}
PY=/usr/bin/python3
SIZES=64,512,1400,imix
ALGS=aes-gcm-128,aes-cbc-128-sha1-96
TRIAL=1          # seconds per search trial
STEPS=7          # search trials after the full-speed one
RAW_DURATION=0.5 # seconds per imb-raw point
RAW_REPEAT=3     # imb-raw runs; the median of each point is kept
STAGE_TRIAL=2    # seconds of the full-load trial the per-stage cycles come from
IDLE_SECONDS=5   # CPU of the gateways at rest is measured over this
GEN_CPU=0        # the generator's CPU
# Where each gateway's processes run (esgw-ctld --rxtx-cpu, --router-cpu,
# --worker-cpus). On 2 CPUs the load is split: gw1's rxtx and router share
# CPU 0 with the generator and its worker 0 is on CPU 1, gw2 the other way
# round, so no CPU holds both crypto workers of the tunnel and every packet
# still crosses cores between stages, as on a real gateway. With 8 CPUs or
# more every process has a CPU of its own.
if [ "$(nproc)" -ge 8 ]; then
	PLACE_gw1="--rxtx-cpu 1 --router-cpu 2 --worker-cpus 3,4"
	PLACE_gw2="--rxtx-cpu 5 --router-cpu 6 --worker-cpus 7,$(($(nproc) >= 9 ? 8 : 4))"
else
	PLACE_gw1="--rxtx-cpu 0 --router-cpu 0 --worker-cpus 1,0"
	PLACE_gw2="--rxtx-cpu 1 --router-cpu 1 --worker-cpus 0,1"
fi
MEMIF_RING=${MEMIF_RING:-12}
VETH_SIZES=64,1400
VETH_ALG=aes-gcm-128
SMOKE=0
TWO_WORKERS=1
BUSY_POLL=1      # the adaptive polling next to --busy-poll (point 6)
POLL_SIZES=64,1400
VETH=1
PROFILE=1
OUT=$top/bench/RESULTS.md
WRITE_RESULTS=1
cmdline="bench/run.sh${*:+ $*}"

usage() {
	cat <<EOF
usage: bench/run.sh [--smoke] [--sizes LIST] [--algs LIST] [--trial S] [--steps N]
                    [--gen-cpu N] [--build DIR] [--out FILE | --no-results]
                    [--no-two-workers] [--no-busy-poll] [--no-veth | --veth] [--no-profile | --profile]
  --smoke          64-byte frames, aes-gcm-128, short trials, no veth, no
                   profile (~30 s); does not write RESULTS.md unless --out is given
  --sizes LIST     frame sizes with FCS, or imix (default $SIZES)
  --algs LIST      aes-gcm-128,aes-cbc-128-sha1-96 (default both)
  --trial S        seconds per search trial (default $TRIAL)
  --steps N        binary-search trials after the full-speed one (default $STEPS)
  --gen-cpu N      CPU of the generator (default $GEN_CPU)
  --build DIR      build directory (default \$ESGW_BUILD or $top/build)
  --out FILE       where to write the results (default bench/RESULTS.md)
  --no-two-workers skip the two workers / two SAs configuration
  --no-busy-poll   skip the comparison with esgw-ctld --busy-poll
  --no-veth        skip mode (b), veth in namespaces with net_af_xdp
  --no-profile     skip the perf profile of gw1 at full load (--profile: do it)
Environment: ESGW_BENCH_PREFIX (DPDK file prefixes and namespaces, default
esgw-bench), ESGW_BENCH_RUNDIR (default /tmp/esgw-bench), ESGW_BUILD,
ESGW_BENCH_KEEP=1 (keep the run directory, for debugging).
EOF
}

out_given=0 veth_given= profile_given=
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
	--no-two-workers) TWO_WORKERS=0 ;;
	--no-busy-poll) BUSY_POLL=0 ;;
	--no-veth) veth_given=0 ;;
	--veth) veth_given=1 ;;
	--no-profile) profile_given=0 ;;
	--profile) profile_given=1 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
if [ "$SMOKE" -eq 1 ]; then
	SIZES=64 ALGS=aes-gcm-128 TRIAL=0.3 STEPS=3 RAW_DURATION=0.2 RAW_REPEAT=1 STAGE_TRIAL=0.5
	IDLE_SECONDS=2 VETH=0 PROFILE=0 VETH_SIZES=64 POLL_SIZES=64
	[ "$out_given" -eq 1 ] || WRITE_RESULTS=0
fi
[ -n "$veth_given" ] && VETH=$veth_given
[ -n "$profile_given" ] && PROFILE=$profile_given

declare -A CTLD_PID=()
CTLD_EXTRA=() # more esgw-ctld options (--busy-poll)
NETNS=()
BPF_MOUNTED=0
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

stop_gateways() {
	local gw
	for gw in "${!CTLD_PID[@]}"; do
		kill -TERM "${CTLD_PID[$gw]}" 2>/dev/null || true
	done
	for gw in "${!CTLD_PID[@]}"; do
		for _ in $(seq 1 75); do
			kill -0 "${CTLD_PID[$gw]}" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "${CTLD_PID[$gw]}" 2>/dev/null || true
		wait "${CTLD_PID[$gw]}" 2>/dev/null || true
		unset "CTLD_PID[$gw]"
	done
	for prefix in $PFX-gw1 $PFX-gw2 $PFX-gen; do
		left=$(prefix_pids "$prefix")
		if [ -n "$left" ]; then
			echo "bench/run.sh: processes of $prefix left, killing: $left" >&2
			kill -KILL $left 2>/dev/null || true
		fi
		rm -f /dev/hugepages/${prefix}map_*
		rm -rf "/var/run/dpdk/$prefix"
	done
	return 0
}

cleanup() {
	local rc=$?
	set +e
	stop_gateways
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	[ "$BPF_MOUNTED" -eq 1 ] && umount /sys/fs/bpf
	if [ "$rc" -ne 0 ] && [ -d "$run" ]; then
		for f in "$run"/gw*/ctld.out "$run"/gw*/log/*.log "$run"/*.err; do
			[ -f "$f" ] || continue
			echo "----- $f (last 20 lines)" >&2
			tail -n 20 "$f" >&2
		done
	fi
	[ -n "${ESGW_BENCH_KEEP:-}" ] || rm -rf "$run"
	[ "$rc" -eq 0 ] && echo "bench/run.sh: OK" || echo "bench/run.sh: FAILED" >&2
	exit "$rc"
}

[ "$(id -u)" -eq 0 ] || die "must run as root (hugepages, DPDK)"
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

say "host setup and build"
"$top/deploy/setup-host.sh"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
targets="rxtx/esgw-rxtx router/esgw-router crypto-worker/esgw-crypto ctl/esgw-ctld ctl/esgwctl
	bench/esgw-bench bench/imb-raw bench/esp-core"
ninja -C "$build" $targets >"$run.build.log" 2>&1 ||
	{ tail -n 30 "$run.build.log" >&2; die "build failed: ninja -C $build"; }
rm -f "$run.build.log"
rm -rf "$run"
mkdir -p "$run/bin"
for role in esgw-ctld esgw-rxtx esgw-router esgw-crypto esgwctl esgw-bench imb-raw esp-core; do
	exe=$(ls "$build"/*/"$role" 2>/dev/null | head -n 1 || true)
	[ -n "$exe" ] || die "$role not built in $build"
	ln -sf "$exe" "$run/bin/$role"
done
esgwctl() { local gw=$1; shift; "$run/bin/esgwctl" --socket "$run/$gw/ctl.sock" "$@"; }

say "crypto ceiling: imb-raw, ${RAW_DURATION} s per point, median of $RAW_REPEAT runs"
raw_files=()
for i in $(seq 1 "$RAW_REPEAT"); do
	"$run/bin/imb-raw" --size "$SIZES" --alg "$ALGS" --duration "$RAW_DURATION" --json \
		>"$run/imb-raw-$i.json" 2>"$run/imb-raw.err" || die "imb-raw failed"
	raw_files+=("$run/imb-raw-$i.json")
done
"$PY" -c '
import json, statistics, sys
runs = [json.load(open(f)) for f in sys.argv[2:]]
doc = runs[0]
for i, r in enumerate(doc["results"]):
    for key in ("pps", "cycles_per_packet", "gbps"):
        r[key] = statistics.median(x["results"][i][key] for x in runs)
    r["errors"] = sum(x["results"][i]["errors"] for x in runs)
    r["auth_failures"] = sum(x["results"][i]["auth_failures"] for x in runs)
    print("%-20s %-8s %-5s %8.3f Mpps %7.1f cycles/packet" % (r["alg"], r["dir"], r["size"], r["pps"] / 1e6, r["cycles_per_packet"]))
doc["repeat"] = len(runs)
json.dump(doc, open(sys.argv[1], "w"))' "$run/imb-raw.json" "${raw_files[@]}"

# The ESP core alone (no rings, no mbufs, warm buffers) against the same
# imb-raw figures: separates the framing's overhead from the pipeline's.
# Skipped in --smoke, which only checks that the gateway's figures come out.
esp_core_args=()
if [ "$SMOKE" -eq 0 ]; then
	say "ESP core alone: esp-core, ${RAW_DURATION} s per point, next to imb-raw"
	"$run/bin/esp-core" --size "$SIZES" --alg "$ALGS" --duration "$RAW_DURATION" \
		--imb-raw "$run/imb-raw.json" --markdown >"$run/esp-core.md" 2>"$run/esp-core.err" ||
		die "esp-core failed: $(tail -n 3 "$run/esp-core.err")"
	cat "$run/esp-core.md"
	esp_core_args=(--esp-core "$run/esp-core.md")
fi

# ---------------------------------------------------------------------------
# Gateways. In mode (a) every process runs in the root namespace; in mode (b)
# each gateway's ctld (and so its dataplane) runs in the namespace $NS_<gw>.
NS_gw1= NS_gw2= NS_gen=
in_ns() { local ns=$1; shift; if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi; }

start_gateways() { # workers
	local gw ns wrap place extra=("${CTLD_EXTRA[@]}")
	for gw in gw1 gw2; do
		place=PLACE_$gw
		read -r -a place <<<"${!place}"
		rm -rf "$run/$gw"
		mkdir -p "$run/$gw/run" "$run/$gw/log"
		ns=NS_$gw
		# Not through a function: $! must be ctld itself (ip netns exec
		# execs it), so that stop_gateways' SIGTERM reaches it.
		wrap=()
		[ -n "${!ns}" ] && wrap=(ip netns exec "${!ns}")
		"${wrap[@]}" "$run/bin/esgw-ctld" --standalone --socket "$run/$gw/ctl.sock" \
			--config "$run/$gw/config.pb" --rundir "$run/$gw/run" \
			--file-prefix "$PFX-$gw" --log-dir "$run/$gw/log" --workers "$1" "${place[@]}" "${extra[@]}" \
			--bindir "$run/bin" >"$run/$gw/ctld.out" 2>&1 &
		CTLD_PID[$gw]=$!
	done
}
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
# Interfaces and addresses; lan1 wan1 lan2 wan2 are the four devargs.
configure_ports() { # lan1 wan1 lan2 wan2
	# gw1 first: in mode (a) its wan is the server gw2's wan connects to, and
	# adding an interface restarts that gateway's dataplane (which drops
	# memif peers).
	esgwctl gw1 interface add lan "$1"
	esgwctl gw1 interface add wan "$2"
	esgwctl gw1 interface address add lan 192.168.1.2/24
	esgwctl gw1 interface address add wan 192.168.3.1/24
	wait_running gw1
	esgwctl gw2 interface add lan "$3"
	esgwctl gw2 interface add wan "$4"
	esgwctl gw2 interface address add lan 192.168.2.2/24
	esgwctl gw2 interface address add wan 192.168.3.2/24
	wait_running gw2
}

KEY=4339314b55523947594d6d3547666b45
INTEG=4339314b55523947594d6d3547666b4543393134
SALT=01020304
# One tunnel per worker: tunnel tN carries SAs 10+N (out) and 20+N (in), SPIs
# 1000+N (gw1 -> gw2) and 2000+N (back), both on worker N. With two, gw1
# routes the lower and upper halves of 192.168.2.0/24 into t0 and t1, so the
# generator's two destinations (.1 and .129) load one worker each on either
# gateway.
DSTS_1=192.168.2.1
DSTS_2=192.168.2.1,192.168.2.129
configure_sas() { # alg tunnels
	local alg=$1 nt=$2 gw keys second t p
	case $alg in
	# Keys on standard input (sa_keys), never on a command line.
	aes-gcm-128) keys="crypto-key - salt -" second=$SALT ;;
	aes-cbc-128-sha1-96) keys="crypto-key - integ-key -" second=$INTEG ;;
	*) die "unknown algorithm $alg" ;;
	esac
	for gw in gw1 gw2; do
		for p in 192.168.0.0/16 192.168.2.0/25 192.168.2.128/25 192.168.1.0/24; do
			esgwctl $gw route del $p >/dev/null 2>&1 || true
		done
		for t in 0 1; do
			esgwctl $gw tunnel del t$t >/dev/null 2>&1 || true
			esgwctl $gw sa del 1$t >/dev/null 2>&1 || true
			esgwctl $gw sa del 2$t >/dev/null 2>&1 || true
		done
	done
	for t in $(seq 0 $((nt - 1))); do
		printf '%s\n%s\n' $KEY $second | esgwctl gw1 sa add 1$t spi 100$t alg "$alg" $keys worker $t
		printf '%s\n%s\n' $KEY $second | esgwctl gw1 sa add 2$t spi 200$t alg "$alg" $keys worker $t
		esgwctl gw1 tunnel add t$t local 192.168.3.1 remote 192.168.3.2 sa-out 1$t sa-in 2$t
		printf '%s\n%s\n' $KEY $second | esgwctl gw2 sa add 1$t spi 200$t alg "$alg" $keys worker $t
		printf '%s\n%s\n' $KEY $second | esgwctl gw2 sa add 2$t spi 100$t alg "$alg" $keys worker $t
		esgwctl gw2 tunnel add t$t local 192.168.3.2 remote 192.168.3.1 sa-out 1$t sa-in 2$t
	done
	if [ "$nt" -eq 1 ]; then
		esgwctl gw1 route add 192.168.0.0/16 tunnel t0
	else
		esgwctl gw1 route add 192.168.2.0/25 tunnel t0
		esgwctl gw1 route add 192.168.2.128/25 tunnel t1
	fi
	esgwctl gw2 route add 192.168.0.0/16 tunnel t0
}

GEN_PORTS=()
generator() { # esgw-bench options...
	in_ns "$NS_gen" "$run/bin/esgw-bench" --file-prefix "$PFX-gen" --in-memory --no-pci -m 64 \
		--lcores "40@$GEN_CPU" "${GEN_PORTS[@]}" \
		-- --addr-a 192.168.1.1 --gateway-a 192.168.1.2 "$@"
}

cpu_snapshot() { "$PY" "$top/bench/cpu_usage.py" snapshot "$1" "$PFX-gw1" "$PFX-gw2"; }

# Per-stage cycles per packet: one more trial per size at the generator's full
# speed (full bursts: the cost per packet the targets speak of), between two
# samples of the dataplane's cycle counters and of each process's CPU time.
measure_stages() { # tag dsts sizes
	local tag=$1 dsts=$2 size out="$run/stages-$1.json" sep=""
	echo "{" >"$out"
	IFS=, read -r -a size_list <<<"$3"
	for size in "${size_list[@]}"; do
		esgwctl gw1 --json show dataplane >"$run/dp-gw1-before.json"
		esgwctl gw2 --json show dataplane >"$run/dp-gw2-before.json"
		cpu_snapshot "$run/cpu-before.json"
		generator --dst "$dsts" --size "$size" --rate 0 --duration "$STAGE_TRIAL" --json \
			>"$run/stage-trial.json" 2>>"$run/bench-$tag.err" ||
			die "esgw-bench failed for $tag $size (per-stage trial)"
		cpu_snapshot "$run/cpu-after.json"
		sleep 1.2 # ctld samples the counters about once a second
		esgwctl gw1 --json show dataplane >"$run/dp-gw1-after.json"
		esgwctl gw2 --json show dataplane >"$run/dp-gw2-after.json"
		printf '%s"%s":' "$sep" "$size" >>"$out"
		"$PY" "$top/bench/stage_cost.py" "$run"/dp-gw1-{before,after}.json \
			"$run"/dp-gw2-{before,after}.json "$run"/cpu-{before,after}.json \
			"$run/stage-trial.json" >>"$out"
		sep=,
	done
	echo "}" >>"$out"
}

print_search() {
	"$PY" -c '
import json, sys
for p in json.load(open(sys.argv[1]))["results"]:
    f, z = p["full_speed"], p["at_zero_loss"]
    print("%-5s full speed: offered %.3f delivered %.3f Mpps (loss %.2f%%); zero-loss %.3f Mpps, p50 %.1f us p99 %.1f us" % (
        p["size"], f["offered_pps"] / 1e6, f["delivered_pps"] / 1e6, f["loss_pct"], p["zero_loss_pps"] / 1e6,
        z["latency_us"]["p50"], z["latency_us"]["p99"]))' "$1"
}

# One configuration: for each algorithm, the zero-loss search over the sizes
# and the per-stage trials. tag: the row label in the report.
bench_files=()
stage_files=()
run_config() { # tag tunnels sizes algs
	local tag=$1 nt=$2 sizes=$3 alg dsts=DSTS_$2
	IFS=, read -r -a alg_list <<<"$4"
	for alg in "${alg_list[@]}"; do
		say "$tag, $alg: zero-loss search, sizes $sizes, ${TRIAL} s trials"
		configure_sas "$alg" "$nt"
		generator --dst "${!dsts}" --size "$sizes" --search --trial "$TRIAL" --steps "$STEPS" \
			--label "$alg" --json >"$run/bench-$tag-$alg.json" 2>"$run/bench-$tag-$alg.err" ||
			die "esgw-bench failed for $tag $alg"
		print_search "$run/bench-$tag-$alg.json"
		measure_stages "$tag-$alg" "${!dsts}" "$sizes"
		bench_files+=("$tag:$alg=$run/bench-$tag-$alg.json")
		stage_files+=("$tag:$alg=$run/stages-$tag-$alg.json")
	done
}

# ---------------------------------------------------------------------------
say "mode (a), in memory: start two gateways (esgw-ctld --standalone --workers 2)"
memif() { # name role socket
	local o="net_$1,role=$2,socket=$run/$3,socket-abstract=no,id=0"
	[ "$2" = client ] && o="$o,rsize=$MEMIF_RING"
	echo "$o"
}
memif_gateways() {
	start_gateways 2
	configure_ports "$(memif memif0 server gw1-lan.sock)" "$(memif memif1 server wan.sock)" \
		"$(memif memif0 server gw2-lan.sock)" "$(memif memif1 client wan.sock)"
}
memif_gateways
GEN_PORTS=(--vdev "$(memif memif0 client gw1-lan.sock)" --vdev "$(memif memif1 client gw2-lan.sock)")

IFS=, read -r -a alg_list <<<"$ALGS"
configure_sas "${alg_list[0]}" 1
sleep 2 # let the restarts and pushes of the configuration settle
at_rest() { # output
	say "CPU of the gateways at rest, over $IDLE_SECONDS s"
	cpu_snapshot "$run/idle-before.json"
	sleep "$IDLE_SECONDS"
	cpu_snapshot "$run/idle-after.json"
	"$PY" "$top/bench/cpu_usage.py" diff "$run"/idle-{before,after}.json >"$1"
}
at_rest "$run/idle.json"
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for gw, g in sorted(d["gateways"].items()):
    print("%s: %.2f%% of one CPU (%s)" % (gw, 100 * g["cpu"], ", ".join("%s %.2f%%" % (k, 100 * v) for k, v in sorted(g["processes"].items()))))' "$run/idle.json"

run_config one-worker 1 "$SIZES" "$ALGS"
[ "$TWO_WORKERS" -eq 1 ] && run_config two-workers 2 "$SIZES" "$ALGS"

# Where gw1's cycles go at full load, by function: perf samples on the CPU
# clock (this VM has no hardware counters), gw1's rxtx, router and worker.
profile_args=()
if [ "$PROFILE" -eq 1 ]; then
	alg=${alg_list[0]}
	say "profile: perf record of gw1 at full load, $alg 64 bytes"
	if command -v perf >/dev/null 2>&1; then
		configure_sas "$alg" 1
		generator --dst "$DSTS_1" --size 64 --rate 1000 --duration 0.5 >/dev/null 2>&1 || true
		pids=$(prefix_pids "$PFX-gw1" | while read -r p; do
			grep -qE 'esgw-(rxtx|router|crypto)' "/proc/$p/cmdline" 2>/dev/null && echo "$p"
		done | paste -sd, -)
		perf record -q -e cpu-clock -F 2999 -p "$pids" -o "$run/perf.data" -- sleep 3 \
			>"$run/perf.err" 2>&1 &
		perf_pid=$!
		sleep 0.3
		generator --dst "$DSTS_1" --size 64 --rate 0 --duration 3 >/dev/null 2>>"$run/perf.err" || true
		wait "$perf_pid" || true
		if perf report -i "$run/perf.data" --stdio --no-children --sort comm,dso,sym \
			--percent-limit 1 2>>"$run/perf.err" | grep -v '^#' | grep -v '^$' \
			>"$run/profile.txt" && [ -s "$run/profile.txt" ]; then
			head -n 40 "$run/profile.txt"
			profile_args=(--profile "$run/profile.txt" --profile-what "$alg 64-byte frames at full load, gw1 (encrypt side)")
		else
			echo "perf record/report failed: $(tail -n 3 "$run/perf.err")"
		fi
	else
		echo "perf not installed (apt-get install linux-perf): no profile"
	fi
fi

# Point 6: what adaptive polling costs at load, and saves at rest: the same
# gateways restarted with esgw-ctld --busy-poll (no process ever sleeps).
poll_args=()
if [ "$BUSY_POLL" -eq 1 ]; then
	alg=${alg_list[0]}
	say "busy polling (esgw-ctld --busy-poll) next to adaptive polling: $alg, sizes $POLL_SIZES"
	stop_gateways
	CTLD_EXTRA=(--busy-poll)
	memif_gateways
	CTLD_EXTRA=()
	configure_sas "$alg" 1
	sleep 2
	at_rest "$run/idle-busy-poll.json"
	generator --dst "$DSTS_1" --size "$POLL_SIZES" --search --trial "$TRIAL" --steps "$STEPS" \
		--label "$alg" --json >"$run/bench-busy-poll.json" 2>"$run/bench-busy-poll.err" ||
		die "esgw-bench failed with --busy-poll"
	print_search "$run/bench-busy-poll.json"
	poll_args=(--busy-poll "$alg=$run/bench-busy-poll.json" --busy-idle "$run/idle-busy-poll.json")
	stop_gateways
fi

# ---------------------------------------------------------------------------
veth_args=()
if [ "$VETH" -eq 1 ]; then
	say "mode (b): veth in network namespaces, $VETH_ALG, sizes $VETH_SIZES"
	stop_gateways
	NS_gw1=$PFX-gw1 NS_gw2=$PFX-gw2 NS_gen=$PFX-gen
	for ns in $NS_gen $NS_gw1 $NS_gw2; do
		ip netns del "$ns" 2>/dev/null || true
		ip netns add "$ns"
		NETNS+=("$ns")
		ip -n "$ns" link set lo up
	done
	# gen:bga -- gw1:lan, gw1:wan -- gw2:wan, gw2:lan -- gen:bgb
	ip -n "$NS_gen" link add bga type veth peer name lan netns "$NS_gw1"
	ip -n "$NS_gw1" link add wan type veth peer name wan netns "$NS_gw2"
	ip -n "$NS_gen" link add bgb type veth peer name lan netns "$NS_gw2"
	for pair in "$NS_gen bga" "$NS_gen bgb" "$NS_gw1 lan" "$NS_gw1 wan" "$NS_gw2 lan" "$NS_gw2 wan"; do
		set -- $pair
		ip netns exec "$1" ethtool -K "$2" tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
		ip -n "$1" link set "$2" up
	done
	if ! mountpoint -q /sys/fs/bpf; then
		mount -t bpf bpf /sys/fs/bpf && BPF_MOUNTED=1
	fi
	# The generator's ports tell whether net_af_xdp works on this kernel.
	veth_driver=af_xdp
	veth_note=
	if ! in_ns "$NS_gen" "$run/bin/esgw-bench" --file-prefix "$PFX-gen" --in-memory --no-pci \
		-m 64 --lcores "40@$GEN_CPU" --vdev net_af_xdp0,iface=bga --vdev net_af_xdp1,iface=bgb \
		-- --probe-only --connect-timeout 3 >"$run/af_xdp-probe.out" 2>&1; then
		veth_note="net_af_xdp did not start on this kernel ($(uname -r): $(grep -m1 -iE 'error|fail' "$run/af_xdp-probe.out" | cut -c1-120)); fell back to net_af_packet"
		echo "bench/run.sh: $veth_note"
		veth_driver=af_packet
	fi
	start_gateways 1
	configure_ports "net_${veth_driver}0,iface=lan" "net_${veth_driver}1,iface=wan" \
		"net_${veth_driver}0,iface=lan" "net_${veth_driver}1,iface=wan"
	GEN_PORTS=(--vdev "net_${veth_driver}0,iface=bga" --vdev "net_${veth_driver}1,iface=bgb")
	configure_sas "$VETH_ALG" 1
	echo "driver: net_$veth_driver"
	generator --dst "$DSTS_1" --size "$VETH_SIZES" --search --trial "$TRIAL" --steps "$STEPS" \
		--label "$VETH_ALG" --json >"$run/bench-veth.json" 2>"$run/bench-veth.err" ||
		die "esgw-bench failed in mode (b)"
	print_search "$run/bench-veth.json"
	veth_args=(--veth "net_$veth_driver:$VETH_ALG=$run/bench-veth.json")
	[ -n "$veth_note" ] && veth_args+=(--veth-note "$veth_note")
	stop_gateways
fi

say "esgw next to the crypto ceiling"
machine="- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -r)
- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average before the run: $load_before, run time $(( $(date +%s) - started )) s
- esgw: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet 2>/dev/null || echo ' (uncommitted changes)')
"
results_args=()
[ "$WRITE_RESULTS" -eq 1 ] && results_args=(--markdown "$OUT")
"$PY" "$top/bench/report.py" --imb-raw "$run/imb-raw.json" --bench "${bench_files[@]}" \
	--stages "${stage_files[@]}" --idle "$run/idle.json" "${esp_core_args[@]}" "${poll_args[@]}" \
	"${veth_args[@]}" "${profile_args[@]}" \
	--gateways "$PFX-gw1" "$PFX-gw2" --command "$cmdline" --machine "$machine" \
	--settings "trial=$TRIAL steps=$STEPS stage_trial=$STAGE_TRIAL memif_ring=$MEMIF_RING gen_cpu=$GEN_CPU idle_seconds=$IDLE_SECONDS; gw1: $PLACE_gw1; gw2: $PLACE_gw2" \
	"${results_args[@]}"
[ "$WRITE_RESULTS" -eq 1 ] && echo "written: $OUT"
exit 0
