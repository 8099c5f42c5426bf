#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Keep the three descriptions of the ABI in step:
#   - the functions the public headers declare LIBUNWIND_COOKIE_API,
#   - the global section of the version script,
#   - the dynamic symbols the shared library really exports.
# A function missing from the map would be silently hidden by "local: *",
# and one exported but not in the map would escape the versioning.
#
# Usage: check-symbols.sh LIB.so LIB.map HEADER...

set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 LIB.so LIB.map HEADER..." >&2
	exit 2
fi

so=$1
map=$2
shift 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declarations: drop preprocessor lines (the macro's own #define), cut the
# text at ';' and '{', keep what follows the marker up to the parameter list
# and take its last word: the function name, minus a pointer star.
sed -e '/^[[:space:]]*#/d' "$@" | tr '\n' ' ' | tr ';{' '\n\n' |
	sed -n -e 's/.*LIBUNWIND_COOKIE_API[[:space:]]*//p' |
	sed -e 's/(.*//' | awk 'NF { print $NF }' | sed -e 's/^\**//' |
	sort -u >"$tmp/headers"

# The map: names in global: up to local: or the end of the version node.
awk '/global:/ { g = 1; next } /local:/ || /^}/ { g = 0 } g' "$map" |
	tr -d ' \t;' | sed -e '/^$/d' | sort -u >"$tmp/map"

# Defined dynamic symbols, version suffix stripped; the version node itself
# shows up as an absolute symbol and is not an API.
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sed -e 's/@.*//' |
	sort -u >"$tmp/exported"

rc=0
report() {
	local what=$1 file=$2

	if [ -s "$file" ]; then
		echo "check-symbols: $what:" >&2
		sed -e 's/^/	/' "$file" >&2
		rc=1
	fi
}

comm -23 "$tmp/headers" "$tmp/map" >"$tmp/a"
report "declared in the headers but missing from $(basename "$map")" "$tmp/a"
comm -13 "$tmp/headers" "$tmp/map" >"$tmp/b"
report "in $(basename "$map") but declared in no public header" "$tmp/b"
comm -23 "$tmp/map" "$tmp/exported" >"$tmp/c"
report "in $(basename "$map") but not exported by $(basename "$so")" "$tmp/c"
comm -13 "$tmp/map" "$tmp/exported" >"$tmp/d"
report "exported by $(basename "$so") but not in $(basename "$map")" "$tmp/d"

if [ $rc -eq 0 ]; then
	echo "check-symbols: $(wc -l <"$tmp/exported") symbols:" \
		"headers, map and $(basename "$so") agree"
fi
exit $rc
