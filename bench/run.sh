#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Measures esgw next to the gateway a user would pick instead, DPDK's
# ipsec-secgw (built at run time from dpdk-doc's sources, bench/secgw.sh), in
# one run, on the same generator (esgw-bench), the same memif links (rings of
# 2^$MEMIF_RING slots), sizes and algorithms, interleaved (esgw, secgw, esgw,
# secgw: $PAIRS pairs per point), every esgw figure next to secgw's as a ratio:
#
#   (A) one gateway, one CPU: the generator on CPU $GEN_CPU, the whole gateway
#       on CPU $GW_CPU (every esgw process; secgw's one lcore). Encrypt
#       direction (plaintext in, the ESP frames of the right length counted)
#       and decrypt direction (valid ESP with growing sequence numbers in).
#       RFC 2544 zero-loss search, full speed, and the overload check (twice
#       the zero-loss rate).
#
#         esgw-bench A --memif-- lan [gateway] wan --memif-- esgw-bench B
#         (decrypt: the generator's ports the other way round)
#
#   (B) the two-gateway chain on both CPUs, the same search and overload:
#
#         esgw-bench A --memif-- lan [gw1] wan --memif-- wan [gw2] lan --memif-- esgw-bench B
#         192.168.1.1         192.168.1.2  192.168.3.1  192.168.3.2  192.168.2.2     192.168.2.1
#
#   (C) latency through the chain at fixed rates: p50, p99, max, and the CPU
#       the gateways use.
#
#   (S) the chain with 1, 1,000 and 10,000 tunnels (a hub's, loaded by
#       esgwctl -f), the generator's destinations spread over all of them;
#       delivered and zero-loss rates as ratios to the 1-tunnel figure.
#
# For every measured interval, each process's CPU time per packet and context
# switches per 1,000 packets (from /proc, read by the generator at the start
# and end of the transmission). Also: the crypto ceiling (imb-raw) and the
# ESP core alone (esp-core); esgw's per-stage busy cycles and two workers;
# both gateways' CPU at rest; optionally (off by default, for time) esgw with
# --busy-poll, veth in namespaces, and a perf profile. Prints the tables and
# writes bench/RESULTS.md. Tears everything down, also on failure.
#
# memif roles: every gateway port is a server, except the second gateway's
# wan, the client of the first's; the generator's ports are clients. The
# client side sets the ring size (rsize), so both gateways get the same rings.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${ESGW_BUILD:-$top/build}
# DPDK file prefixes, namespaces and the run directory: distinct per run, so
# that parallel runs (and tests) never touch each other's processes.
PFX=${ESGW_BENCH_PREFIX:-esgw-bench-$$}
run=${ESGW_BENCH_RUNDIR:-/tmp/$PFX}
PY=/usr/bin/python3
SIZES=64,1400
ALGS=aes-gcm-128,aes-cbc-128-sha1-96
SETTINGS=A,B,C,S
PAIRS=3          # esgw, secgw runs per point, interleaved
TRIAL=0.5        # seconds per search trial
STEPS=6          # search trials after the full-speed one
RAW_DURATION=0.5 # seconds per imb-raw point
RAW_REPEAT=3     # imb-raw runs; the median of each point is kept
STAGE_TRIAL=1    # seconds of each full-load trial esgw's per-stage cycles come from
STAGE_TRIALS=3   # such trials per size; the figures are the median one's
IDLE_SECONDS=3   # CPU of the gateways at rest is measured over this
LAT_RATES=1000,10000,100000
LAT_SIZE=64
LAT_DURATION=1.5 # seconds per latency rate
GEN_CPU=0        # the generator's CPU
GW_CPU=1         # setting (A): the gateway's one CPU
MEMIF_RING=${MEMIF_RING:-14}
# Setting (B): where each esgw gateway's processes run (esgw-ctld --rxtx-cpu,
# --router-cpu, --worker-cpus). On 2 CPUs each gateway on one CPU, as each
# secgw's one lcore is: gw1 (and sgw1) on CPU 1, gw2 (and sgw2) on CPU 0 with
# the generator; the SAs of one tunnel go to worker 0, on its gateway's CPU,
# and two tunnels' to workers 0 and 1 (the second on the other CPU). The
# two vCPUs here are often far apart: a cache line goes from one to the
# other and back in 90 to 475 ns (bench/cpu-pingpong, which the results
# quote; medians of about 100 ns in some readings, 450-470 ns in others,
# as the host moves the vCPUs), and every packet crossing between stages
# waits for its lines. With rxtx and the router on one CPU and the worker
# on the other (gw1: rxtx and router on CPU 0, worker on CPU 1, gw2 the
# other way round), the chain delivered 0.64-0.70x secgw at 64 B and 0.77x
# at 1400 B at full load; each gateway on one CPU, 0.88-0.92x and
# 0.92-0.99x (two rounds each, alternating, aes-gcm-128, 3 pairs). With 8
# CPUs or more every process has a CPU of its own.
if [ "$(nproc)" -ge 8 ]; then
	PLACE_gw1="--rxtx-cpu 1 --router-cpu 2 --worker-cpus 3,4"
	PLACE_gw2="--rxtx-cpu 5 --router-cpu 6 --worker-cpus 7,$(($(nproc) >= 9 ? 8 : 4))"
	CPU_sgw1=3 CPU_sgw2=7
else
	PLACE_gw1="--rxtx-cpu 1 --router-cpu 1 --worker-cpus 1,0"
	PLACE_gw2="--rxtx-cpu 0 --router-cpu 0 --worker-cpus 0,1"
	CPU_sgw1=1 CPU_sgw2=0
fi
PLACE_gwA="--rxtx-cpu $GW_CPU --router-cpu $GW_CPU --worker-cpus $GW_CPU"
VETH_SIZES=64,1400
VETH_ALG=aes-gcm-128
SMOKE=0
CEILING=1
TWO_WORKERS=1
BUSY_POLL=0 # the adaptive polling next to --busy-poll (issue 4, point 6)
POLL_SIZES=64,1400
VETH=0
PROFILE=0
SCALE_TUNNELS=1,1000,10000
SCALE_PAIRS=10 # (S): a trial varies by a fifth either way on this machine; with 5
# pairs the 10,000-tunnel median ratio ranged 0.81-0.90 between runs of one tree,
# with 3 pairs 0.59-1.08 (64 B, six runs of one tree). Since each gateway has
# one CPU, a chain loses packets at full speed, so every pair runs the
# zero-loss searches too: 15 pairs took ~570 s, the whole run 940 s
OUT=$top/bench/RESULTS.md
WRITE_RESULTS=1
NOTE=
cmdline="bench/run.sh${*:+ $*}"

