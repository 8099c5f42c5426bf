#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: profile a multi-threaded workload (demo/workload.c) with
# deferred user callchains and show the stitched result: the stitch
# summary, the top of 'perf report', a flame graph, and the folded and
# speedscope exports.
#
# The kernel defers the user callchains where it can (Linux 6.19+ with
# CONFIG_UNWIND_USER): a probe recording tells.  Elsewhere the recording is
# emulated (perf record --call-graph=deferred,emulate): a frame-pointer
# recording turned into the file such a kernel would have written.  The
# demo says which one it used.  DEMO_KERNEL=vm records in Debian's Linux 7.2
# booted in QEMU instead (tests/vm, as 'make vm-record'; demo/guest-record.sh
# in the guest), natively, and does the rest on the host.
#
# usage: demo/run-demo.sh          ('make demo' builds what it needs first)
#   DEMO_OUT=DIR          outputs (default: build/demo)
#   DEMO_KERNEL=host|vm   record on this machine's kernel (default), or in
#                         Linux 7.2 in QEMU (DEMO_OUT must then be on disk,
#                         not under /run: the guest has its own)
#   PERF=...              the patched perf (default: build/perf)
#   FLAMEGRAPH_TEMPLATE=  d3-flame-graph's d3-flamegraph-base.html (default:
#                         node_modules/d3-flame-graph/dist/templates/, from
#                         'make node-deps')
#   DEMO_SECONDS=S        how long the workload runs (default: 1.5; 3 with
#                         DEMO_KERNEL=vm, where it runs about 10x slower)
#   CC=...                compiler for the workload (default: cc)
#
# Writes to DEMO_OUT: workload, perf.data, report.txt (perf report --stdio),
# flamegraph.html, stacks.folded, profile.speedscope.json, stitched.data,
# offcpu.data, offcpu.folded, offcpu.html (the off-CPU flame graph),
# logs/STEP.log, and with DEMO_KERNEL=vm kallsyms (the guest's) and logs/vm/
# (run-vm.sh's console.log).
# Every output is written under a temporary name and renamed when its step
# succeeded.  A failing step stops the demo with a non-zero exit status,
# its name and its log.

set -u -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
PERF=${PERF:-$top/build/perf}
DEMO_OUT=${DEMO_OUT:-$top/build/demo}
templates=$top/node_modules/d3-flame-graph/dist/templates
FLAMEGRAPH_TEMPLATE=${FLAMEGRAPH_TEMPLATE:-$templates/d3-flamegraph-base.html}
DEMO_KERNEL=${DEMO_KERNEL:-host}
CC=${CC:-cc}

say() { echo "demo: $*"; }
die() { echo "demo: $*" >&2; exit 1; }

# step NAME COMMAND...: run COMMAND with its output in logs/NAME.log; stop
# the demo when it fails
step() {
	local name=$1 log="$DEMO_OUT/logs/$1.log" rc
	shift
	"$@" > "$log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "demo: step '$name' failed (exit status $rc): $*" >&2
		tail -n 20 "$log" | sed 's/^/demo:   /' >&2
		echo "demo: full log: $log" >&2
		exit 1
	fi
}

# publish TMP FINAL STEP: TMP must be a non-empty file; rename it to FINAL
publish() {
	[ -s "$1" ] || { rm -f "$1"; die "step '$3' wrote no output ($2)"; }
	mv -f "$1" "$2"
}

case $DEMO_KERNEL in
host) DEMO_SECONDS=${DEMO_SECONDS:-1.5} ;;
vm) DEMO_SECONDS=${DEMO_SECONDS:-3} ;;
*) die "DEMO_KERNEL=$DEMO_KERNEL: host (this machine's kernel) or vm (Linux 7.2 in QEMU)" ;;
esac
[ -x "$PERF" ] || die "$PERF not built: run 'make' (or 'make demo')"
[ -f "$FLAMEGRAPH_TEMPLATE" ] ||
	die "no flame graph template $FLAMEGRAPH_TEMPLATE: run 'make node-deps'"
