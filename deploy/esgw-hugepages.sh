#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run by esgw-hugepages.service: reserve ESGW_HUGEPAGES (default 1024) 2 MiB
# hugepages unless as many are there already, and mount hugetlbfs.
set -eu
want=${ESGW_HUGEPAGES:-1024}
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
have=$(cat "$nr")
if [ "$have" -lt "$want" ]; then
	echo "$want" > "$nr"
fi
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
