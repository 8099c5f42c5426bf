#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch -i deferred.data -o stitched.data (convert mode, pipe mode):
# the output must be a file every perf reads, here the system perf 6.1.
#
# Records a frame-pointer workload (tests/workloads/emulate-workload.c) with the
# system perf, emulates deferred callchains with seeded faults
# (perf stitch --emulate --truth), converts, and checks with the system perf:
# every stitched sample shows the recording's callchain, the orphans are the
# injected faults one for one with their reason's frame, no warning; the
# header (attrs, features), the rounds and the time order; pipe mode; errors
# (no output left); writer-made edge cases (tests/perf/helpers/convert-gen.py); the
# counts against perf stitch --stats=json.  Where our perf's output is
# compared with a perf that knows nothing of deferral reading a standard
# file, that perf is pristine perf 7.2 (build/perf-upstream): the same
# perf our build is made from, printing samples alike (user addresses as
# recorded, inlined frames); perf 6.1 prints them another way.
#
# usage: tests/perf/test-stitch-convert.sh     (after make -f Makefile.perf-patch
#                                             and make perf-upstream)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (the older perf that
#   must read the output: required), PYTHON, CC, KEEP, and
#   UPSTREAM_PERF=...  pristine perf 7.2 (default: build/perf-upstream)
# Needs root (or perf_event_paranoid <= 1 and tracefs access) for the
# raw_syscalls:sys_exit tracepoint.  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || abort "no system perf ($SYS_PERF) to read the output with"
require_upstream_perf
CHECK="$PY $here/helpers/emulate-check.py"

# sumfield FILE REGEX: the number the summary line has before REGEX
sumfield() { sed -nE "s/^perf stitch:.*[ (]([0-9]+) $2.*/\1/p" "$1" | head -1; }
# reason FILE NAME: the count after the orphan reason NAME in the summary, 0 if absent
reason() { sed -nE "s/^perf stitch: .*(\(|, )$2 ([0-9]+)[,)].*/\2/p" "$1" | head -1 | grep . || echo 0; }
# e2e PREFIX REF OUT TRUTH: emulate-check.py --e2e, one result per check
e2e() {
	$CHECK --e2e "$2" "$3" "$4" > "$1.check" 2>&1
	relay_checks "$1" "$1.check"
}

# ------------------------------------------------------------ recording, emulation
record_fp fp.data 400
"$PERF" stitch --emulate -q -i fp.data -o emu.data --truth emu.truth --seed 7 \
	--drop 0.2 --duplicate 0.2 --late 0.5 --bogus-ip 0.2
check "emulated with faults (drop, duplicate, late, bogus ip)" [ -s emu.data -a -s emu.truth ]

# ------------------------------------------------------------ 1. end to end
start=$(date +%s%N)
"$PERF" stitch -i emu.data -o st.data > st.out 2> st.err
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "convert: exit status 0 (${ms} ms)" eq "$rc" 0
check "convert: nothing on stdout" [ ! -s st.out ]
check "convert: one summary line on stderr" eq "$(wc -l < st.err)" 1
sed 's/^/     /' st.err
check "convert: no temporary file left" eval '! ls st.data.tmp-* > /dev/null 2>&1'

fields="-F tid,time,event,ip,sym,dso --ns"
"$SYS_PERF" script $fields -i fp.data > ref.script 2> /dev/null
"$SYS_PERF" script $fields -i st.data > out.script 2> out.err
check "system perf script: exit status 0" eq "$?" 0
check "system perf script: no message at all on stderr" [ ! -s out.err ]
e2e "system perf script" ref.script out.script emu.truth
# the reason frames: a dropped record is lost (or the task exited before the
# entry's records could come), a record starting with a bogus ip is empty
$PY "$here/helpers/convert-check.py" reasons emu.truth out.script > reasons.out
read -r norph nbad < reasons.out
check "orphans ($norph) show the frame of their fault's reason, last" eq "$nbad" 0
check "some orphans of each kind" gt "$norph" 100

"$SYS_PERF" script -v -i st.data > /dev/null 2> outv.err
check "system perf script -v: no timestamp, unknown record or callchain complaint" \
	hasnt outv.err 'Timestamp below|unknown|invalid callchain|out of order|Reserved bits|failed to process'

# ------------------------------------------------------------ 2. perf report
"$SYS_PERF" report --stdio -i st.data > report.out 2> report.err
check "system perf report: exit status 0" eq "$?" 0
check "system perf report: no warnings" [ ! -s report.err ]
"$PERF" report --stats -i emu.data > emu.stats 2> /dev/null
"$SYS_PERF" report --stats -i st.data > st.stats 2> st.stats.err
nsamples=$(stat emu.stats SAMPLE)
check "system perf report --stats: all $nsamples samples" eq "$(stat st.stats SAMPLE)" "$nsamples"
check "system perf report --stats: no CALLCHAIN_DEFERRED (type 22)" eq "$(stat st.stats CALLCHAIN_DEFERRED)" 0
check "system perf report --stats: other records kept (SWITCH)" \
	eq "$(stat st.stats SWITCH)" "$(stat emu.stats SWITCH)"
check "system perf report --stats: other records kept (COMM)" \
	eq "$(stat st.stats COMM)" "$(stat emu.stats COMM)"
check "MMAP2: the input's plus the lost-stack maps" \
	eq "$(stat st.stats MMAP2)" "$(($(stat emu.stats MMAP2) + $(sumfield st.err 'lost-stack maps')))"
# every dso of every callchain, however few samples reach it: the default
# report hides frames under 0.5%, which how many records the emulation
# dropped decides
"$SYS_PERF" report --stdio --children --sort dso -g none --percent-limit 0 -i st.data \
	> report-dso.out 2> /dev/null
