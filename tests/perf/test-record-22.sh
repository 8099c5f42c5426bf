#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PERF_RECORD_CALLCHAIN_DEFERRED (type 22) and unknown record types in the
# patched perf (the "perf session:" reader hooks of patches/perf-7.2).
#
# Records a tiny perf.data with the system perf (or the patched one if there
# is none), adds hand-made records to it with inject-deferred.py and checks
# what the patched perf (and, for contrast, the unpatched /usr/bin/perf)
# make of them.
#
# usage: tests/perf/test-record-22.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (the unpatched perf 6.1
#   for the contrast checks, skipped if missing or not a 6.1), PYTHON, KEEP.
#   Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
GEN="$PY $here/helpers/inject-deferred.py"

# REC22: the -D header line of a type-22 record as perf 7.2 dumps it
REC22='PERF_RECORD_CALLCHAIN_DEFERRED\(IP, 0x[0-9a-f]+\): -?[0-9]+/-?[0-9]+: 0x[0-9a-f]+$'
# field NAME < inject-deferred.py output: the value of NAME= on the first line
field() { sed -nE "1s/.* $1=([^ ]*).*/\1/p"; }
# sys_rejects DESCRIPTION FILE MESSAGE [REPORT OPTION]: the unpatched perf
# 6.1's perf report (--stats unless told) fails on FILE with MESSAGE; not
# checked without a 6.1
sys_rejects() {
	[ -n "$sys_is_61" ] || return 0
	"$SYS_PERF" report "${4:---stats}" -i "$2" > sys.out 2> sys.err
	check "$1" has sys.err "$3"
}

sys_is_61=
sys_perf_is_61 && sys_is_61=1
recorder=$PERF
[ -n "$sys_is_61" ] && recorder=$SYS_PERF

# ------------------------------------------------------------ base file
# The recorded program burns 40M iterations (tens of ms) so that every
# recording has samples: 'true' can exit before the first tick of
# cpu-clock, and a pipe recording of it then had none on some machines.
build_workload "$top/tests/workloads/loop.c" loop -O0
if ! "$recorder" record -q -e cpu-clock -g -o base.data -- ./loop > record.log 2>&1; then
	cat record.log
	abort "perf record -e cpu-clock -g -- ./loop ($recorder)"
fi
"$PERF" report --stats -i base.data > base.stats 2> base.err
base_total=$(stat base.stats TOTAL)
base_samples=$(stat base.stats SAMPLE)
check "base file has samples ($base_samples)" [ "${base_samples:-0}" -gt 0 ]

# ------------------------------------------------------------ one type-22 record
$GEN base.data one.data > one.gen || bad "inject-deferred.py (one record)"
off=$(field offset < one.gen)
size=$(printf '%#x' "$(field size < one.gen)")
cookie=$(field cookie < one.gen)
nr=$(field nr < one.gen)
ips=$(field ips < one.gen)

sys_rejects "unpatched perf fails: failed to process type: 22" one.data "failed to process type: 22"

"$PERF" report --stats -i one.data > one.stats 2> one.err
check "patched --stats: no processing failure" hasnt one.err "failed to process"
check "patched --stats: CALLCHAIN_DEFERRED events: 1" eq "$(stat one.stats CALLCHAIN_DEFERRED)" 1
check "patched --stats: SAMPLE events unchanged" eq "$(stat one.stats SAMPLE)" "$base_samples"
check "patched --stats: TOTAL grows by one" eq "$(stat one.stats TOTAL)" $((base_total + 1))
check "patched --stats: no UNKNOWN line" hasnt one.stats "UNKNOWN events"

# perf 7.2's format (upstream's dump_deferred_callchain()): the header with
# the record's misc (PERF_RECORD_MISC_USER), pid/tid and cookie, then the
# chain as for a sample ("... FP chain: nr:N", one line per ip); the 6.1
# build printed "PERF_RECORD_CALLCHAIN_DEFERRED cookie: C nr: N" and the ips
"$PERF" report -D -i one.data > one.dump 2> one.dump.err
check "-D: record header with misc (PERF_RECORD_MISC_USER), pid/tid, cookie" \
	has one.dump "^[0-9]+ $off \[$size\]: PERF_RECORD_CALLCHAIN_DEFERRED\(IP, 0x2\): [0-9]+/[0-9]+: $cookie\$"
check "-D: then its nr" \
	eq "$(grep -E -A1 "^[0-9]+ $off \[$size\]: $REC22" one.dump | sed -n 2p)" "... FP chain: nr:$nr"
