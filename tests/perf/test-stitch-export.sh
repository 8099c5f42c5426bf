#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch -F folded|speedscope (tools/perf/util/deferred-export.c).
#
# Folded: 'perf script | tests/perf/helpers/stackcollapse-perf.py [options]',
# sorted, must equal 'perf stitch -F folded [options]' byte for byte, on
# (a) a real frame-pointer recording of tests/workloads/emulate-workload.c
# emulated into the deferred format with dropped records, and (b) a
# written file with the edge cases (export-check.py gen: comm with spaces,
# orphans of three reasons, addresses without symbol or map, kernel-only
# and user-mode samples, a second event, a third without callchains whose
# sample comes first, a callchain without frames, a thread renaming
# itself), and (c) fixed-period recordings (perf record -c, two events
# with period= terms of their own, and frequency mode with --no-period: no
# PERF_SAMPLE_PERIOD, perf script prints the attr's period), emulated too,
# for folded, speedscope and pprof, and (d) perf record --call-graph
# deferred,emulate, whose raw_syscalls:sys_exit has no callchains (perf
# script prints its samples as single lines stackcollapse-perf.pl never
# takes for samples).  The counts must add up to the samples perf script prints, the
# orphans' pseudo-frames to the orphans the emulation's truth (or the
# written file) expects.
# Speedscope: valid against the schema of the speedscope npm package (ajv,
# tests/perf/helpers/speedscope-check.js, node_modules/ from make node-deps: this
# suite fails without them), and each thread's samples, in order, show the
# frames perf script shows for them.
#
# usage: tests/perf/test-stitch-export.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (records the workload;
#   $PERF if missing), PYTHON, CC, KEEP, VERBOSE, and
#   NODE_MODULES=...  node_modules with speedscope and ajv (default: the
#                     repository's, from make node-deps)
#   PPROF=...         the pprof CLI (default: build/pprof, from make pprof)
#   UPSTREAM_PERF=... pristine perf 7.2 (default: build/perf-upstream, from
#                     make perf-upstream): the warnings perf 7.2 prints
#                     reading a pipe's header
# Needs root (or perf_event_paranoid <= 1 and tracefs access) for the
# raw_syscalls:sys_exit tracepoint.  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || SYS_PERF=$PERF
NODE_MODULES=$(abs_path "${NODE_MODULES:-$top/node_modules}")
if ! command -v node > /dev/null || [ ! -d "$NODE_MODULES/ajv" ] ||
   [ ! -f "$NODE_MODULES/speedscope/dist/release/file-format-schema.json" ]; then
	abort "node, ajv or speedscope's schema missing (make node-deps)"
fi
PPROF=$(abs_path "${PPROF:-$top/build/pprof}")
[ -x "$PPROF" ] || abort "no pprof CLI at $PPROF (make pprof)"
COLLAPSE="$PY $here/helpers/stackcollapse-perf.py"
HELP="$PY $here/helpers/export-check.py"
PPCHECK="$PY $here/helpers/pprof-check.py"
export LC_ALL=C

# sum FILE: the counts of a folded file
sum() { awk '{ n += $NF } END { printf "%.0f\n", n }' "$1"; }
# lost FILE [REASON]: the samples of the lines with a lost-stack frame
lost() { grep -F "[user stack lost: ${2:-}" "$1" | sum /dev/stdin; }
# nsamples FILE EVENT: samples of EVENT in perf script -F ...,event output
nsamples() { grep -cE " $2: *$" "$1"; }
# periods FILE EVENT: the periods of EVENT's samples in perf script -F ...,period,event
periods() { awk -v e="$2:" '$NF == e { n += $(NF - 1) } END { printf "%.0f\n", n }' "$1"; }

# perf script's fields where the pid must be printed (--pid, --tid): a
# header like the default one (the period; a tracepoint's fields after
# its name)
FIELDS=comm,pid,tid,time,period,event,trace,ip,sym,dso

# compare NAME DATA "COLLAPSE OPTIONS" "STITCH OPTIONS" [perf options...]:
# perf stitch -F folded against 'perf script | stackcollapse-perf.py', perf
# script printing its default fields (FIELDS for --pid and --tid)
compare() {
	local name=$1 data=$2 copts=$3 sopts=$4 fields=

	shift 4
	case " $copts " in *" --pid "* | *" --tid "*) fields="-F $FIELDS" ;; esac
	# shellcheck disable=SC2086
	"$PERF" script -i "$data" $fields "$@" 2> /dev/null | $COLLAPSE $copts 2> /dev/null |
		sort > "$name.expected"
	# shellcheck disable=SC2086
	"$PERF" stitch -F folded -i "$data" $sopts "$@" > "$name.folded" 2> "$name.err"
	check "$name: exit 0" eq "$?" 0
	check "$name: perf stitch -F folded $sopts = stackcollapse-perf.py $copts" \
		same "$name.folded" "$name.expected"
}