check "system perf report: the lost frames' maps" has report-dso.out '\[user stack lost: record lost\]'

# ------------------------------------------------------------ 3. our perf on the input = pristine 7.2 on the output
# The output's standard callchains as a perf without deferral shows them:
# pristine perf 7.2, which prints samples as ours does (perf 6.1 prints
# user addresses as offsets in their map and no inlined frames; the
# system perf's view is checked against the recording's in 1.).  Samples
# are known by tid, time and event (convert-check.py same).
f3="-F comm,tid,time,event,ip,sym --ns"
"$PERF" script $f3 -i emu.data > ours.script 2> /dev/null
"$UP_PERF" script $f3 -i st.data > up.script 2> /dev/null
$PY "$here/helpers/convert-check.py" same emu.truth ours.script up.script > same.out
read -r nst nbad < same.out
check "stitched samples ($nst): our perf on the input = pristine perf 7.2 on the output" eq "$nbad" 0

# ------------------------------------------------------------ 4. header, rounds, time order
"$PERF" evlist -v -i st.data > st.evlist 2>&1
check "evlist: no defer bits" hasnt st.evlist 'defer_'
# the smallest attr size holding the recording's fields (none past
# PERF_ATTR_SIZE_VER0): perf before 5.13 refuses a larger attr than its own
check "evlist: both attrs at size 64 (PERF_ATTR_SIZE_VER0)" eq "$(grep -c 'size: 64' st.evlist)" 2
check "file header: attr_size 80 (64 + the ids section), attrs section 2 x 80" \
	eq "$($PY -c 'import struct, sys; h = struct.unpack_from("<3Q", open(sys.argv[1], "rb").read(), 16); print(h[0], h[2])' st.data)" \
	"80 160"
"$PERF" report --header-only -I -i st.data > st.header 2>&1
"$PERF" report --header-only -I -i emu.data > emu.header 2>&1
"$SYS_PERF" report --header-only -I -i st.data > st.header6 2> st.header6.err
"$SYS_PERF" report --header-only -I -i fp.data > fp.header6 2> /dev/null
check "event descriptions: no defer bits" hasnt st.header 'defer_'
check "system perf: event descriptions read, no reserved bits complaint" \
	eq "$(grep -c '^# event : name' st.header6)" 2
check "system perf: event descriptions at size 64" eq "$(grep -c '^# event : .*, size = 64,' st.header6)" 2
# the data offset differs too: perf_session__inject_header() lays the attrs
# section out at this perf's attr size (perf 7.2: 144 bytes, the recording
# by perf 6.1: 128), then the attrs are written again at 64 bytes with
# zeros up to that section's end (checked on its own below)
hdr6() { grep -vE '^# (captured on|data size|data offset|feat offset)' "$1" | sed -E 's/, size = [0-9]+,/, size = N,/'; }
check "system perf: header the same as the recording's (but dates, sizes, data offset and attr sizes)" \
	eq "$(hdr6 st.header6)" "$(hdr6 fp.header6)"
# doff FILE: the attr_size, attrs offset, attrs size and data offset of
# FILE's header
doff() { $PY -c 'import struct, sys; print(*struct.unpack_from("<4Q", open(sys.argv[1], "rb").read(), 16))' "$1"; }
read -r _ st_aoff st_asize st_doff <<< "$(doff st.data)"
read -r fp_entry _ fp_asize fp_doff <<< "$(doff fp.data)"
# 144: sizeof(struct perf_event_attr) in perf 7.2, 16: an attrs entry's ids section
grow=$((fp_asize / fp_entry * (144 + 16 - fp_entry)))
check "data offset: the recording's plus what perf 7.2's larger attrs take ($grow bytes), after the attrs" \
	eval "[ $st_doff -eq $((fp_doff + grow)) ] && [ $st_doff -ge $((st_aoff + st_asize)) ]"
feats() { grep -E '^# [a-z]' "$1" | grep -vE '^# (captured on|data size|feat offset|event :|missing features)' | cut -d: -f1 | sort -u; }
check "features present as in the input" eq "$(feats st.header)" "$(feats emu.header)"
check "missing features as in the input" \
	eq "$(grep '^# missing features' st.header)" "$(grep '^# missing features' emu.header)"

"$PERF" report -D -i st.data > st.dump 2> /dev/null
check "-D: no PERF_RECORD_CALLCHAIN_DEFERRED" hasnt st.dump 'PERF_RECORD_CALLCHAIN_DEFERRED'
check "-D: no PERF_CONTEXT_USER_DEFERRED (fffffffffffffd80)" hasnt st.dump ': fffffffffffffd80$'
$PY "$here/helpers/convert-check.py" order st.dump > order.out
read -r nrounds ntimed nbad < order.out
check "-D: FINISHED_ROUND records ($nrounds)" gt "$nrounds" 1
check "-D: $ntimed timed events in time order, none below the previous round's max" eq "$nbad" 0

# ------------------------------------------------------------ 7. counts reconcile
"$PERF" stitch --stats=json -i emu.data > emu.json 2> /dev/null
check "summary: samples = input's" eq "$(sumfield st.err samples)" "$nsamples"
check "summary: deferred = --stats=json" eq "$(sumfield st.err 'with deferred')" "$(js emu.json "d['deferred_samples']")"
check "summary: stitched = --stats=json" eq "$(sumfield st.err stitched)" "$(js emu.json "d['stitched']")"
check "summary: orphans = --stats=json" eq "$(sumfield st.err orphans)" "$(js emu.json "d['orphans_total']")"
for r in record_lost task_exited stream_ended memory_cap exec unwind_failed; do
	check "summary: $r = --stats=json" \
		eq "$(reason st.err "${r/_/ }")" "$(js emu.json "d['orphans']['$r']")"
