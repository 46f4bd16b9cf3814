#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prepares a Debian 12 machine for esgw: installs the build and test packages,
# reserves 2 MiB hugepages and mounts hugetlbfs. Idempotent; run as root.
#
#   deploy/setup-host.sh [--ike [--build DIR]]
#
# --ike also sets up IKEv2 with strongSwan: installs charon-systemd,
# strongswan-swanctl and libcharon-extra-plugins, fetches the strongSwan
# source of the installed charon's upstream version from Debian's source
# archive, configures it once (cached in /var/cache/esgw/strongswan-VERSION,
# /var/cache/esgw/strongswan points at it), builds the kernel-esgw plugin in
# the build directory (ESGW_BUILD, default build/ of this tree) and installs
# it with /etc/strongswan.d/charon/kernel-esgw.conf (deploy/install.sh
# --ike-plugin). Run it again after a strongSwan upgrade.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ike=0
build=${ESGW_BUILD:-$here/../build}
while [ $# -gt 0 ]; do
	case "$1" in
	--ike) ike=1; shift ;;
	--build) build=$2; shift 2 ;;
	-h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "setup-host.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

PKGS=(build-essential meson ninja-build pkg-config
      dpdk dpdk-dev libdpdk-dev libipsec-mb-dev libev-dev
      libprotobuf-c-dev protobuf-c-compiler libsystemd-dev
      iproute2 iputils-ping ethtool iperf3 tcpdump procps psmisc python3-scapy python3-cryptography
      python3-pytest python3-protobuf protobuf-compiler systemd
      clang libclang-rt-14-dev   # clang and its fuzzer runtime: tests/fuzz (libFuzzer)
      systemd-container debootstrap)  # the systemd tests' container (tests/systemd/)
# IKEv2: charon (systemd flavour), swanctl, kernel-libipsec (the tests' peer),
# and what fetching and configuring the strongSwan source needs.
IKE_PKGS=(charon-systemd strongswan-swanctl libcharon-extra-plugins dpkg-dev bzip2)
[ "$ike" -eq 1 ] && PKGS+=("${IKE_PKGS[@]}")

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host.sh: must run as root (hugepages, packages, namespaces)" >&2
	exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
	[[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup-host.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi

want=${ESGW_HUGEPAGES:-1024}
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ "$(cat $hp)" -lt "$want" ]; then
	echo "$want" > $hp
fi
if [ "$(cat $hp)" -lt 256 ]; then
	echo "setup-host.sh: could reserve only $(cat $hp) hugepages of 2 MiB" >&2
	exit 1
fi
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages

[ "$ike" -eq 1 ] || exit 0

# --- IKE: the strongSwan source of the installed version, configured once
cache=/var/cache/esgw
version=$(dpkg-query -W -f='${Version}' libstrongswan)
upstream=${version#*:}
upstream=${upstream%%-*}
src=$cache/strongswan-$upstream
if [ ! -f "$src/config.h" ]; then
	echo "setup-host.sh: preparing the strongSwan $upstream source in $src (once)"
	mkdir -p "$cache"
	# deb-src lines next to the deb ones the machine already uses.
	srclist=/etc/apt/sources.list.d/esgw-deb-src.sources
	if [ ! -f "$srclist" ] && ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		for f in /etc/apt/sources.list.d/*.sources; do
			[ "$f" != "$srclist" ] && [ -f "$f" ] && sed -n '/^Types:/s/.*/Types: deb-src/;p' "$f"
			echo
		done > "$srclist"
		if [ -f /etc/apt/sources.list ]; then
			sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list > /etc/apt/sources.list.d/esgw-deb-src.list
		fi
		apt-get update -qq -o DPkg::Lock::Timeout=600
	fi
	work=$(mktemp -d "$cache/fetch.XXXXXX")
	# The installed Debian version first; any other of the same upstream
	# version has the same orig tarball (the security archive may lack
	# the .dsc of the newest one).
	for v in "$version" $(apt-cache showsrc strongswan | sed -n 's/^Version: //p'); do
		case "$v" in "$upstream"-*|*:"$upstream"-*) ;; *) continue ;; esac
		(cd "$work" && apt-get source --download-only -qq "strongswan=$v" >/dev/null 2>&1) || true
		ls "$work"/strongswan_"$upstream".orig.tar.* >/dev/null 2>&1 && break
	done
	orig=$(ls "$work"/strongswan_"$upstream".orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -1 || true)
	if [ -z "$orig" ]; then
		echo "setup-host.sh: no strongSwan $upstream source in the archive (apt-get source strongswan)" >&2
		rm -rf "$work"
		exit 1
	fi
	tar --no-same-owner -C "$work" -xf "$orig"
	# Only config.h and the headers matter: charon's own parts suffice.
	(cd "$work/strongswan-$upstream" &&
		./configure --disable-defaults --enable-charon --enable-ikev2 \
			--enable-kernel-netlink --enable-socket-default --enable-vici \
			--enable-swanctl --disable-static) > "$cache/strongswan-$upstream.configure.log" 2>&1 || {
		tail -20 "$cache/strongswan-$upstream.configure.log" >&2
		echo "setup-host.sh: configuring the strongSwan source failed" >&2
		rm -rf "$work"
		exit 1
	}
	rm -rf "$src"
	mv "$work/strongswan-$upstream" "$src"
	rm -rf "$work"
fi
ln -sfn "$src" "$cache/strongswan"

# --- the plugin, built against it and installed
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$here/.." > "$cache/meson-setup.log" 2>&1 || {
		tail -20 "$cache/meson-setup.log" >&2; exit 1; }
elif ! grep -q kernel-esgw "$build/build.ninja"; then
	# configured before the source was there: meson looks again
	meson setup --reconfigure "$build" "$here/.." > "$cache/meson-setup.log" 2>&1 || {
		tail -20 "$cache/meson-setup.log" >&2; exit 1; }
fi
ninja -C "$build" ike/strongswan/libstrongswan-kernel-esgw.so >/dev/null
"$here/install.sh" --build "$build" --ike-plugin