mkdir -p "$DEMO_OUT/logs" || die "cannot create $DEMO_OUT"
DEMO_OUT=$(cd "$DEMO_OUT" && pwd)
if [ "$DEMO_KERNEL" = vm ]; then
	# the guest runs DEMO_OUT/workload and copies its files there
	case $(cd "$DEMO_OUT" && pwd -P)/ in
	/run/* | /dev/* | /proc/* | /sys/*)
		die "DEMO_KERNEL=vm: DEMO_OUT=$DEMO_OUT is not on the disk the guest" \
		    "shares (it mounts its own /run): choose another DEMO_OUT" ;;
	esac
fi
# a failed run must not leave the outputs of an earlier one beside its own
outputs="workload perf.data report.txt flamegraph.html stacks.folded profile.speedscope.json
	stitched.data offcpu.data offcpu.folded offcpu.html"
for f in $outputs kallsyms; do
	rm -f "${DEMO_OUT:?}/$f"
done
rm -f "$DEMO_OUT"/logs/*.log
tmp=$(mktemp -d "$DEMO_OUT/.tmp.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# -O0: GCC sets up no frame in leaf functions at -O1 and above (see the
# comment in workload.c), and a frame-pointer walk needs every frame
say "building the workload ($CC -O0 -fno-omit-frame-pointer)"
step build-workload "$CC" -O0 -g -fno-omit-frame-pointer -pthread -Wall \
	-o "$tmp/workload" "$top/demo/workload.c"
publish "$tmp/workload" "$DEMO_OUT/workload" build-workload

# Can this kernel defer user callchains?  perf record drops the defer bits
# where the kernel refuses them and says so (callchain_deferred__warn_fallback());
# where it accepted them, the recorded attr has defer_callchain set.
if [ "$DEMO_KERNEL" = vm ]; then
	mode=vm		# the guest's kernel, which can
else
	step probe-record "$PERF" record --call-graph=deferred -N -o "$tmp/probe.data" -- true
	if grep -q 'this kernel cannot defer user callchains' "$DEMO_OUT/logs/probe-record.log"; then
		mode=emulated
	else
		step probe-evlist "$PERF" evlist -v -i "$tmp/probe.data"
		grep -q 'defer_callchain: 1' "$DEMO_OUT/logs/probe-evlist.log" ||
			die "step 'probe-evlist': perf record neither deferred user callchains" \
			    "nor said it fell back (logs/probe-record.log)"
		mode=native
	fi
fi

# --kallsyms=FILE for the steps that name kernel frames: with DEMO_KERNEL=vm
# the guest's kernel, not this one
kallsyms=()

# record_vm: the workload recorded natively in Debian's Linux 7.2 booted in
# QEMU, as 'make vm-record' does (tests/vm/README.md); perf.data and the
# guest's kallsyms (nokaslr: the addresses of the recording) into DEMO_OUT
record_vm() {
	local vm=$top/tests/vm log=$DEMO_OUT/logs/record-vm.log rc vmlinuz deferred
	local initrd=$top/build/vm/initramfs.cpio.gz

	# run-vm.sh's console.log, skip-reason and virtiofsd socket: our own,
	# beside a 'make vm-record' that may be running
	export VM_DIR=$DEMO_OUT/logs/vm VM_QUIET=1
	mkdir -p "$VM_DIR" || die "cannot create $VM_DIR"
	rm -f "$VM_DIR/skip-reason" "$VM_DIR"/console.log*
	# no_vm WHAT LOG: the VM was asked for and cannot boot
	no_vm() {
		die "DEMO_KERNEL=vm: cannot boot the VM: $(cat "$VM_DIR/skip-reason" 2>/dev/null ||
			echo "$1") (see $2)"
	}
	vmlinuz=$("$vm/fetch-kernel.sh" 2> "$DEMO_OUT/logs/fetch-kernel.log" | tail -n 1)
	rc=$?
	[ "$rc" -eq 0 ] || no_vm "no kernel (fetch-kernel.sh exited $rc)" "$DEMO_OUT/logs/fetch-kernel.log"
	if [ ! -f "$initrd" ] || [ -n "$(find "$vm/mkinitramfs.sh" -newer "$initrd")" ]; then
		"$vm/mkinitramfs.sh" "$initrd" > "$DEMO_OUT/logs/mkinitramfs.log" 2>&1 ||
			no_vm "no initramfs (busybox-static missing?)" "$DEMO_OUT/logs/mkinitramfs.log"
	fi
	say "recording in Linux 7.2 booted in QEMU (TCG: about 30 s; console: $VM_DIR/console.log)"
	rm -f "$tmp/perf.data"
	VMLINUZ=$vmlinuz INITRD=$initrd "$vm/run-vm.sh" "$top/demo/guest-record.sh" \
		"$tmp" "$PERF" "$DEMO_OUT/workload" "$DEMO_SECONDS" > "$log" 2>&1
	rc=$?
	# the guest's steps (with its uptime) and perf record's output
	grep -a '^guest-record:' "$VM_DIR/console.log" 2> /dev/null | tr -d '\r' >> "$log"
	[ -f "$tmp/record.log" ] && cat "$tmp/record.log" >> "$log"
	[ "$rc" -eq 77 ] && no_vm "run-vm.sh exited 77" "$log"
	if [ "$rc" -ne 0 ]; then
		echo "demo: step 'record-vm' failed (exit status $rc): run-vm.sh demo/guest-record.sh" >&2
		tail -n 20 "$log" | sed 's/^/demo:   /' >&2
		die "full log: $log; the guest's console: $VM_DIR/console.log"
	fi
	[ -f "$tmp/offcpu-record.log" ] && cat "$tmp/offcpu-record.log" >> "$log"
	publish "$tmp/kallsyms" "$DEMO_OUT/kallsyms" record-vm
	publish "$tmp/perf.data" "$DEMO_OUT/perf.data" record-vm
	publish "$tmp/offcpu.data" "$DEMO_OUT/offcpu.data" record-vm
	kallsyms=(--kallsyms="$DEMO_OUT/kallsyms")
	read -r kver < "$tmp/osrelease"
	kver=${kver%%[+-]*}

	# the kernel deferred: CALLCHAIN_DEFERRED records in the file
	step record-vm-stats "$PERF" report --stats -i "$DEMO_OUT/perf.data"
	deferred=$(awk '$1 == "CALLCHAIN_DEFERRED" && $2 == "events:" { print $3; exit }' \
		"$DEMO_OUT/logs/record-vm-stats.log")
	[ "${deferred:-0}" -gt 0 ] ||
		die "step 'record-vm-stats': Linux $kver wrote no CALLCHAIN_DEFERRED records" \
		    "(logs/record-vm-stats.log, logs/record-vm.log)"
}

# record MODE: the workload into perf.data
record() {
	local callgraph=deferred

	[ "$1" = vm ] && { record_vm; return; }
	[ "$1" = emulated ] && callgraph=deferred,emulate
	rm -f "$tmp/perf.data"
	step "record-$1" "$PERF" record --call-graph="$callgraph" -N -o "$tmp/perf.data" -- \
		"$DEMO_OUT/workload" "$DEMO_SECONDS"
	publish "$tmp/perf.data" "$DEMO_OUT/perf.data" "record-$1"
}

# summary: perf script's "deferred callchains: ..." line (empty when the
# recording has no deferred samples)
summary() {
	"$PERF" script -i "$DEMO_OUT/perf.data" -F comm > /dev/null 2> "$tmp/script.err"
	grep -m1 '^deferred callchains: ' "$tmp/script.err"
}

record "$mode"
line=$(summary)
if [ "$mode" = native ] && ! grep -q '^deferred callchains: [1-9]' <<< "$line"; then
	# a 6.19 kernel without CONFIG_UNWIND_USER takes the bits and unwinds in place
	say "the kernel accepted the defer bits but deferred no user callchain: emulating instead"
	mode=emulated
	record "$mode"
	line=$(summary)
fi
case $mode in
native)
	say "deferred callchains: native (the kernel deferred the user callchains;" \
	    "perf record --call-graph=deferred)";;
vm)
	say "deferred callchains: native (Linux $kver in QEMU)";;
emulated)
	say "deferred callchains: emulated (this kernel cannot defer user callchains;" \
	    "perf record --call-graph=deferred,emulate)";;
esac
grep -q '^deferred callchains: [1-9]' <<< "$line" ||
	die "step 'summary': no deferred samples in $DEMO_OUT/perf.data (perf script said: ${line:-nothing})"
say "stitch summary (perf script): $line"

# by thread and function, each with its stitched callchain from the thread's
# start down to the kernel
report_stdio() {
	"$PERF" report "${kallsyms[@]}" -i "$DEMO_OUT/perf.data" --stdio --no-children --sort comm,sym \
		-g caller --percent-limit 5 > "$tmp/report.txt"
}
step report report_stdio
publish "$tmp/report.txt" "$DEMO_OUT/report.txt" report
say "top of the stitched 'perf report --stdio' (all of it: $DEMO_OUT/report.txt):"
grep -v -e '^#$' -e '^# To display' -e '^$' "$DEMO_OUT/report.txt" | head -n 25

# flamegraph.py writes where it runs; perf script reads ./perf.data.  Not
# 'perf script report flamegraph --template ...': perf 7.2's
# flamegraph-report hands its arguments to perf script, not to the script.
fg_report() {
	(cd "$DEMO_OUT" && "$PERF" script "${kallsyms[@]}" \
		-s "$("$PERF" --exec-path)/scripts/python/flamegraph.py" -- \
		--template "$FLAMEGRAPH_TEMPLATE" -o "$tmp/flamegraph.html")
}
step flamegraph fg_report
publish "$tmp/flamegraph.html" "$DEMO_OUT/flamegraph.html" flamegraph

# the profile's event: emulated recordings also hold raw_syscalls:sys_exit
# samples (the emulator's return points), which may come first in time
event=$("$PERF" evlist -i "$DEMO_OUT/perf.data" 2> /dev/null | head -1)
step folded "$PERF" stitch "${kallsyms[@]}" -F folded --event "$event" -i "$DEMO_OUT/perf.data" \
	-o "$tmp/stacks.folded"
publish "$tmp/stacks.folded" "$DEMO_OUT/stacks.folded" folded

step speedscope "$PERF" stitch "${kallsyms[@]}" -F speedscope --event "$event" -i "$DEMO_OUT/perf.data" \
	-o "$tmp/profile.speedscope.json"
publish "$tmp/profile.speedscope.json" "$DEMO_OUT/profile.speedscope.json" speedscope

# off CPU: where the threads waited, and for how long.  perf record
# --off-cpu (without BPF: sched_switch with deferred callchains, frame
# pointers where the kernel cannot defer, and switch events); each
# switch-out's stitched stack weighs the nanoseconds until its thread ran
# again (perf stitch --count=off-cpu), drawn as a flame graph
if [ "$mode" != vm ]; then
	rm -f "$tmp/offcpu.data"
	step offcpu-record "$PERF" record --off-cpu -N -o "$tmp/offcpu.data" -- \
		"$DEMO_OUT/workload" "$DEMO_SECONDS"
	publish "$tmp/offcpu.data" "$DEMO_OUT/offcpu.data" offcpu-record
fi
step offcpu-folded "$PERF" stitch "${kallsyms[@]}" -F folded --count=off-cpu --kernel-suffix \
	-i "$DEMO_OUT/offcpu.data" -o "$tmp/offcpu.folded"
publish "$tmp/offcpu.folded" "$DEMO_OUT/offcpu.folded" offcpu-folded
step offcpu-flamegraph /usr/bin/python3 "$top/demo/folded-flamegraph.py" \
	--template "$FLAMEGRAPH_TEMPLATE" \
	--context "off-CPU time (ns) per stitched stack: perf record --off-cpu, perf stitch -F folded --count=off-cpu" \
	"$DEMO_OUT/offcpu.folded" "$tmp/offcpu.html"
publish "$tmp/offcpu.html" "$DEMO_OUT/offcpu.html" offcpu-flamegraph
say "off CPU: $(grep -o '[0-9]* sched:sched_switch samples exported.*total weight [0-9]* (ns off-CPU)' \
	"$DEMO_OUT/logs/offcpu-folded.log")"

# for the viewers that read perf.data themselves but know no deferred
# callchains (hotspot, perf 6.1, ...)
step convert "$PERF" stitch -i "$DEMO_OUT/perf.data" -o "$tmp/stitched.data"
publish "$tmp/stitched.data" "$DEMO_OUT/stitched.data" stitched

say "outputs in $DEMO_OUT:"
[ "$mode" = vm ] && outputs="$outputs kallsyms"
for f in $outputs; do
	printf 'demo:   %-24s %s\n' "$f" "$(du -h "$DEMO_OUT/$f" | cut -f1)"
done
hotspot="hotspot $DEMO_OUT/stitched.data"
[ "$mode" = vm ] && hotspot="hotspot --kallsyms $DEMO_OUT/kallsyms $DEMO_OUT/stitched.data"
say "open $DEMO_OUT/flamegraph.html in a browser (kernel frames blue, user frames green," \
    "lost user stacks red); speedscope.app opens profile.speedscope.json;" \
    "$hotspot shows the stitched stacks in hotspot"
