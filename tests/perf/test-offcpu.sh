#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch -F ... --count=off-cpu (and perf data convert --count=off-cpu)
# on the corpus' real 7.2 recording of sched:sched_switch with deferred
# callchains, system-wide (tests/corpus/real-7.2/offcpu-sched.data):
#   - each task's off-CPU time, by the state it left the CPU in, is what
#     the switches themselves say (perf script's prev_pid, prev_state,
#     next_pid), exactly, and every "wait time" perf sched timehist shows
#     is one of its intervals (helpers/offcpu-check.py);
#   - every sched_switch sample is exported or counted as left out (the
#     idle task, an exiting task, switched out again unrecorded), and the
#     summary adds up;
#   - folded, speedscope (valid against its schema, unit nanoseconds),
#     pprof (the pprof CLI's traces: offcpu-time in nanoseconds), perf
#     data convert --to-* and perf stitch -o (the time as each switch's
#     period, which perf report and perf script show) weigh the same;
#   - a recording without sched_switch is refused, no output left;
#   - live: perf record --off-cpu of a workload that measures its own time
#     off CPU per function, within 5% per function; --count=wall (task-clock
#     on CPU beside the switches) within 5% of each thread's wall time.
#
# usage: tests/perf/test-offcpu.sh    (after make perf, make pprof, make node-deps)
#   Environment (tests/perf/lib.sh): PERF, PYTHON, KEEP, VERBOSE

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
use_corpus_buildids
require_perf
corpus=$top/tests/corpus/real-7.2
f=$corpus/offcpu-sched.data
[ -f "$f" ] || abort "$f: not in the corpus"
NODE_MODULES=$(abs_path "${NODE_MODULES:-$top/node_modules}")
[ -d "$NODE_MODULES/ajv" ] || abort "no ajv in $NODE_MODULES (make node-deps)"
PPROF=$(abs_path "${PPROF:-$top/build/pprof}")
[ -x "$PPROF" ] || abort "no pprof CLI at $PPROF (make pprof)"
PPCHECK="$PY $here/helpers/pprof-check.py"
export LC_ALL=C

sum() { awk '{ n += $NF } END { printf "%.0f\n", n }' "$1"; }
# summary FILE WORDS: the number before WORDS in perf stitch's summary
summary() { sed -nE "s/.*[ (]([0-9]+) $2.*/\\1/p" "$1" | head -n 1; }

"$PERF" script --ns -F tid,cpu,time,trace -i "$f" > switches.txt 2> /dev/null
nswitch=$(grep -c 'prev_pid=' switches.txt)
check "the recording has sched_switch samples ($nswitch)" gt "$nswitch" 100
"$PERF" sched timehist --state -i "$f" > timehist.txt 2> /dev/null

"$PERF" stitch -F folded --tid --count=off-cpu -i "$f" -o tid.folded 2> tid.err
check "-F folded --tid --count=off-cpu: exit 0" eq "$?" 0
$PY "$here/helpers/offcpu-check.py" switches.txt tid.folded timehist.txt > check.txt
st=$?
check "each task's time off CPU by state = the switches', timehist's waits among them: $(head -1 check.txt); $(tail -1 check.txt)" \
	eval "[ $st -eq 0 ] || { cat check.txt; false; }"

# A task preempted while it exits is no longer named in its samples: the
# kernel writes tid -1 (its pid is gone; 7.2 in the guest, system-wide), and
# sched_switch's prev_pid names it.  The same file with the tid of every
# other preemption (prev_state R) of a task that comes back made -1: each
# task's time off CPU still the switches'
$PY "$here/helpers/tid-gone.py" "$f" gone.data switches.txt > gone.txt 2>&1
check "tid -1 in preempted switches: $(cat gone.txt)" grep -q '^made [1-9][0-9]* ' gone.txt
"$PERF" script --ns -F tid,cpu,time,trace -i gone.data > gone.switches 2> /dev/null
check "tid -1 in preempted switches: perf script shows them" gt \
	"$(grep -c '^ *-1 .*prev_state=R' gone.switches)" 0
"$PERF" stitch -F folded --tid --count=off-cpu -i gone.data -o gone.folded 2> /dev/null
$PY "$here/helpers/offcpu-check.py" gone.switches gone.folded timehist.txt > gone.check
check "tid -1 in preempted switches: each task's time off CPU by state = the switches' (prev_pid's)" \
	eval "[ $? -eq 0 ] || { grep -v '^ok' gone.check | head -5; false; }"

# every sample accounted for
exported=$(summary tid.err 'sched:sched_switch samples exported')
idle=$(summary tid.err 'switches of the idle task')
exiting=$(summary tid.err 'of exiting tasks')
unmatched=$(summary tid.err 'switches left out')
open=$(summary tid.err 'tasks still off-CPU at the end')
check "summary: exported $exported + idle ${idle:-0} + exiting ${exiting:-0} + switched out again ${unmatched:-0} = the $nswitch switches" \
	eq "$((exported + ${idle:-0} + ${exiting:-0} + ${unmatched:-0}))" "$nswitch"
