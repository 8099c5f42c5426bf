#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo (demo/run-demo.sh) and its flame graph (the flamegraph.py hook
# of patches/perf-7.2).
#
# Runs the demo into a temporary DEMO_OUT and checks: the native/emulated
# line (emulated on kernels before 6.19), the stitch summary (stitched
# samples, counts that reconcile with each other and with perf stitch
# --stats=json), DEMO_KERNEL=vm failing with its reason before any boot
# where it cannot run (its recording in QEMU is not run here), the flame
# graph (the workload's functions as user frames with stitched kernel
# frames above them, lost stacks as many as orphans,
# nothing fetched from the network), what headless Chromium renders of it
# offline (screenshot: flame graph colours over a large area, kernel blue
# and user green both present; DOM: kernel and user frames in their
# colours, no fill shared), and the folded and speedscope exports (present,
# well-formed; their content is test-stitch-export's business); the
# speedscope app itself on the demo's profile (served on 127.0.0.1, in
# headless Chromium: its tables, flame charts and screenshots hold the
# file's frames and weights, the workload's user frames stitched to their
# kernel frames), and on the same profile unstitched, where those checks
# fail.  Then a recording with records dropped: the "[user stack lost:
# ...]" frames are drawn red (the flamegraph.py hook) and hold exactly the orphans.
#
# usage: tests/perf/test-demo.sh     (after make -f Makefile.perf-patch and
#                                     make node-deps)
#   Environment (tests/perf/lib.sh): PERF, PYTHON, KEEP, and
#   CHROMIUM=...  browser (default: chromium)
# KEEP=1 keeps, among the rest, app/profile-N.png: the speedscope app's
# flame chart of each thread.
# Needs root (or perf_event_paranoid <= 1) to record.  Output and exit
# status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
CHROMIUM=${CHROMIUM:-chromium}
CHECK="$PY $here/helpers/flamegraph-check.py"
TEMPLATE=$top/node_modules/d3-flame-graph/dist/templates/d3-flamegraph-base.html
out=$tmp/out

for need in "$PERF" "$TEMPLATE"; do
	[ -e "$need" ] || abort "$need missing (make -f Makefile.perf-patch; make node-deps)"
done
command -v "$CHROMIUM" > /dev/null || abort "$CHROMIUM not installed (make deps)"

# screenshot HTML PNG: headless Chromium's screenshot of HTML into PNG, its
# colours counted into PNG.chk; taken again (at most 3 times) while it
# shows no flame graph colour at all, a page not drawn yet on a busy
# machine, whatever the thresholds then say of the one drawn
screenshot() {
	local try

	for try in 1 2 3; do
		rm -f "$2"
		chromium_run --screenshot="$2" "file://$1" > "$2.log" 2>&1
		$CHECK png "$2" > "$2.chk" 2>&1
		[ "$(val flame "$2.chk")" -gt 0 ] 2> /dev/null && break
		echo "# screenshot of $1 shows no flame graph (try $try)"
	done
}

# val FILE KEY [FIELD]: field FIELD (default 2) of the line of FILE starting with KEY
val() { awk -v k="$1" -v f="${3:-2}" '$1 == k { print $f; exit }' "$2"; }

# chromium_run ARGS...: headless, offline (every host name fails to
# resolve), its own profile
chromium_run() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$tmp/chromium-profile" --host-resolver-rules='MAP * ~NOTFOUND' \
		--window-size=1200,800 --virtual-time-budget=10000 "$@"
}

# ---------------------------------------------------------------- the demo
DEMO_OUT=$out PERF=$PERF "$top/demo/run-demo.sh" > demo.out 2> demo.err
rc=$?
check "demo: exit status 0" eq "$rc" 0
[ "$rc" -eq 0 ] || { sed 's/^/     /' demo.err | tail -20; }

# native needs Linux 6.19 (and CONFIG_UNWIND_USER, else the demo emulates)
kver=$(uname -r | awk -F '[.-]' '{ printf "%d", $1 * 1000 + $2 }')
if [ "$kver" -lt 6019 ]; then
	expect='demo: deferred callchains: emulated (this kernel cannot defer user callchains;'
	expect="$expect perf record --call-graph=deferred,emulate)"
	check "demo: says it emulated (kernel $(uname -r))" eq "$(grep -cxF "$expect" demo.out)" 1
else
	check "demo: says native or emulated" eq \
		"$(grep -Ec '^demo: deferred callchains: (native|emulated) \(' demo.out)" 1
fi
check "demo: exactly one mode line" eq "$(grep -c '^demo: deferred callchains: ' demo.out)" 1

