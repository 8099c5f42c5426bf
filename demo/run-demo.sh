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
# demo says which one it used.
#
# usage: demo/run-demo.sh          ('make demo' builds what it needs first)
#   DEMO_OUT=DIR          outputs (default: build/demo)
#   PERF=...              the patched perf (default: build/perf)
#   FLAMEGRAPH_TEMPLATE=  d3-flame-graph's d3-flamegraph-base.html (default:
#                         node_modules/d3-flame-graph/dist/templates/, from
#                         'make node-deps')
#   DEMO_SECONDS=S        how long the workload runs (default: 1.5)
#   CC=...                compiler for the workload (default: cc)
#
# Writes to DEMO_OUT: workload, perf.data, report.txt (perf report --stdio),
# flamegraph.html, stacks.folded, profile.speedscope.json and logs/STEP.log.
# Every output is written under a temporary name and renamed when its step
# succeeded.  A failing step stops the demo with a non-zero exit status,
# its name and its log.

set -u -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
PERF=${PERF:-$top/build/perf}
DEMO_OUT=${DEMO_OUT:-$top/build/demo}
templates=$top/node_modules/d3-flame-graph/dist/templates
FLAMEGRAPH_TEMPLATE=${FLAMEGRAPH_TEMPLATE:-$templates/d3-flamegraph-base.html}
DEMO_SECONDS=${DEMO_SECONDS:-1.5}
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

[ -x "$PERF" ] || die "$PERF not built: run 'make' (or 'make demo')"
[ -f "$FLAMEGRAPH_TEMPLATE" ] ||
	die "no flame graph template $FLAMEGRAPH_TEMPLATE: run 'make node-deps'"
mkdir -p "$DEMO_OUT/logs" || die "cannot create $DEMO_OUT"
DEMO_OUT=$(cd "$DEMO_OUT" && pwd)
# a failed run must not leave the outputs of an earlier one beside its own
outputs="workload perf.data report.txt flamegraph.html stacks.folded profile.speedscope.json
	stitched.data"
for f in $outputs; do
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

# record MODE: the workload into perf.data
record() {
	local callgraph=deferred

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
	"$PERF" report -i "$DEMO_OUT/perf.data" --stdio --no-children --sort comm,sym \
		-g caller --percent-limit 5 > "$tmp/report.txt"
}
step report report_stdio
publish "$tmp/report.txt" "$DEMO_OUT/report.txt" report
say "top of the stitched 'perf report --stdio' (all of it: $DEMO_OUT/report.txt):"
grep -v -e '^#$' -e '^# To display' -e '^$' "$DEMO_OUT/report.txt" | head -n 25

# flamegraph.py writes where it runs; perf script report reads ./perf.data
fg_report() {
	(cd "$DEMO_OUT" && "$PERF" script report flamegraph --template "$FLAMEGRAPH_TEMPLATE" \
		-o "$tmp/flamegraph.html")
}
step flamegraph fg_report
publish "$tmp/flamegraph.html" "$DEMO_OUT/flamegraph.html" flamegraph

# the profile's event: emulated recordings also hold raw_syscalls:sys_exit
# samples (the emulator's return points), which may come first in time
event=$("$PERF" evlist -i "$DEMO_OUT/perf.data" 2> /dev/null | head -1)
step folded "$PERF" stitch -F folded --event "$event" -i "$DEMO_OUT/perf.data" \
	-o "$tmp/stacks.folded"
publish "$tmp/stacks.folded" "$DEMO_OUT/stacks.folded" folded

step speedscope "$PERF" stitch -F speedscope --event "$event" -i "$DEMO_OUT/perf.data" \
	-o "$tmp/profile.speedscope.json"
publish "$tmp/profile.speedscope.json" "$DEMO_OUT/profile.speedscope.json" speedscope

# for the viewers that read perf.data themselves but know no deferred
# callchains (hotspot, perf 6.1, ...)
step convert "$PERF" stitch -i "$DEMO_OUT/perf.data" -o "$tmp/stitched.data"
publish "$tmp/stitched.data" "$DEMO_OUT/stitched.data" stitched

say "outputs in $DEMO_OUT:"
for f in $outputs; do
	printf 'demo:   %-24s %s\n' "$f" "$(du -h "$DEMO_OUT/$f" | cut -f1)"
done
say "open $DEMO_OUT/flamegraph.html in a browser (kernel frames blue, user frames green," \
    "lost user stacks red); speedscope.app opens profile.speedscope.json;" \
    "hotspot $DEMO_OUT/stitched.data shows the stitched stacks in hotspot"