check "summary: the open ones are the '[off-cpu: S, to the end]' lines (${open:-0})" \
	eq "$(grep -c ', to the end\] ' tid.folded)" "${open:-0}"
total=$(sum tid.folded)
check "summary: total weight = the folded weights ($total ns)" \
	has tid.err "total weight $total \\(ns off-CPU\\)"

"$PERF" stitch -F folded --count=off-cpu -i "$f" -o comm.folded 2> /dev/null
check "-F folded: the same total by comm ($total)" eq "$(sum comm.folded)" "$total"
check "-F folded: every stack ends in its state" \
	eq "$(grep -cvE ';\[off-cpu: [A-Z?](, to the end)?\] [0-9]+$' comm.folded)" 0
"$PERF" data convert --count=off-cpu --to-folded dc.folded -i "$f" > /dev/null 2>&1
check "perf data convert --count=off-cpu --to-folded = perf stitch -F folded" \
	same dc.folded comm.folded

"$PERF" stitch -F speedscope --count=off-cpu -i "$f" -o off.json 2> /dev/null
check "-F speedscope: exit 0" eq "$?" 0
node "$here/helpers/speedscope-check.js" "$NODE_MODULES" off.json > /dev/null 2> speedscope.err
check "-F speedscope: valid against speedscope's schema" \
	eval "[ $? -eq 0 ] || { head -5 speedscope.err; false; }"
check "-F speedscope: in nanoseconds, the same total" \
	eq "$(js off.json 'sum(sum(p["weights"]) for p in d["profiles"] if p["unit"] == "nanoseconds")')" "$total"

"$PERF" stitch -F pprof --count=off-cpu -i "$f" -o off.pb.gz 2> /dev/null
check "-F pprof: exit 0" eq "$?" 0
"$PPROF" -raw off.pb.gz > off.raw 2> /dev/null
check "-F pprof: sample types samples/count, offcpu-time/nanoseconds" \
	has off.raw '^PeriodType: offcpu-time nanoseconds'
"$PPROF" -sample_index=1 -traces -unit=ns off.pb.gz 2> /dev/null | $PPCHECK traces > pprof.traces
grep ';' comm.folded > comm.framed
check "-F pprof: pprof -traces = -F folded" same pprof.traces comm.framed

# perf stitch -o --count=off-cpu: each switch's period is its time off CPU,
# for perf report, perf script and every tool that weighs by period
"$PERF" stitch --count=off-cpu -i "$f" -o conv.data 2> conv.err
check "perf stitch -o --count=off-cpu: exit 0" eval "[ $? -eq 0 ] || { cat conv.err; false; }"
check "perf stitch -o --count=off-cpu: the summary says what the periods hold" \
	has conv.err "--count=off-cpu: $exported switches weigh $total ns off-CPU as their period \\(${open:-0} still out at the end\\), $((nswitch - exported)) weigh 0"
"$PERF" script -F tid,period,event -i conv.data 2> /dev/null |
	awk '$NF == "sched:sched_switch:" { n[$1] += $2 } END { for (t in n) if (n[t]) printf "%s %.0f\n", t, n[t] }' |
	sort > conv.tids
sed -E 's/^[^;]*-[0-9-]+\/(-?[0-9]+);.* ([0-9]+)$/\1 \2/' tid.folded |
	awk '{ n[$1] += $2 } END { for (t in n) printf "%s %.0f\n", t, n[t] }' | sort > folded.tids
check "perf stitch -o --count=off-cpu: each thread's periods = -F folded --tid's ($(wc -l < conv.tids) threads)" \
	same conv.tids folded.tids
"$PERF" report -i conv.data --stdio -g none --sort prev_state > conv.report 2> /dev/null
check "perf report --sort prev_state of it: the event count is the time off CPU" \
	has conv.report "^# Event count \\(approx.\\): $total\$"
"$PERF" stitch --count=off-cpu -i "$f" -o - > conv.pipe 2> convpipe.err
check "perf stitch -o - --count=off-cpu: refused (a pipe cannot be patched)" \
	eval "[ $? -ne 0 ] && has convpipe.err 'needs a file output, not a pipe'"

# refused without sched_switch: no output
"$PERF" stitch -F folded --count=off-cpu -i "$corpus/sysw.data" -o none.folded 2> none.err
check "a recording without sched_switch: fails, says why" \
	eval "[ $? -ne 0 ] && has none.err 'weighs the samples of sched:sched_switch.*has none'"
no_output "a recording without sched_switch" none.folded
"$PERF" stitch -F folded --count=bogus -i "$f" -o bogus.folded 2> bogus.err
check "--count=bogus: fails, says why" eval "[ $? -ne 0 ] && has bogus.err \"unknown --count 'bogus'\""

