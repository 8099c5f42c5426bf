#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf record --call-graph deferred / fp,defer (the "perf record:" patches of
# patches/perf-7.2).
#
#  1. the fallback on kernels that refuse attr.defer_callchain/defer_output
#     (every kernel before 6.19): one warning line, exit 0, the perf.data
#     attrs without the bits, callchains recorded, perf report works.  On
#     the running kernel when it is older than 6.19, and always with the
#     shim in reject mode;
#  2. which events get the bits, with fake-defer-kernel.c (LD_PRELOAD) in
#     accept mode, which logs every perf_event_open() attr and clears the
#     bits before the real syscall, like a 6.19 kernel that accepts them.
#     Native deferral is NOT tested here: it needs a 6.19 kernel;
#  3. parsing: deferred[,N], fp,defer[,N], fp,N, errors.
#
# usage: tests/perf/test-record-deferred.sh   (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, CC (the shim and the workload), KEEP.
# Needs perf_event_paranoid <= 0 or root (-a is used in two checks).
# Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf

WARN='perf record: this kernel cannot defer user callchains \(needs Linux 6\.19\+ with CONFIG_UNWIND_USER\); recording plain frame-pointer callchains instead'

# ------------------------------------------------------------ tools
if ! $CC -Wall -shared -fPIC -O2 -o fake-defer-kernel.so \
	"$here/helpers/fake-defer-kernel.c" -ldl 2> cc.log; then
	cat cc.log
	abort "build fake-defer-kernel.so"
fi
ok "build fake-defer-kernel.so"

# a workload with frame pointers and a known call path
build_workload "$top/tests/workloads/loop.c" loop -O0 -mno-omit-leaf-frame-pointer

# rec NAME [perf record options...]: perf record -o NAME.data ... -- ./loop,
# stdout+stderr in NAME.out, exit status in NAME.rc.  With FAKE=accept or
# FAKE=reject in the environment, under the shim, logging to NAME.log.
rec() {
	local name=$1; shift
	local rc

	rm -f "$name.log"
	if [ -n "${FAKE:-}" ]; then
		FAKE_DEFER_MODE=$FAKE FAKE_DEFER_LOG=$tmp/$name.log \
		LD_PRELOAD=$tmp/fake-defer-kernel.so \
			"$PERF" record -o "$name.data" "$@" > "$name.out" 2>&1
	else
		"$PERF" record -o "$name.data" "$@" > "$name.out" 2>&1
	fi
	rc=$?
	echo $rc > "$name.rc"
	"$PERF" evlist -v -i "$name.data" > "$name.evlist" 2>&1
	# one line per logged open: "cpu-clock chain=1 cc=1 out=1 ok"
	if [ -f "$name.log" ]; then
		summarize < "$name.log" > "$name.opens"
	fi
	return $rc
}

summarize() {
	local line kv ev
	local -A f

	while read -r line; do
		f=()
		for kv in $line; do f[${kv%%=*}]=${kv#*=}; done
		case "${f[type]}/${f[config]}" in
		1/0) ev=cpu-clock ;;
		1/0x2) ev=page-faults ;;
		1/0x1) ev=task-clock ;;
		1/0x9) ev=dummy ;;
		*) ev="other-${f[type]}/${f[config]}" ;;
		esac
		echo "$ev chain=$(( (${f[sample_type]} & 0x20) != 0 ))" \
		     "cc=${f[defer_callchain]} out=${f[defer_output]}" \
		     "$( [ "${f[ret]}" -ge 0 ] && echo ok || echo "err${f[ret]}" )"
	done
}

# evline NAME EVENT: the 'perf evlist -v' line of EVENT
evline() { grep -E "^$2:" "$1.evlist"; }

rc() { cat "$1.rc"; }

kernel=$(uname -r)
kmaj=${kernel%%.*}
kmin=${kernel#*.}; kmin=${kmin%%[!0-9]*}
old_kernel=
if [ "$kmaj" -lt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -lt 19 ]; }; then
	old_kernel=1
fi

