# SPDX-License-Identifier: BSD-3-Clause
# The peer in the benchmark: DPDK's own IPsec gateway example, ipsec-secgw,
# built at run time from the sources Debian's dpdk-doc installs, and run on
# the same memif links as esgw. Sourced by bench/run.sh, which provides
# $run, $PY, die and say. Nothing of ipsec-secgw is in this tree: the few
# edits it needs are made by the commands in secgw_patch, in a copy of the
# installed sources outside the tree.
#
# How it runs (DPDK 22.11's documented options): one lcore polling both
# ports (--config "(0,0,L),(1,0,L)"), port 0 the protected (LAN) side and
# port 1 the unprotected (WAN) side (-u 0x2), the librte_ipsec path (-l) with
# a 64-packet replay window (-w 64, esgw's default), crypto by
# intel-ipsec-mb through the crypto_aesni_mb vdev, static neighbours
# ("neigh": it has no ARP), --in-memory (nothing left in /dev/hugepages).

SECGW_SRC=${ESGW_SECGW_SRC:-/usr/share/dpdk/examples}
SECGW_CACHE=${ESGW_BENCH_CACHE:-/var/cache/esgw-bench}
SECGW_BIN=
declare -A SECGW_PID=()

# The run-time edits of the copied sources, each for a vdev port or for a run
# that starts before its peers. Any change here changes the cache key, so the
# binary is rebuilt.
secgw_patch() { # dir
	# 1. port_conf asks every port for RX checksum offload
	#    (RTE_ETH_RX_OFFLOAD_CHECKSUM) and exits when the port lacks it;
	#    net_memif has none, and nothing in ipsec-secgw reads the
	#    RTE_MBUF_F_RX_*_CKSUM flags it would set (the only RX flags read are
	#    the inline-IPsec ones). Ask for no RX offload.
	sed -i 's/^\(\t*\.offloads = \)RTE_ETH_RX_OFFLOAD_CHECKSUM,/\10,/' "$1/ipsec-secgw/ipsec-secgw.c"
	grep -q 'RTE_ETH_RX_OFFLOAD_CHECKSUM' "$1/ipsec-secgw/ipsec-secgw.c" &&
		die "ipsec-secgw: the RX checksum offload request was not where expected"
	# 2. check_all_ports_link_status waits up to 9 s (90 x 100 ms) for every
	#    link; a memif server's link comes up only when the generator
	#    connects, later. Check once, so start-up does not take 9 s.
	sed -i 's/^#define MAX_CHECK_TIME 90 .*/#define MAX_CHECK_TIME 1/' "$1/ipsec-secgw/ipsec-secgw.c"
	grep -q '^#define MAX_CHECK_TIME 1$' "$1/ipsec-secgw/ipsec-secgw.c" ||
		die "ipsec-secgw: MAX_CHECK_TIME was not where expected"
}

# Installs dpdk-doc if needed and builds ipsec-secgw into the cache (once per
# dpdk-doc version and patch recipe). Sets SECGW_BIN.
secgw_build() {
	local version key dir tmp
	if [ ! -f "$SECGW_SRC/ipsec-secgw/ipsec-secgw.c" ]; then
		say "installing dpdk-doc (ipsec-secgw's sources)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpdk-doc >/dev/null ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpdk-doc >/dev/null; } ||
			die "cannot install dpdk-doc"
	fi
	[ -f "$SECGW_SRC/ipsec-secgw/ipsec-secgw.c" ] ||
		die "no ipsec-secgw sources in $SECGW_SRC (dpdk-doc)"
	version=$(dpkg-query -W -f='${Version}' dpdk-doc 2>/dev/null || echo local)
	key=$(declare -f secgw_patch | sha1sum | cut -c1-12)
	dir=$SECGW_CACHE/ipsec-secgw-$version-$key
	if [ ! -x "$dir/ipsec-secgw/build/ipsec-secgw" ]; then
		say "building ipsec-secgw ($version) into $dir"
		# Built aside and renamed: a parallel run never sees half a build.
		tmp=$dir.tmp.$$
		rm -rf "$dir" "$tmp"
		mkdir -p "$tmp"
		cp -r "$SECGW_SRC/ipsec-secgw" "$SECGW_SRC/common" "$tmp/"
		secgw_patch "$tmp"
		make -C "$tmp/ipsec-secgw" -j"$(nproc)" >"$tmp/build.log" 2>&1 ||
			{ tail -n 20 "$tmp/build.log" >&2; rm -rf "$tmp"; die "ipsec-secgw build failed"; }
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
	fi
	SECGW_BIN=$dir/ipsec-secgw/build/ipsec-secgw
}

# "4339..." -> "43:39:..."
secgw_hex() { echo "$1" | sed 's/../&:/g; s/:$//'; }

# The configuration file of one gateway: the same SAs, addresses and routes
# as esgw's. Outbound traffic to the far LAN is protected by SPI spi_out,
# inbound ESP with spi_in is decrypted and must be for the near LAN.
secgw_config() { # file alg spi_out spi_in local remote near_net far_net lan_neigh wan_neigh
	local f=$1 alg=$2 keys
	case $alg in
	aes-gcm-128) keys="aead_algo aes-128-gcm aead_key $(secgw_hex "$KEY$SALT")" ;;
	aes-cbc-128-sha1-96) keys="cipher_algo aes-128-cbc cipher_key $(secgw_hex "$KEY") auth_algo sha1-hmac auth_key $(secgw_hex "$INTEG")" ;;
	*) die "ipsec-secgw: unknown algorithm $alg" ;;
	esac
	cat >"$f" <<EOF