# ------------------------------------------------------------ live
# perf record --off-cpu (this perf has no BPF: sched_switch with deferred
# callchains and switch events; frame pointers on a kernel that cannot
# defer) of tests/workloads/offcpu.c, whose threads measure their own
# time off CPU in four functions: each within 5% (make vm-check does the
# same in the 7.2 guest, deferred).  Its I/O goes to build/, on a disk.
build_workload "$top/tests/workloads/offcpu.c" offcpu -O1 -pthread -I"$top/tests/workloads"
"$PERF" record --off-cpu -o live.data -- ./offcpu 1.5 "$top/build" > live.out 2> live.err
check "perf record --off-cpu: exit 0" eval "[ $? -eq 0 ] || { cat live.err; false; }"
check "perf record --off-cpu: says what it records instead of BPF's offcpu-time" \
	has live.err '^perf record: --off-cpu without BPF .*sched:sched_switch with deferred callchains and switch events'
check "perf record --off-cpu: sched:sched_switch beside the default event" \
	eval "'$PERF' evlist -i live.data 2> /dev/null | grep -qx 'sched:sched_switch'"
check "perf record --off-cpu: switch events" \
	eval "'$PERF' report --stats -i live.data 2> /dev/null | grep -qE 'SWITCH events: +[1-9]'"
"$PERF" stitch -F folded --count=off-cpu -i live.data -o live.folded 2> live.stitch.err
check "live: -F folded --count=off-cpu: exit 0" eval "[ $? -eq 0 ] || { cat live.stitch.err; false; }"
$PY "$here/helpers/offcpu-check.py" workload live.out live.folded > live.check
relay_checks "live" live.check
grep '^SKIP' live.check | sed 's/^SKIP /SKIP - live: /'
# --count=wall: on CPU (the runs between switches, split among the
# task-clock samples) and off CPU side by side; each thread's total is its
# wall time, the one that blocks thousands of times a second included
"$PERF" record -q --off-cpu --call-graph=deferred -e task-clock -c 100000 -o wall.data -- \
	./offcpu 1.5 "$top/build" > wall.out 2> wall.err
check "perf record --off-cpu -e task-clock: exit 0" eval "[ $? -eq 0 ] || { cat wall.err; false; }"
"$PERF" stitch -F folded --tid --count=wall -i wall.data -o wall.folded 2> wall.stitch.err
check "--count=wall: says what it weighed" \
	has wall.stitch.err 'sched:sched_switch samples \(off CPU\) and [1-9][0-9]* cpu-clock or task-clock samples \(on CPU\) exported.*\(ns on and off CPU\)'
$PY "$here/helpers/offcpu-check.py" wall wall.out wall.folded > wall.check
relay_checks "wall" wall.check
"$PERF" stitch -F speedscope --count=wall -i wall.data -o wall.json 2> /dev/null
node "$here/helpers/speedscope-check.js" "$NODE_MODULES" wall.json > /dev/null 2> wall-ss.err
check "--count=wall -F speedscope: valid, each thread's timeline in nanoseconds" \
	eval "[ $? -eq 0 ] && [ \"\$(js wall.json 'sum(p[\"unit\"] == \"nanoseconds\" for p in d[\"profiles\"]) == len(d[\"profiles\"]) > 0')\" = True ]"

# a pipe: perf record --off-cpu -o - read from stdin weighs the same as
# that stream once written to a file
"$PERF" record -q --off-cpu -o - -- sh -c "./offcpu 0.5 '$top/build' > pipe.out" > live.pipe 2> pipe.err
check "perf record --off-cpu -o -: exit 0" eval "[ $? -eq 0 ] || { cat pipe.err; false; }"
"$PERF" stitch -F folded --count=off-cpu -i - -o pipe.folded < live.pipe 2> /dev/null
"$PERF" stitch -i - -o pipe-file.data < live.pipe > /dev/null 2>&1
"$PERF" stitch -F folded --count=off-cpu -i pipe-file.data -o pipe-file.folded 2> /dev/null
check "a pipe on stdin: the same off-CPU stacks and weights as its file ($(sum pipe.folded) ns)" \
	eval "[ -s pipe.folded ] && cmp -s pipe.folded pipe-file.folded"
"$PERF" stitch --count=off-cpu -i - -o pipe-conv.data < live.pipe > /dev/null 2> pipe-conv.err
check "a pipe on stdin, perf stitch -o --count=off-cpu: refused, says what to do" \
	eval "[ $? -ne 0 ] && has pipe-conv.err 'not a pipe: perf stitch -i - -o FILE first'"
no_output "a pipe on stdin, perf stitch -o --count=off-cpu" pipe-conv.data

"$PERF" stitch --count=off-cpu -i live.data -o live-conv.data > /dev/null 2>&1
check "live: perf stitch -o --count=off-cpu: the periods add up to -F folded's" \
	eq "$("$PERF" script -F period,event -i live-conv.data 2> /dev/null |
		awk '$NF == "sched:sched_switch:" { n += $1 } END { printf "%.0f\n", n }')" \
	"$(awk '{ n += $NF } END { printf "%.0f\n", n }' live.folded)"

finish
