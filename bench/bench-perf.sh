#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch against its peers, on the same deferred recording at two
# sizes ten times apart:
#
#   convert   perf stitch -i D -o S        vs  perf inject -i D -o I
#   folded    perf stitch -F folded -i D   vs  perf script -i D > /dev/null
#   script    perf script -i D             vs  perf script -i FP   (cpu, RSS)
#   report    perf report --stdio -i D     vs  perf report --stdio -i FP
#
# where FP is the frame-pointer recording D was emulated from.
# Both sides are the patched build/perf, run one after the other on a warm
# page cache, best of RUNS.  Reported: wall time and peak RSS of each side
# and their ratios; the stitch side's RSS must not grow with the file.
#
# The recordings are real: /usr/bin/perf record -g of the emulate workload
# (tests/perf/helpers/emulate-workload.c) for SMALL_MS and 10 x SMALL_MS, turned into
# deferred files by perf stitch --emulate (this kernel cannot record them).
#
# usage: bench/bench-perf-stitch.sh      (after make -f Makefile.perf-patch)
#   PERF=...      patched perf (default: build/perf)
#   SYS_PERF=...  perf that records (default: /usr/bin/perf)
#   SMALL_MS=...  length of the small recording (default 1500)
#   RUNS=...      runs per measurement, best kept (default 3)
#   RUNS5=...     interleaved runs for the deferred/fp medians (default 5)
#   KEEP=1        keep the temporary directory
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
PERF=${PERF:-$top/build/perf}
SYS_PERF=${SYS_PERF:-/usr/bin/perf}
SMALL_MS=${SMALL_MS:-1500}
RUNS=${RUNS:-3}
RUNS5=${RUNS5:-5}
CC=${CC:-gcc}

die() { echo "bench-perf-stitch: $*" >&2; exit 1; }

[ -x "$PERF" ] || die "$PERF not built (make -f Makefile.perf-patch)"
[ -x "$SYS_PERF" ] || SYS_PERF=$PERF
[ -x /usr/bin/time ] || die "/usr/bin/time missing (Debian package time)"

tmp=$(mktemp -d /tmp/bench-perf-stitch.XXXXXX)
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; else echo "# keeping $tmp"; fi
cd "$tmp" || exit 1

$CC -O1 -g -fno-omit-frame-pointer -pthread -o workload \
	"$top/tests/perf/helpers/emulate-workload.c" || die "cannot build the workload"

# record NAME MS: NAME.data, deferred format, made from NAME.fp.data
record() {
	"$SYS_PERF" record -q -g --sample-cpu --switch-events -e cpu-clock \
		-e raw_syscalls:sys_exit -o "$1.fp.data" -- ./workload "$2" \
		> /dev/null 2>&1 || die "perf record ($1) failed"
	"$PERF" stitch -q --emulate -i "$1.fp.data" -o "$1.data" \
		|| die "perf stitch --emulate ($1) failed"
}

# measure CMD...: best wall seconds of RUNS and the peak RSS (KiB) of that
# run, from /usr/bin/time
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

# peak_anon CMD...: the peak anonymous RSS (KiB) of one more run, sampled
# from /proc every 10 ms.  Peak RSS counts the pages of the input file,
# which perf's reader maps whole on 64-bit hosts (MMAP_SIZE in session.c),
# so it grows with the file whatever the tool does; the anonymous part is
# the tool's own.
peak_anon() {
	local pid peak=0 a
	"$@" > /dev/null 2> cmd.err &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		a=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2> /dev/null)
		[ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
		sleep 0.01
	done
	wait "$pid" || { cat cmd.err >&2; die "failed: $*"; }
	echo "$peak"
}

