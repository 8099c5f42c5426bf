#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad input everywhere a user gives some: every tool that reads a deferred
# recording, on damaged copies of real 7.2 recordings (tests/corpus/real-7.2:
# blocker-cs.data, the pipe stream blocker-pipe.data) and of a writer-made
# big-endian file (tests/perf/helpers/bad-inputs.py says what each is):
# empty, the header cut, a bad magic, the data offset past the end, the
# file cut inside and between records, a record of size 0, a run of
# garbage, a CALLCHAIN_DEFERRED record with a bad nr, a pipe stream cut
# inside a record header and inside a record (as a file and on standard
# input), the other byte order, whole and cut; and a run of garbage in
# the middle of a system-wide recording (sysw.data) while samples wait.
#
# The tools: perf script, perf report --stdio, perf stitch --stats, -o,
# -F folded, speedscope, pprof, and perf data convert --to-folded,
# --to-speedscope, --to-pprof.  The rules, by what the input is:
#
#   every input   no tool is killed by a signal
#   unreadable    every tool fails (non-zero status) naming the file; no
#   corrupt       output file; corrupt: the offset of the damage too
#   cut           perf script, report and stitch --stats read up to the
#                 cut, say where (offset, file), show what there is and
#                 then fail (non-zero status, as upstream perf's own test
#                 wants for a truncated file); a perf stitch
#                 mode that writes a file refuses to make anything of it
#                 ("cut short ... -f to go on"), no output; with -f it
#                 writes what there is, then fails as the readers do;
#                 every other command that reads samples (annotate,
#                 sched, timechart, kwork, lock, mem, c2c, diff, data
#                 convert, inject, trace -i, buildid-list) shows what
#                 there is, then fails the same way
#   skip          every tool skips the record, names its offset, counts it
#                 (status 0; the outputs written)
#   swapped       readers and exports read it (status 0); perf stitch -o
#                 refuses to copy it (the reason and the file), no output
#
# The outcome of every run is also written as a Markdown table,
# bad-input.md in the suite's directory, printed at the end: the table of
# Documentation/bad-input.md is one such run.
#
# usage: tests/perf/test-bad-input.sh    (after make perf)
#   Environment (tests/perf/lib.sh): PERF, PYTHON, CC, KEEP, VERBOSE
. "$(dirname "$0")/lib.sh"
suite_init
use_corpus_buildids
require_perf

corpus=$top/tests/corpus/real-7.2
"$CC" -g -O0 -fno-inline -no-pie -pthread -fno-omit-frame-pointer -o workload \
	"$top/tests/workloads/workload.c" || abort "cannot build the workload"
mkdir -p scen in
"$PY" "$here/helpers/scenarios.py" gen --workload ./workload --out scen cross_cpu > /dev/null ||
	abort "scenarios.py gen cross_cpu"
"$PY" "$here/helpers/bad-inputs.py" "$corpus/blocker-cs.data" "$corpus/blocker-pipe.data" \
	scen/cross_cpu.raw-be.data in > inputs.txt || abort "bad-inputs.py"

TOOLS=("script" "report --stdio" "stitch --stats" "stitch -o OUT" "stitch -F folded -o OUT"
	"stitch -F speedscope -o OUT" "stitch -F pprof -o OUT" "data convert --to-folded OUT"
	"data convert --to-speedscope OUT" "data convert --to-pprof OUT")
HEAD=("perf script" "perf report" "stitch --stats" "stitch -o" "-F folded" "-F speedscope"
	"-F pprof" "convert --to-folded" "--to-speedscope" "--to-pprof")