# ------------------------------------------------------------ 1. fallback, real kernel
if [ -n "$old_kernel" ]; then
	echo "# kernel $kernel refuses the defer bits: testing the native fallback"

	rec fb -e cpu-clock -e page-faults --call-graph=deferred -- ./loop
	check "fallback: exit status 0" eq "$(rc fb)" 0
	check "fallback: the warning line, once" eq "$(count fb.out "$WARN")" 1
	check "fallback: nothing else mentions deferral" \
		eq "$(count fb.out 'defer')" 1
	check "fallback: no defer bit in the perf.data attrs" hasnt fb.evlist 'defer'
	check "fallback: cpu-clock samples callchains" has fb.evlist '^cpu-clock:.*sample_type: [A-Z|]*CALLCHAIN'
	check "fallback: page-faults samples callchains" has fb.evlist '^page-faults:.*sample_type: [A-Z|]*CALLCHAIN'
	"$PERF" report --header-only -i fb.data > fb.header 2>&1
	check "fallback: no defer bit in the event descriptions (HEADER_EVENT_DESC)" \
		hasnt fb.header 'defer_'
	check "fallback: event descriptions read back" has fb.header '^# event : name = cpu-clock'

	"$PERF" report --stdio -i fb.data > fb.report 2> fb.report.err
	check "fallback: perf report exit status 0" eq "$?" 0
	check "fallback: perf report shows the workload" has fb.report 'deferred_test_leaf'
	"$PERF" script -i fb.data > fb.script 2> fb.script.err
	check "fallback: perf script exit status 0" eq "$?" 0
	check "fallback: user callchains recorded in place (leaf <- middle <- main)" \
		bash -c "grep -A3 deferred_test_leaf fb.script | grep -q deferred_test_middle &&
			 grep -A4 deferred_test_leaf fb.script | grep -q ' main'"

	rec fbvv -vv --call-graph=deferred -- ./loop
	check "fallback -vv: the attr asked for defer_callchain" has fbvv.out '^  defer_callchain +1$'
	check "fallback -vv: the attr asked for defer_output" has fbvv.out '^  defer_output +1$'
	check "fallback -vv: open failed with EINVAL" has fbvv.out 'sys_perf_event_open failed, error -22'
	# perf 7.2's own feature probe (evsel__detect_missing_features(): a
	# task-clock with defer_callchain) finds the kernel without the bits and
	# says so in its words; the 6.1 build said "switching off deferred user
	# callchains"
	check "fallback -vv: switching off deferred callchain support" \
		has fbvv.out '^switching off deferred callchain support$'
	check "fallback -vv: the warning line, once" eq "$(count fbvv.out "$WARN")" 1

	rec fbq -q --call-graph=deferred -- ./loop
	check "fallback -q: exit status 0" eq "$(rc fbq)" 0
	check "fallback -q: no warning" eq "$(count fbq.out "$WARN")" 0

	rec fba -a -e cpu-clock --call-graph=fp,defer -- sleep 0.1
	check "fallback -a fp,defer: exit status 0" eq "$(rc fba)" 0
	check "fallback -a fp,defer: the warning line, once" eq "$(count fba.out "$WARN")" 1
	check "fallback -a fp,defer: no defer bit in the attrs" hasnt fba.evlist 'defer'

	rec fbg -g -- ./loop
	check "-g: no warning" eq "$(count fbg.out "$WARN")" 0
	check "-g: no defer bit" hasnt fbg.evlist 'defer'
else
	echo "# kernel $kernel may accept the defer bits: native fallback not testable here"
fi

# ------------------------------------------------------------ 1b. fallback, shim rejecting
FAKE=reject rec rj -e cpu-clock -e page-faults --call-graph=deferred -- ./loop
check "reject: exit status 0" eq "$(rc rj)" 0
check "reject: the warning line, once" eq "$(count rj.out "$WARN")" 1
# perf 7.2 probes the kernel once an open fails (evsel__detect_missing_features():
# a task-clock, no callchain, defer_callchain alone, retried with exclude_kernel,
# _hv, _guest): those refusals are its probe, not a recorded event's open
check "reject: one refused open of a recorded event, with both bits" \
	eq "$(grep -E '^(cpu-clock|page-faults) ' rj.opens | grep -c 'err-22$')" 1
check "reject: every other refused open is the probe (task-clock, defer_callchain alone)" \
	eq "$(grep 'err-22$' rj.opens | grep -Ev '^(cpu-clock|page-faults) ' | sort -u)" \
	   "task-clock chain=0 cc=1 out=0 err-22"
check "reject: the refused open was cpu-clock with callchain" \
	has rj.opens '^cpu-clock chain=1 cc=1 out=1 err-22$'
check "reject: no open with a defer bit succeeded" \
	eq "$(count rj.opens '(cc=1|out=1) ok')" 0
check "reject: page-faults opened without retrying" \
	hasnt rj.opens '^page-faults .* err'
check "reject: cpu-clock and page-faults opened with callchains" \
	bash -c "grep -q '^cpu-clock chain=1 cc=0 out=0 ok' rj.opens &&
		 grep -q '^page-faults chain=1 cc=0 out=0 ok' rj.opens"