# pprof NAME DATA "STITCH OPTIONS" [perf options...]: -F pprof read by the
# pprof CLI: its traces are -F folded's stacks with their weights (but for
# the root frame alone, a callchain of no frame: a Sample without
# locations, which the CLI leaves out of its reports), its table -F
# folded's per-function totals, for both sample types
pprof() {
	local name=$1 data=$2 sopts=$3 idx

	shift 3
	# shellcheck disable=SC2086
	"$PERF" stitch -F pprof -i "$data" -o "$name.pb.gz" $sopts "$@" 2> "$name.err"
	check "$name: -F pprof: exit 0" eq "$?" 0
	check "$name: gzip" eval "gzip -t '$name.pb.gz'"
	for idx in samples 1; do
		local w=
		[ $idx = samples ] && w=--count=samples
		# shellcheck disable=SC2086
		"$PERF" stitch -F folded -i "$data" $sopts $w "$@" > "$name.$idx.folded" 2> /dev/null
		"$PPROF" -sample_index=$idx -traces -unit=ns "$name.pb.gz" 2> "$name.$idx.pprof-err" |
			$PPCHECK traces > "$name.$idx.traces"
		grep ';' "$name.$idx.folded" > "$name.$idx.framed"
		check "$name: pprof -traces (index $idx) = -F folded $w" \
			same "$name.$idx.traces" "$name.$idx.framed"
		$PPCHECK folded-functions < "$name.$idx.folded" > "$name.$idx.functions"
		"$PPROF" -sample_index=$idx -top -unit=ns -nodecount=100000 -nodefraction=0 \
			"$name.pb.gz" 2> /dev/null |
			$PPCHECK top > "$name.$idx.top"
		check "$name: pprof -top (index $idx): per function flat and cum = -F folded's" \
			same "$name.$idx.top" "$name.$idx.functions"
	done
}

# speedscope NAME DATA EVENT [perf options...]
speedscope() {
	local name=$1 data=$2 event=$3
	shift 3
	"$PERF" stitch -F speedscope -i "$data" -o "$name.json" --event "$event" "$@" 2> "$name.err"
	check "$name: -F speedscope: exit 0" eq "$?" 0
	if node "$here/helpers/speedscope-check.js" "$NODE_MODULES" "$name.json" > "$name.stacks" \
			2> "$name.invalid"; then
		ok "$name: valid against speedscope's file format schema (ajv)"
	else
		bad "$name: valid against speedscope's file format schema (ajv)"
		head -20 "$name.invalid" | sed 's/^/     /'
	fi
	"$PERF" script -i "$data" -F comm,tid,time,period,event,ip,sym,dso "$@" 2> /dev/null |
		$HELP script-stacks "$event" > "$name.script-stacks"
	# by thread (stable: each thread's samples stay in time order)
	sort -s -t '	' -k1,1n "$name.stacks" > "$name.stacks.by-tid"
	sort -s -t '	' -k1,1n "$name.script-stacks" > "$name.script-stacks.by-tid"
	check "$name: each thread's runs of samples and their periods = perf script's, in order" \
		same "$name.stacks.by-tid" "$name.script-stacks.by-tid"
}

# ------------------------------------------------------------ (a) real recording
record_fp fp.data 400
"$PERF" stitch --emulate --drop 0.15 --seed 3 -i fp.data -o emu.data --truth emu.truth \
	> /dev/null 2> emu.err
check "perf stitch --emulate --drop 0.15: exit 0" eq "$?" 0

"$PERF" script -i emu.data -F comm,tid,time,period,event > emu.script 2> /dev/null
ncpu=$(nsamples emu.script cpu-clock)
nsys=$(nsamples emu.script raw_syscalls:sys_exit)
pcpu=$(periods emu.script cpu-clock)
check "(a) recording: cpu-clock samples ($ncpu)" gt "$ncpu" 300

# the default: weighed by period, the first event stackcollapse-perf.pl can
# filter (cpu-clock) and the tracepoint, whose fields follow its name
compare a emu.data "" ""
check "(a) summary: cpu-clock and the tracepoint samples, by period" has a.err \
	"^perf stitch: $ncpu cpu-clock samples exported, and $nsys of events with fields after their name .*, total weight $((pcpu + nsys)) \\(periods\\)"
check "(a) weights add up to the cpu-clock periods and one per sys_exit" \
	eq "$(sum a.folded)" "$((pcpu + nsys))"