# the summary: N deferred samples, S stitched (P%), O orphans (reasons), R records
line=$(sed -n 's/^demo: stitch summary (perf script): //p' demo.out)
echo "# $line"
$PY "$here/helpers/summary-parse.py" "$line" > summary.chk
check "summary: the line parses" eq "$(val parsed summary.chk)" 1
n=$(val deferred summary.chk); s=$(val stitched summary.chk); o=$(val orphans summary.chk)
check "summary: stitched samples" gt "${s:-0}" 0
check "summary: deferred = stitched + orphans" eq "${n:-x}" "$((${s:-0} + ${o:-0}))"
check "summary: orphans = sum of the reasons" eq "$(val reasons_sum summary.chk)" "${o:-x}"
check "summary: percentage" eq "$(val pct_ok summary.chk)" 1
"$PERF" stitch --stats=json -i "$out/perf.data" > stats.json 2> stats.err
check "summary: = perf stitch --stats=json" eq \
	"$(js stats.json '"%d %d %d %d" % (d["deferred_samples"], d["stitched"],
		d["orphans_total"], d["records"])')" "$n $s $o $(val records summary.chk)"
check "demo: prints the top of perf report" has demo.out \
	'^demo: top of the stitched .perf report --stdio'
check "demo: report has the stitched summary" grep -qxF "# $line" "$out/report.txt"
# an entry of the workload's own, above the report's 5% (the top the demo
# prints may be a kernel entry's long callchain: what ran where varies)
check "demo: report shows a workload function" has "$out/report.txt" \
	'\[\.\] (sleep_spin_work|fault_touch_pages|hop_crunch|io_)'

# DEMO_KERNEL=vm records in Linux 7.2 booted in QEMU: half a minute, which
# make vm-check spends already on the same VM.  Here only that, asked for
# and impossible, it fails before any boot and says why.
run_out=$(mktemp -d /run/test-demo-vm.XXXXXX)
DEMO_KERNEL=vm DEMO_OUT=$run_out PERF=$PERF "$top/demo/run-demo.sh" > vm-run.out 2> vm-run.err
rc=$?
rm -rf "$run_out"
check "DEMO_KERNEL=vm: DEMO_OUT under /run (the guest's own) refused (status $rc)" eval \
	"[ $rc -ne 0 ] && has vm-run.err '^demo: DEMO_KERNEL=vm: DEMO_OUT=.* not on the disk the guest'"
mkdir -p "$top/build" && vm_out=$(mktemp -d "$top/build/.test-demo-vm.XXXXXX") &&
	LINUX_IMAGE_DEB=/nonexistent.deb DEMO_KERNEL=vm DEMO_OUT=$vm_out PERF=$PERF \
	"$top/demo/run-demo.sh" > vm-noboot.out 2> vm-noboot.err
rc=$?
check "DEMO_KERNEL=vm, no kernel to boot: fails (status $rc), says so and why" eval \
	"[ $rc -ne 0 ] && has vm-noboot.err '^demo: DEMO_KERNEL=vm: cannot boot the VM: cannot get the kernel: LINUX_IMAGE_DEB=/nonexistent.deb'"
check "DEMO_KERNEL=vm, no kernel to boot: no mode line, no perf.data" eval \
	"hasnt vm-noboot.out 'deferred callchains' && [ ! -e '${vm_out:-x}/perf.data' ]"
[ -z "${vm_out:-}" ] || rm -rf "$vm_out"

# ---------------------------------------------------------------- flame graph
fg=$out/flamegraph.html
check "flamegraph.html written" test -s "$fg"
check "flamegraph.html: template filled in" hasnt "$fg" '@flamegraph_json|@options_json'
funcs="io_read_block io_write_block io_ask_pid io_copy_blocks fault_touch_pages fault_map_region
	sleep_spin_work sleep_thread hop_crunch hop_thread"
# shellcheck disable=SC2086
$CHECK stacks "$fg" $funcs > stacks.chk 2>&1
for f in $funcs; do
	check "flamegraph: $f is a user frame with samples" gt \
		"$(awk -v f="$f" '$1 == "func" && $2 == f { print $4 }' stacks.chk)" 0
done
# stitched: the user frames that enter the kernel carry kernel frames
for f in io_read_block io_write_block fault_touch_pages; do
	check "flamegraph: kernel frames stitched above $f" gt \
		"$(awk -v f="$f" '$1 == "func" && $2 == f { print $6 }' stacks.chk)" 0