done
check "summary: stitched + orphans = deferred" \
	eq "$(($(sumfield st.err stitched) + $(sumfield st.err orphans)))" "$(sumfield st.err 'with deferred')"
check "summary: records removed = the input's" \
	eq "$(sumfield st.err 'CALLCHAIN_DEFERRED records removed')" "$(stat emu.stats CALLCHAIN_DEFERRED)"

# ------------------------------------------------------------ 5. pipe mode
"$SYS_PERF" record -q -g --sample-cpu -e cpu-clock -o - -- ./workload 100 2> /dev/null > pipe.fp
"$PERF" stitch --emulate -q -i - -o - --truth pipe.truth --seed 3 --drop 0.2 --bogus-ip 0.1 \
	< pipe.fp > pipe.emu
"$PERF" stitch -i - -o - < pipe.emu > piped.data 2> piped.err
check "pipe mode: exit status 0" eq "$?" 0
check "pipe mode: summary says stdout" has piped.err '; wrote stdout$'
"$SYS_PERF" script $fields -i - < pipe.fp > pref.script 2> /dev/null
"$SYS_PERF" script $fields -i - < piped.data > piped.script 2> piped.script.err
check "pipe mode: system perf script reads it, no message" [ ! -s piped.script.err ]
e2e "pipe mode" pref.script piped.script pipe.truth
"$SYS_PERF" evlist -v -i - < piped.data > piped.evlist 2>&1
check "pipe mode: attrs without defer bits" hasnt piped.evlist 'defer_'
"$SYS_PERF" report --stats -i - < piped.data > piped.stats 2>&1
"$PERF" report --stats -i - < pipe.emu > pipe.emu.stats 2>&1
check "pipe mode: every sample" eq "$(stat piped.stats SAMPLE)" "$(stat pipe.emu.stats SAMPLE)"
check "pipe mode: no CALLCHAIN_DEFERRED" eq "$(stat piped.stats CALLCHAIN_DEFERRED)" 0
"$PERF" stitch -q -i - -o - < pipe.emu | "$SYS_PERF" script $fields -i - > piped2.script 2> /dev/null
check "pipe mode through a pipe: the same" cmp -s piped.script piped2.script

# ------------------------------------------------------------ no deferred data: copied
"$PERF" stitch -i fp.data -o copy.data 2> copy.err
check "no deferred data: exit status 0" eq "$?" 0
check "no deferred data: says it copied" has copy.err '^perf stitch: no deferred callchains in fp.data, copied [0-9]+ samples; wrote copy.data$'
"$SYS_PERF" script $fields -i copy.data > copy.script 2> /dev/null
check "no deferred data: the same perf script output" cmp -s ref.script copy.script

# ------------------------------------------------------------ 6. writer-made files
if ! $PY "$here/helpers/convert-gen.py" edge garbage cut bigendian inplace > gen.log 2>&1; then
	cat gen.log
	bad "convert-gen.py"
fi
"$PERF" stitch -i edge.data -o edge.out 2> edge.err
check "edge cases: exit status 0" eq "$?" 0
check "edge cases: summary" has edge.err '^perf stitch: 4 samples, 4 with deferred user callchains: 3 stitched, 1 orphans \(stream ended 1\); 3 CALLCHAIN_DEFERRED records removed, 1 lost-stack maps added; wrote edge.out$'
"$SYS_PERF" script -F tid,time,ip,dso --ns -i edge.out > edge.script 2> edge.script.err
cat > edge.expect <<'EOF'
  100     0.000000200: 
	ffffffff81001000 ([kernel.kallsyms])
	            1000 (/nonexistent/app)
	            2000 (/nonexistent/app)

  100     0.000000250: 
	ffffffff81002000 ([kernel.kallsyms])
	            1000 (/nonexistent/app)
	            2000 (/nonexistent/app)

  101     0.000000400: 
	ffffffff81003000 ([kernel.kallsyms])
	               0 ([user stack lost: stream ended])

  100     0.000000500: 
	            3000 (/nonexistent/app)
	            1000 (/nonexistent/app)

EOF
check "edge cases: record before its samples, cross-CPU, duplicate, user mode, stream end" \
	diff -u edge.expect edge.script
check "edge cases: system perf says nothing" [ ! -s edge.script.err ]

# in-place user stacks whose garbage takes the marker's value are not
# deferred: shown as pristine perf 7.2 shows them when it does not merge
# (perf 7.2 skips the marker as a context, where 6.1 threw the chain
# away; merging, pristine 7.2 takes the first sample, which ends in the
# marker and a "cookie", for deferred and prints it last, after the
# samples behind it)
"$SYS_PERF" script -F tid,time,ip,dso --ns -i inplace.data > inplace.sys 2> /dev/null
"$UP_PERF" script --no-merge-callchains -F tid,time,ip,dso --ns -i inplace.data > inplace.up 2> /dev/null
"$PERF" script -F tid,time,ip,dso --ns -i inplace.data > inplace.script 2> inplace.err
check "in-place user stack holding the marker's value: shown as pristine 7.2 shows it unmerged" \
	eval "same inplace.up inplace.script && [ \$(grep -c ': \$' inplace.script) -eq 3 ]"
check "in-place user stack holding the marker's value: no stitch summary" \
	hasnt inplace.err 'deferred callchains'