check "reject: no defer bit in the perf.data attrs" hasnt rj.evlist 'defer'
"$PERF" report --stdio -i rj.data > rj.report 2>&1
check "reject: perf report shows the workload" has rj.report 'deferred_test_leaf'

# ------------------------------------------------------------ 2. which events get the bits
FAKE=accept rec two -e cpu-clock -e page-faults --call-graph=deferred -- ./loop
check "accept: exit status 0" eq "$(rc two)" 0
check "accept: no warning" eq "$(count two.out "$WARN")" 0
check "accept: cpu-clock (tracking) opened with defer_callchain and defer_output" \
	gt "$(count two.opens '^cpu-clock chain=1 cc=1 out=1 ok$')" 0
check "accept: page-faults opened with defer_callchain only" \
	gt "$(count two.opens '^page-faults chain=1 cc=1 out=0 ok$')" 0
check "accept: every callchain-sampling open has defer_callchain" \
	eq "$(count two.opens '^(cpu-clock|page-faults) chain=1 cc=0')" 0
check "accept: defer_output only on cpu-clock" \
	eq "$(grep -E 'out=1' two.opens | grep -Evc '^cpu-clock ')" 0
check "accept: perf.data cpu-clock attr has defer_callchain: 1, defer_output: 1" \
	bash -c "grep -E '^cpu-clock:' two.evlist | grep -q 'defer_callchain: 1, defer_output: 1'"
check "accept: perf.data page-faults attr has defer_callchain: 1" \
	bash -c "grep -E '^page-faults:' two.evlist | grep -q 'defer_callchain: 1'"
check "accept: perf.data page-faults attr has no defer_output" \
	bash -c "! grep -E '^page-faults:' two.evlist | grep -q 'defer_output'"
"$PERF" report --header-only -i two.data > two.header 2>&1
check "accept: event descriptions keep the bits and read back" \
	bash -c "grep '^# event : name = cpu-clock' two.header | grep -q 'defer_callchain = 1, defer_output = 1'"
check "accept: no 'Reserved bits' complaint" hasnt two.header 'Reserved bits'
"$PERF" report --stdio -i two.data > two.report 2>&1
check "accept: perf report reads the file with the bits" has two.report 'deferred_test_leaf'

FAKE=accept rec twovv -vv -e cpu-clock --call-graph=deferred -- ./loop
check "accept -vv: the attr shows defer_callchain and defer_output" \
	bash -c "grep -Eq '^  defer_callchain +1$' twovv.out && grep -Eq '^  defer_output +1$' twovv.out"
check "accept -vv: no switching off" hasnt twovv.out 'switching off deferred'

FAKE=accept rec alias -e cpu-clock -e page-faults --call-graph=fp,defer -- ./loop
check "accept fp,defer: same opens as deferred" \
	eq "$(grep -E 'chain=1' alias.opens | sort -u | tr '\n' ' ')" \
	   "$(grep -E 'chain=1' two.opens | sort -u | tr '\n' ' ')"

for opt in -g --call-graph=fp --call-graph=fp,64 --call-graph=dwarf; do
	FAKE=accept rec plain -e cpu-clock -e page-faults "$opt" -- ./loop
	check "accept $opt: exit status 0" eq "$(rc plain)" 0
	check "accept $opt: callchains sampled" gt "$(count plain.opens 'chain=1')" 0
	check "accept $opt: no open with a defer bit" eq "$(count plain.opens 'cc=1|out=1')" 0
	check "accept $opt: no defer bit in perf.data" hasnt plain.evlist 'defer'
done

FAKE=accept rec kcc -e cpu-clock --kernel-callchains --call-graph=deferred -- ./loop
check "accept --kernel-callchains: no user part, no defer bit" \
	eq "$(count kcc.opens 'cc=1|out=1')" 0

FAKE=accept rec sw -a -e cpu-clock --call-graph=deferred -- sleep 0.1
check "accept -a: exit status 0" eq "$(rc sw)" 0
check "accept -a: cpu-clock has defer_callchain, not defer_output" \
	bash -c "grep -q '^cpu-clock chain=1 cc=1 out=0 ok' sw.opens && ! grep -q '^cpu-clock .*out=1' sw.opens"
# perf 7.2 gives the tracking dummy no callchain (no_aux_samples; the 6.1
# build's dummy sampled one): it still outputs the deferred records
check "accept -a: the tracking dummy has defer_output, not defer_callchain" \
	bash -c "grep -q '^dummy chain=0 cc=0 out=1 ok' sw.opens && ! grep -q '^dummy .*cc=1' sw.opens"
