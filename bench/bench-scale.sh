#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-scale: ours (build/perf) beside pristine perf 7.2
# (build/perf-upstream) on generated system-wide recordings of a many-CPU
# machine (bench/gen-scale.py: 64 CPUs, a worker per CPU sampled at
# 1000 Hz, a server's threads blocking from 1 ms up to the longest block),
# two series:
#
#   size    the longest block half the recording, files of SIZES GiB
#   block   the middle size, the longest block from 1 s to the whole
#           recording (BLOCKS: fractions of its length, or seconds with s)
#
# perf script and perf report --stdio of each perf on each file, in turn
# (ours, pristine, ours, ...), their output to /dev/null: cpu (user + sys)
# (with the helpers perf starts, bench/cputime.py) and peak RSS, the
# medians of RUNS runs.  Writes
# OUT/results.tsv, OUT/table.md (the README's table) and the plot
# (bench/plot-scale.py, matplotlib) OUT/bench-scale.png, copied to
# Documentation/images/ with COPY_PLOT=1.
#
# usage: bench/bench-scale.sh
#   OUT      build/bench-scale (the generated files are kept there, by
#            their parameters, and made again only when missing)
#   SIZES    "0.25 1 3" (GiB)     BLOCKS  "1s 0.25 0.5 0.98"
#   CPUS     64                   RUNS    1
#   PERF, PERF_UPSTREAM           build/perf, build/perf-upstream
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
OUT=${OUT:-$top/build/bench-scale}
SIZES=${SIZES:-0.25 1 3}
BLOCKS=${BLOCKS:-1s 0.25 0.5 0.98}
CPUS=${CPUS:-64}
RUNS=${RUNS:-1}
PERF=${PERF:-$top/build/perf}
PERF_UPSTREAM=${PERF_UPSTREAM:-$top/build/perf-upstream}
PY=/usr/bin/python3
mkdir -p "$OUT"
for p in "$PERF" "$PERF_UPSTREAM"; do
	[ -x "$p" ] || { echo "bench-scale: no $p" >&2; exit 1; }
done

say() { echo "bench-scale: $*"; }

# seconds of recording for SIZE GiB, from a 1 s probe file
probe=$OUT/probe-$CPUS.data
[ -f "$probe" ] || "$PY" "$here/gen-scale.py" "$probe" --cpus "$CPUS" --seconds 1 \
	--block-max 0.5 > /dev/null || exit 1
bps=$(stat -c %s "$probe")
seconds_for() { awk -v g="$1" -v b="$bps" 'BEGIN { printf "%.1f", g * 1073741824 / b }'; }
# the longest block: a fraction of the recording, or seconds ("1s")
block_for() {
	case $1 in
	*s) echo "${1%s}" ;;
	*) awk -v f="$1" -v s="$2" 'BEGIN { printf "%.2f", f * s }' ;;
	esac
}

# gen FILE SECONDS BLOCK: the file, made once
gen() {
	[ -f "$1" ] && return 0
	say "generating $(basename "$1") ($2 s of $CPUS CPUs, longest block $3 s)"
	"$PY" "$here/gen-scale.py" "$1" --cpus "$CPUS" --seconds "$2" --block-max "$3" || exit 1
}

# measure SERIES X FILE: one row per perf and command
measure() {
	local series=$1 x=$2 f=$3 cmd perf name r cpu rss u s
	local -a cmdline

	for cmd in script report; do
		for ((r = 0; r < RUNS; r++)); do
			for name in ours pristine; do
				perf=$PERF
				[ $name = pristine ] && perf=$PERF_UPSTREAM
				if [ $cmd = script ]; then
					cmdline=("$perf" script -i "$f")
				else
					cmdline=("$perf" report --stdio -i "$f")
				fi
				"$here/cputime.py" -o "$OUT/time.txt" "${cmdline[@]}" \
					> /dev/null 2> "$OUT/$name.$cmd.err"
				read -r u s rss < <(tail -1 "$OUT/time.txt")
				cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$series" "$x" "$(stat -c %s "$f")" \
					"$name" "$cmd" "$cpu" "$rss" \
					"$(grep -o 'deferred callchains:.*' "$OUT/$name.$cmd.err" | head -1)" \
					>> "$OUT/runs.tsv"
				say "$series $x: $name perf $cmd: $cpu s, $rss KiB"
			done
		done
	done
}

: > "$OUT/runs.tsv"
# the size series: the longest block half the recording
for g in $SIZES; do
	s=$(seconds_for "$g")
	b=$(block_for 0.5 "$s")
	f=$OUT/scale-$CPUS-${s}s-block${b}.data
	gen "$f" "$s" "$b"
	measure size "$g" "$f"
done
# the block series, at the middle size
read -r -a sizes <<< "$SIZES"
mid=${sizes[1]:-${sizes[0]}}
s=$(seconds_for "$mid")
for bl in $BLOCKS; do
	b=$(block_for "$bl" "$s")
	f=$OUT/scale-$CPUS-${s}s-block${b}.data
	gen "$f" "$s" "$b"
	measure block "$b" "$f"
done

"$PY" "$here/plot-scale.py" "$OUT/runs.tsv" "$OUT" || exit 1
if [ "${COPY_PLOT:-0}" = 1 ]; then
	cp "$OUT/bench-scale.png" "$top/Documentation/images/bench-scale.png"
fi
cat "$OUT/table.md"
