#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# The headers perf's CTF converter (perf data convert --to-ctf,
# util/data-convert-bt.c) includes: <babeltrace2-ctf-writer/*.h>.
#
# Debian 12 has the library (libbabeltrace2-ctf-writer.so.0 in
# libbabeltrace2-0 2.0.4, its .so and .pc in libbabeltrace2-dev) but not
# these headers: babeltrace 2.0 did not install them, 2.1 does.  Their API
# is the frozen one of babeltrace 1's CTF writer, and 2.1's library
# exports the same symbols as 2.0.4's, so perf 7.2 (pristine and ours
# alike) is built with 2.1's headers from Debian sid's libbabeltrace2-dev
# and linked with Debian 12's library; make check reads what it writes
# back with Debian 12's babeltrace2.
#
# The .deb comes through apt-get with a private source list and state
# directory (build/apt-sid, tests/sid-deb.sh): the machine's apt setup is
# never changed.  Pinned: 2.1.2-2.1 and its sha256.  When sid no longer has
# that version, sid's current libbabeltrace2-dev is taken instead (apt
# checks it against sid's signed index), and said so.
#
# Prints the include directory on the last line of stdout (messages go to
# stderr); exits 1 when no headers could be had.
#
#   BUILD=DIR   build directory (default <repo>/build)
#   MIRROR=URI  Debian mirror (default: the machine's debian.sources)
set -eu

PKG=libbabeltrace2-dev
VER=2.1.2-2.1
DEB_SHA256=0484d3bb04d6e7e9c4a74f0c05bb77df77a8d22efd82f12756f23d9fcd1e6200
DEBNAME=${PKG}_${VER}_amd64.deb

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$repo/build}
apt_dir=$BUILD/apt-sid
out=$BUILD/babeltrace2-ctf-writer
inc=$out/include

say() { echo "get-babeltrace2-ctf-writer: $*" >&2; }
. "$repo/tests/sid-deb.sh"

# taken out before: the stamp names the .deb and its sha256
if [ -f "$out/stamp" ] && [ -f "$inc/babeltrace2-ctf-writer/writer.h" ]; then
	say "using $inc ($(cat "$out/stamp"))"
	echo "$inc"
	exit 0
fi

deb=$(sid_deb "$PKG" "$VER" "$DEBNAME" "$DEB_SHA256" babeltrace2) || deb=""
if [ -z "$deb" ] && [ -f "$apt_dir/sources.list" ]; then
	say "NOT the pinned $PKG $VER: taking sid's current $PKG"
	(cd "$apt_dir" && rm -f ${PKG}_*.deb && apt-get \
		-o Dir::Etc::sourcelist="$apt_dir/sources.list" \
		-o Dir::Etc::sourceparts=- -o Dir::State::Lists="$apt_dir/lists" \
		-o Dir::Cache="$apt_dir/cache" -o Acquire::Languages=none \
		-o APT::Sandbox::User=root -o Debug::NoLocking=1 \
		-q download "$PKG") > "$apt_dir/download-babeltrace2-current.log" 2>&1 || true
	deb=$(ls "$apt_dir"/${PKG}_*.deb 2>/dev/null | head -n 1)
fi
if [ -z "$deb" ]; then
	say "no $PKG from sid: perf is built without CTF (perf data convert --to-ctf)"
	exit 1
fi

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$out.tmp" ./usr/include/babeltrace2-ctf-writer ||
	{ say "no usr/include/babeltrace2-ctf-writer in $deb"; rm -rf "$out.tmp"; exit 1; }
rm -rf "$out"
mkdir -p "$inc"
mv "$out.tmp/usr/include/babeltrace2-ctf-writer" "$inc/"
rm -rf "$out.tmp"
echo "$(basename "$deb") sha256 $(sid_sha "$deb")" > "$out/stamp"
say "$inc: the headers of $(basename "$deb")"
echo "$inc"