check "(a) sorted" eval "sort -c a.folded"
check "(a) one line per stack" eq "$(sed 's/ [0-9]*$//' a.folded | sort -u | wc -l)" \
	"$(wc -l < a.folded)"
compare a-n emu.data "--count-samples" "--count=samples"
check "(a) --count=samples: one per sample" eq "$(sum a-n.folded)" "$((ncpu + nsys))"
check "(a) --count=samples: the same stacks" \
	eq "$(sed 's/ [0-9]*$//' a-n.folded)" "$(sed 's/ [0-9]*$//' a.folded)"
# --event: that event's samples only (the script's --event-filter keeps
# the tracepoint lines it cannot filter: the reference is cut to cpu-clock)
"$PERF" stitch -F folded -i emu.data --event cpu-clock --count=samples > a-cpu.folded 2> a-cpu.err
check "(a) --event cpu-clock: counts add up to perf script's cpu-clock samples" \
	eq "$(sum a-cpu.folded)" "$ncpu"
"$PERF" stitch -F folded -i emu.data --event cpu-clock > a-cpup.folded 2> /dev/null
check "(a) --event cpu-clock: weights add up to its periods" eq "$(sum a-cpup.folded)" "$pcpu"
norph=$($HELP truth-orphans cpu-clock emu.truth)
check "(a) some orphans expected ($norph)" gt "$norph" 10
check "(a) orphans shown with their reason frame: as many as the truth's" \
	eq "$(lost a-cpu.folded)" "$norph"
check "(a) summary: exported and orphans" has a-cpu.err \
	"^perf stitch: $ncpu cpu-clock samples exported \\($ncpu deferred: [0-9]+ stitched, $norph orphans"
check "(a) summary: the other event left out" has a-cpu.err \
	"; $nsys samples of other events left out \\(--event\\)$"

compare a-kernel emu.data "--kernel" "--kernel-suffix"
check "(a) --kernel-suffix: kernel frames marked" has a-kernel.folded ';do_syscall_64_\[k\]'
check "(a) --kernel-suffix: not the lost-stack frames" hasnt a-kernel.folded 'lost: [a-z ]+\]_\[k\]'
compare a-sep emu.data "--separator" "--separator"
check "(a) --separator: '-' between user and kernel" has a-sep.folded ';-;entry_SYSCALL_64'
compare a-all emu.data "--kernel --separator --tid" "--kernel-suffix --separator --tid"
compare a-pid emu.data "--pid" "--pid"
compare a-sys emu.data "--event-filter raw_syscalls:sys_exit" "--event raw_syscalls:sys_exit"
check "(a) --event raw_syscalls:sys_exit: counts add up" eq "$(sum a-sys.folded)" "$nsys"

"$PERF" stitch -q -F folded -i emu.data -o a.out.folded > a.stdout 2> a.out.err
check "-o: exit 0" eq "$?" 0
check "-o -q: nothing on stdout or stderr" eval '[ ! -s a.stdout ] && [ ! -s a.out.err ]'
check "-o: the same as on stdout" same a.out.folded a.folded
check "-o: no temporary file left" eval '! ls a.out.folded.tmp-* > /dev/null 2>&1'
# -o to a device: written, never replaced by a renamed temporary file
mkfifo out.fifo
cat out.fifo > fifo.folded &
"$PERF" stitch -q -F folded -i emu.data -o out.fifo
wait
check "-o FIFO: still a FIFO" [ -p out.fifo ]
check "-o FIFO: the output went through it" same fifo.folded a.folded

# pipe mode: a recording written to a pipe, read from stdin
"$SYS_PERF" record -q -g -e cpu-clock -o - -- ./workload 50 > pipe.data 2> /dev/null
"$PERF" script -i - < pipe.data 2> /dev/null | $COLLAPSE | sort > pipe.expected
"$PERF" stitch -F folded -i - < pipe.data > pipe.folded 2> /dev/null
check "-i - (pipe mode): exit 0" eq "$?" 0
check "-i - (pipe mode): some stacks" gt "$(wc -l < pipe.folded)" 5
check "-i - (pipe mode) = stackcollapse-perf.py" same pipe.folded pipe.expected

speedscope a-sp emu.data cpu-clock

pprof a-pp emu.data ""
"$PPROF" -raw a-pp.pb.gz > a-pp.raw 2> /dev/null
check "(a) pprof, cpu-clock and a tracepoint: samples/count, events/count (default)" \
	has a-pp.raw '^samples/count events/count\[dflt\]$'
"$PPROF" -tags -sample_index=samples a-pp.pb.gz > a-pp.tags 2> /dev/null
nst=$(sed -nE 's/.*\(([0-9]+) deferred: ([0-9]+) stitched, ([0-9]+) orphans.*/\2/p' a-pp.err)
check "(a) pprof: the stitch label counts the stitched samples ($nst)" \
	has a-pp.tags "^ +$nst(\.0)? \([0-9.]+%\): stitched$"
