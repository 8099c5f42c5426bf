#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-perfparser.sh BUILD: hotspot's perfparser from Debian's source
# package, with our patches (patches/perfparser-1.3.0/), built against
# libunwind-cookie through its pkg-config file, into BUILD/hotspot:
#
#   src/perfparser/       the patched sources (git apply of the series)
#   prefix/               libunwind-cookie as make install puts it
#   obj/hotspot-perfparser, obj/perfparser   what hotspot runs
#   obj/perf2text         perfparser's text dump of a recording
#   obj/tst_perfdata      perfparser's own tests, ours among them
#   debian/perf2text      the same dump through Debian's unpatched parser
#
# The source: hotspot_1.3.0.orig.tar.xz of Debian 12 (bookworm), whose
# 3rdparty/perfparser is KDAB's perfparser as hotspot 1.3.0 carries it,
# fetched through apt-get with a private source list and state directory
# (the machine's apt configuration is not changed) and pinned by sha256.
# sid lists hotspot 1.6.0-0.2 (perfparser for Qt 6), but its files are
# not on the mirror (404 on 2026-12-07): 1.3.0 is the newest one can get.
#
# Environment: MIRROR (default: the machine's Debian mirror), LIB_MAKE
# (how to run libunwind-cookie's Makefile; default make -C
# tools/lib/unwind-cookie).  Needs qtbase5-dev, libdw-dev, libelf-dev,
# libzstd-dev, cmake, g++ (make hotspot installs them).
set -eo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:?usage: build-perfparser.sh BUILD}
mkdir -p "$build/hotspot"
build=$(cd "$build" && pwd)
out=$build/hotspot
apt_dir=$build/apt-bookworm-src
say() { echo "build-perfparser: $*" >&2; }

VERSION=1.3.0-2
ORIG=hotspot_1.3.0.orig.tar.xz
ORIG_SHA256=1696d29a3dfad4d145e3c2257bb42e1b957446c24456d7f5cdb27a608a466ee9
PATCHES=$top/patches/perfparser-1.3.0

# shellcheck source=../sid-deb.sh
. "$top/tests/sid-deb.sh"

fetch_orig() {
	local mirror uri

	if [ -f "$apt_dir/$ORIG" ] && [ "$(sid_sha "$apt_dir/$ORIG")" = "$ORIG_SHA256" ]; then
		return 0
	fi
	mirror=$(sid_mirror)
	apt_private "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main"
	say "apt-get update of bookworm's sources ($mirror) into $apt_dir"
	apt_private_get -q update > "$apt_dir/update.log" 2>&1 ||
		{ say "apt-get update failed (see $apt_dir/update.log)"; return 1; }
	# the orig tarball only: the Debian packaging is not needed (and
	# hotspot_1.3.0-2.debian.tar.xz is not on every mirror)
	uri=$(apt_private_get -q source --print-uris "hotspot=$VERSION" 2> "$apt_dir/source.log" |
		sed -n "s/^'\\([^']*\\/$ORIG\\)' .*/\\1/p")
	[ -n "$uri" ] || { say "bookworm has no hotspot=$VERSION source (see $apt_dir/source.log)"; return 1; }
	say "downloading $uri"
	/usr/bin/python3 - "$uri" "$apt_dir/$ORIG.part" <<-'EOF'
		import sys, urllib.request
		with urllib.request.urlopen(sys.argv[1], timeout=120) as r, open(sys.argv[2], 'wb') as f:
		    f.write(r.read())
	EOF
	if [ "$(sid_sha "$apt_dir/$ORIG.part")" != "$ORIG_SHA256" ]; then
		say "$ORIG has sha256 $(sid_sha "$apt_dir/$ORIG.part"), not $ORIG_SHA256: not used"
		rm -f "$apt_dir/$ORIG.part"
		return 1
	fi
	mv "$apt_dir/$ORIG.part" "$apt_dir/$ORIG"
}

# src/perfparser: the tarball's perfparser with the series applied, made
# again when a patch changed
prepare_sources() {
	local stamp=$out/src/series.sha256 want

	want=$( (echo "$ORIG_SHA256"; cat "$PATCHES"/*.patch) | sha256sum | cut -d' ' -f1)
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && return 0
	rm -rf "$out/src"
	mkdir -p "$out/src"
	tar -xJf "$apt_dir/$ORIG" -C "$out/src" hotspot-1.3.0/3rdparty/perfparser
	mv "$out/src/hotspot-1.3.0/3rdparty/perfparser" "$out/src/perfparser"
	rm -rf "$out/src/hotspot-1.3.0"
	local p
	for p in "$PATCHES"/*.patch; do
		# git apply as a patch program (binary test data): build/ lies
		# in our checkout, whose repository git would otherwise find and
		# apply nothing outside its current directory
		GIT_CEILING_DIRECTORIES=$out/src git -C "$out/src/perfparser" apply \
			--whitespace=nowarn "$p" || { say "$(basename "$p") does not apply"; return 1; }
	done
	[ -f "$out/src/perfparser/app/perfdeferredcallchains.cpp" ] ||
		{ say "the series left no app/perfdeferredcallchains.cpp"; return 1; }
	echo "$want" > "$stamp"
}

fetch_orig
prepare_sources

# libunwind-cookie as a distribution installs it, found through its .pc
${LIB_MAKE:-make -C "$top/tools/lib/unwind-cookie"} -s install PREFIX="$out/prefix" > /dev/null
export PKG_CONFIG_PATH=$out/prefix/lib/pkgconfig
pkg-config --exists libunwind-cookie || { say "no libunwind-cookie.pc in $PKG_CONFIG_PATH"; exit 1; }

cmake -S "$here" -B "$out/obj" -DPERFPARSER_SOURCE_DIR="$out/src/perfparser" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_BUILD_RPATH="$out/prefix/lib" > "$out/cmake.log" 2>&1 ||
	{ tail -20 "$out/cmake.log" >&2; exit 1; }
make -s -C "$out/obj" -j"$(nproc)" > "$out/make.log" 2>&1 || { grep -E 'error|Error' "$out/make.log" | head -20 >&2; exit 1; }

# Debian's parser beside a perf2text of its own (perf2text runs the
# "perfparser" next to it)
mkdir -p "$out/debian"
cp "$out/obj/perf2text" "$out/debian/perf2text"
ln -sf /usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser "$out/debian/perfparser"
say "built $out/obj/hotspot-perfparser ($(ls "$PATCHES" | wc -l) patches)"