"$PERF" stitch -q -i inplace.data -o inplace.out 2> inplace.cvt.err
"$SYS_PERF" script -F tid,time,ip,dso --ns -i inplace.out > inplace.out.sys 2> /dev/null
check "in-place user stack holding the marker's value: converted unchanged" \
	same inplace.sys inplace.out.sys

# ------------------------------------------------------------ 6. errors leave no output
# err_case DESCRIPTION OUTPUT REGEX ARGS...: fails, says REGEX, leaves no output
err_case() {
	local d=$1 out=$2 re=$3; shift 3
	"$PERF" stitch "$@" > err.out 2> err.err
	local rc=$?
	check "$d: fails" [ $rc -ne 0 ]
	check "$d: says why" has err.err "$re"
	no_output "$d" "$out"
}
# a malformed record: skipped and counted, its samples orphaned; --strict: refused
"$PERF" stitch -i garbage.data -o g.out > /dev/null 2> g.err
rc=$?
check "garbage CALLCHAIN_DEFERRED: converted (status $rc), the record skipped and counted" \
	eval "[ $rc -eq 0 ] && [ -s g.out ] && has g.err ', 1 malformed CALLCHAIN_DEFERRED records skipped'"
check "garbage CALLCHAIN_DEFERRED: its offset said" \
	has g.err '^0x2c8 \[0x40\]: malformed PERF_RECORD_CALLCHAIN_DEFERRED: nr 1000'
"$SYS_PERF" script -i g.out > /dev/null 2> g.sys.err
check "garbage CALLCHAIN_DEFERRED: the output reads (system perf)" eq "$?" 0
err_case "garbage CALLCHAIN_DEFERRED, --strict" g2.out \
	'^0x2c8 \[0x40\]: malformed PERF_RECORD_CALLCHAIN_DEFERRED: nr 1000' --strict -i garbage.data -o g2.out
check "garbage CALLCHAIN_DEFERRED, --strict: names the file" \
	has err.err '^garbage.data: error: 1 malformed PERF_RECORD_CALLCHAIN_DEFERRED records and 0 samples .*--strict$'
err_case "record cut short" c.out '^0x308 \[0x40\]: the data ends 48 bytes into this record' \
	-i cut.data -o c.out
check "record cut short: names the file" has err.err '^cut.data: the data is cut short \(where: above\), refused; -f'
head -c $(($(wc -c < emu.data) / 2)) emu.data > half.data
# a data offset past the end of the file: the reader would map the data
# (SIGBUS once it was touched): every tool fails, none is killed, and each
# says where the data was to start (pristine 7.2 finds the feature
# sections, after the data, past the end and says "incompatible file
# format", nothing more)
cp emu.data far.data
printf '\000\000\000\020\000\000\000\000' | dd of=far.data bs=1 seek=40 conv=notrunc 2> /dev/null
far_re='^far.data: the data section starts at 0x10000000, past the end of the file \(0x[0-9a-f]+\)$'
for tool in script "report --stdio" "stitch -o far.out"; do
	# shellcheck disable=SC2086
	"$PERF" $tool -i far.data > /dev/null 2> far.err
	rc=$?
	check "data section past the end, perf $tool: fails (status $rc), not killed" \
		eval "[ $rc -ne 0 ] && ! { [ $rc -gt 128 ] && [ $rc -le 192 ]; }"
	check "data section past the end, perf $tool: names the file and the offset" \
		has far.err "$far_re"
done
no_output "data section past the end" far.out
# a file cut in half (the feature sections and half the data gone): read up
# to the cut, said with the offsets; perf stitch refuses to write from it
# without -f, and with -f converts what there is
err_case "file cut in half" h.out \
	'^WARNING: half.data is cut short: its data section \(0x[0-9a-f]* bytes at 0x[0-9a-f]*\) runs past the end of the file' \
	-i half.data -o h.out
check "file cut in half: refused, -f to go on" has err.err '^half.data: the data is cut short \(where: above\), refused; -f'
"$PERF" stitch -f -i half.data -o h.out > /dev/null 2> h.err
check "file cut in half, -f: converted what there is, then fails as every reader" \
	eval "[ $? -ne 0 ] && [ -s h.out ] && tail -n 1 h.err | grep -q '^half.data: the data is cut short (where: above): read as far as it goes$'"
"$PERF" script -i half.data > half.script 2> half.err
check "file cut in half: perf script reads up to the cut, then fails (status $?)" \
	eval "[ $? -ne 0 ] && [ -s half.script ] && has half.err '^WARNING: half.data is cut short' &&
	      has half.err '^half.data: the data is cut short \(where: above\): read as far as it goes$'"
# perf 6.1 swaps such records as u64 words only (u32 pairs and
# PERF_SAMPLE_RAW stay as written): refused rather than copied wrong
err_case "big-endian file" b.out '^bigendian.data: written on a host of the other byte order: perf reads its records without swapping every field \(u32 pairs, PERF_SAMPLE_RAW data\), so they cannot be copied' \
	-i bigendian.data -o b.out
err_case "missing input" m.out 'cannot read nosuch.data' -i nosuch.data -o m.out
err_case "no -o" perf.data 'no output file' -i emu.data
err_case "output directory missing" nodir/x.out '^cannot create nodir/x.out: No such file or directory$' \
	-i emu.data -o nodir/x.out
sum=$(md5sum < st.data)
"$PERF" stitch -i emu.data -o st.data > err.out 2> err.err
check "existing output without -f: fails" [ $? -ne 0 ]
check "existing output without -f: says so" has err.err '^st.data exists, not overwriting it \(-f to overwrite\)'
check "existing output without -f: left alone, no temporary file" \
	eval '[ "$(md5sum < st.data)" = "$sum" ] && ! ls st.data.tmp-* > /dev/null 2>&1'