usage() {
	cat <<EOF
usage: bench/run.sh [--smoke] [--setting LIST] [--point ALG:SIZE] [--pairs N]
                    [--sizes LIST] [--algs LIST] [--trial S] [--steps N]
                    [--gen-cpu N] [--build DIR] [--out FILE | --no-results] [--note TEXT]
                    [--no-ceiling] [--no-two-workers] [--busy-poll] [--veth] [--profile]
                    [--scale-tunnels LIST]
  --smoke          one pair of aes-gcm-128 at 64 bytes in every setting, short
                   trials (~2 min); does not write RESULTS.md unless --out is given
  --setting LIST   which of A (one gateway, one CPU), B (the chain), C (latency
                   through the chain), S (the chain with a hub's tunnels,
                   aes-gcm-128) to run (default $SETTINGS)
  --point ALG:SIZE one point only, e.g. aes-gcm-128:64 (sets --algs and --sizes)
  --pairs N        esgw, secgw runs per point (default $PAIRS)
  --sizes LIST     frame sizes with FCS, or imix (default $SIZES)
  --algs LIST      aes-gcm-128,aes-cbc-128-sha1-96 (default both)
  --trial S        seconds per search trial (default $TRIAL)
  --steps N        binary-search trials after the full-speed one (default $STEPS)
  --gen-cpu N      CPU of the generator (default $GEN_CPU)
  --build DIR      build directory (default \$ESGW_BUILD or $top/build)
  --out FILE       where to write the results (default bench/RESULTS.md)
  --no-results     print only
  --note TEXT      a line for RESULTS.md about this run (e.g. what else ran)
  --no-ceiling     skip imb-raw and esp-core (the ratios to the ceiling then go)
  --no-two-workers skip esgw's two workers / two SAs configuration
  --busy-poll      also esgw-ctld --busy-poll next to the adaptive polling
  --veth           also the chain through veth in namespaces (net_af_xdp)
  --profile        also a perf profile of esgw's gw1 at full load
  --scale-tunnels LIST  the tunnel counts of setting S, ascending (default
                   $SCALE_TUNNELS)
  --scale-pairs N  rounds of setting S over every count (default $SCALE_PAIRS)
Environment: ESGW_BENCH_PREFIX (DPDK file prefixes and namespaces, default
esgw-bench-PID), ESGW_BENCH_RUNDIR (default /tmp/PREFIX), ESGW_BENCH_CACHE
(where ipsec-secgw is built, default /var/cache/esgw-bench), ESGW_BUILD,
ESGW_BENCH_KEEP=1 (keep the run directory, for debugging), ESGW_BENCH_CTLD_ARGS
(more esgw-ctld options for every esgw gateway, e.g. "--slice-us 0").
EOF
}

out_given=0 point=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--setting | --settings) SETTINGS=$2; shift ;;
	--point) point=$2; shift ;;
	--pairs) PAIRS=$2; shift ;;
	--sizes) SIZES=$2; shift ;;
	--algs) ALGS=$2; shift ;;
	--trial) TRIAL=$2; shift ;;
	--steps) STEPS=$2; shift ;;
	--gen-cpu) GEN_CPU=$2; shift ;;
	--build) build=$2; shift ;;
	--out) OUT=$2; out_given=1; shift ;;
	--no-results) WRITE_RESULTS=0 ;;
	--note) NOTE=$2; shift ;;
	--no-ceiling) CEILING=0 ;;
	--no-two-workers) TWO_WORKERS=0 ;;
	--busy-poll) BUSY_POLL=1 ;;
	--veth) VETH=1 ;;
	--profile) PROFILE=1 ;;
	--scale-tunnels) SCALE_TUNNELS=$2; shift ;;
	--scale-pairs) SCALE_PAIRS=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
if [ "$SMOKE" -eq 1 ]; then
	SIZES=64 ALGS=aes-gcm-128 PAIRS=1 TRIAL=0.3 STEPS=2 RAW_DURATION=0.2 RAW_REPEAT=1
	STAGE_TRIAL=0.5 STAGE_TRIALS=1 IDLE_SECONDS=1 LAT_RATES=10000 LAT_DURATION=0.5 TWO_WORKERS=0
	SCALE_TUNNELS=1,100 SCALE_PAIRS=1
	[ "$out_given" -eq 1 ] || WRITE_RESULTS=0
fi
if [ -n "$point" ]; then
	ALGS=${point%%:*} SIZES=${point#*:}
	[ "$ALGS" != "$point" ] || { usage >&2; exit 2; }
fi
has_setting() { [[ ",$SETTINGS," == *",$1,"* ]]; }
for s in ${SETTINGS//,/ }; do
	case $s in A | B | C | S) ;; *) echo "bench/run.sh: unknown setting $s" >&2; exit 2 ;; esac
done
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || { echo "bench/run.sh: bad --pairs $PAIRS" >&2; exit 2; }
[[ "$SCALE_PAIRS" =~ ^[1-9][0-9]*$ ]] || { echo "bench/run.sh: bad --scale-pairs $SCALE_PAIRS" >&2; exit 2; }
IFS=, read -r -a alg_list <<<"$ALGS"
IFS=, read -r -a size_list <<<"$SIZES"
FIRST_ALG=${alg_list[0]}

declare -A CTLD_PID=()
# more esgw-ctld options: ESGW_BENCH_CTLD_ARGS (split on blanks, e.g.
# "--slice-us 0"), and --busy-poll for its comparison
read -r -a CTLD_EXTRA <<<"${ESGW_BENCH_CTLD_ARGS:-}"
NETNS=()
BPF_MOUNTED=0
say() { printf '\n=== %s\n' "$*"; }
die() { echo "bench/run.sh: $*" >&2; exit 1; }
# shellcheck source=bench/secgw.sh
. "$top/bench/secgw.sh"

# Pids of every process started with this DPDK file prefix. Read with the
# shell's own read: a program started per process (there are hundreds) made
# each call take a noticeable share of a CPU, between trials and at freezes.
prefix_pids() {
	local prefix=$1 p a after
	for p in /proc/[0-9]*; do
		after=0
		while IFS= read -r -d '' a; do
			if [ "$after" -eq 1 ] && [ "$a" = "$prefix" ]; then
				echo "${p#/proc/}"
				break
			fi
			after=0
			[ "$a" = --file-prefix ] && after=1
		done 2>/dev/null <"$p/cmdline"
	done
	return 0
}