done
for t in demo-io demo-faults demo-sleeper demo-hopper; do
	check "flamegraph: thread $t" grep -q "\"n\": \"$t ([0-9]*)\"" "$fg"
done
check "flamegraph: every deferred sample drawn" test "$(val total stacks.chk)" -ge "${n:-1}"
check "flamegraph: lost user stacks = orphans" eq "$(val lost stacks.chk)" "${o:-x}"

$CHECK offline "$fg" > offline.chk 2>&1
check "flamegraph: nothing fetched from the network" eq "$(val fetched offline.chk)" 0
check "flamegraph: no http(s) URL but XML namespaces" eq "$(val unknown_urls offline.chk)" 0
# the same check finds what a CDN page would load
{
	echo '<html><head>'
	echo '<script src="https://cdn.jsdelivr.net/npm/d3-flame-graph@4.1.3/dist/d3-flamegraph.js">'
	echo '</script><link rel="stylesheet" href="//cdn.example.org/fg.css">'
	echo '<style>@import url("https://e.org/x.css");</style>'
	echo '</head><body><script>fetch("https://e.org/stacks.json")</script></body></html>'
} > cdn.html
$CHECK offline cdn.html > cdn.chk 2>&1
check "offline check: finds the 4 fetches of a CDN page" eq "$(val fetched cdn.chk)" 4

# rendered: the screenshot shows the flame graph, both colours
screenshot "$fg" "$tmp/shot.png"
mv shot.png.chk png.chk
check "chromium: screenshot written" test -s shot.png
check "screenshot: 1200x800" eq "$(val size png.chk 2) $(val size png.chk 3)" "1200 800"
# 960000 pixels: at least 5% flame graph, 5000 kernel blue, 5000 user green
check "screenshot: flame graph colours over a large area" gt "$(val flame png.chk)" 48000
check "screenshot: kernel colour present" gt "$(val kernel png.chk)" 5000
check "screenshot: user colour present" gt "$(val user png.chk)" 5000
sed 's/^/# png /' png.chk

chromium_run --dump-dom "file://$fg" > dom.html 2> chromium-dom.log
$CHECK dom dom.html "$fg" > dom.chk 2>&1
sed 's/^/# dom /' dom.chk
check "DOM: kernel frames rendered" gt "$(val kernel dom.chk)" 0
check "DOM: user frames rendered" gt "$(val user dom.chk)" 0
check "DOM: every kernel frame in the kernel colour" eq \
	"$(val kernel dom.chk 4)" "$(val kernel dom.chk)"
check "DOM: every user frame in the user colour" eq "$(val user dom.chk 4)" "$(val user dom.chk)"
check "DOM: no fill shared by kernel and user frames" eq "$(val shared_fills dom.chk)" 0

# ---------------------------------------------------------------- off CPU
# perf record --off-cpu, perf stitch -F folded --count=off-cpu and the
# flame graph of it: the page holds the folded stacks' weights, the summary
# said the same total, sleep_nap (nanosleep) waits with the kernel's
# stack above it, and it renders in both colours
ofg=$out/offcpu.html
check "offcpu.html written" test -s "$ofg"
check "offcpu.html: template filled in" hasnt "$ofg" '@flamegraph_json|@options_json'
otot=$(awk '{ n += $NF } END { printf "%.0f\n", n }' "$out/offcpu.folded")
$CHECK stacks "$ofg" sleep_nap hop_to_next_cpu > ostacks.chk 2>&1
check "offcpu flame graph: the folded stacks' $otot ns" eq "$(val total ostacks.chk)" "$otot"
check "offcpu: the summary's total weight" \
	has "$out/logs/offcpu-folded.log" "total weight $otot \\(ns off-CPU\\)"
check "offcpu flame graph: sleep_nap waits, the kernel's stack stitched above it" gt \
	"$(awk '$1 == "func" && $2 == "sleep_nap" { print $6 }' ostacks.chk)" 0
check "offcpu: every stack ends in the state its thread left the CPU in" \
	eq "$(grep -cvE ';\[off-cpu: [A-Z?](, to the end)?\] [0-9]+$' "$out/offcpu.folded")" 0
check "offcpu: demo-sleeper sleeps (S) in sleep_nap" \
	grep -qE '^demo-sleeper;.*;sleep_nap;.*;\[off-cpu: S\] [0-9]+$' "$out/offcpu.folded"
screenshot "$ofg" "$tmp/oshot.png"
mv oshot.png.chk opng.chk
check "offcpu screenshot: flame graph colours over a large area" gt "$(val flame opng.chk)" 48000
check "offcpu screenshot: kernel colour present" gt "$(val kernel opng.chk)" 5000
check "offcpu screenshot: user colour present" gt "$(val user opng.chk)" 5000