"$PERF" stitch -q -f -i emu.data -o st.data 2> force.err
check "existing output with -f: replaced" eq "$?:$(cat force.err)" "0:"
check "existing output with -f: the same conversion" eq "$(md5sum < st.data)" "$sum"
sum=$(md5sum < emu.data)
"$PERF" stitch -f -i emu.data -o emu.data > err.out 2> err.err
check "output = input: fails even with -f" [ $? -ne 0 ]
check "output = input: input intact" eq "$(md5sum < emu.data)" "$sum"
"$PERF" stitch -h > help.out 2>&1
check "help: the convert usage" has help.out 'perf stitch \[-f\] -i <deferred.data> -o <stitched.data>'

# ------------------------------------------------------------ 7. file to pipe, pipe to file
# perf script's fields differ by mode (6.1 in pipe mode prints callchains
# even where -F leaves them out): the samples and callchains with $fields,
# the tracepoint data (decoded with the tracing data) on their own
ff=$fields
# trace FILE: the decoded raw_syscalls:sys_exit samples of FILE (- : stdin)
trace() { "$SYS_PERF" script -F trace:tid,time,event,trace --ns -i "$1" 2> /dev/null | grep -E 'sys_exit: +NR [0-9]+ = '; }
"$SYS_PERF" script $ff -i st.data > ff.script 2> /dev/null
trace st.data > ff.trace
check "file to file: tracepoint samples decoded" gt "$(wc -l < ff.trace)" 100
"$PERF" stitch -i emu.data -o - > fp.pipe 2> fp.err
check "file to pipe: exit status 0" eq "$?" 0
check "file to pipe: summary says stdout" has fp.err '; wrote stdout$'
check "file to pipe: the same counts as file to file" \
	eq "$(sed 's/; wrote .*//' fp.err)" "$(sed 's/; wrote .*//' st.err)"
"$SYS_PERF" script $ff -i - < fp.pipe > fp.script 2> fp.script.err
check "file to pipe: system perf script reads it, no message" [ ! -s fp.script.err ]
check "file to pipe: the same samples and callchains as file to file" cmp -s ff.script fp.script
check "file to pipe: the same tracepoint data, decoded with the tracing data" \
	eval 'trace - < fp.pipe | cmp -s ff.trace -'
"$PERF" stitch -q -i emu.data -o - | "$SYS_PERF" script $ff -i - > fp2.script 2> fp2.err
check "file to pipe, through a pipe: the same, no message" \
	eval 'cmp -s ff.script fp2.script && [ ! -s fp2.err ]'
"$SYS_PERF" evlist -v -i - < fp.pipe > fp.evlist 2>&1
check "file to pipe: two attrs, without defer bits" \
	eval '[ "$(grep -c "sample_type: " fp.evlist)" = 2 ] && ! grep -q defer_ fp.evlist'
"$SYS_PERF" report --header-only -i - < fp.pipe > fp.header 2>&1
check "file to pipe: the recording's features (its command line), not the converting host's" \
	has fp.header '^# cmdline : .* record .*workload 400 ?$'
# the build ids of the input as our perf reads them (perf 6.1 cannot read
# the deferred input's attrs), HEADER_BUILD_ID records (type 67) in the
# pipe as perf 7.2 reads them (it refuses a record whose size is not a
# multiple of 8: those records must be)
"$PERF" report -D -i - < fp.pipe > fp.dump 2> fp.dump.err
nbid=$("$PERF" buildid-list -i emu.data 2> /dev/null | wc -l)
check "file to pipe: the input's build ids ($nbid) as HEADER_BUILD_ID records" \
	eval "[ $nbid -gt 0 ] && [ \$(grep -c '^0x[0-9a-f]*@pipe \[0x[0-9a-f]*\]: event: 67\$' fp.dump) -eq $nbid ]"
[ -s fp.dump.err ] && sed 's/^/     /' fp.dump.err | head -3
check "file to pipe: no CALLCHAIN_DEFERRED" hasnt fp.dump 'CALLCHAIN_DEFERRED'

# pipe to file: the deferred file as a pipe (attrs, features, tracing data, data)
$PY "$here/helpers/upstream.py" --pipe --tracing-data-size 16 emu.data emu.pipe > /dev/null
"$PERF" stitch -i - -o pf.data < emu.pipe > pf.out 2> pf.err
check "pipe to file: exit status 0" eq "$?" 0
# emu.pipe is written the perf 6.1 way: its end-of-features mark, 6.1's
# HEADER_LAST_FEATURE, read as the mark (pristine 7.2 takes it for
# HEADER_CPU_DOMAIN_INFO and says it is too small: test-upstream-files.sh)
check "pipe to file: the same counts as file to file, nothing else said" \
	eq "$(sed 's/; wrote .*//; s/ in -,/ in emu.data,/' pf.err)" \
	"$(sed 's/; wrote .*//' st.err)"
"$SYS_PERF" script $ff -i pf.data > pf.script 2> pf.script.err
check "pipe to file: system perf script reads it, no message" [ ! -s pf.script.err ]
check "pipe to file: the same samples and callchains as file to file" cmp -s ff.script pf.script
check "pipe to file: the same tracepoint data (the tracing data in the header)" \
	eval 'trace pf.data | cmp -s ff.trace -'
"$SYS_PERF" script -v -i pf.data > /dev/null 2> pfv.err
check "pipe to file: system perf script -v: no complaint" \
	hasnt pfv.err 'Timestamp below|unknown|invalid callchain|out of order|Reserved bits|failed to process|tracing data'
