#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the path of a Debian 12 root file system for the systemd tests
# (tests/integration/test_systemd_boot.py): minbase with systemd as init, D-Bus
# and the packages of deploy/runtime-packages, nothing of esgw itself (the test
# installs it with deploy/install.sh --destdir on an overlay above this tree).
# Built once with debootstrap from Debian's archive and cached in
# $ESGW_ROOTFS_CACHE (default /var/cache/esgw) under a key of the package set,
# so it is rebuilt only when that set (or ROOTFS_RECIPE below) changes; older
# trees no mounted overlay uses are removed. Run as root; progress goes to
# stderr, the path alone to stdout.
#
#   tests/systemd/rootfs.sh
#   env: ESGW_ROOTFS_CACHE, ESGW_DEBIAN_MIRROR (http://deb.debian.org/debian),
#        ESGW_DEBIAN_SECURITY (http://deb.debian.org/debian-security)
set -euo pipefail

# Bump when the way the tree is made changes (not needed for package changes).
ROOTFS_RECIPE=1
SUITE=bookworm
# systemd as PID 1 and the system bus esgw-ctld's sd-bus calls go through;
# iproute2 and procps to look inside the container.
BASE_PACKAGES=(systemd systemd-sysv dbus iproute2 procps)

here=$(cd "$(dirname "$0")" && pwd)
cache=${ESGW_ROOTFS_CACHE:-/var/cache/esgw}
mirror=${ESGW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${ESGW_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}

say() { echo "rootfs.sh: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	say "must run as root (debootstrap, chroot)"
	exit 1
fi
for tool in debootstrap flock sha256sum; do
	if ! command -v "$tool" >/dev/null; then
		say "$tool is missing (deploy/setup-host.sh installs it)"
		exit 1
	fi
done

mapfile -t runtime < <(sed 's/#.*//' "$here/../../deploy/runtime-packages" | xargs -n1 | sort -u)
packages=$(printf '%s\n' "${BASE_PACKAGES[@]}" "${runtime[@]}" | sort -u | xargs)
key=$(printf 'recipe %s\nsuite %s\nmirror %s\nsecurity %s\npackages %s\n' \
	"$ROOTFS_RECIPE" "$SUITE" "$mirror" "$security" "$packages" | sha256sum | cut -c1-16)
root=$cache/rootfs-$key

mkdir -p "$cache"
exec 9>"$cache/rootfs.lock"
flock -w 1800 9 || { say "another build of the rootfs holds $cache/rootfs.lock"; exit 1; }

if [ -f "$root/etc/esgw-rootfs" ]; then
	echo "$root"
	exit 0
fi

# Trees of other package sets, unless a running test has one under its overlay.
for old in "$cache"/rootfs-*; do
	[ -d "$old" ] && [ "$old" != "$root" ] || continue
	if grep -q "lowerdir=$old[,:]" /proc/mounts; then
		continue
	fi
	say "removing $old (another package set)"
	rm -rf --one-file-system "$old" "$old.log"
done

tmp=$root.tmp.$$
log=$cache/rootfs-$key.log
cleanup() {
	mountpoint -q "$tmp/proc" 2>/dev/null && umount "$tmp/proc"
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
rm -rf --one-file-system "$root" "$root".tmp.*
say "building $root ($SUITE minbase + ${packages}), log in $log"
: >"$log"
if ! debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus \
	"$SUITE" "$tmp" "$mirror" >>"$log" 2>&1; then
	tail -20 "$log" >&2
	say "debootstrap from $mirror failed"
	exit 1
fi

# The same archive areas as a Debian 12 machine: the point release, its
# updates and the security archive (the executables come from such a host).
rm -f "$tmp/etc/apt/sources.list"
cat >"$tmp/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
mount -t proc proc "$tmp/proc"
# shellcheck disable=SC2086  # one word per package
if ! chroot "$tmp" env DEBIAN_FRONTEND=noninteractive sh -c "
	apt-get update -qq &&
	apt-get install -y -qq --no-install-recommends $packages &&
	apt-get dist-upgrade -y -qq &&
	apt-get clean" >>"$log" 2>&1; then
	tail -20 "$log" >&2
	say "installing the packages in the rootfs failed"
	exit 1
fi
umount "$tmp/proc"
rm -rf "$tmp"/var/lib/apt/lists/*

# A quiet, quick boot: no apt or fsck timers in a test container.
chroot "$tmp" systemctl mask apt-daily.timer apt-daily-upgrade.timer \
	e2scrub_all.timer dpkg-db-backup.timer >>"$log" 2>&1
echo esgw >"$tmp/etc/hostname"
printf 'recipe %s\npackages %s\n' "$ROOTFS_RECIPE" "$packages" >"$tmp/etc/esgw-rootfs"
mv "$tmp" "$root"
trap - EXIT
say "built $root ($(du -sh "$root" | cut -f1))"
echo "$root"
