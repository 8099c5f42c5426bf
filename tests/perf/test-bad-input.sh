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
#                 writes what there is
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
						eval "[ $rc -ne 0 ] && grep -q 'the data is cut short (where: above): shown as far as it goes\$' $err"
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
				check "$label: perf stitch -f -o: converts what there is" \
					eval "[ $rc -eq 0 ] && [ -s out.x ]"
			fi
		fi
	done
done < inputs.txt

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