check "accept -a: perf.data dummy attr has defer_output: 1" \
	bash -c "grep -E '^dummy:' sw.evlist | grep 'defer_output: 1' | grep -vq defer_callchain"

FAKE=accept rec term -e cpu-clock -e 'page-faults/call-graph=deferred/' -- ./loop
check "accept per-event call-graph=deferred: exit status 0" eq "$(rc term)" 0
check "accept per-event call-graph=deferred: page-faults has defer_callchain" \
	gt "$(count term.opens '^page-faults chain=1 cc=1 out=0 ok$')" 0
check "accept per-event call-graph=deferred: tracking cpu-clock gets defer_output" \
	gt "$(count term.opens '^cpu-clock chain=0 cc=0 out=1 ok$')" 0

FAKE=accept rec term2 -e 'cpu-clock/call-graph=fp/' -e page-faults --call-graph=deferred -- ./loop
check "accept per-event call-graph=fp overrides deferred: cpu-clock without defer_callchain" \
	bash -c "grep -q '^cpu-clock chain=1 cc=0 out=1 ok' term2.opens && ! grep -q '^cpu-clock .*cc=1' term2.opens"

mkdir -p home
printf '[call-graph]\n\trecord-mode = deferred\n' > home/.perfconfig
PERF_CONFIG=$tmp/home/.perfconfig FAKE=accept rec cfg -e cpu-clock -g -- ./loop
check "accept call-graph.record-mode = deferred with -g: defer bits" \
	gt "$(count cfg.opens '^cpu-clock chain=1 cc=1 out=1 ok$')" 0
PERF_CONFIG=$tmp/home/.perfconfig FAKE=accept rec cfg2 -e cpu-clock --call-graph=fp -- ./loop
check "accept --call-graph=fp overrides the config: no defer bit" \
	eq "$(count cfg2.opens 'cc=1|out=1')" 0

# ------------------------------------------------------------ 3. parsing
FAKE=accept rec p1 -v -e cpu-clock --call-graph=deferred,32 -- ./loop
check "deferred,32: exit status 0" eq "$(rc p1)" 0
check "deferred,32: -v says so" has p1.out '^callchain: type FP, user part deferred$'
check "deferred,32: sample_max_stack 32 and the bits" \
	bash -c "grep -E '^cpu-clock:' p1.evlist | grep -q 'sample_max_stack: 32' &&
		 grep -E '^cpu-clock:' p1.evlist | grep -q 'defer_callchain: 1, defer_output: 1'"
FAKE=accept rec p2 -e cpu-clock --call-graph=fp,defer,48 -- ./loop
check "fp,defer,48: sample_max_stack 48 and the bits" \
	bash -c "grep -E '^cpu-clock:' p2.evlist | grep -q 'sample_max_stack: 48' &&
		 grep -E '^cpu-clock:' p2.evlist | grep -q 'defer_callchain: 1, defer_output: 1'"
FAKE=accept rec p3 -v -e cpu-clock --call-graph=fp,64 -- ./loop
check "fp,64: exit status 0" eq "$(rc p3)" 0
check "fp,64: -v says FP" has p3.out '^callchain: type FP$'
check "fp,64: sample_max_stack 64, no defer bit" \
	bash -c "grep -E '^cpu-clock:' p3.evlist | grep -q 'sample_max_stack: 64' && ! grep -q defer p3.evlist"
FAKE=accept rec p4 -e cpu-clock --call-graph=fp,128 -- ./loop
check "fp,128: exit status 0" eq "$(rc p4)" 0
check "fp,128: no defer bit" hasnt p4.evlist 'defer'
check "fp,128: callchains sampled" has p4.evlist '^cpu-clock:.*CALLCHAIN'
for bad_opt in fp,bogus fp,64,defer deferred,defer fp,defer,32,1 deferred,x; do
	rec perr -e cpu-clock --call-graph=$bad_opt -- true
	check "--call-graph=$bad_opt: rejected" [ "$(rc perr)" -ne 0 ]
	check "--call-graph=$bad_opt: says what is wrong" \
		has perr.out '^callchain: Unknown --call-graph (fp|deferred) option value: '
done
"$PERF" record -h > help.out 2>&1
check "perf record -h mentions deferred and fp,defer" \
	bash -c "grep -q \"deferred:\" help.out && grep -q \"'fp,defer'\" help.out"

finish