check "(a) pprof: orphans labelled with their reason" has a-pp.tags ': orphan: (record lost|task exited)$'
check "(a) pprof: comm, pid and tid labels" \
	eval "has a-pp.tags '^ comm: Total' && has a-pp.tags '^ pid: Total' && has a-pp.tags '^ tid: Total'"
pprof a-ppc emu.data "--event cpu-clock"
"$PPROF" -raw a-ppc.pb.gz > a-ppc.raw 2> /dev/null
check "(a) pprof --event cpu-clock: periods as cpu/nanoseconds (default)" \
	has a-ppc.raw '^samples/count cpu/nanoseconds\[dflt\]$'
"$PERF" stitch -F pprof --count=samples -i emu.data -o a-ppn.pb.gz --event cpu-clock 2> /dev/null
check "(a) pprof --count=samples: samples the default type" \
	eval "'$PPROF' -raw a-ppn.pb.gz 2> /dev/null | grep -q '^samples/count\[dflt\] cpu/nanoseconds$'"
check "(a) pprof --event cpu-clock: the workload's mapping with its build id" \
	eval "grep -E '^ *[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ .*/workload [0-9a-f]{40}' a-ppc.raw > /dev/null"

# perf data convert: the same export behind perf's converter door
for fmt in folded speedscope pprof; do
	rm -f dc.$fmt st.$fmt
	"$PERF" data convert --to-$fmt dc.$fmt -i emu.data > /dev/null 2> dc.$fmt.err
	check "perf data convert --to-$fmt: exit 0" eq "$?" 0
	"$PERF" stitch -F $fmt -i emu.data -o st.$fmt 2> /dev/null
	check "perf data convert --to-$fmt: the bytes of perf stitch -F $fmt" cmp -s dc.$fmt st.$fmt
done
check "perf data convert: the summary" has dc.folded.err '^perf data convert: [0-9]+ cpu-clock samples exported'
"$PERF" data convert --to-folded x --to-pprof y -i emu.data > /dev/null 2> dc.two.err
check "perf data convert: two formats refused" eval "[ $? -ne 0 ] && has dc.two.err 'only one of'"
no_output "perf data convert: two formats" x

# ------------------------------------------------------------ (b) edge cases
build_workload "$top/tests/workloads/workload.c" swl -O0
if ! $HELP gen --workload swl --out edge.data > gen.log 2>&1; then
	cat gen.log
	abort "export-check.py gen"
fi
KS=--kallsyms=$tmp/edge.kallsyms
"$PERF" script -i edge.data -F $FIELDS $KS > edge.script 2> /dev/null
compare b edge.data "" "" $KS
compare b-n edge.data "--count-samples" "--count=samples" $KS
compare b-all edge.data "--kernel --separator --tid --count-samples" \
	"--kernel-suffix --separator --tid --count=samples" $KS
compare b-task edge.data "--event-filter task-clock" "--event task-clock" $KS
check "(b) counts add up to the cpu-clock samples" eq "$(sum b-n.folded)" "$(js edge.json "d['cpu-clock']['samples']")"
for r in "record lost" "task exited" "stream ended"; do
	check "(b) [user stack lost: $r]: as many as written" eq "$(lost b-n.folded "$r")" \
		"$(js edge.json "d['cpu-clock']['orphans']['$r']")"
done
check "(b) comm with spaces: V8_WorkerThread" has b.folded '^V8_WorkerThread;'
check "(b) --tid: comm-PID/TID" has b-all.folded '^V8_WorkerThread-1000/1001;'
check "(b) no symbol: [dso file name]" has b.folded ';\[libgone\.so\.1\];'
check "(b) no map: [unknown]" has b.folded ';\[unknown\];'
check "(b) a library mapped over another: the same chain, now its frames" \
	has b-n.folded '^V8_WorkerThread;main;\[unknown\];\[libnew\.so\.2\];leaf;'
check "(b) kernel address without a map: no _[k]" has b-all.folded ';\[unknown\];schedule_\[k\] '
check "(b) kernel thread: kernel part only, no separator" \
	has b-all.folded '^kworker/1:2-77/77;ret_from_fork_\[k\];kthread_\[k\];worker_thread_\[k\];process_one_work_\[k\] 1$'
check "(b) user mode orphan: the reason frame alone" \
	has b-n.folded '^V8_WorkerThread;\[user stack lost: stream ended\] 1$'
check "(b) two samples, one stack: count 2" \
	has b-n.folded '^V8_WorkerThread;main;outer;middle;leaf;entry_SYSCALL_64;do_syscall_64;__x64_sys_getppid 2$'