"$SYS_PERF" evlist -v -i pf.data > pf.evlist 2>&1
check "pipe to file: both attrs, no defer bits" \
	eval '[ "$(grep -Ec "^(cpu-clock|raw_syscalls:sys_exit):" pf.evlist)" = 2 ] && ! grep -q defer_ pf.evlist'
"$PERF" stitch -i - -o - < emu.pipe 2> pp.err | "$SYS_PERF" script $ff -i - > pp.script 2> pp.script.err
check "pipe to pipe, tracing data: the same, no message" \
	eval 'cmp -s ff.script pp.script && [ ! -s pp.script.err ]'
"$PERF" stitch -q -i - -o - < emu.pipe > pp.pipe
check "pipe to pipe: the same tracepoint data" eval 'trace - < pp.pipe | cmp -s ff.trace -'
"$PERF" stitch -q -i - -o - < fp.pipe | "$PERF" stitch -q -i - -o pff.data
"$SYS_PERF" report --header-only -i pff.data > pff.header 2>&1
check "pipe to file: a file header with the features the pipe sent" \
	has pff.header '^# cmdline : .* record .*workload 400 ?$'
"$PERF" stitch -q -i - -o pe.data < pipe.emu 2> pe.err
# (pipe.emu: perf stitch --emulate passes perf 6.1's features on, its end
# mark too, which says nothing)
check "pipe to file (emulated pipe): exit status 0, quiet" \
	eq "$?:$(cat pe.err)" "0:"
"$SYS_PERF" script $fields -i pe.data > pe.script 2> pe.script.err
check "pipe to file (emulated pipe): the same as pipe to pipe, no message" \
	eval 'cmp -s piped.script pe.script && [ ! -s pe.script.err ]'

# ------------------------------------------------------------ 8. outputs: devices, FIFOs, symlinks
# never the real /dev/null: a device node of our own
if mknod null c 1 3 2> /dev/null; then
	"$PERF" stitch -q -i emu.data -o null 2> dn.err
	check "convert -o null device: exit 0, quiet" eq "$?:$(cat dn.err)" "0:"
	"$PERF" stitch -q --emulate -i fp.data -o null --truth null 2> dn.err
	check "--emulate -o null device --truth null device: exit 0, quiet" eq "$?:$(cat dn.err)" "0:"
	"$PERF" stitch -q -F folded -i emu.data -o null 2> dn.err
	check "-F folded -o null device: exit 0, quiet" eq "$?:$(cat dn.err)" "0:"
	"$PERF" stitch -q -F speedscope -i emu.data -o null 2> dn.err
	check "-F speedscope -o null device: exit 0, quiet" eq "$?:$(cat dn.err)" "0:"
	check "the null device is still a character device, nothing next to it" \
		eval '[ -c null ] && ! ls null.tmp-* > /dev/null 2>&1'
else
	bad "mknod null c 1 3 (run as root)"
fi
mkfifo conv.fifo emu.fifo
cat conv.fifo > fifo.pipe &
"$PERF" stitch -q -i emu.data -o conv.fifo 2> fifo.err
rc=$?
wait
check "convert -o FIFO: exit 0, quiet" eq "$rc:$(cat fifo.err)" "0:"
check "convert -o FIFO: still a FIFO" [ -p conv.fifo ]
"$SYS_PERF" script $ff -i - < fifo.pipe > fifo.script 2> fifo.script.err
check "convert -o FIFO: the pipe format, the same samples" \
	eval 'cmp -s ff.script fifo.script && [ ! -s fifo.script.err ]'
cat emu.fifo > /dev/null &
"$PERF" stitch --emulate -i fp.data -o emu.fifo 2> fifo.err
rc=$?
wait
check "--emulate -o FIFO from a file: refused" [ "$rc" -ne 0 ]
check "--emulate -o FIFO from a file: says why" has fifo.err '^emu.fifo: cannot seek in it to write a perf.data file'
check "--emulate -o FIFO from a file: still a FIFO, nothing next to it" \
	eval '[ -p emu.fifo ] && ! ls emu.fifo.tmp-* > /dev/null 2>&1'
cp st.data target.data
ln -s target.data link.data
"$PERF" stitch -i emu.data -o link.data > /dev/null 2> link.err
check "-o symlink to a file, without -f: refused" has link.err '^link.data exists, not overwriting it'
: > target.data
"$PERF" stitch -q -f -i emu.data -o link.data 2> link.err
check "-o symlink to a file, -f: exit 0" eq "$?:$(cat link.err)" "0:"
check "-o symlink, -f: still a symlink, its target replaced" \
	eval '[ -L link.data ] && cmp -s target.data st.data && ! ls target.data.tmp-* link.data.tmp-* > /dev/null 2>&1'
ln -s emu.data input.link
sum=$(md5sum < emu.data)
for mode in "" "-F folded" "--emulate"; do
	"$PERF" stitch $mode -f -i emu.data -o input.link > /dev/null 2> il.err
	check "${mode:-convert}: -o a symlink to the input: refused even with -f" \
		has il.err '^input.link: the output would replace the input$'
done
check "-o a symlink to the input: input intact" eq "$(md5sum < emu.data)" "$sum"
echo keep > a.folded.kept
"$PERF" stitch -F folded -i emu.data -o a.folded.kept > /dev/null 2> kept.err
check "-F folded: an existing file is not replaced without -f" \
	eval 'has kept.err "^a.folded.kept exists, not overwriting it" && [ "$(cat a.folded.kept)" = keep ]'
"$PERF" stitch --emulate -i fp.data -o st.data > /dev/null 2> kept.err
check "--emulate: an existing file is not replaced without -f" \
	has kept.err '^st.data exists, not overwriting it'

