#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Get the Linux 7.2.13 sources upstream perf is built from (make
# perf-upstream, Makefile.perf-upstream), check them, and print the path of
# the tarball on the last line of stdout (messages go to stderr).
#
# In order of preference:
#   LINUX_SRC=/path/x.tar.xz   that tarball (said so; its sha256 is printed,
#                              not checked: it is the caller's choice)
#   Debian sid's linux-source-7.2, version 7.2.13-1, through apt-get with a
#     private source list and state directory (build/apt-sid: the machine's
#     apt setup is never changed); the .deb and the tarball in it must have
#     the pinned sha256
#   the copy UPSTREAM_COPY/perf-src-7.2.13.tar.xz (the paths of
#     tools/perf/MANIFEST of the same package), when sid no longer has
#     7.2.13-1 or the network fails; pinned sha256 too
# Another version is never taken silently.
#
#   UPSTREAM_COPY=DIR   where the fallback copy lives (../shared/upstream beside
#                       the checkout)
#   MIRROR=URI          Debian mirror (default: the machine's debian.sources)
#   BUILD=DIR           build directory (default <repo>/build)
#   UPSTREAM_NO_SID=1   skip sid, take the copy
set -eu

PKG=linux-source-7.2
VER=7.2.13-1
DEB_SHA256=30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d
DEBNAME=${PKG}_${VER}_all.deb
TARBALL_IN_DEB=usr/src/linux-source-7.2.tar.xz
TARBALL_SHA256=ecb3877b9988c936dcc64c63af8a54c2fa6df7f717d4e5ee429d0f4c4859e68b
COPY_NAME=perf-src-7.2.13.tar.xz
COPY_SHA256=b21d393c06ec8f0547d3ac42978e1aaa42557f75543b19384bb74a2fe4dbc22f

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$repo/build}
# the project's shared folder beside the checkout
UPSTREAM_COPY=${UPSTREAM_COPY:-$repo/../shared/upstream}
apt_dir=$BUILD/apt-sid
src_dir=$BUILD/linux-7.2-src   # the tarball taken out of the .deb

say() { echo "get-linux-7.2: $*" >&2; }
die() { say "$*"; exit 1; }
. "$repo/tests/sid-deb.sh"
sha() { sid_sha "$1"; }

if [ -n "${LINUX_SRC:-}" ]; then
	[ -f "$LINUX_SRC" ] || die "LINUX_SRC=$LINUX_SRC: no such file"
	t=$(cd "$(dirname "$LINUX_SRC")" && pwd)/$(basename "$LINUX_SRC")
	say "NOT the pinned sources: using LINUX_SRC=$t"
	say "  its sha256 $(sha "$t") is not checked (pinned: $PKG $VER, tarball $TARBALL_SHA256)"
	echo "$t"
	exit 0
fi

# The tarball taken out of the .deb before, if intact.
tarball=$src_dir/linux-source-7.2.tar.xz
if [ -f "$tarball" ] && [ -f "$tarball.sha256" ] &&
   [ "$(cat "$tarball.sha256")" = "$TARBALL_SHA256" ]; then
	say "using $tarball (from $DEBNAME, checked before)"
	echo "$tarball"
	exit 0
fi

deb=""
if [ "${UPSTREAM_NO_SID:-}" != 1 ]; then
	deb=$(sid_deb "$PKG" "$VER" "$DEBNAME" "$DEB_SHA256" linux-source) || deb=""
fi

if [ -n "$deb" ]; then
	rm -rf "$src_dir"
	mkdir -p "$src_dir"
	say "taking $TARBALL_IN_DEB out of $DEBNAME"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$src_dir" "./$TARBALL_IN_DEB" ||
		die "cannot take $TARBALL_IN_DEB out of $deb"
	mv "$src_dir/$TARBALL_IN_DEB" "$tarball"
	rm -rf "$src_dir/usr"
	s=$(sha "$tarball")
	if [ "$s" = "$TARBALL_SHA256" ]; then
		echo "$s" > "$tarball.sha256"
		say "$tarball: sha256 ok"
		echo "$tarball"
		exit 0
	fi
	say "$TARBALL_IN_DEB in $deb has sha256 $s, not $TARBALL_SHA256: not used"
	rm -rf "$src_dir"
fi

copy=$UPSTREAM_COPY/$COPY_NAME
[ -f "$copy" ] || die "no $PKG $VER from sid, and no copy at $copy (set UPSTREAM_COPY or LINUX_SRC)"
s=$(sha "$copy")
[ "$s" = "$COPY_SHA256" ] || die "$copy has sha256 $s, not the pinned $COPY_SHA256"
say "using the copy $copy (sha256 ok)"
echo "$copy"