# page-faults has no callchains: perf script prints its samples as single
# lines, the comm right-aligned, that stackcollapse-perf.pl never takes for
# a sample; the file's first sample is one, yet cpu-clock is the default
check "(b) samples without a callchain: left out, counted" has b.err \
	'^perf stitch: [0-9]+ cpu-clock samples exported .*; 2 samples without a callchain left out'
check "(b) samples without a callchain: not even their ip" hasnt b-n.folded '^V8_WorkerThread;leaf '
check "(b) callchain of a context marker only: the root frame alone" has b-n.folded '^V8_WorkerThread 1$'
check "(b) a thread renaming itself: its later samples under the new comm" \
	has b-n.folded '^io_worker;\[user stack lost: task exited\];'
speedscope b-sp edge.data cpu-clock $KS
pprof b-pp edge.data "" $KS
"$PPROF" -raw b-pp.pb.gz > b-pp.raw 2> /dev/null
check "(b) pprof: the lost-stack pseudo-frame, a function of its own" \
	has b-pp.raw '\[user stack lost: stream ended\]'
check "(b) pprof: a dso without symbols, its file name" has b-pp.raw '\[libgone\.so\.1\]'
check "(b) speedscope: file of a frame with a map" has b-sp.json '"name":"\[libgone.so.1\]","file":"/nonexistent/libgone.so.1"'
check "(b) speedscope: profile per thread, named comm tid" has b-sp.json '"name":"V8 WorkerThread 1001"'
check "(b) speedscope: cpu-clock periods in ns, endValue = their sum" has b-sp.json \
	'"name":"V8 WorkerThread 1000","unit":"nanoseconds","startValue":0,"endValue":6000,'
"$PERF" stitch -F speedscope --count=samples -i edge.data -o b-spn.json --event cpu-clock $KS 2> /dev/null
check "(b) speedscope --count=samples: unit none, endValue = samples" has b-spn.json \
	'"name":"V8 WorkerThread 1000","unit":"none","startValue":0,"endValue":6,'
# one name per profile, whether or not the thread was sampled before it
# renamed itself: its last comm, as perf report --sort pid names it
check "(b) speedscope: a thread renaming itself, named by its last comm" \
	eval "has b-sp.json '\"name\":\"io worker 1002\"' && hasnt b-sp.json '\"name\":\"V8 WorkerThread 1002\"'"
"$PERF" stitch -F speedscope -i edge.data -o b-spd.json $KS 2> /dev/null
check "(b) speedscope: the default = --event cpu-clock (page-faults, without callchains, left out)" \
	same b-spd.json b-sp.json
"$PPROF" -tags -sample_index=samples b-pp.pb.gz > b-pp.tags 2> /dev/null
check "(b) pprof: the comm label is the sample's (a thread renaming itself: both comms)" \
	eval "has b-pp.tags '^ +1(\.0)? \( *[0-9.]+%\): io worker$' && has b-pp.tags '^ +9(\.0)? \( *[0-9.]+%\): V8 WorkerThread$'"

# ------------------------------------------------------------ (c) fixed periods
# perf record -c N, or an event's period=N term: the samples carry no
# PERF_SAMPLE_PERIOD, perf script prints the attr's sample_period as their
# period (evsel__parse_sample()) and stackcollapse-perf.pl weighs them by
# it, each event by its own.  In frequency mode with --no-period perf
# script prints the attr's sample_freq (the union's other member): the
# script weighs by that too, but it counts no nanoseconds.
# record_deferred OUT PERF-RECORD-OPTIONS...: ./workload recorded with
# SYS_PERF, then made deferred by perf stitch --emulate (a dropped record
# now and then: orphans weigh their period too)
record_deferred() {
	local out=$1

	shift
	if ! "$SYS_PERF" record -q -g "$@" -o "$out.fp" -- ./workload 150 \
			> "$out.record.log" 2>&1; then
		cat "$out.record.log"
		abort "perf record $* ($SYS_PERF)"
	fi
	"$PERF" stitch --emulate --drop 0.1 --seed 5 -i "$out.fp" -o "$out" > /dev/null 2> "$out.emu.err"
	check "$out: perf stitch --emulate of perf record $*: exit 0" eq "$?" 0
	"$PERF" evlist -v -i "$out" > "$out.evlist" 2> /dev/null
	"$PERF" script -i "$out" -F comm,tid,time,period,event > "$out.script" 2> /dev/null
}

record_deferred fixed.data -e cpu-clock -c 250000
check "(c) -c 250000: no PERF_SAMPLE_PERIOD, the attr's fixed period 250000" has fixed.data.evlist \
	'^cpu-clock: .*\{ sample_period, sample_freq \}: 250000, sample_type: IP\|TID\|TIME\|CALLCHAIN,'
