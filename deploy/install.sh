#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs esgw from a build directory: the executables into PREFIX/bin, the
# hugepage helper into PREFIX/libexec/esgw, the systemd units and their CPU
# drop-ins into UNITDIR (paths rewritten for PREFIX), the group esgw (members
# may use the control socket; also /etc/sysusers.d/esgw.conf) and
# /etc/esgw/esgw.env. With DESTDIR everything goes below it and systemd is not
# told (the group is made there only if DESTDIR/etc/group exists).
#
#   deploy/install.sh [--build DIR] [--prefix DIR] [--destdir DIR] [--unitdir DIR]
#                     [--ike | --ike-plugin]
#   env: ESGW_BUILD, PREFIX, DESTDIR, UNITDIR give the same defaults.
# --ike also installs charon's kernel-esgw plugin into strongSwan's plugin
# folder, its kernel-esgw.conf and a strongswan.service drop-in (ordered
# after esgw-ctld); --ike-plugin installs only the plugin and its config.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${ESGW_BUILD:-$here/../build}
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
unitdir=${UNITDIR:-/etc/systemd/system}
ike=none

usage() {
	sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--prefix) prefix=$2; shift 2 ;;
	--destdir) destdir=$2; shift 2 ;;
	--unitdir) unitdir=$2; shift 2 ;;
	--ike) ike=all; shift ;;
	--ike-plugin) ike=plugin; shift ;;
	-h|--help) usage 0 ;;
	*) echo "install.sh: unknown argument '$1'" >&2; usage 2 ;;
	esac
done
case "$prefix" in
/*) ;;
*) echo "install.sh: --prefix must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac

# The build keeps each executable in its process's folder.
find_exe() {
	local p
	for p in "$build/$1" "$build"/*/"$1"; do
		if [ -f "$p" ] && [ -x "$p" ]; then
			echo "$p"
			return 0
		fi
	done
	echo "install.sh: $1 not found in $build (build first: ninja -C $build)" >&2
	return 1
}

# charon's plugin and its configuration (strongSwan's own folders: Debian's
# charon looks for plugins in /usr/lib/ipsec/plugins only).
install_ike_plugin() {
	local plugin=$build/ike/strongswan/libstrongswan-kernel-esgw.so
	if [ ! -f "$plugin" ]; then
		echo "install.sh: $plugin not built (deploy/setup-host.sh --ike prepares the strongSwan source)" >&2
		exit 1
	fi
	install -d -m 0755 "$destdir/usr/lib/ipsec/plugins" "$destdir/etc/strongswan.d/charon"
	install -m 0644 "$plugin" "$destdir/usr/lib/ipsec/plugins/"
	# An operator's edited configuration stays.
	[ -e "$destdir/etc/strongswan.d/charon/kernel-esgw.conf" ] ||
		install -m 0644 "$here/strongswan/kernel-esgw.conf" "$destdir/etc/strongswan.d/charon/"
}
if [ "$ike" = plugin ]; then
	install_ike_plugin
	echo "kernel-esgw plugin installed in $destdir/usr/lib/ipsec/plugins"
	exit 0
fi

bindir=$destdir$prefix/bin
libexecdir=$destdir$prefix/libexec/esgw
units=$destdir$unitdir
install -d -m 0755 "$bindir" "$libexecdir" "$units"
for exe in esgw-ctld esgwctl esgw-rxtx esgw-router esgw-crypto; do
	install -m 0755 "$(find_exe "$exe")" "$bindir/$exe"
done
install -m 0755 "$here/esgw-hugepages.sh" "$libexecdir/esgw-hugepages"

# esgw-ctld and the dataplane units are Type=notify; executables built
# without libsystemd cannot notify, so they run as Type=simple. (Not
# `ldd | grep -q`: grep -q quits at the first match, ldd may then die of
# SIGPIPE, and pipefail turns that into "no libsystemd" now and then.)
notify=notify
for exe in esgw-ctld esgw-rxtx; do
	case "$(ldd "$bindir/$exe" 2>/dev/null)" in
	*libsystemd*) ;;
	*) notify=simple ;;
	esac
done
for unit in "$here"/systemd/*.service "$here"/systemd/*.target; do
	sed -e "s|/usr/local/|$prefix/|g" -e "s|^Type=notify$|Type=$notify|" "$unit" \
		> "$units/$(basename "$unit")"
	chmod 0644 "$units/$(basename "$unit")"
done
for dropins in "$here"/systemd/*.d; do
	install -d -m 0755 "$units/$(basename "$dropins")"
	for conf in "$dropins"/*.conf; do
		# An operator's edited drop-in stays.
		[ -e "$units/$(basename "$dropins")/$(basename "$conf")" ] ||
			install -m 0644 "$conf" "$units/$(basename "$dropins")/"
	done
done

# The group esgw: created now on this machine, or in DESTDIR when it is a
# whole root (it has /etc/group); the sysusers.d entry creates it at the first
# boot of an image staged without one.
install -d -m 0755 "$destdir/etc/sysusers.d"
echo "g esgw - -" > "$destdir/etc/sysusers.d/esgw.conf"
chmod 0644 "$destdir/etc/sysusers.d/esgw.conf"
if [ -z "$destdir" ] && ! getent group esgw >/dev/null; then
	groupadd --system esgw
elif [ -n "$destdir" ] && [ -f "$destdir/etc/group" ] && ! grep -q '^esgw:' "$destdir/etc/group"; then
	groupadd --prefix "$destdir" --system esgw
fi
install -d -m 0755 "$destdir/etc/esgw"
env_file=$destdir/etc/esgw/esgw.env
if [ ! -e "$env_file" ]; then
	cat > "$env_file" <<'EOF'
# esgw settings, read by every esgw unit (EnvironmentFile=).
# DPDK --file-prefix of this gateway instance.
ESGW_PREFIX=esgw
# 2 MiB hugepages reserved by esgw-hugepages.service.
ESGW_HUGEPAGES=1024
EOF
	chmod 0640 "$env_file"
	if [ -z "$destdir" ]; then
		chgrp esgw "$env_file"
	fi
fi

if [ "$ike" = all ]; then
	install_ike_plugin
	install -d -m 0755 "$units/strongswan.service.d"
	install -m 0644 "$here/strongswan/strongswan.service.d/10-esgw.conf" "$units/strongswan.service.d/"
	echo "kernel-esgw plugin installed; charon (strongswan.service) starts after esgw-ctld"
fi

if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload
fi
echo "esgw installed: executables in $bindir, units in $units"
echo "start it with: systemctl enable --now esgw.target"