# ------------------------------------------------------------ 9. interrupted: no temporary file
# the input is a pipe that stops half-way: each mode sits mid-run with its
# output pending, unnamed (O_TMPFILE) or under a temporary name, when the
# signal comes
half=$(($(wc -c < emu.pipe) / 2))
# pending PID OUTPUT: the files PID has open for OUTPUT, unnamed in its
# directory (/proc shows them as "#INODE (deleted)") or named OUTPUT.tmp-*
pending() {
	local dir

	dir=$(cd "$(dirname "$2")" && pwd)
	{ ls -l "/proc/$1/fd" 2> /dev/null | grep -E -- "-> $dir/#[0-9]+ \(deleted\)$"
	  ls "$2".tmp-* 2> /dev/null; } | wc -l
}
# wait_pending PID OUTPUT: until PID has its OUTPUT pending (at most 60 s,
# for perf starts in seconds on a busy machine); its count in had
wait_pending() {
	local i

	for ((i = 0; i < 300; i++)); do
		had=$(pending "$1" "$2")
		[ "$had" -ge 1 ] && return
		kill -0 "$1" 2> /dev/null || return
		sleep 0.2
	done
}
# stalled_pipe: the first half of pipe_in, then the rest once a line is
# written to the FIFO gate (never, for a reader killed before)
mkfifo gate || abort "mkfifo"
stalled_pipe() {
	head -c "$half" "$pipe_in"
	read -r < gate
	tail -c +$((half + 1)) "$pipe_in"
}
# interrupt DESCRIPTION OUTPUT ARGS...: perf stitch ARGS reading a stalled pipe, SIGINTed
interrupt() {
	local d=$1 out=$2 pid had; shift 2
	# a background job of a script ignores SIGINT: perf stitch gets it at its default
	stalled_pipe |
		env --default-signal=INT "$PERF" stitch "$@" > /dev/null 2> int.err &
	pid=$!
	wait_pending "$pid" "$out"
	kill -INT "$pid"
	# the pipeline's job ends with its writer: let it go on to its end
	echo > gate
	wait "$pid" 2> /dev/null
	check "$d: killed by SIGINT" eq "$?" 130
	check "$d: had its output pending mid-run" eq "$had" 1
	no_output "$d: SIGINT" "$out"
}
pipe_in=emu.pipe
interrupt "convert, pipe to file" int.data -i - -o int.data
interrupt "-F folded" int.folded -F folded -i - -o int.folded
pipe_in=pipe.fp
half=$(($(wc -c < pipe.fp) / 2))
interrupt "--emulate --truth" int.truth --emulate -i - -o - --truth int.truth
wait

# ------------------------------------------------------------ 10. signals: ignored stays ignored, HUP and QUIT clean up
pipe_in=emu.pipe
half=$(($(wc -c < emu.pipe) / 2))
# sig_run SIGNAL OUTPUT ENV-OPTION: perf stitch -i - -o OUTPUT reading a pipe
# that stalls half-way, under env ENV-OPTION, gets SIGNAL; sets rc and had
sig_run() {
	local sig=$1 out=$2 envopt=$3 pid
	stalled_pipe |
		env "$envopt" "$PERF" stitch -q -i - -o "$out" > /dev/null 2> sig.err &
	pid=$!
	wait_pending "$pid" "$out"
	kill -"$sig" "$pid"
	echo > gate
	wait "$pid" 2> /dev/null
	rc=$?
}
# nohup, a background job: SIGINT ignored when perf stitch starts
sig_run INT ign.data --ignore-signal=INT
check "SIGINT ignored (nohup): not killed, exit 0" eq "$rc:$had" "0:1"
check "SIGINT ignored: the conversion completes, no temporary file" \
	eval '[ -s ign.data ] && ! ls ign.data.tmp-* > /dev/null 2>&1'
"$SYS_PERF" script $fields -i ign.data > ign.script 2> /dev/null
check "SIGINT ignored: the same output as pipe to file" cmp -s ign.script ff.script
sig_run HUP hup.data --default-signal=HUP
check "SIGHUP: killed by it, had its temporary file" eq "$rc:$had" "129:1"
no_output "SIGHUP" hup.data
sig_run QUIT quit.data --default-signal=QUIT
check "SIGQUIT: killed by it, had its temporary file" eq "$rc:$had" "131:1"
no_output "SIGQUIT" quit.data
# nothing can clean up after SIGKILL: the unnamed file is the kernel's to free
sig_run KILL kill.data --default-signal=TERM
check "SIGKILL: killed by it, had its output pending (unnamed: O_TMPFILE)" eq "$rc:$had" "137:1"
no_output "SIGKILL" kill.data
rm -f core core.*

# ------------------------------------------------------------ 11. pipe to pipe: features of another perf, compression
# a feature id this perf does not know (200), as a newer perf's pipe
# carries it: perf 6.1 fails on it ("wrong feature ID"), perf 7.2 warns
# and skips it, perf stitch leaves it out.  HEADER_RESERVED (0), which
# our 6.1 series skipped as well, perf 7.2 refuses as invalid ("invalid
# reserved record type in pipe-mode", pristine 7.2 too): perf stitch
# fails on it as perf 7.2 does
$PY "$here/helpers/inject-deferred.py" --feature 200 pipe.emu pipe.feat > /dev/null
"$PERF" stitch -i - -o - < pipe.feat > pipe.feat.out 2> pipe.feat.err
check "pipe to pipe, unknown features: exit 0" eq "$?" 0
check "pipe to pipe, unknown features: summary counts them" \
	has pipe.feat.err ', 1 header features unknown to this perf left out; wrote stdout$'