check "(c) -c 250000: not in frequency mode" hasnt fixed.data.evlist 'freq: 1'
nfix=$(nsamples fixed.data.script cpu-clock)
check "(c) -c 250000: cpu-clock samples ($nfix)" gt "$nfix" 100
check "(c) -c 250000: perf script prints the period 250000 for each" \
	eq "$(periods fixed.data.script cpu-clock)" "$((nfix * 250000))"
compare c fixed.data "" ""
check "(c) -c 250000: weights add up to 250000 a sample" eq "$(sum c.folded)" "$((nfix * 250000))"
check "(c) -c 250000: summary, total weight the periods" has c.err \
	"^perf stitch: $nfix cpu-clock samples exported .*, total weight $((nfix * 250000)) \\(periods\\)"
wlost=$(lost c.folded)
check "(c) -c 250000: some orphans ($wlost), weighed 250000 each too" \
	eval "[ $wlost -gt 0 ] && [ $((wlost % 250000)) -eq 0 ]"
compare c-n fixed.data "--count-samples" "--count=samples"
speedscope c-sp fixed.data cpu-clock
check "(c) -c 250000: speedscope in nanoseconds" has c-sp.json '"unit":"nanoseconds"'
check "(c) -c 250000: speedscope, none weighs 1" hasnt c-sp.stacks $'\t1\t'
pprof c-pp fixed.data ""
check "(c) -c 250000: pprof -traces = stackcollapse-perf.py's weights" same c-pp.1.traces c.expected
check "(c) -c 250000: pprof periods as cpu/nanoseconds (default)" \
	eval "'$PPROF' -raw c-pp.pb.gz 2> /dev/null | grep -q '^samples/count cpu/nanoseconds\\[dflt\\]$'"
"$PERF" data convert --to-folded c-dc.folded -i fixed.data > /dev/null 2>&1
check "(c) -c 250000: perf data convert --to-folded = stackcollapse-perf.py" same c-dc.folded c.expected
for fmt in speedscope pprof; do
	"$PERF" data convert --to-$fmt c-dc.$fmt -i fixed.data > /dev/null 2>&1
	"$PERF" stitch -F $fmt -i fixed.data -o c-st.$fmt 2> /dev/null
	check "(c) -c 250000: perf data convert --to-$fmt: the bytes of perf stitch -F $fmt" \
		cmp -s c-dc.$fmt c-st.$fmt
done

# two events, two fixed periods: each sample weighs its own event's
C1=cpu-clock/period=250000/
C2=task-clock/period=100000/
record_deferred two.data -e $C1 -e $C2
check "(c) two periods: neither samples its period" eval \
	"[ \$(grep -c 'sample_type: IP|TID|TIME|CALLCHAIN|ID,' two.data.evlist) = 2 ]"
n1=$(nsamples two.data.script "$C1")
n2=$(nsamples two.data.script "$C2")
check "(c) two periods: samples of both ($n1, $n2)" eval "[ $n1 -gt 50 ] && [ $n2 -gt 50 ]"
compare c2 two.data "" ""
compare c2-1 two.data "--event-filter $C1" "--event $C1"
compare c2-2 two.data "--event-filter $C2" "--event $C2"
check "(c) two periods: $C1 weighs 250000 a sample" eq "$(sum c2-1.folded)" "$((n1 * 250000))"
check "(c) two periods: $C2 weighs 100000 a sample" eq "$(sum c2-2.folded)" "$((n2 * 100000))"
speedscope c2-sp1 two.data "$C1"
speedscope c2-sp2 two.data "$C2"
pprof c2-pp two.data "--event $C1"
check "(c) two periods: pprof -traces = stackcollapse-perf.py's weights" same c2-pp.1.traces c2-1.expected

# frequency mode without the period: perf script prints the frequency
record_deferred noperiod.data -e cpu-clock -F 1000 --no-period
check "(c) -F 1000 --no-period: no PERF_SAMPLE_PERIOD, frequency mode" eval \
	"has noperiod.data.evlist 'sample_freq \\}: 1000, sample_type: IP\\|TID\\|TIME\\|CALLCHAIN,' &&
	 has noperiod.data.evlist 'freq: 1'"
n3=$(nsamples noperiod.data.script cpu-clock)
check "(c) -F 1000 --no-period: perf script prints 1000 for each of $n3 samples" \
	eq "$(periods noperiod.data.script cpu-clock)" "$((n3 * 1000))"
compare c3 noperiod.data "" ""
check "(c) -F 1000 --no-period: weights add up to 1000 a sample" eq "$(sum c3.folded)" "$((n3 * 1000))"
speedscope c3-sp noperiod.data cpu-clock
check "(c) -F 1000 --no-period: speedscope, a frequency is no nanoseconds" \
	eval "has c3-sp.json '\"unit\":\"none\"' && hasnt c3-sp.json '\"unit\":\"nanoseconds\"'"
