#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Get Debian's Linux 7.2 cloud kernel (linux-binary-7.2.13+deb14-cloud-amd64,
# version 7.2.13-1) and unpack it into build/vm/kernel/root, with links
# build/vm/kernel/vmlinuz (and config, System.map when the package has them:
# this one holds vmlinuz only).
#
# The package comes from Debian sid through apt-get with a private source
# list and state directory (build/apt-sid): the machine's apt setup is never
# changed.  When sid no longer carries 7.2.13-1, or the network fails, the
# copy in UPSTREAM_COPY is used.  Either way the .deb must have the pinned
# sha256: another version is never taken silently.
#
#   LINUX_IMAGE_DEB=/path/x.deb   use that package instead (said so; its
#                                 checksum is printed, not checked)
#   UPSTREAM_COPY=DIR             where the fallback copy lives
#                                 (default ../shared/upstream beside the checkout)
#   MIRROR=URI                    Debian mirror (default: the URIs of the
#                                 machine's /etc/apt/sources.list.d/debian.sources)
#   BUILD=DIR                     build directory (default <repo>/build)
#
# Prints the path of vmlinuz on its last line.  Exit 77 when no kernel can be
# had (the caller reports the VM check as skipped), 1 on other errors.
set -eu

PKG=linux-binary-7.2.13+deb14-cloud-amd64
VER=7.2.13-1
SHA256=03e41f1c34c16583462f029e81944a85ebcdb78098c258dedfa1cfdd680a27f8
DEBNAME=${PKG}_${VER}_amd64.deb

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$repo/build}
# the project's shared folder beside the checkout
UPSTREAM_COPY=${UPSTREAM_COPY:-$repo/../shared/upstream}
apt_dir=$BUILD/apt-sid
kdir=$BUILD/vm/kernel

say() { echo "fetch-kernel: $*" >&2; }
skip() {
	say "cannot get the kernel: $*"
	mkdir -p "${VM_DIR:-$BUILD/vm}" &&
		echo "cannot get the kernel: $*" > "${VM_DIR:-$BUILD/vm}/skip-reason"
	exit 77
}

. "$repo/tests/sid-deb.sh"
sha() { sid_sha "$1"; }

stamp=$kdir/.deb-sha256
if [ -z "${LINUX_IMAGE_DEB:-}" ] && [ -f "$kdir/vmlinuz" ] && [ -f "$stamp" ] &&
   [ "$(cat "$stamp")" = "$SHA256" ]; then
	say "$PKG $VER already unpacked in $kdir"
	echo "$kdir/vmlinuz"
	exit 0
fi

if [ -n "${LINUX_IMAGE_DEB:-}" ]; then
	[ -f "$LINUX_IMAGE_DEB" ] || skip "LINUX_IMAGE_DEB=$LINUX_IMAGE_DEB: no such file"
	deb=$(cd "$(dirname "$LINUX_IMAGE_DEB")" && pwd)/$(basename "$LINUX_IMAGE_DEB")
	sum=$(sha "$deb")
	say "NOT the pinned kernel: using LINUX_IMAGE_DEB=$deb"
	say "  its sha256 $sum is not checked (the pinned one is $PKG $VER, $SHA256)"
else
	deb=$(sid_deb "$PKG" "$VER" "$DEBNAME" "$SHA256" kernel) || deb=""
	if [ -z "$deb" ]; then
		copy=$UPSTREAM_COPY/$DEBNAME
		[ -f "$copy" ] || skip "not in sid, and no copy at $copy (set UPSTREAM_COPY or LINUX_IMAGE_DEB)"
		sum=$(sha "$copy")
		[ "$sum" = "$SHA256" ] || skip "$copy has sha256 $sum, not the pinned $SHA256"
		deb=$copy
		say "using the copy $deb (sha256 ok)"
	fi
	sum=$SHA256
fi

# Unpack unless this very package is unpacked already.
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ] || [ ! -f "$kdir/vmlinuz" ]; then
	rm -rf "$kdir"
	mkdir -p "$kdir/root"
	dpkg-deb -x "$deb" "$kdir/root" || { say "dpkg-deb -x $deb failed"; exit 1; }
	vmlinuz=$(find "$kdir/root" -type f \( -name vmlinuz -o -name 'vmlinuz-*' \) | head -n 1)
	[ -n "$vmlinuz" ] || skip "no vmlinuz in $deb"
	ln -s "${vmlinuz#"$kdir/"}" "$kdir/vmlinuz"
	config=$(find "$kdir/root" -type f \( -name config -o -name 'config-*' \) | head -n 1)
	[ -z "$config" ] || ln -s "${config#"$kdir/"}" "$kdir/config"
	sysmap=$(find "$kdir/root" -type f \( -name System.map -o -name 'System.map-*' \) | head -n 1)
	[ -z "$sysmap" ] || ln -s "${sysmap#"$kdir/"}" "$kdir/System.map"
	printf '%s\n' "$deb" > "$kdir/.deb"
	printf '%s\n' "$sum" > "$stamp"
	say "unpacked $(basename "$deb") into $kdir"
fi
if [ -f "$kdir/config" ] && ! grep -q '^CONFIG_UNWIND_USER=y' "$kdir/config"; then
	say "warning: this kernel has no CONFIG_UNWIND_USER=y: it cannot defer callchains"
fi
echo "$kdir/vmlinuz"