# ---------------------------------------------------------------- exports
check "stacks.folded written" test -s "$out/stacks.folded"
check "stacks.folded: every line 'stack count'" eq \
	"$(grep -Evc '^.+ [0-9]+$' "$out/stacks.folded")" 0
# the profile's event, not the emulator's raw_syscalls:sys_exit samples
event=$("$PERF" evlist -i "$out/perf.data" 2> /dev/null | head -1)
# weighed by period, as stackcollapse-perf.pl weighs perf script's samples
pev=$("$PERF" script -i "$out/perf.data" -F period,event 2> /dev/null |
	awk -v e="$event:" '$NF == e { n += $(NF - 1) } END { printf "%.0f\n", n }')
check "stacks.folded: the $event samples, all of them, weighed by period ($pev)" eq \
	"$(awk '{ n += $NF } END { printf "%.0f\n", n }' "$out/stacks.folded")" "$pev"
# (a lost-chunks warning is the recording's, not the conversion's)
"$SYS_PERF" script -i "$out/stitched.data" > /dev/null 2> stitched.err
rc=$?
sed 's/^/# system perf on stitched.data: /' stitched.err | head -3
check "stitched.data written, the system perf reads it (status $rc), no complaint" \
	eval "[ $rc -eq 0 ] && hasnt stitched.err 'Timestamp below|unknown|invalid callchain|out of order|Reserved bits|failed to process'"
check "profile.speedscope.json written" test -s "$out/profile.speedscope.json"
check "profile.speedscope.json: JSON" "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' \
	"$out/profile.speedscope.json"
check "no temporary files left" eq "$(find "$out" -name '.tmp.*' | wc -l)" 0

# ---------------------------------------------------------------- speedscope app
# The speedscope app itself (npm speedscope's dist/release/index.html) in
# headless Chromium, given the profile as #profileURL=: speedscope-app.js
# serves both on 127.0.0.1 (the app fetch()es the profile, which file://
# cannot) and reads what the app draws: every Sandwich table, the frames
# under the mouse down the flame charts (the app's tooltips: a WebGL
# canvas has no text), the callers and callees charts of the functions
# that enter the kernel, screenshots.  speedscope-app-check.py compares
# it all with the file: the stitched user frames, drawn over their kernel
# frames, with the file's weights.
speedscope_app() {	# PROFILE DIR: the app on PROFILE, app.json etc. in DIR
	mkdir -p "$2"
	# shellcheck disable=SC2086
	CHROMIUM=$CHROMIUM SPEEDSCOPE_TIMEOUT=180 node "$here/helpers/speedscope-app.js" \
		"$SPEEDSCOPE" "$1" "$2" $stitched > "$2.log" 2>&1
}
SPEEDSCOPE=$top/node_modules/speedscope/dist/release
stitched="io_read_block io_write_block fault_touch_pages"
if [ ! -e "$SPEEDSCOPE/index.html" ] || ! command -v node > /dev/null; then
	skipped "speedscope app: node or $SPEEDSCOPE missing (make node-deps)"
else
	start=$SECONDS
	speedscope_app "$out/profile.speedscope.json" app
	rc=$?
	check "speedscope app: opened the profile (status $rc, $((SECONDS - start)) s)" eq "$rc" 0
	[ "$rc" -eq 0 ] || tail -5 app.log | sed 's/^/     /'
	# shellcheck disable=SC2086
	$PY "$here/helpers/speedscope-app-check.py" "$out/profile.speedscope.json" app/app.json \
		--user $funcs --stitched $stitched > app.chk 2>&1
	relay_checks "speedscope app" app.chk
	grep -E '^# .*(heaviest stack|callees)' app.chk

	# It fails on a profile without stitched user frames: the stacks
	# of demo-io and demo-faults cut in two samples, user part and
	# kernel part (what a viewer shows that does not stitch), those of
	# demo-sleeper and demo-hopper without their user frames.  The app
	# shows that file faithfully (its checks pass) but neither the
	# stitching of the 3 functions nor the 4 user functions of those
	# threads.
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
kernel = lambda f: frames[f].get("file") == "[kernel.kallsyms]"
for p in d["profiles"]:
    names = {frames[f]["name"] for s in p["samples"] for f in s}
    strip = any(n.startswith(("sleep_", "hop_")) for n in names)
    cut = []
    for s, w in zip(p["samples"], p["weights"]):
        k = [f for f in s if kernel(f)]
        parts = [k] if strip else [[f for f in s if not kernel(f)], k]
        cut += [(part, w) for part in parts if part]
    p["samples"], p["weights"] = [s for s, _ in cut], [w for _, w in cut]
    p["endValue"] = sum(p["weights"])
