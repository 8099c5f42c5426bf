#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Instructions per engine step at each pending size, from callgrind: the
# difference between a run of 2N and one of N steps, divided by N, so the
# set-up cost cancels. Unlike wall-clock time this does not move with the
# machine's load or cache sizes: it shows whether the algorithm stays flat.
#
#   instructions.sh path/to/bench-stitcher [N]
set -euo pipefail
bin=$1
n=${2:-100000}
if ! command -v valgrind >/dev/null; then
	echo "instructions: valgrind not installed, skipped" >&2
	exit 0
fi
count() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
		awk '/Collected/ { print $NF }'
}
first=
for pending in 10 1000 100000; do
	a=$(count "$n" "$pending")
	b=$(count $((2 * n)) "$pending")
	per=$(( (b - a) / n ))
	[ -n "$first" ] || first=$per
	awk -v p="$pending" -v n="$per" -v f="$first" 'BEGIN {
		printf "pending %7d  %6d instructions/record", p, n
		printf "  (%.2fx the 10-pending cost)\n", n / f }'
done