sp ipv4 out esp protect $3 pri 1 dst $8 sport 0:65535 dport 0:65535
sp ipv4 in esp protect $4 pri 1 dst $7 sport 0:65535 dport 0:65535
sa out $3 $keys mode ipv4-tunnel src $5 dst $6
sa in $4 $keys mode ipv4-tunnel src $6 dst $5
rt ipv4 dst $6/32 port 1
rt ipv4 dst $7 port 0
neigh port 0 $9
neigh port 1 ${10}
EOF
}

# Starts one gateway confined to one CPU (taskset: its EAL threads too; one
# lcore there). lan and wan are memif devargs (lan is port 0). DPDK 22.11's
# ipsec-secgw now and then dies (SIGSEGV, nothing logged) just as it enters
# its main loop, before any memif peer has connected; such a start is tried
# again, up to 3 times, and said on stderr.
secgw_start() { # name cpu config lan wan
	local name=$1 cpu=$2 log=$run/$1.log attempt
	for attempt in 1 2 3; do
		# stdbuf: its log is line-buffered, so it shows how far a start got.
		taskset -c "$cpu" stdbuf -oL "$SECGW_BIN" --in-memory --no-pci -l "$cpu" \
			--file-prefix "$PFX-$name" --vdev "$4" --vdev "$5" --vdev crypto_aesni_mb -- \
			-p 0x3 -P -u 0x2 --config "(0,0,$cpu),(1,0,$cpu)" -f "$3" -l -w 64 >"$log" 2>&1 &
		SECGW_PID[$name]=$!
		# Killed on purpose at the end of each run (secgw_stop_cmd): not a
		# job whose end bash should report. bash still reaps it.
		disown "${SECGW_PID[$name]}"
		if secgw_wait_started "$name" "$log"; then
			return 0
		fi
		echo "bench/run.sh: ipsec-secgw $name died at start-up (attempt $attempt of 3)" >&2
		tail -n 5 "$log" >&2
		# Not always dead: seen alive (polling its CPU for good, an orphan
		# that skewed every later run) after being judged dead on a loaded
		# machine. Our own child of a moment ago: kill it whatever it is.
		kill -KILL "${SECGW_PID[$name]}" 2>/dev/null || true
		secgw_server_sockets_remove "$4" "$5"
	done
	die "ipsec-secgw $name did not start" \
		"($(awk '/HugePages_Free/ {print $2}' /proc/meminfo) hugepages free)"
}

# The socket files of the memif devargs given whose role is server: a dead
# server leaves its socket behind, and its successor must create it anew.
secgw_server_sockets_remove() { # devargs...
	local d sock
	for d in "$@"; do
		[[ $d == *role=server* ]] || continue
		sock=${d#*socket=}
		rm -f "${sock%%,*}"
	done
}

# 0 once name's log says it entered its main loop and it is still alive a
# moment later; 1 if it died first; exits after 30 s without either.
secgw_wait_started() { # name log
	for _ in $(seq 1 150); do
		if grep -q 'entering main loop' "$2" 2>/dev/null; then
			sleep 0.3
			secgw_alive "${SECGW_PID[$1]}" "$1"
			return
		fi
		secgw_alive "${SECGW_PID[$1]}" "$1" || return 1
		sleep 0.2
	done
	tail -n 20 "$2" >&2
	die "ipsec-secgw $1 did not start in 30 s"
}

# A command for esgw-bench --before-exit: kill these gateways and wait until
# they are gone, before the generator closes its ports. In DPDK 22.11 a memif
# peer that sees the other side disconnect unmaps the shared rings in its
# interrupt thread while its lcore may be reading them in rte_eth_rx_burst:
# ipsec-secgw, which polls without pause, then crashes (SIGSEGV in the memif
# PMD) after about one run in five, and so would one of two chained gateways
# stopped one after the other. So each run gets gateways of their own, killed
# together (SIGKILL: no code of theirs runs after it) before anything
# disconnects. --in-memory leaves nothing behind.
secgw_stop_cmd() { # name...
	local name pids=
	for name in "$@"; do pids+=" ${SECGW_PID[$name]}"; done
	echo "kill -KILL$pids; for i in \$(seq 1 200); do up=0;" \
		"for p in$pids; do grep -qs '^State:[[:space:]]*[^Z[:space:]]' /proc/\$p/status && up=1; done;" \
		"[ \$up = 0 ] && break; sleep 0.05; done; true"
}

# Whether pid is still the ipsec-secgw started as name (not gone, not a
# zombie, not a pid reused since).
secgw_alive() { # pid name
	grep -qs '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status" &&
		[[ "$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)" == *"--file-prefix $PFX-$2 "* ]]
}

secgw_stop() { # name...
	local name pid
	for name in "$@"; do
		pid=${SECGW_PID[$name]:-}
		if [ -n "$pid" ] && secgw_alive "$pid" "$name"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	for name in "$@"; do
		pid=${SECGW_PID[$name]:-}
		[ -n "$pid" ] || continue
		for _ in $(seq 1 100); do
			secgw_alive "$pid" "$name" || break
			sleep 0.1
		done
		unset "SECGW_PID[$name]"
	done
	return 0
}
