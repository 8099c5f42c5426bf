#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# buildid-cache.sh CACHE ELF...: put each ELF file into the perf build-id
# cache CACHE as CACHE/.build-id/xx/<rest of the build id>, a copy of the
# file.  perf looks there first for a DSO whose build id a recording holds
# (PERF_BUILDID_DIR=CACHE; dso__build_id_filename() takes a regular file at
# that name as the binary itself), whatever the path the recording names,
# so a recording is read the same on any machine and in any clone.
# `perf buildid-cache -a` would instead link to a copy under the path the
# file was added from, which names the checkout.  An ELF file without a
# build id is an error.
set -eu
[ $# -ge 2 ] || { echo "usage: buildid-cache.sh CACHE ELF..." >&2; exit 2; }
cache=$1
shift
for f in "$@"; do
	id=$(LC_ALL=C readelf -n "$f" 2> /dev/null | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p' | head -n 1)
	[ ${#id} -ge 4 ] || { echo "buildid-cache.sh: $f: no build id" >&2; exit 1; }
	dir=$cache/.build-id/$(printf %.2s "$id")
	mkdir -p "$dir"
	cp "$f" "$dir/${id#??}"
	echo "$id ${f##*/}"
done