ratio() { awk "BEGIN { printf \"%.2f\", ($2 > 0 ? $1 / $2 : 0) }"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# side_by_side LABEL -- CMD_ON_DEFERRED... -- CMD_ON_FP...: RUNS5 runs of
# each, interleaved (deferred, fp, deferred, ...) so that the machine's
# drift hits both alike; medians of cpu seconds (user + sys) and peak RSS,
# and one more run of each for the peak anonymous RSS
side_by_side() {
	local label=$1 i dc dm da fc fm fa
	local -a dcmd=() fcmd=()
	shift 2
	while [ "$1" != "--" ]; do dcmd+=("$1"); shift; done
	shift
	fcmd=("$@")
	: > d.runs; : > f.runs
	for ((i = 0; i < RUNS5; i++)); do
		/usr/bin/time -f "%U %S %M" -o time.out "${dcmd[@]}" > /dev/null 2> cmd.err ||
			{ cat cmd.err >&2; die "failed: ${dcmd[*]}"; }
		awk '{ print $1 + $2, $3 }' time.out >> d.runs
		/usr/bin/time -f "%U %S %M" -o time.out "${fcmd[@]}" > /dev/null 2> cmd.err ||
			{ cat cmd.err >&2; die "failed: ${fcmd[*]}"; }
		awk '{ print $1 + $2, $3 }' time.out >> f.runs
	done
	dc=$(cut -d' ' -f1 d.runs | median); dm=$(cut -d' ' -f2 d.runs | median)
	fc=$(cut -d' ' -f1 f.runs | median); fm=$(cut -d' ' -f2 f.runs | median)
	da=$(peak_anon "${dcmd[@]}")
	fa=$(peak_anon "${fcmd[@]}")
	printf '%-5s %-21s | deferred %6s s %5s %5s | fp %6s s %5s %5s | %5sx %5sx %5sx\n' \
		"$size" "$label" "$dc" "$(mib "$dm")" "$(mib "$da")" "$fc" "$(mib "$fm")" \
		"$(mib "$fa")" "$(ratio "$dc" "$fc")" "$(ratio "$dm" "$fm")" "$(ratio "$da" "$fa")"
}
mib() { awk "BEGIN { printf \"%.0f\", $1 / 1024 }"; }

# compare SIZE LABEL PEER_LABEL -- STITCH_CMD... -- PEER_CMD...
compare() {
	local size=$1 label=$2 peer=$3 st sm sa pt pm pa
	local -a scmd=() pcmd=()
	shift 4
	while [ "$1" != "--" ]; do scmd+=("$1"); shift; done
	shift
	pcmd=("$@")
	read -r st sm < <(measure "${scmd[@]}")
	read -r pt pm < <(measure "${pcmd[@]}")
	sa=$(peak_anon "${scmd[@]}")
	pa=$(peak_anon "${pcmd[@]}")
	printf '%-5s %7s %7s | %-21s %6s %5s %5s | %-14s %6s %5s %5s | %5sx %5sx\n' \
		"$size" "$mib_file" "$nsamples" "$label" "$st" "$(mib "$sm")" "$(mib "$sa")" \
		"$peer" "$pt" "$(mib "$pm")" "$(mib "$pa")" "$(ratio "$st" "$pt")" \
		"$(ratio "$sm" "$pm")"
}

record small "$SMALL_MS"
record large $((SMALL_MS * 10))

printf '%-5s %7s %7s | %-21s %6s %5s %5s | %-14s %6s %5s %5s | %6s %6s\n' \
	size "MiB" samples "stitch side" s RSS anon peer s RSS anon time RSS
for size in small large; do
	f=$size.data
	mib_file=$(awk "BEGIN { printf \"%.1f\", $(stat -c %s "$f") / 1048576 }")
	nsamples=$("$PERF" report --stats -i "$f" 2> /dev/null |
		sed -nE 's/^ *SAMPLE events: *([0-9]+).*/\1/p' | head -1)
	compare "$size" "perf stitch -o" "perf inject -o" -- \
		"$PERF" stitch -q -f -i "$f" -o "$size.stitched.data" -- \
		"$PERF" inject -f -i "$f" -o "$size.injected.data"
	compare "$size" "perf stitch -F folded" "perf script" -- \
		"$PERF" stitch -q -f -F folded -i "$f" -o "$size.folded" -- \
		"$PERF" script -i "$f"
	rm -f "$size.stitched.data" "$size.injected.data" "$size.folded"
done
echo "s: best of $RUNS wall seconds; RSS: peak RSS (MiB) of that run; anon: peak"
echo "anonymous RSS (MiB, sampled every 10 ms); ratios: stitch side / peer"
echo

# The cost of stitching where users meet it: perf script and perf report on
# the deferred file against the same binary on the frame-pointer recording
# the file was made from (same samples, user stacks in place).
printf '%-5s %-21s | %-29s | %-23s | %6s %6s %6s\n' size command \
	"deferred: cpu s, RSS, anon" "fp: cpu s, RSS, anon" cpu RSS anon
for size in small large; do
	side_by_side "perf script" -- "$PERF" script -i "$size.data" -- \
		"$PERF" script -i "$size.fp.data"
	side_by_side "perf report --stdio" -- "$PERF" report --stdio -i "$size.data" -- \
		"$PERF" report --stdio -i "$size.fp.data"
done
echo "cpu: median of $RUNS5 interleaved runs, user + sys seconds; RSS: median peak RSS"
echo "(MiB, it counts the mapped input file); anon: peak anonymous RSS (MiB) of one"
echo "more run; ratios: deferred / fp (goals: cpu <= 1.05x, RSS <= 1.2x)"