# (the feature comes after the data: pristine perf script reads that far;
# of pipe.emu's perf 6.1 end-of-features mark it says "Invalid
# HEADER_CPU_DOMAIN_INFO: section too small (0)", which ours does not)
"$UP_PERF" script -i - < pipe.feat > /dev/null 2> pipe.feat.up.err
featwarn() {
	grep -E '^(Invalid HEADER_|unknown feature )' "$1" |
		grep -vE '^Invalid HEADER_CPU_DOMAIN_INFO: section too small \(0\) for [0-9]+ CPUs$'
}
check "pipe to pipe, unknown features: perf 7.2's warnings, as pristine 7.2's but the end mark's" \
	eval "has pipe.feat.err '^unknown feature 200 for data file version ' &&
		[ \"\$(featwarn pipe.feat.err)\" = \"\$(featwarn pipe.feat.up.err)\" ]"
$PY "$here/helpers/inject-deferred.py" --feature 0 pipe.emu pipe.feat0 > /dev/null
"$PERF" stitch -i - -o - < pipe.feat0 > /dev/null 2> pipe.feat0.err
check "pipe to pipe, HEADER_RESERVED: fails as perf 7.2 does" \
	eval "[ $? -ne 0 ] && has pipe.feat0.err '^invalid reserved record type in pipe-mode$' &&
		has pipe.feat0.err '^perf stitch: failed, what was written to stdout is not usable$'"
"$UP_PERF" script -i - < pipe.feat0 > /dev/null 2> pipe.feat0.up.err
check "pipe to pipe, HEADER_RESERVED: pristine perf 7.2 refuses it too" \
	has pipe.feat0.up.err '^invalid reserved record type in pipe-mode$'
"$SYS_PERF" report --stdio -i - < pipe.feat.out > pipe.feat.report 2> pipe.feat.report.err
check "pipe to pipe, unknown features: system perf report reads it, no complaint" \
	hasnt pipe.feat.report.err 'wrong feature ID|failed'
check "pipe to pipe, unknown features: system perf report shows the samples" \
	has pipe.feat.report "^# Samples: $(stat piped.stats SAMPLE) +of event 'cpu-clock'"
# perf 6.1 record -z to a pipe sends HEADER_COMPRESSED (its data chunks
# uncompressed); the output is uncompressed: the feature must go
"$SYS_PERF" record -q -z -g --sample-cpu -e cpu-clock -o - -- ./workload 50 2> /dev/null > z.fp
"$PERF" stitch --emulate -q -i - -o - < z.fp > z.emu
"$PERF" report --header-only -i - < z.emu > z.emu.header 2>&1
check "compressed pipe: the emulated input says compressed" has z.emu.header '^# compressed : Zstd'
"$PERF" stitch -q -i - -o - < z.emu > z.out
"$PERF" report --header-only -i - < z.out > z.header 2>&1
check "compressed pipe to pipe: no HEADER_COMPRESSED in the output" hasnt z.header 'compressed'
"$SYS_PERF" script $fields -i - < z.out > z.script 2> z.script.err
check "compressed pipe to pipe: system perf script reads it, no message" \
	eval '[ -s z.script ] && [ ! -s z.script.err ]'

# ------------------------------------------------------------ 12. a stitched sample too large for a record
$PY "$here/helpers/convert-gen.py" oversize time0 > /dev/null
"$PERF" stitch -i oversize.data -o oversize.out 2> oversize.err
check "oversized stitched sample: exit 0" eq "$?" 0
check "oversized stitched sample: said once, with what was cut" \
	eq "$(grep -c '^oversize.data: the stitched sample at 200 (tid 100) has 8301 callchain entries, more than a record holds: its 118 outermost user frames are left out' oversize.err)" 1
check "oversized stitched sample: counted in the summary" \
	has oversize.err ', 1 stitched samples cut to fit a record \(118 user frames left out\); wrote oversize.out$'
"$PERF" report -D -i oversize.out > oversize.dump 2> /dev/null
check "oversized stitched sample: 8183 entries (300 kernel, PERF_CONTEXT_USER, 7882 user)" \
	eq "$(grep -o 'FP chain: nr:[0-9]*' oversize.dump)" "FP chain: nr:8183"
# (perf 7.2's -D names the context entries)
check "oversized stitched sample: the user frames kept are the innermost" \
	eq "$(grep -E '^\.\.\.\.\. (300|301|8182): ' oversize.dump | tr -s ' ' | tr '\n' ' ')" \
	"..... 300: fffffffffffffe00 (PERF_CONTEXT_USER) ..... 301: 0000000000401000 ..... 8182: 0000000000410648 "

# ------------------------------------------------------------ 13. an event without a time is not out of order
"$PERF" stitch -i time0.data -o time0.out 2> time0.err
check "time 0 (--tail-synthesize) after timed events: exit 0, not counted out of order" \
	eq "$?:$(grep -c 'out of time order' time0.err)" "0:0"

# ------------------------------------------------------------ 14. failing into a FIFO: what was written stays
mkfifo fail.fifo
cat fail.fifo > fail.pipe &
"$PERF" stitch --strict -i garbage.data -o fail.fifo > /dev/null 2> fail.err
rc=$?
wait
check "convert garbage -o FIFO: fails" [ "$rc" -ne 0 ]
check "convert garbage -o FIFO: says the FIFO's output is not usable, not that none was written" \
	eval 'has fail.err "^perf stitch: failed, what was written to fail.fifo is not usable$" && hasnt fail.err "no output written"'
check "convert garbage -o FIFO: something went through it" [ -s fail.pipe ]

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
