#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The hugepages of the esgw units.
#   esgw-hugepages             (esgw-hugepages.service) reserve ESGW_HUGEPAGES
#                              (default 1024) 2 MiB hugepages unless as many are
#                              there already, and mount hugetlbfs.
#   esgw-hugepages release P   (esgw-rxtx.service, ExecStopPost) remove the
#                              hugepage files and the DPDK runtime directory of
#                              file prefix P: a DPDK primary leaves its files
#                              behind when it exits, holding the pages.
set -eu
if [ "${1:-}" = release ]; then
	prefix=${2:-}
	case "$prefix" in
	'' | *[!A-Za-z0-9_-]*)
		echo "esgw-hugepages: release: file prefix must be a plain word, not '$prefix'" >&2
		exit 2
		;;
	esac
	rm -f /dev/hugepages/"$prefix"map_*
	# DPDK keeps it under $RUNTIME_DIRECTORY when systemd sets that.
	rm -rf "${RUNTIME_DIRECTORY:-/var/run}/dpdk/$prefix"
	exit 0
fi
want=${ESGW_HUGEPAGES:-1024}
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
have=$(cat "$nr")
if [ "$have" -lt "$want" ]; then
	echo "$want" > "$nr"
fi
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