json.dump(d, open(sys.argv[2], "w"))' "$out/profile.speedscope.json" unstitched.speedscope.json
	start=$SECONDS
	speedscope_app unstitched.speedscope.json app-unstitched
	rc=$?
	check "speedscope app, unstitched: opened (status $rc, $((SECONDS - start)) s)" eq "$rc" 0
	# shellcheck disable=SC2086
	$PY "$here/helpers/speedscope-app-check.py" unstitched.speedscope.json app-unstitched/app.json \
		--user $funcs --stitched $stitched > unstitched.chk 2>&1
	grep ' -- ' unstitched.chk | sed 's/^/# unstitched: /'
	check "speedscope app, unstitched: the 3 stitching checks fail" eq \
		"$(grep -c '^check .*: [a-z_]* stitched: .* -- ' unstitched.chk)" 3
	check "speedscope app, unstitched: the 4 user frames of sleeper and hopper missed" eq \
		"$(grep -Ec '^check (sleep|hop)_[a-z_]*: a user frame .* -- ' unstitched.chk)" 4
	check "speedscope app, unstitched: no other check fails" eq "$(grep -c ' -- ' unstitched.chk)" 7
	# and what the app showed of the demo's profile is not that file
	$PY "$here/helpers/speedscope-app-check.py" unstitched.speedscope.json app/app.json > other.chk 2>&1
	check "speedscope app: the demo's tables and charts differ from another file's" gt \
		"$(grep -Ec '(table|chart).* -- ' other.chk)" 4
fi

# ---------------------------------------------------------------- orphans
# a frame-pointer recording emulated with a fifth of the records dropped
mkdir lost
"$PERF" record -q -g -N -o fp.data -- "$out/workload" 0.5 > rec.log 2>&1
check "lost: fp recording" test -s fp.data
"$PERF" stitch --emulate --drop 0.2 --seed 7 -q -i fp.data -o lost/perf.data > emu.log 2>&1
check "lost: emulated with dropped records" test -s lost/perf.data
(cd lost && "$PERF" script -s "$("$PERF" --exec-path)/scripts/python/flamegraph.py" -- --template "$TEMPLATE" -o fg.html) \
	> lost.out 2> lost.err
nlost=$(sed -n 's/^deferred callchains: .* \([0-9]*\) orphans (.*/\1/p' lost.err)
echo "# $(grep '^deferred callchains' lost.err)"
check "lost: orphans" gt "${nlost:-0}" 0
$CHECK stacks lost/fg.html > lost.chk 2>&1
check "lost: pseudo-frames hold exactly the orphans" eq "$(val lost lost.chk)" "${nlost:-x}"
check "lost: pseudo-frames have libtype root (the flamegraph.py hook)" eq "$(val lost_libtypes lost.chk)" root
chromium_run --dump-dom "file://$tmp/lost/fg.html" > lost-dom.html 2> /dev/null
$CHECK dom lost-dom.html lost/fg.html > lost-dom.chk 2>&1
sed 's/^/# dom /' lost-dom.chk
check "lost: pseudo-frames rendered" gt "$(val lost lost-dom.chk)" 0
check "lost: every pseudo-frame red" eq "$(val lost lost-dom.chk 4)" "$(val lost lost-dom.chk)"
check "lost: kernel frames still blue" eq \
	"$(val kernel lost-dom.chk 4)" "$(val kernel lost-dom.chk)"

# the same file converted by perf stitch: the lost stacks are maps named
# "[user stack lost: <reason>]" without symbols, drawn and named alike
mkdir converted
"$PERF" stitch -q -i lost/perf.data -o converted/perf.data > conv.log 2>&1
check "converted: perf stitch -o" test -s converted/perf.data
(cd converted && "$PERF" script -s "$("$PERF" --exec-path)/scripts/python/flamegraph.py" -- --template "$TEMPLATE" -o fg.html) \
	> conv.out 2> conv.err
$CHECK stacks converted/fg.html > conv.chk 2>&1
check "converted: lost frames named after their map, as many as the orphans" \
	eq "$(val lost conv.chk)" "${nlost:-x}"
check "converted: lost frames have libtype root (the flamegraph.py hook)" \
	eq "$(val lost_libtypes conv.chk)" root

finish
