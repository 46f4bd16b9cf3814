#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Shows esgw end to end on one machine: h1 -- gw1 ==ESP== gw2 -- h2 in network
# namespaces (the topology of the first seed report), two esgw instances with
# AES-CBC-128/HMAC-SHA1-96, a ping and a 5 s iperf3 TCP run across the tunnel.
# Exits 0 only if traffic really crossed the tunnel; removes everything it
# created, also when a step fails. Run as root from anywhere.
#
# --ike: the same topology, but the tunnel is negotiated by strongSwan: a
# charon (kernel-esgw plugin, deploy/setup-host.sh --ike) in each gateway
# namespace with its own strongswan.conf and swanctl.conf (PSK; modern
# proposals next to the fourth seed report's aes256-sha512-modp1024 and
# aes128gcm16), swanctl --initiate, ping and iperf3 with a forced CHILD_SA
# rekey during the run, swanctl --list-sas next to esgwctl show sa. Exits 0
# only if traffic crossed SAs that IKE negotiated.
set -euo pipefail

ike=0
case "${1:-}" in
--ike) ike=1 ;;
"") ;;
*) echo "usage: demo.sh [--ike]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
build=${ESGW_BUILD:-$top/build}
run=/run/esgw-demo
PY=/usr/bin/python3
NS=(esgw-demo-h1 esgw-demo-gw1 esgw-demo-gw2 esgw-demo-h2)
declare -A CTLD_PID=()
declare -A CHARON_PID=()
IPERF_PID=
failed=0

say() { printf '\n=== %s\n' "$*"; }
die() { echo "demo.sh: $*" >&2; exit 1; }

# Pids of the dataplane processes of one gateway, found by its file prefix.
gateway_pids() {
	local prefix=$1 p
	for p in /proc/[0-9]*; do
		[[ "$( { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null)" == *"--file-prefix $prefix "* ]] &&
			echo "${p#/proc/}"
	done
	return 0
}

cleanup() {
	local rc=$?
	set +e
	say "cleanup"
	[ -n "$IPERF_PID" ] && kill "$IPERF_PID" 2>/dev/null
	for gw in "${!CHARON_PID[@]}"; do
		kill -TERM "${CHARON_PID[$gw]}" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "${CHARON_PID[$gw]}" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "${CHARON_PID[$gw]}" 2>/dev/null
	done
	for gw in "${!CTLD_PID[@]}"; do
		kill -TERM "${CTLD_PID[$gw]}" 2>/dev/null
	done
	for gw in "${!CTLD_PID[@]}"; do
		for _ in $(seq 1 75); do
			kill -0 "${CTLD_PID[$gw]}" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "${CTLD_PID[$gw]}" 2>/dev/null; then
			echo "demo.sh: esgw-ctld of $gw ignored SIGTERM, killing it" >&2
			kill -KILL "${CTLD_PID[$gw]}" 2>/dev/null
		fi
	done
	for gw in gw1 gw2; do
		left=$(gateway_pids "esgw-demo-$gw")
		if [ -n "$left" ]; then
			echo "demo.sh: $gw processes left after ctld stopped: $left" >&2
			kill -KILL $left 2>/dev/null
			rc=1
		fi
		rm -f /dev/hugepages/esgw-demo-${gw}map_*
		rm -rf "/var/run/dpdk/esgw-demo-$gw"
	done
	for ns in "${NS[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	if [ "$rc" -ne 0 ] && [ -d "$run" ]; then
		for f in "$run"/gw*/ctld.out "$run"/gw*/log/*.log "$run"/gw*/charon.log; do
			[ -f "$f" ] || continue
			echo "----- $f (last 30 lines)"
			tail -n 30 "$f"
		done
	fi
	rm -rf "$run"
	# Leave the machine's hugepage setup as we found it.
	if [ "$HUGE_MOUNTED_BEFORE" -eq 0 ] && mountpoint -q /dev/hugepages; then
		umount /dev/hugepages
	fi
	[ -n "$HUGE_PAGES_BEFORE" ] && echo "$HUGE_PAGES_BEFORE" >/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	if [ "$rc" -ne 0 ]; then echo "demo.sh: FAILED"
	elif [ "$ike" -eq 1 ]; then echo "demo.sh: OK, traffic crossed IKE-negotiated SAs"
	else echo "demo.sh: OK, traffic crossed the tunnel"; fi
	exit "$rc"
}