pprof c3-pp noperiod.data ""
check "(c) -F 1000 --no-period: pprof -traces = stackcollapse-perf.py's weights" \
	same c3-pp.1.traces c3.expected
check "(c) -F 1000 --no-period: pprof periods as events/count" \
	eval "'$PPROF' -raw c3-pp.pb.gz 2> /dev/null | grep -q '^samples/count events/count\\[dflt\\]$'"

# ------------------------------------------------------------ (d) no callchains
# perf record --call-graph deferred,emulate adds raw_syscalls:sys_exit
# without callchains (the emulation's own event): perf script prints each
# of its samples as a single line, comm right-aligned, which
# stackcollapse-perf.pl never takes for a sample; every format leaves them
# out, and so their event is never the default one
if ! "$PERF" record -q --call-graph=deferred,emulate -e cpu-clock -o nocc.data -- ./workload 150 \
		> nocc.record.log 2>&1; then
	cat nocc.record.log
	abort "perf record --call-graph=deferred,emulate ($PERF)"
fi
"$PERF" evlist -v -i nocc.data > nocc.evlist 2> /dev/null
check "(d) raw_syscalls:sys_exit recorded without callchains" eval \
	"grep -q '^raw_syscalls:sys_exit: ' nocc.evlist && ! grep '^raw_syscalls:sys_exit: ' nocc.evlist | grep -q CALLCHAIN"
"$PERF" script -i nocc.data -F comm,tid,time,period,event > nocc.script 2> /dev/null
ncpu=$(nsamples nocc.script cpu-clock)
nsys=$(nsamples nocc.script raw_syscalls:sys_exit)
pcpu=$(periods nocc.script cpu-clock)
check "(d) samples of both events ($ncpu cpu-clock, $nsys sys_exit)" \
	eval "[ $ncpu -gt 50 ] && [ $nsys -gt 50 ]"
compare d nocc.data "" ""
check "(d) weights add up to the cpu-clock periods alone" eq "$(sum d.folded)" "$pcpu"
check "(d) summary: the sys_exit samples left out, counted" has d.err \
	"^perf stitch: $ncpu cpu-clock samples exported .*, total weight $pcpu \\(periods\\), .*; $nsys samples without a callchain left out"
check "(d) no sample without callchain as its ip alone" hasnt d.folded '^[^;]+;syscall_exit_work [0-9]+$'
compare d-n nocc.data "--count-samples" "--count=samples"
check "(d) --count=samples: one per cpu-clock sample" eq "$(sum d-n.folded)" "$ncpu"
compare d-all nocc.data "--kernel --separator --tid" "--kernel-suffix --separator --tid"
compare d-sys nocc.data "--event-filter raw_syscalls:sys_exit" "--event raw_syscalls:sys_exit"
check "(d) --event raw_syscalls:sys_exit: nothing, and says why" eval \
	"[ ! -s d-sys.folded ] && has d-sys.err 'no raw_syscalls:sys_exit sample in nocc.data has a callchain'"
speedscope d-sp nocc.data cpu-clock
"$PERF" stitch -F speedscope -i nocc.data -o d-spd.json 2> /dev/null
check "(d) speedscope: the default = --event cpu-clock" same d-spd.json d-sp.json
pprof d-pp nocc.data ""
check "(d) pprof: samples, cpu-clock's alone" eq "$(sum d-pp.samples.traces)" "$ncpu"
"$PERF" data convert --to-folded d-dc.folded -i nocc.data > /dev/null 2>&1
check "(d) perf data convert --to-folded = stackcollapse-perf.py" same d-dc.folded d.expected

# ------------------------------------------------------------ errors
"$PERF" stitch -F flat -i emu.data -o bad.out > /dev/null 2> err1
check "unknown format: refused" has err1 "unknown format 'flat'"
no_output "unknown format" bad.out
"$PERF" stitch -F speedscope --kernel-suffix -i emu.data -o bad.out > /dev/null 2> err2
check "--kernel-suffix with speedscope: refused" has err2 'go with -F folded'
no_output "--kernel-suffix with speedscope" bad.out
"$PERF" stitch -F folded --event nosuch -i emu.data -o bad.out > /dev/null 2> err3
check "--event nosuch: names the events" has err3 "no event 'nosuch' in emu.data; it has: cpu-clock raw_syscalls:sys_exit"
no_output "--event nosuch" bad.out
head -c 3000 emu.data > cut.data
"$PERF" stitch -F folded -i cut.data -o bad.out > /dev/null 2> err4
rc=$?
check "truncated input: exit status non-zero ($rc)" [ "$rc" -ne 0 ]
check "truncated input: names the file" has err4 '^cut.data: the data is cut short \(where: above\), refused; -f'
no_output "truncated input" bad.out
"$PERF" stitch --kernel-suffix -i emu.data > /dev/null 2> err5
check "export options without -F: refused" has err5 'go with -F'
"$PERF" stitch -F folded -i emu.data -o /nonexistent/dir/x.folded > /dev/null 2> err6
check "unwritable output: error names it" has err6 'cannot create /nonexistent/dir/x.folded'

