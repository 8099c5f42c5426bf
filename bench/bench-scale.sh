#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-scale: ours (build/perf) beside pristine perf 7.2
# (build/perf-upstream) on generated system-wide recordings of a many-CPU
# machine (bench/gen-scale.py: 64 CPUs, a worker per CPU sampled at
# 1000 Hz, a server's threads blocking from 1 ms up to the longest block),
# three series (SERIES: which to run):
#
#   size    the longest block half the recording, files of SIZES GiB
#   block   the middle size, the longest block from 1 s to the whole
#           recording (BLOCKS: fractions of its length, or seconds with s)
#   shape   files of SHAPE_GIB, each shape of blocking of gen-scale.py
#           (blocks up to 1 s, and: short none longer; never one past the
#           end; end one until the end; random 16 waking at random times;
#           many 64 blocking most of the recording), each as written, as
#           perf record -z writes it (zcopy.py), as perf record --threads
#           writes it, plain and -z (dircopy.py); and ours' peak of
#           samples held (perf script -v, a run of its own)
#
# perf script and perf report --stdio of each perf on each file, in turn
# (ours, pristine, ours, ...), their output to /dev/null: cpu (user + sys)
# (with the helpers perf starts, bench/cputime.py), peak RSS and peak
# anonymous RSS, the medians of RUNS runs.  Writes
# OUT/results.tsv, OUT/table.md and OUT/shapes.md (the README's tables)
# and the plots (bench/plot-scale.py, matplotlib) OUT/bench-scale.png and
# OUT/bench-scale-shapes.png, copied to Documentation/images/ with
# COPY_PLOT=1.
#
# usage: bench/bench-scale.sh
#   OUT      build/bench-scale (the generated files are kept there, by
#            their parameters, and made again only when missing)
#   SIZES    "0.25 1 3" (GiB)     BLOCKS  "1s 0.25 0.5 0.98"
#   CPUS     64                   RUNS    1
#   SERIES   "size block shape"   SHAPE_GIB 0.1
#   SHAPES   "short never end random many"   VARIANTS ". z dir dirz"
#   PERF, PERF_UPSTREAM           build/perf, build/perf-upstream
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
OUT=${OUT:-$top/build/bench-scale}
SIZES=${SIZES:-0.25 1 3}
BLOCKS=${BLOCKS:-1s 0.25 0.5 0.98}
CPUS=${CPUS:-64}
RUNS=${RUNS:-1}
SERIES=${SERIES:-size block shape}
SHAPE_GIB=${SHAPE_GIB:-0.1}
SHAPES=${SHAPES:-short never end random many}
VARIANTS=${VARIANTS:-. z dir dirz}
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

# gen_shape FILE SECONDS SHAPE VARIANT: a shape's file, made once; the
# variants are copies of the plain one (. for it)
gen_shape() {
	local plain=$OUT/shape-$CPUS-$2s-$3.data

	[ -e "$1" ] && return 0
	if [ ! -f "$plain" ]; then
		say "generating $(basename "$plain") ($2 s of $CPUS CPUs, shape $3)"
		case $3 in
		short) "$PY" "$here/gen-scale.py" "$plain" --cpus "$CPUS" --seconds "$2" \
			--block-max 1 --long 0 ;;
		never) "$PY" "$here/gen-scale.py" "$plain" --cpus "$CPUS" --seconds "$2" \
			--block-max "$(awk -v s="$2" 'BEGIN { print s + 5 }')" ;;
		*) "$PY" "$here/gen-scale.py" "$plain" --cpus "$CPUS" --seconds "$2" \
			--block-max 1 --shape "$3" ;;
		esac || exit 1
	fi
	case $4 in
	z) "$PY" "$here/zcopy.py" "$plain" "$1" ;;
	dir) "$PY" "$here/dircopy.py" "$plain" "$1" ;;
	dirz) "$PY" "$here/dircopy.py" -z "$plain" "$1" ;;
	esac > /dev/null || exit 1
}

# measure SERIES X FILE: one row per perf and command
measure() {
	local series=$1 x=$2 f=$3 cmd perf name r cpu rss anon u s
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
				read -r u s rss anon < <(tail -1 "$OUT/time.txt")
				cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$series" "$x" \
					"$(du -sb "$f" | cut -f1)" "$name" "$cmd" "$cpu" "$rss" \
					"$(grep -o 'deferred callchains:.*' "$OUT/$name.$cmd.err" | head -1)" \
					"$anon" >> "$OUT/runs.tsv"
				say "$series $x: $name perf $cmd: $cpu s, $rss KiB, anon $anon KiB"
			done
		done
	done
}

: > "$OUT/runs.tsv"
: > "$OUT/held.tsv"
want() { case " $SERIES " in *" $1 "*) return 0 ;; esac; return 1; }
# the size series: the longest block half the recording
want size && for g in $SIZES; do
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
want block && for bl in $BLOCKS; do
	b=$(block_for "$bl" "$s")
	f=$OUT/scale-$CPUS-${s}s-block${b}.data
	gen "$f" "$s" "$b"
	measure block "$b" "$f"
done
# the shape series
s=$(seconds_for "$SHAPE_GIB")
want shape && for shape in $SHAPES; do
	for v in $VARIANTS; do
		v=${v#.}
		f=$OUT/shape-$CPUS-${s}s-$shape${v:+-$v}.data
		gen_shape "$f" "$s" "$shape" "$v"
		measure shape "$shape${v:+-$v}" "$f"
		held=$("$PERF" script -v -i "$f" 2>&1 > /dev/null |
			sed -nE 's/.*deferred callchains: peak ([0-9]+) samples, .*/\1/p' | head -1)
		printf 'shape\t%s\t%s\n' "$shape${v:+-$v}" "${held:-?}" >> "$OUT/held.tsv"
		say "shape $shape${v:+-$v}: ours' peak held $held samples"
	done
done

"$PY" "$here/plot-scale.py" "$OUT/runs.tsv" "$OUT" || exit 1
if [ "${COPY_PLOT:-0}" = 1 ]; then
	for p in bench-scale bench-scale-shapes; do
		[ -f "$OUT/$p.png" ] && cp "$OUT/$p.png" "$top/Documentation/images/$p.png"
	done
fi
cat "$OUT"/table.md "$OUT"/shapes.md 2> /dev/null