stop_esgw() { # gw...
	local gw pid left
	for gw in "$@"; do
		pid=${CTLD_PID[$gw]:-}
		[ -n "$pid" ] || continue
		# A frozen gateway (see freeze) must run again to hear SIGTERM.
		left=$(prefix_pids "$PFX-$gw")
		[ -n "$left" ] && kill -CONT $left 2>/dev/null
		kill -TERM "$pid" 2>/dev/null || true
	done
	for gw in "$@"; do
		pid=${CTLD_PID[$gw]:-}
		if [ -n "$pid" ]; then
			for _ in $(seq 1 75); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.2
			done
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			unset "CTLD_PID[$gw]"
		fi
		left=$(prefix_pids "$PFX-$gw")
		if [ -n "$left" ]; then
			echo "bench/run.sh: processes of $PFX-$gw left, killing: $left" >&2
			kill -KILL $left 2>/dev/null || true
		fi
		rm -f /dev/hugepages/"$PFX-$gw"map_*
		rm -rf "/var/run/dpdk/$PFX-$gw"
	done
	return 0
}

cleanup() {
	local rc=$?
	set +e
	secgw_stop "${!SECGW_PID[@]}"
	stop_esgw "${!CTLD_PID[@]}"
	for p in $(prefix_pids "$PFX-gen"); do kill -KILL "$p" 2>/dev/null; done
	for ns in "${NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	[ "$BPF_MOUNTED" -eq 1 ] && umount /sys/fs/bpf
	if [ "$rc" -ne 0 ] && [ -d "$run" ]; then
		for f in "$run"/gw*/ctld.out "$run"/gw*/log/*.log "$run"/sgw*.log "$run"/*.err; do
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
# Two esgw gateways (256 MiB of hugepages each) and two ipsec-secgw (~290 MiB
# each) are up at once in the chain settings, next to whatever tests run on
# the machine: reserve more than the tests alone need.
ESGW_HUGEPAGES=${ESGW_HUGEPAGES:-2048} "$top/deploy/setup-host.sh"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
targets="rxtx/esgw-rxtx router/esgw-router crypto-worker/esgw-crypto ctl/esgw-ctld ctl/esgwctl
	bench/esgw-bench bench/imb-raw bench/esp-core bench/cpu-pingpong bench/cpu-switch bench/mem-lines"
rm -rf "$run"
mkdir -p "$run/bin"
ninja -C "$build" $targets >"$run/build.log" 2>&1 ||
	{ tail -n 30 "$run/build.log" >&2; die "build failed: ninja -C $build"; }
for role in esgw-ctld esgw-rxtx esgw-router esgw-crypto esgwctl esgw-bench imb-raw esp-core \
	cpu-pingpong cpu-switch mem-lines; do
	exe=$(ls "$build"/*/"$role" 2>/dev/null | head -n 1 || true)
	[ -n "$exe" ] || die "$role not built in $build"
	ln -sf "$exe" "$run/bin/$role"
done
secgw_build
echo "ipsec-secgw: $SECGW_BIN"
# A tool's "median min max" ns (bench/samples.c) as "median ns (min-max)",
# or n/a if it failed.
median_ns() { # command...
	local r med lo hi
	r=$("$@" 2>/dev/null) || { echo "n/a"; return 0; }
	read -r med lo hi <<<"$r"
	echo "$med ns ($lo-$hi)"
}
# A cache line from CPU 0 to CPU 1 and back, over a second: where the host
# has put the two vCPUs, at the start and the end.
pingpong() { median_ns "$run/bin/cpu-pingpong" 0 1 1; }
pingpong_before=$(pingpong)
echo "CPU 0 -> 1 -> 0 cache-line round trip: $pingpong_before"
# Handing CPU $GW_CPU from one process to another (a futex wake, a sleep, a
# context switch), over a second: what each of the context switches per
# 1,000 packets below costs.
cpu_switch=$(median_ns "$run/bin/cpu-switch" "$GW_CPU" 1)
echo "a process hands CPU $GW_CPU to another: $cpu_switch"
# What a line of state costs CPU $GW_CPU once it has left the cache (a 64 MiB
# working set), alone and with 32 misses in flight: what setting S's
# tunnels pay a line (bench/RESULTS-scale.md), which moves with the host.
line_cost() {
	local r
	r=$(taskset -c "$GW_CPU" "$run/bin/mem-lines" --mb 64 --inflight 1,32 --seconds 0.2 \
		2>/dev/null) || { echo "n/a"; return 0; }
	awk 'NR > 1 { ns[$2] = $4 } END {
		if (ns[1] == "" || ns[32] == "") print "n/a"
		else printf "%.0f ns alone, %.1f ns with 32 in flight\n", ns[1], ns[32] }' <<<"$r"
}
mem_line=$(line_cost)
echo "a line of a 64 MiB set on CPU $GW_CPU: $mem_line"
esgwctl() { local gw=$1; shift; "$run/bin/esgwctl" --socket "$run/$gw/ctl.sock" "$@"; }
RUNS=$run/runs.jsonl # one line per measured run, for report.py
: >"$RUNS"
record() { # setting kind gateway alg pair file
	printf '{"setting":"%s","kind":"%s","gateway":"%s","alg":"%s","pair":%s,"file":"%s"}\n' \
		"$@" >>"$RUNS"
}

raw_args=()
esp_core_args=()
if [ "$CEILING" -eq 1 ]; then
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
	raw_args=(--imb-raw "$run/imb-raw.json")
	# The ESP core alone (no rings, no mbufs, warm buffers) against the same
	# imb-raw figures: the framing's overhead apart from the pipeline's.
	if [ "$SMOKE" -eq 0 ]; then
		say "ESP core alone: esp-core, ${RAW_DURATION} s per point, next to imb-raw"
		"$run/bin/esp-core" --size "$SIZES" --alg "$ALGS" --duration "$RAW_DURATION" \
			--imb-raw "$run/imb-raw.json" --markdown >"$run/esp-core.md" 2>"$run/esp-core.err" ||
			die "esp-core failed: $(tail -n 3 "$run/esp-core.err")"
		cat "$run/esp-core.md"
		esp_core_args=(--esp-core "$run/esp-core.md")
	fi
fi

# ---------------------------------------------------------------------------
# esgw gateways. In the memif settings every process runs in the root
# namespace; with --veth each gateway's ctld (and so its dataplane) runs in
# the namespace $NS_<gw>. PLACE_<gw>: esgw-ctld's CPU options; TASKSET_<gw>:
# if set, ctld (and so everything it starts) is confined to these CPUs.
NS_gw1= NS_gw2= NS_gen=
TASKSET_gwA=$GW_CPU
in_ns() { local ns=$1; shift; if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi; }

