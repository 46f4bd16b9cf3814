#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prepares a Debian 12 machine for esgw: installs the build and test packages,
# reserves 2 MiB hugepages and mounts hugetlbfs. Idempotent; run as root.
set -euo pipefail

PKGS=(build-essential meson ninja-build pkg-config
      dpdk dpdk-dev libdpdk-dev libipsec-mb-dev libev-dev
      libprotobuf-c-dev protobuf-c-compiler libsystemd-dev
      iproute2 iputils-ping ethtool iperf3 tcpdump procps psmisc python3-scapy python3-cryptography
      python3-pytest python3-protobuf protobuf-compiler systemd
      clang libclang-rt-14-dev   # clang and its fuzzer runtime: tests/fuzz (libFuzzer)
      systemd-container debootstrap)  # the systemd tests' container (tests/systemd/)

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host.sh: must run as root (hugepages, packages, namespaces)" >&2
	exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup-host.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
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
