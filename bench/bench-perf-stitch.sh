#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch against its peers, on the same deferred recording at two
# sizes ten times apart:
#
#   convert   perf stitch -i D -o S        vs  perf inject -i D -o I
#   folded    perf stitch -F folded -i D   vs  perf script -i D > /dev/null
#
# Both sides are the patched build/perf, run one after the other on a warm
# page cache, best of RUNS.  Reported: wall time and peak RSS of each side
# and their ratios; the stitch side's RSS must not grow with the file.
#
# The recordings are real: /usr/bin/perf record -g of the emulate workload
# (tests/perf/emulate-workload.c) for SMALL_MS and 10 x SMALL_MS, turned into
# deferred files by perf stitch --emulate (this kernel cannot record them).
#
# usage: bench/bench-perf-stitch.sh      (after make -f Makefile.perf-patch)
#   PERF=...      patched perf (default: build/perf)
#   SYS_PERF=...  perf that records (default: /usr/bin/perf)
#   SMALL_MS=...  length of the small recording (default 1500)
#   RUNS=...      runs per measurement, best kept (default 3)
#   KEEP=1        keep the temporary directory
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
PERF=${PERF:-$top/build/perf}
SYS_PERF=${SYS_PERF:-/usr/bin/perf}
SMALL_MS=${SMALL_MS:-1500}
RUNS=${RUNS:-3}
CC=${CC:-gcc}

die() { echo "bench-perf-stitch: $*" >&2; exit 1; }

[ -x "$PERF" ] || die "$PERF not built (make -f Makefile.perf-patch)"
[ -x "$SYS_PERF" ] || SYS_PERF=$PERF
[ -x /usr/bin/time ] || die "/usr/bin/time missing (Debian package time)"

tmp=$(mktemp -d /tmp/bench-perf-stitch.XXXXXX)
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; else echo "# keeping $tmp"; fi
cd "$tmp" || exit 1

$CC -O1 -g -fno-omit-frame-pointer -pthread -o workload \
	"$top/tests/perf/emulate-workload.c" || die "cannot build the workload"

# record NAME MS: NAME.data, deferred format
record() {
	"$SYS_PERF" record -q -g --sample-cpu --switch-events -e cpu-clock \
		-e raw_syscalls:sys_exit -o "$1.fp.data" -- ./workload "$2" \
		> /dev/null 2>&1 || die "perf record ($1) failed"
	"$PERF" stitch -q --emulate -i "$1.fp.data" -o "$1.data" \
		|| die "perf stitch --emulate ($1) failed"
	rm -f "$1.fp.data"
}

# measure CMD...: best wall seconds and the peak RSS (KiB) of that run
measure() {
	local best_t="" best_m="" t m i
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f "%e %M" -o time.out "$@" > /dev/null 2> cmd.err ||
			{ cat cmd.err >&2; die "failed: $*"; }
		read -r t m < time.out
		if [ -z "$best_t" ] || awk "BEGIN { exit !($t < $best_t) }"; then
			best_t=$t
			best_m=$m
		fi
	done
	echo "$best_t $best_m"
}

ratio() { awk "BEGIN { printf \"%.2f\", ($2 > 0 ? $1 / $2 : 0) }"; }

record small "$SMALL_MS"
record large $((SMALL_MS * 10))

printf '%-6s %9s %8s | %-22s %7s %9s | %-22s %7s %9s | %6s %6s\n' \
	size MiB samples "stitch side" s "RSS MiB" "peer" s "RSS MiB" "time" "RSS"
for size in small large; do
	f=$size.data
	mib=$(awk "BEGIN { printf \"%.1f\", $(stat -c %s "$f") / 1048576 }")
	n=$("$PERF" report --stats -i "$f" 2> /dev/null |
		sed -nE 's/^ *SAMPLE events: *([0-9]+).*/\1/p' | head -1)

	read -r st sm < <(measure "$PERF" stitch -q -f -i "$f" -o "$size.stitched.data")
	read -r pt pm < <(measure "$PERF" inject -f -i "$f" -o "$size.injected.data")
	printf '%-6s %9s %8s | %-22s %7s %9s | %-22s %7s %9s | %6s %6s\n' \
		"$size" "$mib" "$n" "perf stitch -o" "$st" $((sm / 1024)) \
		"perf inject -o" "$pt" $((pm / 1024)) "$(ratio "$st" "$pt")x" \
		"$(ratio "$sm" "$pm")x"

	read -r st sm < <(measure "$PERF" stitch -F folded -i "$f" -o "$size.folded")
	read -r pt pm < <(measure "$PERF" script -i "$f")
	printf '%-6s %9s %8s | %-22s %7s %9s | %-22s %7s %9s | %6s %6s\n' \
		"$size" "$mib" "$n" "perf stitch -F folded" "$st" $((sm / 1024)) \
		"perf script" "$pt" $((pm / 1024)) "$(ratio "$st" "$pt")x" \
		"$(ratio "$sm" "$pm")x"
	rm -f "$size.stitched.data" "$size.injected.data" "$size.folded"
done
echo "ratios: stitch side / peer (below 1: the stitch side is faster or smaller)"
