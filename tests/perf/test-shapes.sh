#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory bounded by what waits, for every shape of blocking: small
# generated recordings (bench/gen-scale.py: 4 CPUs, a worker per CPU
# sampled at 1000 Hz, a server's threads blocking as servers do), each
# shape at two lengths, as written, as perf record -z writes it
# (bench/zcopy.py) and as perf record --threads writes it, plain and -z
# (bench/dircopy.py: a directory, a file per CPU):
#
#   short    no long block (the reference)
#   never    one thread blocks past the end: its record never comes
#   end      one thread wakes at the end: its record is the last
#   random   16 threads wake at random times
#   many     64 threads each block most of the recording
#   remap    one thread wakes at the end, its process maps code every
#            50 ms: a plugin, or every 4th time its own binary again in
#            place, under the stacks of its threads; the stacks resolve
#            against the maps of their record's time, as when read from a
#            pipe (bench/pipecopy.py), where every sample waits for its
#            record and no index is made
#
# Each shape is held to the order-free oracle in every reading mode
# (helpers/oracle-check.sh, on the 4 s file: the 8 s one has the same
# shape and would double make check's time), and perf script -v's peak of samples held
# must not grow with the block: at twice the length, at most the shorter
# file's peak and a tenth more, plus what waits before the index is made
# (the index is made once 1 MiB waits: deferred-callchain.c).
#
# usage: tests/perf/test-shapes.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, KEEP.  Output and exit status:
#   see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
GEN="/usr/bin/python3 $top/bench/gen-scale.py"
ZCOPY="/usr/bin/python3 $top/bench/zcopy.py"
DIRCOPY="/usr/bin/python3 $top/bench/dircopy.py"

# gen SHAPE SECONDS: SHAPE-SECONDS.data, its -z copy SHAPE-SECONDSz.data and
# its --threads copies SHAPE-SECONDSdir.data and SHAPE-SECONDSdirz.data
gen() {
	local f=$1-$2.data

	case $1 in
	short) $GEN "$f" --cpus 4 --seconds "$2" --blockers 64 --block-max 0.2 --long 0 ;;
	never) $GEN "$f" --cpus 4 --seconds "$2" --blockers 64 --block-max $(($2 + 5)) ;;
	remap) $GEN "$f" --cpus 4 --seconds "$2" --blockers 64 --block-max 0.2 --shape end \
		--remap-ms 50 --remap-in-place ;;
	*) $GEN "$f" --cpus 4 --seconds "$2" --blockers 64 --block-max 0.2 --shape "$1" ;;
	esac > "$f.gen" || abort "gen-scale.py $1 $2 failed: $(cat "$f.gen")"
	$ZCOPY "$f" "$1-$2z.data" > /dev/null || abort "zcopy.py $f failed"
	$DIRCOPY "$f" "$1-$2dir.data" > /dev/null || abort "dircopy.py $f failed"
	$DIRCOPY -z "$f" "$1-$2dirz.data" > /dev/null || abort "dircopy.py -z $f failed"
}

# name VARIANT: how the checks name a variant
name() {
	case $1 in
	z) echo " -z" ;;
	dir) echo " --threads" ;;
	dirz) echo " --threads -z" ;;
	esac
}

# peak FILE: perf script -v's peak of samples held reading FILE
peak() {
	"$PERF" script -v -i "$1" 2>&1 > /dev/null |
		sed -nE 's/.*deferred callchains: peak ([0-9]+) samples, .*/\1/p' | head -1
}

# stacks FILE: perf script's samples, each frame with its dso, of a file
# (a directory) or of a pipe (-: from remap-4.pipe)
stacks() {
	if [ "$1" = - ]; then
		"$PERF" script -F tid,time,ip,sym,dso -i - < remap-4.pipe 2> /dev/null
	else
		"$PERF" script -F tid,time,ip,sym,dso -i "$1" 2> /dev/null
	fi
}

for shape in short never end random many remap; do
	for secs in 4 8; do
		gen "$shape" "$secs"
	done
	# the four variants' oracle checks side by side (each is one
	# process at a time, and make check runs on 2 CPUs), relayed in order
	pids=()
	for v in "" z dir dirz; do
		bash "$here/helpers/oracle-check.sh" "$shape-4$v.data" "$shape$(name "$v")" \
			> "oracle$v.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for v in "" z dir dirz; do
		n=$shape$(name "$v")
		relay_results "oracle$v.out"
		p4=$(peak "$shape-4$v.data")
		p8=$(peak "$shape-8$v.data")
		echo "     $n: peak samples held: $p4 (4 s), $p8 (8 s)"
		# 1 MiB held before the index is made: 4,000 samples at most here
		check "$n: the peak held does not grow with the block ($p4 at 4 s, $p8 at 8 s)" \
			test "${p8:-999999999}" -le $(( ${p4:-0} * 11 / 10 + 4000 ))
		[ "$shape" = remap ] || continue
		# the mappings up to each record, read back through the index
		[ -f remap-4.pipe.txt ] || {
			/usr/bin/python3 "$top/bench/pipecopy.py" remap-4.data remap-4.pipe > /dev/null &&
			stacks - > remap-4.pipe.txt
		} || abort "pipecopy.py remap-4.data failed"
		stacks "remap-4$v.data" > "remap-4$v.txt"
		check "$n: each stack resolves against its record's maps, as read from a pipe" \
			cmp -s "remap-4$v.txt" remap-4.pipe.txt
	done
done

finish