start_esgw() { # workers gw...
	local workers=$1 gw ns wrap place cpus extra=("${CTLD_EXTRA[@]}")
	shift
	for gw in "$@"; do
		place=PLACE_$gw
		read -r -a place <<<"${!place}"
		rm -rf "$run/$gw"
		mkdir -p "$run/$gw/run" "$run/$gw/log"
		ns=NS_$gw cpus=TASKSET_$gw
		# Not through a function: $! must be ctld itself (ip netns exec and
		# taskset exec it), so that stop_esgw's SIGTERM reaches it.
		wrap=()
		[ -n "${!ns:-}" ] && wrap=(ip netns exec "${!ns}")
		[ -n "${!cpus:-}" ] && wrap+=(taskset -c "${!cpus}")
		"${wrap[@]}" "$run/bin/esgw-ctld" --standalone --socket "$run/$gw/ctl.sock" \
			--config "$run/$gw/config.pb" --rundir "$run/$gw/run" \
			--file-prefix "$PFX-$gw" --log-dir "$run/$gw/log" --workers "$workers" \
			"${place[@]}" "${extra[@]}" --bindir "$run/bin" >"$run/$gw/ctld.out" 2>&1 &
		CTLD_PID[$gw]=$!
	done
	for gw in "$@"; do
		for _ in $(seq 1 100); do
			[ -S "$run/$gw/ctl.sock" ] && break
			kill -0 "${CTLD_PID[$gw]}" 2>/dev/null || die "esgw-ctld of $gw exited"
			sleep 0.1
		done
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
# Ports and addresses of one gateway: side 1 is gw1's (and gwA's) addresses,
# side 2 gw2's.
configure_ports() { # gw side lan wan
	local lan_addr=192.168.1.2/24 wan_addr=192.168.3.1/24
	[ "$2" -eq 2 ] && lan_addr=192.168.2.2/24 wan_addr=192.168.3.2/24
	esgwctl "$1" interface add lan "$3"
	esgwctl "$1" interface add wan "$4"
	esgwctl "$1" interface address add lan $lan_addr
	esgwctl "$1" interface address add wan $wan_addr
	wait_running "$1"
}

KEY=4339314b55523947594d6d3547666b45
INTEG=4339314b55523947594d6d3547666b4543393134
SALT=01020304
gen_keys() { # alg: esgw-bench's options for the same test keys
	case $1 in
	aes-gcm-128) echo "--crypto-key $KEY --salt $SALT" ;;
	aes-cbc-128-sha1-96) echo "--crypto-key $KEY --integ-key $INTEG" ;;
	*) die "unknown algorithm $1" ;;
	esac
}
# One tunnel per worker: tunnel tN carries SAs 10+N (out) and 20+N (in), SPIs
# 1000+N (side 1 -> side 2) and 2000+N (back), both on worker N. With two, a
# side-1 gateway routes the lower and upper halves of 192.168.2.0/24 into t0
# and t1, so the generator's two destinations (.1 and .129) load one worker
# each on either gateway.
DSTS_1=192.168.2.1
DSTS_2=192.168.2.1,192.168.2.129
unconfigure_sas() { # gw: what configure_sas made
	local r t
	for r in 192.168.0.0/16 192.168.2.0/25 192.168.2.128/25 192.168.1.0/24; do
		esgwctl "$1" route del $r >/dev/null 2>&1 || true
	done
	for t in 0 1; do
		esgwctl "$1" tunnel del t$t >/dev/null 2>&1 || true
		esgwctl "$1" sa del 1$t >/dev/null 2>&1 || true
		esgwctl "$1" sa del 2$t >/dev/null 2>&1 || true
	done
}
configure_sas() { # alg tunnels gw:side[:worker]... (worker: default the tunnel's number)
	local alg=$1 nt=$2 gw side worker keys second t w p out in local remote
	shift 2
	case $alg in
	# Keys on standard input (sa_keys), never on a command line.
	aes-gcm-128) keys="crypto-key - salt -" second=$SALT ;;
	aes-cbc-128-sha1-96) keys="crypto-key - integ-key -" second=$INTEG ;;
	*) die "unknown algorithm $alg" ;;
	esac
	for p in "$@"; do
		gw=${p%%:*} side=${p#*:} worker=
		[[ $side == *:* ]] && worker=${side#*:} side=${side%%:*}
		unconfigure_sas "$gw"
		for t in $(seq 0 $((nt - 1))); do
			w=${worker:-$t}
			out=100$t in=200$t local=192.168.3.1 remote=192.168.3.2
			[ "$side" -eq 2 ] && out=200$t in=100$t local=192.168.3.2 remote=192.168.3.1
			printf '%s\n%s\n' $KEY $second | esgwctl "$gw" sa add 1$t spi $out alg "$alg" $keys worker $w
			printf '%s\n%s\n' $KEY $second | esgwctl "$gw" sa add 2$t spi $in alg "$alg" $keys worker $w
			esgwctl "$gw" tunnel add t$t local $local remote $remote sa-out 1$t sa-in 2$t
		done
		if [ "$nt" -eq 1 ] || [ "$side" -eq 2 ]; then
			esgwctl "$gw" route add 192.168.0.0/16 tunnel t0
		else
			esgwctl "$gw" route add 192.168.2.0/25 tunnel t0
			esgwctl "$gw" route add 192.168.2.128/25 tunnel t1
		fi
	done
}

# Freezing: the esgw gateway not being measured is stopped (SIGSTOP) while
# ipsec-secgw runs, so that it takes no CPU; its memif sockets and state stay.
# esgw-ctld stops first and resumes last, so it never sees its dataplane
# unresponsive. (ipsec-secgw needs no freezing: each of its runs starts its
# own gateways and kills them before the generator disconnects, secgw.sh.)
freeze() { # gw...
	local name p
	for name in "$@"; do
		kill -STOP "${CTLD_PID[$name]}"
		for p in $(prefix_pids "$PFX-$name"); do kill -STOP "$p"; done
	done
}
thaw() { # gw...
	local name p
	for name in "$@"; do
		for p in $(prefix_pids "$PFX-$name"); do kill -CONT "$p"; done
	done
	for name in "$@"; do kill -CONT "${CTLD_PID[$name]}"; done
	sleep 0.5 # ctld's once-a-second sampling catches up
}

# esgw-bench --watch: every process of the gateways, as GW.ROLE=PID.
watch_list() { # esgw|secgw name...
	local kind=$1 name p role out=
	shift
	for name in "$@"; do
		if [ "$kind" = secgw ]; then
			out+=${out:+,}$name=${SECGW_PID[$name]}
			continue
		fi
		for p in $(prefix_pids "$PFX-$name"); do
			role=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | "$PY" -c '
import os, sys
a = sys.stdin.read().split()
r = os.path.basename(a[0]).replace("esgw-", "")
print(r + "-" + a[a.index("--worker") + 1] if "--worker" in a else r)') || continue
			out+=${out:+,}$name.$role=$p
		done
	done
	echo "$out"
}

memif() { # name role socket mac
	local o="net_$1,role=$2,socket=$run/$3,socket-abstract=no,id=0,mac=$4"
	[ "$2" = client ] && o="$o,rsize=$MEMIF_RING"
	echo "$o"
}
# Fixed MACs: ipsec-secgw has no ARP, its neighbours are configured.
MAC_GEN_A=02:00:00:00:01:01 # the generator's port on the first gateway's LAN
MAC_GEN_B=02:00:00:00:02:01 # its port on the far LAN (the chain) or the WAN (A)
MAC_G1_LAN=02:00:00:00:01:02 MAC_G1_WAN=02:00:00:00:03:01
MAC_G2_LAN=02:00:00:00:02:02 MAC_G2_WAN=02:00:00:00:03:02

GEN_PORTS=()
generator() { # esgw-bench options...
	in_ns "$NS_gen" taskset -c "$GEN_CPU" "$run/bin/esgw-bench" --file-prefix "$PFX-gen" \
		--in-memory --no-pci -m 64 --lcores "40@$GEN_CPU" "${GEN_PORTS[@]}" -- "$@"
}
search_args() { echo "--size $SIZES --search --overload --trial $TRIAL --steps $STEPS"; }

print_search() {
	"$PY" -c '
import json, sys
for p in json.load(open(sys.argv[1]))["results"]:
    f, z = p["full_speed"], p["at_zero_loss"]
    print("  %-5s full speed: offered %.3f delivered %.3f Mpps (loss %.2f%%); zero-loss %.3f Mpps, p50 %.1f us p99 %.1f us" % (
        p["size"], f["offered_pps"] / 1e6, f["delivered_pps"] / 1e6, f["loss_pct"], p["zero_loss_pps"] / 1e6,
        z["latency_us"]["p50"], z["latency_us"]["p99"]))' "$1"
}

cpu_snapshot() { "$PY" "$top/bench/cpu_usage.py" snapshot "$@"; }
at_rest() { # output prefix...
	local out=$1
	shift
	cpu_snapshot "$run/idle-before.json" "$@"
	sleep "$IDLE_SECONDS"
	cpu_snapshot "$run/idle-after.json" "$@"
	"$PY" "$top/bench/cpu_usage.py" diff "$run"/idle-{before,after}.json >"$out"
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for gw, g in sorted(d["gateways"].items()):
    print("  %s at rest: %.2f%% of one CPU (%s)" % (gw, 100 * g["cpu"], ", ".join("%s %.2f%%" % (k, 100 * v) for k, v in sorted(g["processes"].items()))))' "$out"
}

# ---------------------------------------------------------------------------
# (A) one gateway, one CPU.
a_run() { # esgw|secgw direction alg pair
	local kind=$1 dir=$2 alg=$3 pair=$4 lan wan mac args out
	if [ "$kind" = esgw ]; then
		lan=gwA-lan.sock wan=gwA-wan.sock mac=()
	else
		lan=sgwA-lan.sock wan=sgwA-wan.sock mac=(--gateway-mac "$MAC_G1_LAN")
	fi
	if [ "$dir" = encrypt ]; then
		GEN_PORTS=(--vdev "$(memif memif0 client "$lan" "$MAC_GEN_A")"
			--vdev "$(memif memif1 client "$wan" "$MAC_GEN_B")")
		args=(--addr-a 192.168.1.1 --gateway-a 192.168.1.2 --dst 192.168.2.1
			--addr-b 192.168.3.2 --expect-esp "$alg:1000")
	else
		[ "$kind" = secgw ] && mac=(--gateway-mac "$MAC_G1_WAN")
		GEN_PORTS=(--vdev "$(memif memif0 client "$wan" "$MAC_GEN_B")"
			--vdev "$(memif memif1 client "$lan" "$MAC_GEN_A")")
		args=(--addr-a 192.168.3.2 --gateway-a 192.168.3.1 --inner-src 192.168.2.1
			--dst 192.168.1.1 --esp-tx "$alg:2000" $(gen_keys "$alg")
			--esp-seq-file "$run/seq-$kind-$alg")
	fi
	out=$run/A-$dir-$alg-$kind-$pair.json
	echo " $kind $dir, pair $pair:"
	if [ "$kind" = esgw ]; then
		generator "${args[@]}" $(search_args) --label "$alg" --watch "$(watch_list esgw gwA)" \
			--json >"$out" 2>"$run/A.err" || die "esgw-bench failed: (A) esgw $dir $alg"
	else
		rm -f "$run"/sgwA-*.sock
		secgw_start sgwA "$GW_CPU" "$run/sgwA.cfg" \
			"$(memif memif0 server sgwA-lan.sock "$MAC_G1_LAN")" \
			"$(memif memif1 server sgwA-wan.sock "$MAC_G1_WAN")"
		generator "${args[@]}" "${mac[@]}" $(search_args) --label "$alg" \
			--watch "$(watch_list secgw sgwA)" --before-exit "$(secgw_stop_cmd sgwA)" \
			--json >"$out" 2>"$run/A.err" || die "esgw-bench failed: (A) secgw $dir $alg"
		secgw_stop sgwA
	fi
	print_search "$out"
	record A "$dir" "$kind" "$alg" "$pair" "$out"
}

setting_a() {
	local alg pair kind
	for alg in "${alg_list[@]}"; do
		say "(A) one gateway on CPU $GW_CPU, generator on CPU $GEN_CPU: $alg, sizes $SIZES, $PAIRS pairs"
		start_esgw 1 gwA
		configure_ports gwA 1 "$(memif memif0 server gwA-lan.sock "$MAC_G1_LAN")" \
			"$(memif memif1 server gwA-wan.sock "$MAC_G1_WAN")"
		configure_sas "$alg" 1 gwA:1
		secgw_config "$run/sgwA.cfg" "$alg" 1000 2000 192.168.3.1 192.168.3.2 \
			192.168.1.0/24 192.168.2.0/24 "$MAC_GEN_A" "$MAC_GEN_B"
		sleep 1 # let the pushes of the configuration settle
		for pair in $(seq 1 "$PAIRS"); do
			a_run esgw encrypt "$alg" "$pair"
			a_run esgw decrypt "$alg" "$pair"
			freeze gwA
			a_run secgw encrypt "$alg" "$pair"
			a_run secgw decrypt "$alg" "$pair"
			thaw gwA
		done
		stop_esgw gwA
	done
}

# ---------------------------------------------------------------------------
# (B) and (C): the chain.
chain_ports() { # esgw|secgw: the generator's two ports
	local p=gw
	[ "$1" = secgw ] && p=sgw
	GEN_PORTS=(--vdev "$(memif memif0 client "${p}1-lan.sock" "$MAC_GEN_A")"
		--vdev "$(memif memif1 client "${p}2-lan.sock" "$MAC_GEN_B")")
}
chain_args() { # esgw|secgw
	echo "--addr-a 192.168.1.1 --gateway-a 192.168.1.2 --dst $DSTS_1"
	[ "$1" = secgw ] && echo "--gateway-mac $MAC_G1_LAN"
	return 0
}
chain_names() { [ "$1" = esgw ] && echo "gw1 gw2" || echo "sgw1 sgw2"; }

# One generator run through the chain; secgw's gateways are started for it.
chain_generator() { # esgw|secgw alg out err esgw-bench options...
	local kind=$1 alg=$2 out=$3 err=$4
	shift 4
	chain_ports "$kind"
	if [ "$kind" = esgw ]; then
		generator $(chain_args esgw) "$@" --watch "$(watch_list esgw gw1 gw2)" \
			--json >"$out" 2>"$err"
		return
	fi
	start_secgw_chain "$alg"
	generator $(chain_args secgw) "$@" --watch "$(watch_list secgw sgw1 sgw2)" \
		--before-exit "$(secgw_stop_cmd sgw1 sgw2)" --json >"$out" 2>"$err"
	local rc=$?
	secgw_stop sgw1 sgw2
	return $rc
}

b_run() { # esgw|secgw alg pair
	local kind=$1 alg=$2 pair=$3 out=$run/B-$2-$1-$3.json
	echo " $kind, pair $pair:"
	chain_generator "$kind" "$alg" "$out" "$run/B.err" $(search_args) --label "$alg" ||
		die "esgw-bench failed: (B) $kind $alg"
	print_search "$out"
	record B chain "$kind" "$alg" "$pair" "$out"
}

c_run() { # esgw|secgw alg pair
	local kind=$1 alg=$2 pair=$3 out=$run/C-$1-$3.json
	chain_generator "$kind" "$alg" "$out" "$run/C.err" --size "$LAT_SIZE" --rate "$LAT_RATES" \
		--duration "$LAT_DURATION" --label "$alg" || die "esgw-bench failed: (C) $kind"
	"$PY" -c '
import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["trials"]:
    l = t["latency_us"]
    print("  %s %6.0f pps: delivered %.0f, p50 %.1f us p99 %.1f us max %.1f us" % (
        sys.argv[2], t["rate_asked"], t["delivered_pps"], l["p50"], l["p99"], l["max"]))' "$out" "$kind"
	record C latency "$kind" "$alg" "$pair" "$out"
}

# esgw's per-stage cycles: STAGE_TRIALS more trials per size at full speed,
# each between two samples of the dataplane's cycle counters; the generator
# reads each process's CPU time and context switches over the same trial.
# The figures are those of the trial with the median delivered rate: a
# single trial, now and then taken by something else on this shared
# machine (every process at 1.5-2x its cycles), decided a run's figures.
stage_files=()
measure_stages() { # tag dsts
	local tag=$1 dsts=$2 size k watch out="$run/stages-$1.json" sep=""
	echo "{" >"$out"
	chain_ports esgw
	watch=$(watch_list esgw gw1 gw2)
	for size in "${size_list[@]}"; do
		for k in $(seq 1 "$STAGE_TRIALS"); do
			esgwctl gw1 --json show dataplane >"$run/dp-gw1-before.json"
			esgwctl gw2 --json show dataplane >"$run/dp-gw2-before.json"
			generator --dst "$dsts" --size "$size" --rate 0 --duration "$STAGE_TRIAL" \
				--watch "$watch" --json \
				>"$run/stage-trial.json" 2>>"$run/stages.err" ||
				die "esgw-bench failed for $tag $size (per-stage trial)"
			sleep 1.2 # ctld samples the counters about once a second
			esgwctl gw1 --json show dataplane >"$run/dp-gw1-after.json"
			esgwctl gw2 --json show dataplane >"$run/dp-gw2-after.json"
			"$PY" "$top/bench/stage_cost.py" "$run"/dp-gw1-{before,after}.json \
				"$run"/dp-gw2-{before,after}.json "$run/stage-trial.json" \
				>"$run/stage-$k.json"
		done
		printf '%s"%s":' "$sep" "$size" >>"$out"
		"$PY" "$top/bench/stage_cost.py" --median \
			$(seq -f "$run/stage-%g.json" 1 "$STAGE_TRIALS") >>"$out"
		sep=,
	done
	echo "}" >>"$out"
	stage_files+=("$tag=$out")
}

start_esgw_chain() {
	start_esgw 2 gw1 gw2
	# gw1 first: its wan is the server gw2's wan connects to, and adding an
	# interface restarts that gateway's dataplane (which drops memif peers).
	configure_ports gw1 1 "$(memif memif0 server gw1-lan.sock "$MAC_G1_LAN")" \
		"$(memif memif1 server wan.sock "$MAC_G1_WAN")"
	configure_ports gw2 2 "$(memif memif0 server gw2-lan.sock "$MAC_G2_LAN")" \
		"$(memif memif1 client wan.sock "$MAC_G2_WAN")"
}
start_secgw_chain() { # alg
	rm -f "$run"/sgw1-*.sock "$run"/sgw2-*.sock "$run"/sgw-wan.sock
	secgw_config "$run/sgw1.cfg" "$1" 1000 2000 192.168.3.1 192.168.3.2 \
		192.168.1.0/24 192.168.2.0/24 "$MAC_GEN_A" "$MAC_G2_WAN"
	secgw_config "$run/sgw2.cfg" "$1" 2000 1000 192.168.3.2 192.168.3.1 \
		192.168.2.0/24 192.168.1.0/24 "$MAC_GEN_B" "$MAC_G1_WAN"
	secgw_start sgw1 "$CPU_sgw1" "$run/sgw1.cfg" \
		"$(memif memif0 server sgw1-lan.sock "$MAC_G1_LAN")" \
		"$(memif memif1 server sgw-wan.sock "$MAC_G1_WAN")"
	secgw_start sgw2 "$CPU_sgw2" "$run/sgw2.cfg" \
		"$(memif memif0 server sgw2-lan.sock "$MAC_G2_LAN")" \
		"$(memif memif1 client sgw-wan.sock "$MAC_G2_WAN")"
}

idle_args=()
setting_bc() {
	local alg pair kind algs=("${alg_list[@]}")
	has_setting B || algs=("$FIRST_ALG") # (C) alone: the first algorithm
	say "the chain: two esgw gateways (esgw-ctld --standalone --workers 2)"
	start_esgw_chain
	for alg in "${algs[@]}"; do
		configure_sas "$alg" 1 gw1:1 gw2:2
		sleep 1 # let the pushes of the configuration settle
		if [ "$alg" = "$FIRST_ALG" ]; then
			say "CPU of the gateways at rest, over $IDLE_SECONDS s each"
			at_rest "$run/idle-esgw.json" "$PFX-gw1" "$PFX-gw2"
			freeze gw1 gw2
			start_secgw_chain "$alg"
			sleep 1
			at_rest "$run/idle-secgw.json" "$PFX-sgw1" "$PFX-sgw2"
			secgw_stop sgw1 sgw2
			thaw gw1 gw2
			idle_args=(--idle "$run/idle-esgw.json" --idle-secgw "$run/idle-secgw.json")
		fi
		has_setting B && say "(B) the chain: $alg, sizes $SIZES, $PAIRS pairs"
		for pair in $(seq 1 "$PAIRS"); do
			for kind in esgw secgw; do
				if [ "$kind" = secgw ]; then freeze gw1 gw2; fi
				has_setting B && b_run "$kind" "$alg" "$pair"
				if has_setting C && [ "$alg" = "$FIRST_ALG" ]; then
					[ "$pair" -eq 1 ] && [ "$kind" = esgw ] &&
						say "(C) latency through the chain: $alg, $LAT_SIZE B, $LAT_RATES packets/s"
					c_run "$kind" "$alg" "$pair"
				fi
				if [ "$kind" = secgw ]; then thaw gw1 gw2; fi
			done
		done
		if has_setting B; then
			say "esgw per-stage cycles at full load: $alg"
			measure_stages "one-worker:$alg" "$DSTS_1"
		fi
	done
}

# esgw with two workers and two SA pairs (two tunnels), next to one worker.
two_worker_args=()
two_workers() {
	local alg out
	for alg in "${alg_list[@]}"; do
		say "esgw, two workers, two SA pairs: $alg, zero-loss search, sizes $SIZES"
		configure_sas "$alg" 2 gw1:1 gw2:2
		sleep 1
		out=$run/two-workers-$alg.json
		chain_ports esgw
		generator --dst "$DSTS_2" $(search_args) --label "$alg" \
			--watch "$(watch_list esgw gw1 gw2)" --json >"$out" 2>"$run/two.err" ||
			die "esgw-bench failed: two workers $alg"
		print_search "$out"
		two_worker_args+=("$alg=$out")
		measure_stages "two-workers:$alg" "$DSTS_2"
	done
}

# The chain with a hub's tunnels (tests/integration/scale_config.py: tunnel i
# carries 10.128.0.0/24 + i*256 from gw1 to gw2); gw2 takes them to the
# generator's port B and routes the generator's source back into hub1 (every
# tunnel has the same peer). One chain per tunnel count, all configured at
# the start (one esgwctl -f batch per gateway) and placed as (B)'s gw1 and
# gw2, every SA on worker 0 (on its gateway's CPU) as (B)'s one tunnel's;
# the chain not measured is frozen, as esgw is while secgw runs, so the
# counts are interleaved like the other settings: each pair measures every
# count, ascending in odd pairs and descending in even ones, seconds apart,
# and the report gives each count's ratio to the fewest tunnels' figure of
# the same pair.
scale_args=()
scale_idle_args=()
scale_chain() { # n: chain sc<n>, gateways sc<n>a (as gw1) and sc<n>b (as gw2)
	local n=$1 a=sc$1a b=sc$1b gw side f
	eval "PLACE_$a=\$PLACE_gw1 PLACE_$b=\$PLACE_gw2"
	start_esgw 2 "$a" "$b"
	configure_ports "$a" 1 "$(memif memif0 server "sc$n-lan1.sock" "$MAC_G1_LAN")" \
		"$(memif memif1 server "sc$n-wan.sock" "$MAC_G1_WAN")"
	configure_ports "$b" 2 "$(memif memif0 server "sc$n-lan2.sock" "$MAC_G2_LAN")" \
		"$(memif memif1 client "sc$n-wan.sock" "$MAC_G2_WAN")"
	for side in 1 2; do
		gw=$a
		[ "$side" -eq 2 ] && gw=$b
		f=$run/scale-$gw.batch
		(umask 077; "$PY" "$top/tests/integration/scale_config.py" add "gw$side" 1 "$n" 0 >"$f")
		if [ "$side" -eq 2 ]; then
			echo "route add 10.128.0.0/9 via 192.168.2.1" >>"$f"
			echo "route add 192.168.1.0/24 tunnel hub1" >>"$f"
		fi
		esgwctl "$gw" -f "$f" || die "esgwctl -f: $n tunnels on $gw"
		rm -f "$f"
		wait_running "$gw"
	done
}
scale_point() {
	local n pair counts out
	for n in ${SCALE_TUNNELS//,/ }; do
		say "scale: a chain with $n tunnels (aes-gcm-128)"
		scale_chain "$n"
		# At rest with the tunnels configured: what the count costs when no
		# packet flows (esgw-ctld's 1 s statistics, timers), once the
		# first samples after the load (every SA listed) are past.
		sleep 2
		say "CPU of the chain with $n tunnels at rest, over $IDLE_SECONDS s"
		at_rest "$run/idle-scale-$n.json" "$PFX-sc${n}a" "$PFX-sc${n}b"
		scale_idle_args+=("$n=$run/idle-scale-$n.json")
		freeze "sc${n}a" "sc${n}b"
	done
	for pair in $(seq 1 "$SCALE_PAIRS"); do
		counts=${SCALE_TUNNELS//,/ }
		[ $((pair % 2)) -eq 0 ] && counts=$(tr ' ' '\n' <<<"$counts" | sort -rn | paste -sd' ')
		for n in $counts; do
			say "scale: the chain with $n tunnels, aes-gcm-128, zero-loss search, sizes $SIZES (pair $pair of $SCALE_PAIRS)"
			thaw "sc${n}a" "sc${n}b"
			out=$run/scale-$n-$pair.json
			GEN_PORTS=(--vdev "$(memif memif0 client "sc$n-lan1.sock" "$MAC_GEN_A")"
				--vdev "$(memif memif1 client "sc$n-lan2.sock" "$MAC_GEN_B")")
			generator --addr-a 192.168.1.1 --gateway-a 192.168.1.2 --dst 10.128.1.1 \
				--dst-count "$n" --addr-b 192.168.2.1 $(search_args) --label "$n tunnels" \
				--watch "$(watch_list esgw "sc${n}a" "sc${n}b")" --json >"$out" 2>"$run/scale.err" ||
				die "esgw-bench failed: scale $n"
			freeze "sc${n}a" "sc${n}b"
			print_search "$out"
			scale_args+=("$n:$pair=$out")
		done
	done
	for n in ${SCALE_TUNNELS//,/ }; do stop_esgw "sc${n}a" "sc${n}b"; done
}

# Where gw1's cycles go at full load, by function: perf samples on the CPU
# clock (this VM has no hardware counters), gw1's rxtx, router and worker.
profile_args=()
profile() {
	local alg=$FIRST_ALG pids perf_pid
	say "profile: perf record of gw1 at full load, $alg 64 bytes"
	if ! command -v perf >/dev/null 2>&1; then
		echo "perf not installed (apt-get install linux-perf): no profile"
		return 0
	fi
	configure_sas "$alg" 1 gw1:1 gw2:2
	chain_ports esgw
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
}

# What adaptive polling costs at load, and saves at rest: the same gateways
# restarted with esgw-ctld --busy-poll (no process ever sleeps).
poll_args=()
busy_poll() {
	local alg=$FIRST_ALG
	say "busy polling (esgw-ctld --busy-poll) next to adaptive polling: $alg, sizes $POLL_SIZES"
	stop_esgw gw1 gw2
	local extra=("${CTLD_EXTRA[@]}")
	CTLD_EXTRA=("${extra[@]}" --busy-poll)
	start_esgw_chain
	CTLD_EXTRA=("${extra[@]}")
	configure_sas "$alg" 1 gw1:1 gw2:2
	sleep 2
	at_rest "$run/idle-busy-poll.json" "$PFX-gw1" "$PFX-gw2"
	chain_ports esgw
	generator --dst "$DSTS_1" --size "$POLL_SIZES" --search --trial "$TRIAL" --steps "$STEPS" \
		--label "$alg" --json >"$run/bench-busy-poll.json" 2>"$run/bench-busy-poll.err" ||
		die "esgw-bench failed with --busy-poll"
	print_search "$run/bench-busy-poll.json"
	poll_args=(--busy-poll "$alg=$run/bench-busy-poll.json" --busy-idle "$run/idle-busy-poll.json")
	stop_esgw gw1 gw2
}

veth_args=()
veth_chain() {
	local veth_driver=af_xdp veth_note=
	say "veth in network namespaces, $VETH_ALG, sizes $VETH_SIZES"
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
	if ! in_ns "$NS_gen" "$run/bin/esgw-bench" --file-prefix "$PFX-gen" --in-memory --no-pci \
		-m 64 --lcores "40@$GEN_CPU" --vdev net_af_xdp0,iface=bga --vdev net_af_xdp1,iface=bgb \
		-- --probe-only --connect-timeout 3 >"$run/af_xdp-probe.out" 2>&1; then
		veth_note="net_af_xdp did not start on this kernel ($(uname -r): $(grep -m1 -iE 'error|fail' "$run/af_xdp-probe.out" | cut -c1-120)); fell back to net_af_packet"
		echo "bench/run.sh: $veth_note"
		veth_driver=af_packet
	fi
	start_esgw 1 gw1 gw2
	configure_ports gw1 1 "net_${veth_driver}0,iface=lan" "net_${veth_driver}1,iface=wan"
	configure_ports gw2 2 "net_${veth_driver}0,iface=lan" "net_${veth_driver}1,iface=wan"
	GEN_PORTS=(--vdev "net_${veth_driver}0,iface=bga" --vdev "net_${veth_driver}1,iface=bgb")
	configure_sas "$VETH_ALG" 1 gw1:1 gw2:2
	echo "driver: net_$veth_driver"
	generator --dst "$DSTS_1" --size "$VETH_SIZES" --search --trial "$TRIAL" --steps "$STEPS" \
		--label "$VETH_ALG" --json >"$run/bench-veth.json" 2>"$run/bench-veth.err" ||
		die "esgw-bench failed with veth"
	print_search "$run/bench-veth.json"
	veth_args=(--veth "net_$veth_driver:$VETH_ALG=$run/bench-veth.json")
	[ -n "$veth_note" ] && veth_args+=(--veth-note "$veth_note")
	stop_esgw gw1 gw2
	NS_gw1= NS_gw2= NS_gen=
}

# ---------------------------------------------------------------------------
has_setting A && setting_a
if has_setting B || has_setting C; then
	setting_bc
	[ "$TWO_WORKERS" -eq 1 ] && has_setting B && two_workers
	[ "$PROFILE" -eq 1 ] && profile
	stop_esgw gw1 gw2
fi
has_setting S && scale_point
[ "$BUSY_POLL" -eq 1 ] && busy_poll
[ "$VETH" -eq 1 ] && veth_chain

say "esgw next to ipsec-secgw"
pingpong_after=$(pingpong)
elapsed=$(($(date +%s) - started))
machine="- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -r)
- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average before the run: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg), run time $elapsed s
- esgw: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (uncommitted changes)')
- ipsec-secgw: DPDK $(dpkg-query -W -f='${Version}' dpdk-doc 2>/dev/null || echo '?') example sources (dpdk-doc), built by bench/secgw.sh
"
results_args=()
[ "$WRITE_RESULTS" -eq 1 ] && results_args=(--markdown "$OUT")
"$PY" "$top/bench/report.py" --runs "$RUNS" "${raw_args[@]}" --stages "${stage_files[@]}" \
	--two-workers "${two_worker_args[@]}" --scale "${scale_args[@]}" --scale-idle "${scale_idle_args[@]}" "${idle_args[@]}" "${esp_core_args[@]}" \
	"${poll_args[@]}" "${veth_args[@]}" "${profile_args[@]}" \
	--command "$cmdline" --machine "$machine" --note "$NOTE" \
	--settings "settings=$SETTINGS pairs=$PAIRS trial=$TRIAL steps=$STEPS stage_trials=${STAGE_TRIALS}x$STAGE_TRIAL memif_ring=2^$MEMIF_RING gen_cpu=$GEN_CPU; (A): gateway on CPU $GW_CPU; (B): esgw gw1: $PLACE_gw1; gw2: $PLACE_gw2; secgw sgw1 on CPU $CPU_sgw1, sgw2 on CPU $CPU_sgw2; (C): $LAT_SIZE B, $LAT_RATES packets/s, $LAT_DURATION s each; (S): $SCALE_TUNNELS tunnels, $SCALE_PAIRS pairs; a cache line CPU 0 -> 1 -> 0 (bench/cpu-pingpong): $pingpong_before at the start, $pingpong_after at the end; a process hands CPU $GW_CPU to another, futex wake, sleep and context switch (bench/cpu-switch): $cpu_switch; a line of a 64 MiB set on CPU $GW_CPU (bench/mem-lines): $mem_line" \
	"${results_args[@]}"
[ "$WRITE_RESULTS" -eq 1 ] && echo "written: $OUT"
echo "bench/run.sh: run time $elapsed s"
exit 0