# run TOOL INPUT VIA: runs the tool on in/INPUT (VIA: file, or stdin for
# '-i -'); sets rc, err (its stderr file) and wrote (yes/no: OUT exists)
run() {
	local tool=${1//OUT/out.x} input=$2 via=$3

	rm -f out.x out.x.tmp-*
	if [ "$via" = stdin ]; then
		# shellcheck disable=SC2086
		"$PERF" $tool -i - < "in/$input" > run.out 2> run.err
	else
		# shellcheck disable=SC2086
		"$PERF" $tool -i "in/$input" > run.out 2> run.err
	fi
	rc=$?
	err=run.err
	wrote=no
	[ -e out.x ] && wrote=yes
}

# the name a tool gives the input: its path, or "-" on stdin ("the stream"
# where the reader says where a pipe stream was cut)
shown_name() { [ "$2" = stdin ] && echo "-" || echo "in/$1"; }

cell() {
	local c="$rc"

	[ "$wrote" = yes ] && c="$c, written"
	printf '%s' "$c"
}

printf '| input | what was done to it | class |' > bad-input.md
printf ' %s |' "${HEAD[@]}" >> bad-input.md
printf '\n|---|---|---|' >> bad-input.md
printf '%s' "${HEAD[@]/*/---|}" >> bad-input.md
echo >> bad-input.md

while IFS=$'\t' read -r input class what; do
	vias=file
	case $input in *.pipe) vias="file stdin" ;; esac
	for via in $vias; do
		label="$input"
		[ "$via" = stdin ] && label="$input on stdin"
		name=$(shown_name "$input" "$via")
		cut_name=$name
		[ "$via" = stdin ] && cut_name="the stream"
		row="| \`$label\` | $what | $class |"
		for tool in "${TOOLS[@]}"; do
			run "$tool" "$input" "$via"
			t="$label: perf ${tool//OUT/FILE}"
			reader=no
			case $tool in script | "report --stdio" | "stitch --stats") reader=yes ;; esac
			check "$t: not killed (status $rc)" \
				eval "! { [ $rc -gt 128 ] && [ $rc -le 192 ]; }"
			case $class in
			unreadable | corrupt)
				check "$t: fails" [ "$rc" -ne 0 ]
				check "$t: names the file" has "$err" "$name"
				[ $class = corrupt ] && check "$t: names the offset" has "$err" '0x[0-9a-f]+'
				;;
			cut)
				if [ $reader = yes ]; then
					# what there is, then an error status: upstream's own
					# test holds perf report to it for a truncated file
					# (big-endian-cut.data: the cut falls in its only sample)
					[ "$input" = big-endian-cut.data ] ||
						check "$t: shows what there is up to the cut" [ -s run.out ]
					check "$t: then fails (status $rc), saying so" \
						eval "[ $rc -ne 0 ] && grep -q 'the data is cut short (where: above): read as far as it goes\$' $err"
					# the record the end cuts, or, for a file, where its
					# data section was to end and where the file ends
					check "$t: says where, in which file" \
						has "$err" "^0x[0-9a-f]+( \[0x[0-9a-f]+\])?: the (data|stream) ends .*$cut_name cut short\? Skipping it$|^WARNING: $name is cut short: its data section \(0x[0-9a-f]+ bytes at 0x[0-9a-f]+\) runs past the end of the file \(0x[0-9a-f]+\)"
				elif [ "$tool" = "stitch -o OUT" ] && [ "$input" = big-endian-cut.data ]; then
					check "$t: refused" [ "$rc" -ne 0 ]
					check "$t: says why (the byte order, before the cut)" \
						has "$err" "^$name: written on a host of the other byte order"
				else
					check "$t: refused" [ "$rc" -ne 0 ]
					check "$t: says why, -f to go on" \
						has "$err" "^$name: the data is cut short \(where: above\), refused; -f"
				fi
				;;
			skip)
				check "$t: status 0" [ "$rc" -eq 0 ]
				check "$t: names the offset of the record skipped" \
					has "$err" '^0x[0-9a-f]+ \[0x[0-9a-f]+\]: malformed PERF_RECORD_CALLCHAIN_DEFERRED'
				check "$t: counts it" has "$err" '1 of [0-9]+ CALLCHAIN_DEFERRED records were malformed and skipped'
				;;
			swapped)
				if [ "$tool" = "stitch -o OUT" ]; then
					check "$t: refused" [ "$rc" -ne 0 ]
					check "$t: says why" has "$err" "^$name: written on a host of the other byte order"
				else
					check "$t: read (status 0)" [ "$rc" -eq 0 ]
				fi
				;;
			esac
			case $tool in
			*OUT*)
				if [ "$rc" -ne 0 ]; then
					no_output "$t" out.x
				else
					check "$t: output written" [ -s out.x ]
				fi ;;
			esac
			row="$row $(cell) |"
		done
		echo "$row" >> bad-input.md
		# cut: with -f, perf stitch writes what there is
		if [ $class = cut ]; then
			run "stitch -f -o OUT" "$input" "$via"
			if [ "$input" = big-endian-cut.data ]; then
				check "$label: perf stitch -f -o: still refused (the byte order)" [ "$rc" -ne 0 ]
			else
				check "$label: perf stitch -f -o: converts what there is, then fails as every reader" \
					eval "[ $rc -ne 0 ] && [ -s out.x ] && tail -n 1 $err | grep -q 'the data is cut short (where: above): read as far as it goes\$'"
			fi
		fi
	done