[ "$(id -u)" -eq 0 ] || die "must run as root"
HUGE_MOUNTED_BEFORE=0
mountpoint -q /dev/hugepages 2>/dev/null && HUGE_MOUNTED_BEFORE=1
HUGE_PAGES_BEFORE=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
trap cleanup EXIT
trap 'exit 130' INT TERM

say "host setup"
if [ "$ike" -eq 1 ]; then
	"$top/deploy/setup-host.sh" --ike --build "$build"
else
	"$top/deploy/setup-host.sh"
fi

say "build"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top"
ninja -C "$build"

# ctld looks for the dataplane executables in --bindir; the build keeps one
# folder per process, so gather them in one place.
mkdir -p "$run/bin"
for role in esgw-ctld esgw-rxtx esgw-router esgw-crypto esgwctl; do
	exe=$(ls "$build"/*/"$role" "$build/$role" 2>/dev/null | head -n 1 || true)
	[ -n "$exe" ] || die "$role not built in $build"
	ln -sf "$exe" "$run/bin/$role"
done
esgwctl() { local gw=$1; shift; "$run/bin/esgwctl" --socket "$run/$gw/ctl.sock" "$@"; }

say "topology: h1 192.168.1.1 -- gw1 -- 192.168.3.0/24 -- gw2 -- h2 192.168.2.1"
for ns in "${NS[@]}"; do
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
link() { # ns_a dev_a ns_b dev_b
	ip link add "$2" netns "esgw-demo-$1" type veth peer name "$4" netns "esgw-demo-$3"
	for end in "$1 $2" "$3 $4"; do
		set -- $end
		# Offloads off on every end: af_packet must see real frames with
		# finished checksums.
		ip netns exec "esgw-demo-$1" ethtool -K "$2" tx off rx off tso off gso off gro off >/dev/null
		ip -n "esgw-demo-$1" link set "$2" up
	done
}
link h1 h1-eth0 gw1 gw1-lan
link gw1 gw1-wan gw2 gw2-wan
link gw2 gw2-lan h2 h2-eth0
# Leave room for the ESP overhead on the 1500-byte WAN.
ip -n esgw-demo-h1 link set h1-eth0 mtu 1400
ip -n esgw-demo-h2 link set h2-eth0 mtu 1400
ip -n esgw-demo-h1 addr add 192.168.1.1/24 dev h1-eth0
ip -n esgw-demo-h1 route add default via 192.168.1.2
ip -n esgw-demo-h2 addr add 192.168.2.1/24 dev h2-eth0
ip -n esgw-demo-h2 route add default via 192.168.2.2

# Each gateway on a CPU of its own (gw1 on 0, gw2 on 1), every process of it
# there, instead of esgw-ctld's default of rxtx and router on CPU 0 and the
# worker on CPU 1 for both: a frame then crosses no CPU inside a gateway. A
# wake-up of a process sleeping on the other CPU of this VM took 36 us at
# the median, on the same CPU 11 us, and a ping crosses each gateway twice
# with three hand-offs each. Measured, 6 runs each, alternating: ping avg
# median 0.78 ms instead of 0.97, iperf3 0.9-1.0 Gbit/s instead of 0.5-0.75.
declare -A DEMO_CPU=()
if [ "$(nproc)" -ge 2 ]; then DEMO_CPU=([gw1]=0 [gw2]=1); fi
say "start two esgw instances (esgw-ctld --standalone in gw1 and gw2)"
for gw in gw1 gw2; do
	mkdir -p "$run/$gw/run" "$run/$gw/log"
	cpu=${DEMO_CPU[$gw]:-}
	place=()
	[ -n "$cpu" ] && place=(--rxtx-cpu "$cpu" --router-cpu "$cpu" --worker-cpus "$cpu")
	ip netns exec "esgw-demo-$gw" "$run/bin/esgw-ctld" --standalone \
		--socket "$run/$gw/ctl.sock" --config "$run/$gw/config.pb" \
		--rundir "$run/$gw/run" --file-prefix "esgw-demo-$gw" \
		--log-dir "$run/$gw/log" --workers 1 --bindir "$run/bin" "${place[@]}" \
		>"$run/$gw/ctld.out" 2>&1 &
	CTLD_PID[$gw]=$!
done
# ctld answers at once but starts the dataplane only when it has interfaces.
for gw in gw1 gw2; do
	for i in $(seq 1 100); do
		esgwctl "$gw" show stats >/dev/null 2>&1 && break
		kill -0 "${CTLD_PID[$gw]}" 2>/dev/null || die "esgw-ctld of $gw exited"
		[ "$i" -eq 100 ] && die "$gw: API not answering after 20 s"
		sleep 0.2
	done
	echo "$gw: API up"
done

say "configure (AES-CBC-128 / HMAC-SHA1-96, keys as in the seed report)"
KEY=4339314b55523947594d6d3547666b45
INTEG=4339314b55523947594d6d3547666b4543393134
configure() { # gw lan_addr wan_addr local remote remote_lan spi_out spi_in
	local gw=$1
	esgwctl "$gw" interface add lan "net_af_packet0,iface=$gw-lan"
	esgwctl "$gw" interface address add lan "$2"
	esgwctl "$gw" interface add wan "net_af_packet1,iface=$gw-wan"
	esgwctl "$gw" interface address add wan "$3"
	# Keys on standard input (one line per '-'), never on a command line.
	printf '%s\n%s\n' $KEY $INTEG |
		esgwctl "$gw" sa add 10 spi "$7" alg aes-cbc-128-sha1-96 crypto-key - integ-key -
	printf '%s\n%s\n' $KEY $INTEG |
		esgwctl "$gw" sa add 20 spi "$8" alg aes-cbc-128-sha1-96 crypto-key - integ-key -
	esgwctl "$gw" tunnel add t0 local "$4" remote "$5" sa-out 10 sa-in 20
	esgwctl "$gw" route add "$6" tunnel t0
}
# --ike: interfaces and routes only; SAs, tunnels and policies come from charon.
configure_ike() { # gw lan_addr wan_addr remote_lan next_hop
	local gw=$1
	esgwctl "$gw" interface add lan "net_af_packet0,iface=$gw-lan"
	esgwctl "$gw" interface address add lan "$2"
	esgwctl "$gw" interface add wan "net_af_packet1,iface=$gw-wan"
	esgwctl "$gw" interface address add wan "$3"
	esgwctl "$gw" route add "$4" via "$5"
}
if [ "$ike" -eq 1 ]; then
	say "configure interfaces and routes (the tunnel comes from IKE)"
	configure_ike gw1 192.168.1.2/24 192.168.3.1/24 192.168.2.0/24 192.168.3.2
	configure_ike gw2 192.168.2.2/24 192.168.3.2/24 192.168.1.0/24 192.168.3.1
else
	configure gw1 192.168.1.2/24 192.168.3.1/24 192.168.3.1 192.168.3.2 192.168.2.0/24 1000 2000
	configure gw2 192.168.2.2/24 192.168.3.2/24 192.168.3.2 192.168.3.1 192.168.1.0/24 2000 1000
fi
all_running() { # gw: rxtx, router and the crypto worker report "running"
	esgwctl "$1" --json show stats 2>/dev/null | $PY -c '
import json, sys
p = json.load(sys.stdin)["processes"]
sys.exit(0 if {"rxtx", "router", "crypto"} <= {x["role"] for x in p}
         and all(x["state"] == "running" for x in p) else 1)' 2>/dev/null
}
for gw in gw1 gw2; do
	for i in $(seq 1 120); do
		all_running "$gw" && break
		kill -0 "${CTLD_PID[$gw]}" 2>/dev/null || die "esgw-ctld of $gw exited"
		[ "$i" -eq 120 ] && die "$gw: dataplane not running after 60 s"
		sleep 0.5
	done
	echo "--- $gw: dataplane running"
	[ "$ike" -eq 1 ] || esgwctl "$gw" show tunnels
	esgwctl "$gw" show routes
done

swanctl_gw() { local gw=$1; shift
	ip netns exec "esgw-demo-$gw" env STRONGSWAN_CONF="$run/$gw/strongswan.conf" \
		swanctl "$@" --uri "unix://$run/$gw/charon.vici"; }
start_charon() { # gw local remote local_ts remote_ts
	local gw=$1
	cat >"$run/$gw/strongswan.conf" <<EOF
charon {
  load = random nonce openssl pem pkcs1 x509 pubkey kdf hmac gcm aes sha1 sha2 gmp kernel-esgw kernel-netlink socket-default vici
  filelog { main { path = $run/$gw/charon.log
                   time_format = %T
                   default = 1 } }
  journal { default = -1 }
  plugins {
    vici { socket = unix://$run/$gw/charon.vici }
    kernel-esgw { socket = $run/$gw/ctl.sock }
  }
}
EOF
	cat >"$run/$gw/swanctl.conf" <<EOF
connections {
  site {
    version = 2
    local_addrs = $2
    remote_addrs = $3
    # modern ones first, then the fourth seed report's (Vyatta ike-group)
    proposals = aes128gcm16-sha256-x25519, aes256gcm16-sha256-modp2048, aes256-sha512-modp1024
    local { auth = psk
            id = $2 }
    remote { auth = psk
             id = $3 }
    children {
      net {
        local_ts = $4
        remote_ts = $5
        # ... and the seed's esp-group: aes128gcm128, no PFS
        esp_proposals = aes256gcm16-x25519, aes128gcm16-modp2048, aes128gcm16
      }
    }
  }
}
secrets {
  ike-site { id-1 = 192.168.3.1
             id-2 = 192.168.3.2
             secret = "esgw-demo-pre-shared-key" }
}
EOF
	ip netns exec "esgw-demo-$gw" env STRONGSWAN_CONF="$run/$gw/strongswan.conf" \
		/usr/sbin/charon-systemd >"$run/$gw/charon.out" 2>&1 &
	CHARON_PID[$gw]=$!
	for i in $(seq 1 100); do
		[ -S "$run/$gw/charon.vici" ] && swanctl_gw "$gw" --stats >/dev/null 2>&1 && break
		kill -0 "${CHARON_PID[$gw]}" 2>/dev/null || die "charon of $gw exited"
		[ "$i" -eq 100 ] && die "$gw: charon not answering after 20 s"
		sleep 0.2
	done
	swanctl_gw "$gw" --load-all --file "$run/$gw/swanctl.conf"
}
ike_packets() { # gw -> packets through the SAs IKE owns
	esgwctl "$1" --json show sa | $PY -c '
import json, sys
print(sum(s["packets"] for s in json.load(sys.stdin)["sas"] if s.get("owner") == "ike"))'
}
ike_spis() { # gw -> the SPIs of the SAs IKE owns
	esgwctl "$1" --json show sa | $PY -c '
import json, sys
print(" ".join(sorted("%08x" % s["spi"] for s in json.load(sys.stdin)["sas"] if s.get("owner") == "ike")))'
}
if [ "$ike" -eq 1 ]; then
	for gw in gw1 gw2; do
		for i in $(seq 1 100); do # charon binds to the punt TAP's address
			[[ "$(ip -n "esgw-demo-$gw" -4 addr show dev esgw-wan 2>/dev/null)" == *192.168.3* ]] && break
			[ "$i" -eq 100 ] && die "$gw: no TAP esgw-wan"
			sleep 0.2
		done
	done
	say "start charon (kernel-esgw) in gw1 and gw2, negotiate"
	start_charon gw1 192.168.3.1 192.168.3.2 192.168.1.0/24 192.168.2.0/24
	start_charon gw2 192.168.3.2 192.168.3.1 192.168.2.0/24 192.168.1.0/24
	swanctl_gw gw1 --initiate --child net
	for gw in gw1 gw2; do
		echo "--- $gw: esgwctl show tunnels / show policies"
		esgwctl "$gw" show tunnels
		esgwctl "$gw" show policies
	done
fi

say "processes: four per gateway"
ps -o pid,ppid,psr,%cpu,args -p "${CTLD_PID[gw1]},${CTLD_PID[gw2]}$(
	for gw in gw1 gw2; do for p in $(gateway_pids "esgw-demo-$gw"); do printf ',%s' "$p"; done; done)"

say "idle CPU: both gateways, every process, 5 s with no traffic"
all_pids() {
	echo "${CTLD_PID[gw1]} ${CTLD_PID[gw2]}"
	for gw in gw1 gw2; do gateway_pids "esgw-demo-$gw"; done
}
cpu_ticks() { # utime + stime of every esgw process, in clock ticks
	local t=0 p
	for p in $(all_pids); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
t0=$(cpu_ticks)
sleep 5
t1=$(cpu_ticks)
hz=$(getconf CLK_TCK)
$PY -c 'import sys; t, hz = int(sys.argv[1]), int(sys.argv[2]); print("idle: %d processes used %.2f%% of one core (%d ticks of 1/%d s in 5 s)" % (int(sys.argv[3]), 100.0 * t / hz / 5, t, hz))' \
	"$((t1 - t0))" "$hz" "$(all_pids | wc -w)"

sa_packets() { # gw sa_id -> packets
	esgwctl "$1" --json show sa | $PY -c '
import json, sys
print(next(s["packets"] for s in json.load(sys.stdin)["sas"] if s["id"] == int(sys.argv[1])))' "$2"
}
declare -A BEFORE=()
if [ "$ike" -eq 0 ]; then
	for gw in gw1 gw2; do for sa in 10 20; do BEFORE[$gw.$sa]=$(sa_packets $gw $sa); done; done
fi

say "ping h1 -> h2 across the tunnel"
ping_ok=0
for i in 1 2 3 4 5; do # the first may wait for ARP on both sides
	ip netns exec esgw-demo-h1 ping -c 1 -W 2 192.168.2.1 >/dev/null 2>&1 && break
done
if ip netns exec esgw-demo-h1 ping -c 5 -i 0.2 -W 2 192.168.2.1; then ping_ok=1; fi

say "iperf3 TCP h1 -> h2, 5 s"
ip netns exec esgw-demo-h2 iperf3 -s -1 -B 192.168.2.1 >"$run/iperf3-server.out" 2>&1 &
IPERF_PID=$!
sleep 1
iperf_bytes=0
rekey_pid=
if [ "$ike" -eq 1 ]; then
	spis_before=$(ike_spis gw1)
	# a forced CHILD_SA rekey in the middle of the run
	(sleep 2; swanctl_gw gw1 --rekey --child net >"$run/rekey.out" 2>&1) &
	rekey_pid=$!
fi
if ip netns exec esgw-demo-h1 iperf3 -c 192.168.2.1 -t 5 -J >"$run/iperf3.json" 2>&1; then
	read -r iperf_bytes mbps < <($PY -c '
import json, sys
s = json.load(open(sys.argv[1]))["end"]["sum_received"]
print(int(s["bytes"]), "%.1f" % (s["bits_per_second"] / 1e6))' "$run/iperf3.json")
	echo "iperf3: $iperf_bytes bytes received by h2 in 5 s = $mbps Mbit/s"
else
	echo "iperf3 failed:"; cat "$run/iperf3.json"
fi
wait "$IPERF_PID" 2>/dev/null || true
IPERF_PID=

sa_ok=1
if [ "$ike" -eq 1 ]; then
	[ -n "$rekey_pid" ] && wait "$rekey_pid"
	cat "$run/rekey.out"
	ip netns exec esgw-demo-h1 ping -c 3 -i 0.2 -W 2 192.168.2.1 >/dev/null || ping_ok=0
	say "swanctl --list-sas and esgwctl show sa, side by side"
	for gw in gw1 gw2; do
		echo "--- $gw: swanctl --list-sas"
		swanctl_gw "$gw" --list-sas
		echo "--- $gw: esgwctl show sa"
		esgwctl "$gw" show sa
	done
	spis_after=$(ike_spis gw1)
	echo "gw1 IKE SPIs before the rekey: $spis_before; after: $spis_after"
	if [ -z "$spis_after" ] || [ "$spis_before" = "$spis_after" ]; then
		echo "demo.sh: the CHILD_SA was not rekeyed" >&2
		sa_ok=0
	fi
	for gw in gw1 gw2; do
		n=$(ike_packets "$gw")
		echo "$gw: $n packets through the SAs IKE negotiated (after the rekey)"
		[ "$n" -gt 0 ] || sa_ok=0
	done
else
	say "SA counters"
	for gw in gw1 gw2; do
		echo "--- $gw"
		esgwctl "$gw" show sa
	done
	for gw in gw1 gw2; do for sa in 10 20; do
		now=$(sa_packets $gw $sa)
		echo "$gw SA $sa: packets ${BEFORE[$gw.$sa]} -> $now"
		[ "$now" -gt "${BEFORE[$gw.$sa]}" ] || sa_ok=0
	done; done
fi

[ "$ping_ok" -eq 1 ] || { echo "demo.sh: ping h1 -> h2 failed" >&2; failed=1; }
[ "$iperf_bytes" -gt 0 ] || { echo "demo.sh: iperf3 moved no bytes" >&2; failed=1; }
[ "$sa_ok" -eq 1 ] || { echo "demo.sh: SA packet counters did not rise on both gateways" >&2; failed=1; }
exit "$failed"
