#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch --emulate and perf record --call-graph deferred,emulate
# (tools/perf/util/deferred-emulate*.c and the perf stitch and perf record
# hooks of patches/perf-7.2).
#
# Records a frame-pointer workload (tests/workloads/emulate-workload.c: system
# calls, page faults, sleeps, threads, a thread moved between CPUs inside
# long reads) with the system perf, turns it into the deferred format of
# Linux 6.19 with the patched perf and checks the result against the
# recording and the emulation's ground truth (tests/perf/helpers/emulate-check.py
# reads 'perf report -D' of both): markers and cookies, records, attr bits,
# fault injection, determinism, pipe mode, error cases, record mode.
#
# The end-to-end check (the merged 'perf script' output of the emulated
# file shows exactly the recording's callchains, orphans one for one with
# the injected faults) needs merging in perf script: it reports SKIP when
# 'perf script --merge-callchains' (perf 7.2's name; the 6.1 build's was
# --[no-]stitch) does not exist.
#
# usage: tests/perf/test-emulate.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (records the workload
#   and must fail on the emulated file; $PERF if missing), PYTHON, CC, KEEP.
# Needs root (or perf_event_paranoid <= 1 and tracefs access) for the
# raw_syscalls:sys_exit tracepoint.  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || SYS_PERF=$PERF
CHECK="$PY $here/helpers/emulate-check.py"