done < inputs.txt

# One exit-status contract for a file cut short, whichever command reads
# it: what it holds is shown, where the cut is is said, then perf exits
# non-zero ("FILE: the data is cut short (where: above): read as far as it
# goes").  A recording made here (sched_switch, the system calls and
# cpu-clock with data sources: something for every command), once as a
# file and once as a perf record --threads directory (perf c2c's warning
# "no sample cpu value" ends without a newline: the last line holds the
# message, not at its start), each command checked on it whole first
# (status 0: a command that fails on the whole file proves nothing on the
# cut one), then on two cuts:
#   dir      the biggest data file of the directory cut in its middle; the
#            header and the features are whole: every command shows what
#            there is
#   section  the file cut in the middle of its data section: the feature
#            sections that followed are lost with the rest, the
#            tracepoints' names and formats among them; every command
#            that needs none of them shows what there is, the others
#            (sched timehist: the names; c2c: the topology) refuse,
#            saying why; none is killed
record_live() {
	# shellcheck disable=SC2068
	"$PERF" record -q $@ -e sched:sched_switch -e 'raw_syscalls:*' -e cpu-clock --sample-mem-info -d -- \
		sh -c 'for i in $(seq 40); do sleep 0.005; done; ./workload' > /dev/null 2> record.err ||
		{ bad "perf record $*: $(tail -n 1 record.err)"; }
}
record_live -o in/live.data
record_live --threads -o in/live-dir.data
"$PY" -c 'import sys
sys.path.insert(0, sys.argv[3])
import perfdata as pd
pf = pd.PerfFile(sys.argv[1])
mid = pf.offsets[len(pf.offsets) // 2]
open(sys.argv[2], "wb").write(pf.buf[:mid + 20])' in/live.data in/live-section.data "$here/helpers"
cp -r in/live-dir.data in/live-dir-cut.data
# 20 bytes into its middle record: record sizes are multiples of 8, so
# never between two records, where no reader could tell the cut
biggest=$(ls -S in/live-dir-cut.data/data.* | head -n 1)
"$PY" -c 'import struct, sys
buf = open(sys.argv[1], "rb").read()
offs, off = [], 0
while off + 8 <= len(buf):
    offs.append(off)
    off += struct.unpack_from("<H", buf, off + 6)[0] or len(buf)
open(sys.argv[1], "wb").write(buf[:offs[len(offs) // 2] + 20])' "$biggest"
# name | command line (IN: the input, OUT: a file or directory it writes)
# | what it shows (stdout, stderr: perf trace and perf lock report print
# there, or OUT) | on the section cut: shows; nothing (perf trace: its
# system call events have lost their names, it has nothing to show, but
# reads, says where and fails as the others); or the refusal
CUT_TOOLS=(
	"annotate|annotate --stdio -i IN|stdout|shows"
	"sched timehist|sched timehist -i IN|stdout|No sched_switch events found"
	"timechart|timechart -i IN -o OUT|OUT|shows"
	"kwork report|kwork report -i IN|stdout|shows"
	"lock report|lock report -i IN|stderr|shows"
	"mem report|mem report --stdio -i IN|stdout|shows"
	"c2c report|c2c report --stdio -i IN|stdout|Failed setup nodes"
	"diff|diff in/live.data IN|stdout|shows"
	"data convert --to-json|data convert -i IN --to-json OUT|OUT|shows"
	"data convert --to-ctf|data convert -i IN --to-ctf OUT|OUT|shows"
	"inject|inject -i IN -o OUT|OUT|shows"
	"trace -i|trace -i IN|stderr|nothing"
	"buildid-list|buildid-list --with-hits -i IN|stdout|shows"
)
cut_said='the data is cut short (where: above): read as far as it goes$'
for spec in "${CUT_TOOLS[@]}"; do
	IFS='|' read -r tname cmd shows section <<< "$spec"
	for in in in/live.data in/live-dir.data in/live-dir-cut.data in/live-section.data; do
		line=${cmd//IN/$in}
		rm -rf out.x
		# shellcheck disable=SC2086
		"$PERF" ${line//OUT/out.x} > run.out 2> run.err
		rc=$?
		t="$in: perf $tname"
		case $in in
		*/live.data | */live-dir.data)
			check "$t: reads it whole (status $rc)" [ $rc -eq 0 ] || tail -n 5 run.err
			continue ;;
		esac
		check "$t: not killed (status $rc)" eval "! { [ $rc -gt 128 ] && [ $rc -le 192 ]; }"
		if [ "$in" = in/live-section.data ] && [ "$section" = nothing ]; then
			shows=none
		elif [ "$in" = in/live-section.data ] && [ "$section" != shows ]; then
			check "$t: refuses, saying why (status $rc)" \
				eval "[ $rc -ne 0 ] && grep -q '$section' run.err run.out"
			continue
		fi
		case $shows in
		stdout) check "$t: shows what there is" [ -s run.out ] ;;
		stderr) check "$t: shows what there is" \
			eval "[ \$(grep -cv -e 'cut short' -e '^0x' -e '^WARNING' run.err) -gt 0 ]" ;;
		OUT) check "$t: writes what there is" [ -s out.x ] ;;
		esac
		check "$t: says where, in which file" \
			has run.err "^0x[0-9a-f]+ \[0x[0-9a-f]+\]: the data ends [0-9]+ bytes into this record, $in(/data\.[0-9]+)? cut short\? Skipping it$"
		check "$t: then fails (status $rc), saying so last" \
			eval "[ $rc -ne 0 ] && tail -n 1 run.err | grep -q '$in: $cut_said'"
	done
done
# a pipe stream cut inside a record, on standard input: perf inject of
# perf record -o - stopped while writing
rm -f out.x
"$PERF" inject -i - -o out.x < in/pipe-cut-record.pipe > run.out 2> run.err
rc=$?
check "pipe-cut-record.pipe on stdin: perf inject writes what there is, then fails (status $rc)" \
	eval "[ $rc -ne 0 ] && [ -s out.x ] && tail -n 1 run.err | grep -q '^the stream: $cut_said'"

# A run of garbage in the middle of a system-wide recording: the read
# stops there, with samples held for their records (and the events after
# them).  They were read before the damage: every one leaves, stitched
# or as a "stream ended" orphan, the counts reconcile, and ours shows at
# least the samples pristine 7.2 shows (it holds none back).
require_upstream_perf
dmg=in/sysw-damaged.data
cp "$corpus/sysw.data" "$dmg"
"$PY" -c 'import os, sys
f = open(sys.argv[1], "r+b")
f.seek(os.path.getsize(sys.argv[1]) * 62 // 100)
f.write(b"\xff" * 200)' "$dmg"
"$PERF" script -F time -i "$dmg" > dmg.out 2> dmg.err
rc=$?
"$UP_PERF" script -F time -i "$dmg" > dmg.up 2> /dev/null
deferred=$(summary_count dmg.err 'deferred samples')
stitched=$(summary_count dmg.err stitched)
orphans=$(summary_count dmg.err orphans)
check "damaged in the middle: fails (status $rc), naming the offset" \
	eval "[ $rc -ne 0 ] && grep -qE '(^|offset )0x[0-9a-f]+' dmg.err"
check "damaged in the middle: samples were waiting when the read stopped (${deferred:-?} deferred)" \
	[ "${deferred:-0}" -gt 0 ]
check "damaged in the middle: every deferred sample leaves ($deferred = $stitched stitched + $orphans orphans)" \
	[ "${deferred:-0}" -eq $(( ${stitched:-0} + ${orphans:-0} )) ]
check "damaged in the middle: ours shows every sample pristine 7.2 shows ($(wc -l < dmg.out) of $(wc -l < dmg.up))" \
	[ "$(wc -l < dmg.out)" -ge "$(wc -l < dmg.up)" ]

cat bad-input.md
finish