want_ips=$(i=0; for ip in ${ips//,/ }; do printf '..... %2d: %016x\n' $i "$ip"; i=$((i + 1)); done)
got_ips=$(grep -E -A "$((nr + 1))" "$REC22" one.dump | tail -n "$nr")
check "-D: the $nr ips" eq "$got_ips" "$want_ips"
check "-D: sample_id parsed (timestamp printed)" has one.dump "^[1-9][0-9]* $off "
check "-D: Aggregated stats count it" eq "$(grep -A30 'Aggregated stats' one.dump | awk '$1 == "CALLCHAIN_DEFERRED" { print $3 }')" 1

"$PERF" script -i one.data > one.script 2> one.script.err
check "perf script: exit status 0" [ $? -eq 0 ]
check "perf script: one line per sample" eq "$(grep -Ec '^ *loop ' one.script)" "$base_samples"
"$PERF" report --stdio -i one.data > one.report 2> one.report.err
check "perf report: all samples" has one.report "^# Samples: $base_samples +of event 'cpu-clock'"

# ------------------------------------------------------------ several records
$GEN --count 3 base.data three.data > three.gen || bad "inject-deferred.py (three records)"
"$PERF" report --stats -i three.data > three.stats 2> three.err
check "three records counted" eq "$(stat three.stats CALLCHAIN_DEFERRED)" 3
"$PERF" report -D -i three.data > three.dump 2>&1
check "three records dumped" eq "$(count three.dump "$REC22")" 3

# ------------------------------------------------------------ malformed records
$GEN --nr 1000 base.data badnr.data > badnr.gen || bad "inject-deferred.py (--nr 1000)"
boff=$(field offset < badnr.gen)
bsize=$(printf '%#x' "$(field size < badnr.gen)")
"$PERF" report --stats -i badnr.data > badnr.stats 2> badnr.err
check "nr too big: error names the file offset" \
	has badnr.err "^$boff \[$bsize\]: malformed PERF_RECORD_CALLCHAIN_DEFERRED: nr 1000 but room for $nr entries, skipping it\$"
check "nr too big: reported once" eq "$(count badnr.err malformed)" 1
check "nr too big: still counted as a record" eq "$(stat badnr.stats CALLCHAIN_DEFERRED)" 1
check "nr too big: counted as malformed" has badnr.stats "^ +1  \(malformed CALLCHAIN_DEFERRED, skipped\)\$"
check "nr too big: samples unaffected" eq "$(stat badnr.stats SAMPLE)" "$base_samples"
"$PERF" report -D -i badnr.data > badnr.dump 2>&1
check "nr too big: -D says skipped, prints no ips" \
	has badnr.dump "^$boff \[$bsize\]: PERF_RECORD_CALLCHAIN_DEFERRED: malformed, skipped\$"
# no_record_dump FILE: no type-22 header line with a cookie, no chain after
# any type-22 line
no_record_dump() {
	! grep -Eq "$REC22" "$1" && ! grep -E -A1 PERF_RECORD_CALLCHAIN_DEFERRED "$1" | grep -q 'FP chain'
}
check "nr too big: -D prints no record line (cookie), no chain of it" no_record_dump badnr.dump
"$PERF" script -i badnr.data > /dev/null 2> badnr.script.err
check "nr too big: perf script warns at the end" \
	has badnr.script.err "^1 of 1 CALLCHAIN_DEFERRED records were malformed and skipped\.\$"

$GEN --nr 0xffffffffffffffff base.data hugenr.data > /dev/null
"$PERF" report --stats -i hugenr.data > hugenr.stats 2> hugenr.err
check "nr = 2^64-1: rejected" has hugenr.err "nr 18446744073709551615 but room for $nr entries"

# no ips and its 16-byte sample_id (pid/tid, time) cut off: at least the
# uncut size expected.  perf 7.2 itself refuses a record whose size is not a
# multiple of 8 (it ends the session: upstream's "not 8-byte aligned,
# aborting"), so its message no longer says "a multiple of 8 and at least"
$GEN --ips '' --cut 16 base.data short.data > short.gen
ssize=$(field size < short.gen)
"$PERF" report --stats -i short.data > short.stats 2> short.err
check "record shorter than its sample_id: rejected" \
	has short.err "malformed PERF_RECORD_CALLCHAIN_DEFERRED: size $ssize, expected at least $((ssize + 16)), skipping it\$"

$GEN --count 12 --nr 100000 base.data many.data > /dev/null
"$PERF" report --stats -i many.data > many.stats 2> many.err
check "12 malformed: 10 reported, then quiet" eq "$(count many.err ': malformed PERF_RECORD')" 10
check "12 malformed: says the rest are only counted" \
	has many.err "^further malformed PERF_RECORD_CALLCHAIN_DEFERRED records are only counted\$"
check "12 malformed: all counted" has many.stats "^ +12  \(malformed CALLCHAIN_DEFERRED, skipped\)\$"

# ------------------------------------------------------------ unknown types (0001)
$GEN --count 0 --raw-type 23 --raw-type 99 --raw-type 200 base.data unknown.data > unknown.gen
sys_rejects "unpatched perf fails on type 23" unknown.data "failed to process type: 23"
"$PERF" report --stats -i unknown.data > unknown.stats 2> unknown.err
check "unknown types: no failure" hasnt unknown.err "failed to process"
check "unknown types: UNKNOWN events: 3" eq "$(stat unknown.stats UNKNOWN)" 3
check "unknown types: TOTAL counts them" eq "$(stat unknown.stats TOTAL)" $((base_total + 3))
"$PERF" script -i unknown.data > unknown.script 2> unknown.script.err
check "unknown types: perf script exit status 0" [ $? -eq 0 ]
check "unknown types: exactly one warning" eq "$(count unknown.script.err '^Found [0-9]+ unknown events')" 1
check "unknown types: warning text" has unknown.script.err "^Found 3 unknown events, skipped them \(first: type [0-9]+ at file offset 0x[0-9a-f]+\)!\$"
check "unknown types: perf script still shows all samples" eq "$(grep -Ec '^ *loop ' unknown.script)" "$base_samples"
"$PERF" report -D -i unknown.data > unknown.dump 2>&1
for t in 23 99 200; do
	check "unknown types: -D shows type $t skipped" has unknown.dump "unknown record type $t, skipped\$"
done

# ------------------------------------------------------------ bigger attrs (0001)
# a newer perf writes a bigger struct perf_event_attr (6.3+: config3, 7.x:
# config4): attrs 8 bytes bigger than the perf under test's own (its
# sizeof(struct perf_event_attr), the size it writes: 144 for perf 7.2, 128
# for the 6.1 build), the fields it knows 0 as for a software event, the 8
# bytes past them all ones
"$PERF" record -q -e cpu-clock -o own.data -- true > /dev/null 2>&1
attr_size() { "$PERF" evlist -v -i "$1" 2> /dev/null | sed -nE '1s/.*, size: ([0-9]+),.*/\1/p'; }
ours=$(attr_size own.data)
theirs=$(attr_size base.data)
sizes_ok() { [ "${ours:-0}" -ge 128 ] && [ "${theirs:-0}" -ge 64 ] && [ "$ours" -ge "$theirs" ]; }
check "bigger attrs: the attr sizes of ours ($ours) and of the recording ($theirs)" sizes_ok
$GEN --count 1 --grow-attr $((ours + 8 - theirs)) --grow-attr-known $((ours - theirs)) \
	--grow-attr-fill 255 base.data attr.data > attr.gen
sys_rejects "unpatched perf rejects bigger attrs" attr.data "incompatible file format"
"$PERF" report --stats -i attr.data > attr.stats 2> attr.err
check "bigger attrs: file is read" eq "$(stat attr.stats SAMPLE)" "$base_samples"
check "bigger attrs: type 22 still counted" eq "$(stat attr.stats CALLCHAIN_DEFERRED)" 1
"$PERF" evlist -v -i attr.data > attr.evlist 2>&1
check "bigger attrs: attr.size clamped to ours" has attr.evlist "^cpu-clock: type: 1( \([A-Z_]+\))?, size: $ours,"

# ------------------------------------------------------------ pipe mode (0001)
if "$recorder" record -q -e cpu-clock -g -o - -- ./loop > pipe.data 2> pipe.log; then
	# a feature id this perf does not know, and a user record type above
	# PERF_RECORD_HEADER_MAX, both appended to the stream
	$GEN --feature 200 --raw-type 99 pipe.data pipe2.data > pipe2.gen
	sys_rejects "unpatched perf report fails on an unknown pipe feature" pipe2.data \
		"wrong feature ID: 200" --stdio
	"$PERF" report --stdio -i pipe2.data > pipe2.report 2> pipe2.err
	check "pipe: unknown feature ignored by perf report" hasnt pipe2.err "wrong feature ID|failed to process"
	check "pipe: perf report shows the samples" has pipe2.report "^# Samples: [1-9][0-9]* +of event 'cpu-clock'"
	check "pipe: unknown record type warned about once" \
		eq "$(count pipe2.err '^Found 1 unknown events, skipped them \(first: type 99 ')" 1
else
	bad "perf record -o - (pipe mode)"
fi

# ------------------------------------------------------------ 6.19-style file
$GEN --defer base.data defer.data > defer.gen
ndefer=$(wc -l < defer.gen)
check "defer mode made records ($ndefer)" [ "$ndefer" -gt 0 ]
"$PERF" report --stats -i defer.data > defer.stats 2> defer.err
check "defer mode: no failure" hasnt defer.err "failed to process"
check "defer mode: all records counted" eq "$(stat defer.stats CALLCHAIN_DEFERRED)" "$ndefer"
check "defer mode: samples unchanged" eq "$(stat defer.stats SAMPLE)" "$base_samples"
"$PERF" report -D -i defer.data > defer.dump 2>&1
check "defer mode: all records dumped" eq "$(count defer.dump "$REC22")" "$ndefer"
first_cookie=$(head -1 defer.gen | sed -E 's/.*cookie=([^ ]+) .*/\1/')
check "defer mode: sample carries PERF_CONTEXT_USER_DEFERRED + cookie" \
	has defer.dump "^\.\.\.\.\. +[0-9]+: fffffffffffffd80 \(PERF_CONTEXT_USER_DEFERRED\)\$"
check "defer mode: the first cookie appears in a sample chain" \
	has defer.dump "^\.\.\.\.\. +[0-9]+: $(printf '%016x' "$first_cookie")\$"

finish
