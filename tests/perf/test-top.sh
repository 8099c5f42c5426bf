#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf top --call-graph=deferred on this host (patches/perf-7.2: "perf top:
# Take --call-graph fp,defer", "perf top: Stitch deferred user callchains
# as they come"): the spellings perf top takes and refuses, and, on a
# kernel that cannot defer (before 6.19, as the 6.18 machines here), the
# one-line message and the frame-pointer callchains it falls back to; the
# vdso's symbols in perf top of a running process.  Stitching live is
# checked in the 7.2 guest (make vm-check: tests/vm/check-top.py).
#
# perf top runs on ./workload (tests/workloads/emulate-workload.c; the
# vdso check on tests/workloads/vdso-workload.c) for 3-4 s of screens
# with samples, stopped by SIGINT as a user stops it, with --stdio; its stdin is a FIFO open for
# reading and writing (silent, never at its end: at the end of its input
# the --stdio key loop spins).
#
# usage: tests/perf/test-top.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, UPSTREAM_PERF (pristine perf
#   7.2, for the spelling it refuses; default build/perf-upstream), CC,
#   KEEP.  Needs perf_event_paranoid <= 1 or root.  Output and exit
#   status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
UP_PERF=${UPSTREAM_PERF:-$top/build/perf-upstream}

build_workload "$top/tests/workloads/emulate-workload.c" workload -O1 -pthread
build_workload "$top/tests/workloads/vdso-workload.c" vdso-workload -O1
mkfifo top.stdin || abort "mkfifo"
exec 7<> top.stdin

# run_top NAME SECONDS OPTIONS...: perf top --stdio OPTIONS ($PERF, or
# TOP_PERF) on a workload (./workload, or TOP_WORKLOAD), stopped by SIGINT
# once SECONDS have passed and two of its screens have counted the
# workload's samples: perf top takes seconds to start on a busy machine
# (/proc/kallsyms, the symbols), and a screen before its first sample
# shows nothing to check.  At most TOP_CAP seconds.  Screens in NAME.out,
# stderr in NAME.err, exit status in NAME.rc
TOP_CAP=60
run_top() {
	local name=$1 secs=$2 pid top start
	shift 2
	"${TOP_WORKLOAD:-./workload}" $(((TOP_CAP + 5) * 1000)) > /dev/null 2>&1 &
	pid=$!
	COLUMNS=200 LINES=400 timeout --preserve-status -s INT "$TOP_CAP" \
		"${TOP_PERF:-$PERF}" top --stdio "$@" -p "$pid" <&7 > "$name.out" 2> "$name.err" &
	top=$!
	start=$SECONDS
	while kill -0 "$top" 2> /dev/null; do
		sleep 0.5
		[ $((SECONDS - start)) -ge "$secs" ] &&
			[ "$(grep -Ec 'PerfTop: +[1-9]' "$name.out")" -ge 2 ] && break
	done
	[ "$(grep -Ec 'PerfTop: +[1-9]' "$name.out")" -ge 2 ] ||
		echo "# $name: perf top showed no two screens of samples in $TOP_CAP s"
	# timeout passes the SIGINT on to perf top
	kill -INT "$top" 2> /dev/null
	wait "$top"
	echo $? > "$name.rc"
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
}

# perf top's stderr without the ASan/perf noise of a normal run
msg='perf top: this kernel cannot defer user callchains \(needs Linux 6\.19\+ with CONFIG_UNWIND_USER\); showing plain frame-pointer callchains instead'
if "$PERF" record --call-graph=deferred -o probe.data -- true > probe.out 2>&1 &&
		! grep -q 'cannot defer' probe.out; then
	defers=1
else
	defers=0
fi