# ------------------------------------------------------------ DWARF user stacks
# perf unwinds them itself: -F must set up DWARF unwinding as perf script
# does, or every sample loses its user frames
if "$SYS_PERF" record -q --call-graph dwarf,8192 -e cpu-clock -o dwarf.data -- ./workload 50 \
		> /dev/null 2>&1; then
	compare dwarf dwarf.data "" ""
	# a caller above the sampled function: the main thread, mostly asleep,
	# may not be sampled at all, the workers always are
	check "DWARF: user frames unwound (worker;work_step)" has dwarf.folded ';worker;work_step;'
	"$SYS_PERF" record -q --call-graph dwarf,8192 -e cpu-clock -o - -- ./workload 50 \
		> dwarf.pipe 2> /dev/null
	"$PERF" script -i - < dwarf.pipe 2> /dev/null | $COLLAPSE | sort > dwarf-pipe.expected
	"$PERF" stitch -F folded -i - < dwarf.pipe > dwarf-pipe.folded 2> /dev/null
	check "DWARF, -i - (pipe mode) = stackcollapse-perf.py" same dwarf-pipe.folded dwarf-pipe.expected
	check "DWARF, -i -: user frames unwound (worker;work_step)" has dwarf-pipe.folded ';worker;work_step;'
else
	bad "perf record --call-graph dwarf ($SYS_PERF)"
fi

# ------------------------------------------------------------ --event with a pipe
# the events of a pipe are known only once its HEADER_ATTR records were read
"$SYS_PERF" record -q -g -e cpu-clock -e task-clock -o - -- ./workload 50 > two.pipe 2> /dev/null
"$PERF" script -i - -F $FIELDS < two.pipe 2> /dev/null |
	$COLLAPSE --event-filter task-clock 2> /dev/null | sort > pev.expected
"$PERF" stitch -F folded --event task-clock -i - < two.pipe > pev.folded 2> pev.err
check "--event task-clock -i -: exit 0" eq "$?" 0
check "--event task-clock -i - = stackcollapse-perf.py --event-filter task-clock" \
	same pev.folded pev.expected
check "--event task-clock -i -: summary names it, the other event left out" \
	has pev.err '^perf stitch: [0-9]+ task-clock samples exported, .*; [0-9]+ samples of other events left out \(--event\)$'
"$PERF" stitch -F folded --event nosuch -i - -o pev.out < two.pipe > /dev/null 2> pev.err
check "--event nosuch -i -: fails" [ $? -ne 0 ]
# nothing else: of a perf 6.1 pipe (SYS_PERF records it), the end-of-features
# mark (id 32, 6.1's HEADER_LAST_FEATURE) says nothing, where pristine
# perf 7.2 takes it for HEADER_CPU_DOMAIN_INFO and warns "Invalid
# HEADER_CPU_DOMAIN_INFO: section too small (0) for N CPUs"
check "--event nosuch -i -: names the pipe's events, once, nothing else" \
	eq "$(cat pev.err)" "perf stitch: no event 'nosuch' in -; it has: cpu-clock task-clock"
no_output "--event nosuch -i -" pev.out

# ------------------------------------------------------------ tracepoints only
# a real recording of sched:sched_switch alone (the corpus): every sample
# is of an event with fields after its name, kept as stackcollapse-perf.pl
# keeps them, and the summary says that is what was written (its folded
# stacks = stackcollapse-perf's: test-real-corpus.sh, oracle-check.sh)
tp=$top/tests/corpus/real-7.2/offcpu-sched.data
"$PERF" stitch -F folded -i "$tp" > tponly.folded 2> tponly.err
check "tracepoints only: exit 0" eq "$?" 0
"$PERF" report --stats -i "$tp" > tponly.rstats 2> /dev/null
ntp=$(stat tponly.rstats SAMPLE)
check "tracepoints only: every sample written ($ntp), weights of 1" eq "$(sum tponly.folded)" "$ntp"
check "tracepoints only: the summary says so" has tponly.err \
	"^perf stitch: $ntp samples exported, all of events with fields after their name .*, total weight $ntp \\(periods\\)"

finish