# jfield FILE KEY: KEY of the first (summary) line of a truth file
jfield() { $PY -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2"; }
# checker PREFIX ORIG.dump EMU.dump TRUTH OUT: emulate-check.py on the
# dumps and the truth (its output in OUT), one result per check, with PREFIX
checker() {
	$CHECK "$2" "$3" "$4" > "$5" 2>&1
	relay_checks "$1" "$5"
}
# info FILE NAME: an "info NAME value" of emulate-check.py
info() { awk -v n="$2" '$1 == "info" && $2 == n { print $3 }' "$1"; }

# ------------------------------------------------------------ the workload
record_fp fp.data 400
"$SYS_PERF" report -D -i fp.data > fp.dump 2> /dev/null
"$PERF" report --stats -i fp.data > fp.stats 2> /dev/null
nsamples=$(stat fp.stats SAMPLE)
check "recording has samples ($nsamples)" gt "$nsamples" 500

# ------------------------------------------------------------ emulation
"$PERF" stitch --emulate -i fp.data -o emu.data --truth emu.truth > emu.out 2> emu.err
check "perf stitch --emulate: exit status 0" eq "$?" 0
check "perf stitch --emulate: writes the output and the truth" [ -s emu.data -a -s emu.truth ]
check "perf stitch --emulate: summary on stderr" has emu.err '^perf stitch: [0-9]+ of [0-9]+ samples deferred'
check "perf stitch --emulate: nothing on stdout" [ ! -s emu.out ]
check "perf stitch --emulate: no temporary file left" eval '! ls emu.data.tmp-* emu.truth.tmp-* > /dev/null 2>&1'

# every reading mode against the order-free oracle (oracle.py)
PERF=$PERF OUT=$tmp/oracle "$here/helpers/oracle-check.sh" emu.data emulated > oracle.out 2>&1
relay_results oracle.out

"$PERF" report --stats -i emu.data > emu.stats 2> emu.stats.err
nrec=$(stat emu.stats CALLCHAIN_DEFERRED)
check "--stats: CALLCHAIN_DEFERRED records ($nrec)" gt "$nrec" 100
check "--stats: as many records as the truth says" eq "$nrec" "$(jfield emu.truth records)"
check "--stats: fewer records than deferred samples (entries shared)" gt "$(jfield emu.truth deferred)" "$nrec"
check "--stats: every sample kept" eq "$(stat emu.stats SAMPLE)" "$nsamples"
check "--stats: other records kept (SWITCH)" eq "$(stat emu.stats SWITCH)" "$(stat fp.stats SWITCH)"
check "--stats: other records kept (MMAP2)" eq "$(stat emu.stats MMAP2)" "$(stat fp.stats MMAP2)"
check "--stats: rounds kept" eq "$(stat emu.stats FINISHED_ROUND)" "$(stat fp.stats FINISHED_ROUND)"
check "--stats: no malformed record" hasnt emu.stats 'malformed'

"$PERF" report -D -i emu.data > emu.dump 2> /dev/null
# perf 7.2 names the context entries of a chain in -D
check "-D: samples end in PERF_CONTEXT_USER_DEFERRED (fffffffffffffd80)" \
	has emu.dump '^\.\.\.\.\. +[0-9]+: fffffffffffffd80 \(PERF_CONTEXT_USER_DEFERRED\)$'
checker "truth" fp.dump emu.dump emu.truth emu.check
check "some entries return on another CPU ($(info emu.check cross_cpu_records))" \
	gt "$(info emu.check cross_cpu_records)" 0
check "every sample deferred, no orphans without faults" eq "$(info emu.check orphans)" 0

"$PERF" report --stdio -i emu.data > emu.report 2> emu.report.err
check "perf report: reads it, no out of order events" hasnt emu.report.err 'out of order|failed'
check "perf report: all samples" has emu.report "^# Samples: "

# the system perf (6.1) cannot read it.  A file perf 7.2 writes has its
# 144-byte attrs, which 6.1 refuses before it reads a record; with them cut
# back to 6.1's 128 bytes (the 16 more are config3 and config4, 0 here) 6.1
# reads the header and fails on the type-22 records, as it did on the 6.1
# build's output (whose attrs had 6.1's size)
"$SYS_PERF" report --stats -i emu.data > sys.out 2> sys.err
if sys_perf_is_61; then
	check "system perf fails on it (perf 7.2's attrs): incompatible file format" \
		has sys.err 'incompatible file format'
	$PY "$here/helpers/inject-deferred.py" --attr-size 128 emu.data emu128.data > emu128.out 2>&1
	check "attrs cut back to 6.1's 128 bytes" has emu128.out '^attrs resized from 144 to 128 bytes$'
	"$PERF" report --stats -i emu128.data > emu128.stats 2> /dev/null
	check "attrs cut back: the same file to our perf" same emu.stats emu128.stats
	"$SYS_PERF" report --stats -i emu128.data > sys.out 2> sys.err
	check "system perf fails on it: failed to process type: 22" has sys.err 'failed to process type: 22'
	"$SYS_PERF" script -i emu128.data > /dev/null 2> sys.script.err
	check "system perf script: exit status non-zero" [ $? -ne 0 ]
else
	skipped "system perf is not a 6.1"
fi

# ------------------------------------------------------------ attr bits
"$PERF" evlist -v -i emu.data > emu.evlist 2>&1
check "evlist: cpu-clock has defer_callchain" has emu.evlist '^cpu-clock:.* defer_callchain: 1'
check "evlist: cpu-clock (tracking) has defer_output" has emu.evlist '^cpu-clock:.* defer_output: 1'
check "evlist: sys_exit (callchains) has defer_callchain" has emu.evlist '^raw_syscalls:sys_exit:.* defer_callchain: 1'
check "evlist: sys_exit has no defer_output" hasnt emu.evlist '^raw_syscalls:sys_exit:.* defer_output'
"$PERF" report --header-only -i emu.data > emu.header 2>&1
check "event desc (HEADER_EVENT_DESC): defer_callchain on both" eq "$(grep -c '^# event : .*defer_callchain = 1' emu.header)" 2
check "event desc: defer_output on one" eq "$(grep -c '^# event : .*defer_output = 1' emu.header)" 1
check "event desc: names kept" has emu.header '^# event : name = raw_syscalls:sys_exit'
"$PERF" report --header-only -i fp.data > fp.header 2>&1
check "other header features kept (hostname, cmdline, cpu topology)" \
	eq "$(grep -E '^# (hostname|cmdline|sibling|os release|nrcpus)' emu.header)" \
	   "$(grep -E '^# (hostname|cmdline|sibling|os release|nrcpus)' fp.header)"

# ------------------------------------------------------------ faults
"$PERF" stitch --emulate -q -i fp.data -o drop.data --drop=1 --truth drop.truth 2> drop.err
"$PERF" report --stats -i drop.data > drop.stats 2>&1
check "--drop=1: no records" eq "$(stat drop.stats CALLCHAIN_DEFERRED)" 0
check "--drop=1: every deferred sample is an orphan (truth)" \
	eq "$(grep -c '"expect":"orphan","orphan":"drop"' drop.truth)" "$(jfield drop.truth deferred)"
check "-q: no summary" [ ! -s drop.err ]

"$PERF" stitch --emulate -q -i fp.data -o dup.data --duplicate=1 --truth dup.truth
"$PERF" report --stats -i dup.data > dup.stats 2>&1
check "--duplicate=1: twice as many records" eq "$(stat dup.stats CALLCHAIN_DEFERRED)" $((2 * nrec))

"$PERF" stitch --emulate -q -i fp.data -o mix.data --truth mix.truth --seed 7 \
	--drop 0.2 --duplicate 0.2 --late 0.5 --bogus-ip 0.2
"$PERF" report -D -i mix.data > mix.dump 2> /dev/null
checker "faults" fp.dump mix.dump mix.truth mix.check
check "faults: late samples ($(info mix.check late))" gt "$(info mix.check late)" 0
check "faults: orphans ($(info mix.check orphans)) include the dropped ($(info mix.check drops))" \
	gt "$(($(info mix.check orphans) + 1))" "$(info mix.check drops)"
check "faults: bogus ips in the records" has mix.truth '"bogus_at":'
check "faults: duplicated records" has mix.truth '"copies":2'
"$PERF" report --stdio -i mix.data > /dev/null 2> mix.report.err
check "faults: perf report reads it, no out of order events" hasnt mix.report.err 'out of order|failed'

"$PERF" stitch --emulate -q -i fp.data -o late.data --late=1 --truth late.truth
"$PERF" report -D -i late.data > late.dump 2> /dev/null
checker "--late=1" fp.dump late.dump late.truth late.check

# ------------------------------------------------------------ determinism
"$PERF" stitch --emulate -q -i fp.data -o mix2.data --truth mix2.truth --seed 7 \
	--drop 0.2 --duplicate 0.2 --late 0.5 --bogus-ip 0.2
check "same seed: byte-identical output" cmp -s mix.data mix2.data
check "same seed: byte-identical truth" cmp -s mix.truth mix2.truth
"$PERF" stitch --emulate -q -i fp.data -o mix3.data --seed 8 \
	--drop 0.2 --duplicate 0.2 --late 0.5 --bogus-ip 0.2
check "another seed: another output" eval '! cmp -s mix.data mix3.data'
"$PERF" stitch --emulate -q -i fp.data -o emu2.data
check "no faults: same output whatever the seed" cmp -s emu.data emu2.data

# ------------------------------------------------------------ fallbacks: no sys_exit, no CPU
"$SYS_PERF" record -q -g -e cpu-clock -o nocpu.data -- ./workload 200 > /dev/null 2>&1
"$PERF" stitch --emulate -i nocpu.data -o nocpu.emu --truth nocpu.truth 2> nocpu.err
check "no CPU, no sys_exit, no switches: emulated" eq "$?" 0
check "no CPU: says so" has nocpu.err 'do not say on which CPU'
check "no sys_exit: says returns are estimated" has nocpu.err 'system call returns are estimated'
check "no switches: says so" has nocpu.err 'no context switch records'
"$SYS_PERF" report -D -i nocpu.data > nocpu.dump 2> /dev/null
"$PERF" report -D -i nocpu.emu > nocpu.emu.dump 2> /dev/null
checker "fallbacks" nocpu.dump nocpu.emu.dump nocpu.truth nocpu.check
check "fallbacks: entries ended by fallback" has nocpu.truth '"return":"fallback"'

# ------------------------------------------------------------ exec, compressed input
# a shell running a program many times: samples in execve() before the exec
# point share the entry with the new program's stack, they become orphans
"$SYS_PERF" record -q -F 20000 -g --sample-cpu --switch-events -e cpu-clock \
	-e raw_syscalls:sys_exit -o exec.data -- sh -c 'for i in $(seq 200); do /bin/true; done' \
	> /dev/null 2>&1
"$PERF" stitch --emulate -q -i exec.data -o exec.emu --truth exec.truth
"$SYS_PERF" report -D -i exec.data > exec.dump 2> /dev/null
"$PERF" report -D -i exec.emu > exec.emu.dump 2> /dev/null
checker "exec" exec.dump exec.emu.dump exec.truth exec.check
check "exec: samples before an exec in their entry are orphans ($(grep -c '"orphan":"exec"' exec.truth))" \
	gt "$(grep -c '"orphan":"exec"' exec.truth)" 0
check "exit: entries ended by the task's exit" has exec.truth '"return":"exit"'

"$SYS_PERF" record -q -z -g --sample-cpu -e cpu-clock -o z.data -- ./workload 100 > /dev/null 2>&1
if "$PERF" report --header-only -i z.data 2> /dev/null | grep -q '^# compressed'; then
	"$PERF" stitch --emulate -q -i z.data -o z.emu --truth z.truth
	"$PERF" report --stats -i z.data > z.stats 2>&1
	"$PERF" report --stats -i z.emu > z.emu.stats 2>&1
	check "compressed input: every sample kept" eq "$(stat z.emu.stats SAMPLE)" "$(stat z.stats SAMPLE)"
	check "compressed input: records written" gt "$(stat z.emu.stats CALLCHAIN_DEFERRED)" 0
	"$PERF" report --header-only -i z.emu > z.emu.header 2>&1
	check "compressed input: written uncompressed, feature dropped" hasnt z.emu.header '^# compressed'
else
	skipped "compressed input: the system perf cannot record with -z"
fi

# ------------------------------------------------------------ pipe mode
"$SYS_PERF" record -q -g -e cpu-clock -o - -- ./workload 100 2> /dev/null > pipe.fp
"$PERF" stitch --emulate -q -i - -o - < pipe.fp > pipe.emu 2> pipe.err
check "pipe mode: exit status 0" eq "$?" 0
"$PERF" report --stats -i - < pipe.fp > pipe.fp.stats 2>&1
"$PERF" report --stats -i - < pipe.emu > pipe.stats 2>&1
check "pipe mode: records written" gt "$(stat pipe.stats CALLCHAIN_DEFERRED)" 0
check "pipe mode: every sample kept" eq "$(stat pipe.stats SAMPLE)" "$(stat pipe.fp.stats SAMPLE)"
"$PERF" evlist -v -i - < pipe.emu > pipe.evlist 2>&1
check "pipe mode: attrs have the bits" has pipe.evlist 'defer_callchain: 1, defer_output: 1'

# ------------------------------------------------------------ errors leave no output
# each: DESCRIPTION, OUTPUT, then the perf stitch arguments
err_case() {
	local d=$1 out=$2; shift 2
	"$PERF" stitch "$@" > "err.out" 2> "err.err"
	local rc=$?
	check "$d: fails" [ $rc -ne 0 ]
	no_output "$d" "$out"
}
err_case "missing input" e1.data --emulate -i nosuch.data -o e1.data
err_case "input already deferred" e2.data --emulate -i emu.data -o e2.data
check "input already deferred: says so" has err.err 'already'
err_case "--drop=2" e3.data --emulate -i fp.data -o e3.data --drop=2
err_case "--late=abc" e4.data --emulate -i fp.data -o e4.data --late=abc
err_case "no -o" perf.data --emulate -i fp.data
err_case "output directory missing" nodir/e5.data --emulate -i fp.data -o nodir/e5.data
sum=$(md5sum < fp.data)
"$PERF" stitch --emulate -i fp.data -o fp.data > err.out 2> err.err
check "output = input: fails" [ $? -ne 0 ]
check "output = input: input intact, no temporary file" \
	eval '[ "$(md5sum < fp.data)" = "$sum" ] && ! ls fp.data.tmp-* > /dev/null 2>&1'
"$SYS_PERF" record -q -e cpu-clock -o nocg.data -- ./workload 50 > /dev/null 2>&1
err_case "no callchains in the input" e6.data --emulate -i nocg.data -o e6.data
check "no callchains: says so" has err.err 'record with -g'
err_case "truth directory missing" e7.data --emulate -i fp.data -o e7.data --truth nodir/t.json
err_case "pipe input, file output" e8.data --emulate -i - -o e8.data < pipe.fp
err_case "fault options without --emulate" e9.data -i fp.data -o e9.data --drop 0.1
"$PERF" stitch -q -i emu.data -o e10.data > err.out 2> err.err
check "convert mode (tests/perf/test-stitch-convert.sh): converts the emulated file" \
	eq "$?:$(cat err.err)" "0:"
err_case "-F with --emulate" e11.data --emulate -i fp.data -o e11.data -F folded
check "-F with --emulate: exclusive" has err.err 'exclusive'
err_case "--stats with --emulate" e12.data -i emu.data --stats --emulate -o e12.data
"$PERF" stitch --stats -i emu.data > emu.stitch-stats 2> emu.stitch-stats.err
check "--stats (tests/perf/test-stitch-stats.sh): runs on the emulated file" has emu.stitch-stats '^deferred samples: +[1-9]'
"$PERF" stitch -h > help.out 2>&1
check "help: --emulate advertised" has help.out '--emulate'
check "help: --stats advertised" has help.out '--stats'
check "help: -F/--format advertised (test-stitch-export.sh)" has help.out '--format'

# ------------------------------------------------------------ perf record --call-graph deferred,emulate
"$PERF" record --call-graph=deferred,emulate -o rec.data -- ./workload 200 > rec.out 2> rec.err
check "record deferred,emulate: exit status 0" eq "$?" 0
check "record deferred,emulate: says it was emulated" has rec.err 'emulated \(perf stitch --emulate\), wrote rec.data'
check "record deferred,emulate: no temporary recording left" eval '! ls rec.data.fp-* rec.data.tmp-* > /dev/null 2>&1'
"$PERF" report --stats -i rec.data > rec.stats 2>&1
check "record deferred,emulate: CALLCHAIN_DEFERRED records" gt "$(stat rec.stats CALLCHAIN_DEFERRED)" 0
"$PERF" evlist -v -i rec.data > rec.evlist 2>&1
# the event perf record samples without -e: perf 7.2 falls back from cycles
# to task-clock where there is no PMU (6.1 fell back to cpu-clock), hence
# the name a plain recording's first event has
"$PERF" record -q -g -o plain.data -- true > /dev/null 2>&1
defev=$("$PERF" evlist -i plain.data 2> /dev/null | head -1 | cut -d: -f1)
check "record deferred,emulate: samples the default event ($defev)" has rec.evlist "^$defev(:[a-zA-Z]+)?: "
check "record deferred,emulate: defer bits on the sampling event" \
	has rec.evlist "^$defev(:[a-zA-Z]+)?: .*defer_callchain: 1, defer_output: 1"
check "record deferred,emulate: the CPU in the samples" \
	has rec.evlist "^$defev(:[a-zA-Z]+)?: .*sample_type: [A-Z|]*CPU"
check "record deferred,emulate: context switches" has rec.evlist 'context_switch: 1'
if grep -q '^raw_syscalls:sys_exit' rec.evlist; then
	ok "record deferred,emulate: raw_syscalls:sys_exit added"
	check "record deferred,emulate: sys_exit without callchain" hasnt rec.evlist '^raw_syscalls:sys_exit:.*CALLCHAIN'
else
	skipped "record deferred,emulate: raw_syscalls:sys_exit not permitted here"
fi
"$PERF" record -q --call-graph=deferred,emulate -o recq.data -- ./workload 50 > /dev/null 2> recq.err
check "record deferred,emulate -q: silent" [ ! -s recq.err ]
"$PERF" record --call-graph=deferred,emulate -o - -- ./workload 50 > /dev/null 2> recp.err
check "record deferred,emulate -o -: refused" has recp.err 'cannot write to a pipe'
"$PERF" record --call-graph=deferred,bogus -o recb.data -- true > /dev/null 2> recb.err
check "record deferred,bogus: refused" has recb.err 'Unknown --call-graph deferred option value: bogus'
"$PERF" record -vv --call-graph=deferred,emulate,16 -o rec16.data -- ./workload 50 > /dev/null 2> rec16.err
check "record deferred,emulate,16: parsed" has rec16.err 'user part deferred \(emulated\)'

# ------------------------------------------------------------ end to end with the stitching perf
# perf script merges deferred callchains when it has --[no-]merge-callchains
# (perf 7.2; the 6.1 build's --[no-]stitch).  The reference is the same perf
# on the recording (upstream's reading of in-place callchains): 7.2 prints
# user addresses as recorded where 6.1 printed some relative to their dso.
# --no-inline: one line per callchain entry (the truth counts entries), and
# the same lines wherever addr2line or libdw would find inlined frames
"$PERF" script -h > script.help 2>&1
if ! grep -Eq -- '^ +--(no-)?merge-callchains( |$)' script.help; then
	skipped "end to end: $PERF script cannot merge deferred callchains (no --merge-callchains)"
else
	fields="-F tid,time,event,ip,sym,dso --ns --no-inline"
	# name, emulated file, recording
	for c in emu:emu.data:fp.data mix:mix.data:fp.data late:late.data:fp.data \
		 exec:exec.emu:exec.data; do
		IFS=: read -r f in ref <<< "$c"
		"$PERF" script $fields -i $ref > e2e.ref 2> /dev/null
		"$PERF" script $fields -i $in > e2e.$f 2> e2e.$f.err
		$CHECK --e2e e2e.ref e2e.$f $f.truth > e2e.$f.check 2>&1
		while read -r line; do
			case "$line" in
			"check "*" ok") ok "end to end ($f): ${line#check }";;
			"check "*) bad "end to end ($f): ${line#check }";;
			esac
		done < e2e.$f.check
		grep -q '^check ' e2e.$f.check || { bad "end to end ($f): emulate-check.py --e2e failed"; cat e2e.$f.check; }
	done
fi

finish