# ------------------------------------------------------------ spellings
for spelling in "--call-graph=fp,defer" "--call-graph=deferred" "-e cpu-clock/call-graph=deferred/ -g"; do
	n=${spelling//[^a-z]/}
	# shellcheck disable=SC2086
	run_top "$n" 4 -F 1000 -d 1 $spelling
	check "$spelling: stopped at SIGINT, exit status 0" eq "$(cat "$n.rc")" 0
	check "$spelling: screens" gt "$(grep -c 'PerfTop:' "$n.out")" 1
	if [ $defers = 0 ]; then
		check "$spelling: says the kernel cannot defer, once" eq "$(grep -Ec "$msg" "$n.err")" 1
		check "$spelling: nothing else on stderr" eq "$(grep -Evc "^(Warning:|$msg|)$" "$n.err")" 0
		# the fallback: frame pointer user frames under the kernel ones
		check "$spelling: user frames of the workload in the callchains" has "$n.out" '^ +(---|--[0-9.]+%--)?(spin|worker|main)$'
		check "$spelling: no deferred pseudo-frame, no stitching header" \
			eval "! grep -Eq '\\[user stack|deferred: [0-9]+ waiting' $n.out"
	else
		check "$spelling: the header counts the samples waiting" has "$n.out" 'deferred: [0-9]+ waiting'
		check "$spelling: no [user stack deferred] frame" hasnt "$n.out" '\[user stack deferred'
	fi
done

# no deferral asked: no message, no header field
run_top fp 3 -F 1000 -d 1 --call-graph=fp
check "--call-graph=fp: no message about deferral" hasnt fp.err 'defer'
check "--call-graph=fp: no stitching in the header" hasnt fp.out 'deferred:'

# ------------------------------------------------------------ vdso
# perf top of a process already running synthesizes its mappings: the
# vdso's must be the dso perf writes out of its own vdso image, whose
# symbols it reads ("perf synthetic-events: Make no dso for a mapping that
# is not a file"; pristine 7.2 made a "[vdso]" dso that opens nothing)
vdso_lines() {
	grep -E '^ +[0-9.]+%( +[0-9.]+%)? +\[vdso\] ' "$1"
}
TOP_WORKLOAD=./vdso-workload run_top vdso 3 -F 1000 -d 1
vdso_lines vdso.out > vdso.lines
check "vdso: entries of the [vdso] in the screens ($(wc -l < vdso.lines))" [ -s vdso.lines ]
check "vdso: every one named ($(grep -Eo '\[\.\] [^ ]+' vdso.lines | sort | uniq -c | sort -rn | head -3 | tr -s ' \n' ' '))" \
	hasnt vdso.lines '\[\.\] 0x[0-9a-f]+ *$'
check "vdso: the workload's clock_gettime() or time() among them" has vdso.lines '\[\.\] __vdso_(clock_gettime|time)'
if [ -x "$UP_PERF" ]; then
	TOP_PERF=$UP_PERF TOP_WORKLOAD=./vdso-workload run_top up-vdso 3 -F 1000 -d 1
	echo "     pristine perf 7.2 on the same workload, its [vdso] entries: $(vdso_lines up-vdso.out |
		grep -Eo '\[\.\] [^ ]+' | sort | uniq -c | sort -rn | head -3 | tr -s ' \n' ' ')"
fi

# ------------------------------------------------------------ refused
for spelling in deferred,emulate fp,defer,bogus deferred,fp; do
	"$PERF" top --stdio --call-graph=$spelling -p $$ < /dev/null > "bad.out" 2>&1
	rc=$?
	check "--call-graph=$spelling: refused" [ "$rc" -ne 0 ]
	check "--call-graph=$spelling: with the usage" has bad.out 'Usage: perf top'
done
if [ -x "$UP_PERF" ]; then
	"$UP_PERF" top --stdio --call-graph=fp,defer -p $$ < /dev/null > up.out 2>&1
	check "pristine perf 7.2 refuses --call-graph=fp,defer (what the hook changes)" has up.out 'Usage: perf top'
else
	skipped "pristine perf 7.2: no $UP_PERF (make perf-upstream)"
fi

"$PERF" top -h > help.out 2>&1
check "perf top -h: deferred among the record modes" has help.out "deferred:.*record_mode 'fp' with the user part"
check "perf top -h: --stitch-window, --stitch-max-mem" eval "grep -q -- --stitch-window help.out && grep -q -- --stitch-max-mem help.out"

exec 7<&-
finish
