#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stitched 'perf script' / 'perf report' (the session, script and report
# hooks of patches/perf-7.2).
#
# Records a frame-pointer perf.data with the system perf (or the patched
# one), turns it into 6.19-style files with inject-deferred.py (user chains
# replaced by PERF_CONTEXT_USER_DEFERRED + cookie, the user ips in
# PERF_RECORD_CALLCHAIN_DEFERRED records: shared by samples, written on
# another CPU, earlier in the file, after late samples, duplicated, lost,
# malformed) and checks that the patched perf gives back what pristine
# upstream perf 7.2, the perf ours is built on, shows for the original
# recording (perf report: what ours shows of it, see there).
#
# The reference is the original recording with each user chain cut before
# its first marker-range entry (--cut-user): the records carry the user
# chain as the kernel's unwinder writes it, 0 entries included, and a
# stitched chain keeps all of it but what perf would read as a context
# marker.  A separate check shows that the reference has 0 user entries,
# and that the stitched file shows them.
#
# usage: tests/perf/test-script-report.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (records the workload;
#   $PERF unless it is a 6.1), PYTHON, KEEP, VERBOSE, and
#   UPSTREAM_PERF=...  the reference output: pristine upstream perf 7.2
#                 (default: build/perf-upstream, make perf-upstream);
#                 $PERF itself, said so, when it is not built
#   Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_is_61 || SYS_PERF=$PERF
# the reference: what upstream 7.2 prints of the plain recording (ours
# prints it as upstream does; 6.1 prints it in another layout, user
# addresses as offsets, other symbol names and level letters)
require_upstream_perf
REF_PERF=$UP_PERF
ref="upstream 7.2"
GEN="$PY $here/helpers/inject-deferred.py"

# groups FILE: groups (kernel entries) in an inject-deferred.py output
groups() { count "$1" '^group '; }
# group_samples FILE REGEX: samples of the groups whose fate matches REGEX
group_samples() {
	awk -v re="$2" '/^group / && $0 ~ ("fate=" re "( |$)") {
		sub(/.*samples=/, ""); sub(/ .*/, ""); n += split($0, a, ",") } END { print n + 0 }' "$1"
}

# ------------------------------------------------------------ recording
record_shell_mix orig.data 150000 3
$GEN --cut-user orig.data ref.data > /dev/null || bad "inject-deferred.py --cut-user"
"$REF_PERF" script -i ref.data > ref.script 2> /dev/null
nsamples=$(grep -Ec '^ *[^ ].*(cpu|task)-clock:' ref.script)
check "reference has samples ($nsamples)" gt "${nsamples:-0}" 100

# deferred FILE [inject-deferred.py options]: writes FILE and FILE.gen
deferred() {
	local f=$1; shift
	$GEN --defer --print-groups "$@" orig.data "$f" > "$f.gen" || bad "inject-deferred.py $*"
}
# script FILE [perf script options]: FILE.script, FILE.err
script() {
	local f=$1; shift
	"$PERF" script -i "$f" "$@" > "$f.script" 2> "$f.err"
	echo $? > "$f.rc"
}

# ------------------------------------------------------------ no deferred callchains
"$PERF" script -i ref.data > plain.script 2> plain.err
check "file without deferred callchains: output as $ref's" same plain.script ref.script
check "file without deferred callchains: no summary" hasnt plain.err 'deferred callchains'
"$PERF" report -i ref.data --stdio > plain.report 2>&1
check "file without deferred callchains: no summary in report" hasnt plain.report 'deferred callchains'

# ------------------------------------------------------------ one record per sample
deferred d1.data
script d1.data
nrec=$(count d1.data.gen '^added type=22')
check "plain: exit status 0" eq "$(cat d1.data.rc)" 0
check "plain: callchains as the original's ($ref on the recording)" same d1.data.script ref.script
check "plain: summary counts every sample" eq "$(summary_count d1.data.err 'deferred samples')" "$nsamples"
check "plain: every sample stitched" has d1.data.err "$nsamples stitched \(100\.0%\), 0 orphans, $nrec records, 0 duplicate records"
check "plain: no cross-CPU record" has d1.data.err ' 0 cross-CPU records'

# 0 user entries are the kernel's too: kept (writer-made scenarios cover a
# 0 in mid-chain, which a short recording may not have)
check "reference: user chains end in a 0 entry" gt "$(count ref.script '^\s+0 \[unknown\]')" 0
check "plain: the 0 entries stitched back" eq "$(count d1.data.script '^\s+0 \[unknown\]')" \
	"$(count ref.script '^\s+0 \[unknown\]')"

# ------------------------------------------------------------ record earlier in the file
deferred before.data --record-pos before --share 4
script before.data
check "record before its samples in the file: callchains as the original's" same before.data.script ref.script
check "record before: all stitched" eq "$(summary_count before.data.err orphans)" 0
check "record before: no out of order warning" hasnt before.data.err 'out of order'
# unsorted (file order): the record reaches the stitcher before its samples
"$REF_PERF" script --show-round-events -i ref.data 2> /dev/null | grep -v FINISHED_ROUND > ref-unordered.script
script before.data --show-round-events
grep -v FINISHED_ROUND before.data.script > before-unordered.script
check "record before, unsorted delivery: callchains as the original's" same before-unordered.script ref-unordered.script
check "record before, unsorted delivery: all stitched" eq "$(summary_count before.data.err orphans)" 0

# ------------------------------------------------------------ another CPU's buffer
deferred xcpu.data --record-cpu-shift 1 --record-delay 20000
script xcpu.data
nrec=$(count xcpu.data.gen '^added type=22')
check "record from another CPU: callchains as the original's" same xcpu.data.script ref.script
check "record from another CPU: counted as cross-CPU" eq "$(summary_count xcpu.data.err 'cross-CPU records')" "$nrec"

# ------------------------------------------------------------ samples sharing a cookie
deferred share.data --share 8
script share.data
nrec=$(count share.data.gen '^added type=22')
shared=$(awk '/^group / && /samples=[^ ]*,/' share.data.gen | wc -l)
check "shared cookies: some entries have several samples ($shared)" gt "$shared" 10
check "shared cookies: fewer records ($nrec) than samples" gt "$nsamples" "$nrec"
check "shared cookies: callchains as the original's" same share.data.script ref.script
check "shared cookies: all stitched" has share.data.err "$nsamples stitched \(100\.0%\), 0 orphans, $nrec records"
# both events take samples in one entry (cpu-clock and task-clock
# alternate): cookies that samples of both events carry (unmerged, each
# sample's pseudo-frame names its cookie)
both=$("$PERF" script -i share.data -F event,ip,sym --no-merge-callchains 2>/dev/null | awk '
	/DEFERRED CALLCHAIN/ { ev = ""; next }
	/^ *[a-z-]+-clock: *$/ { ev = $1; next }
	ev != "" && /user stack deferred: cookie/ { c = $NF; if (!(c in e)) e[c] = ev; else if (e[c] != ev && !(c in b)) { b[c] = 1; n++ } }
	END { print n + 0 }')
check "shared cookies: cookies of samples of both events ($both)" gt "$both" 0

# ------------------------------------------------------------ late samples
deferred late.data --late-every 3 --share 4
script late.data
nlate=$(summary_count late.data.err 'late samples')
check "late samples: callchains as the original's" same late.data.script ref.script
check "late samples: no out of order warning" hasnt late.data.err 'out of order'
check "late samples: counted ($nlate)" gt "$nlate" 0
check "late samples: all stitched" eq "$(summary_count late.data.err orphans)" 0
# a window shorter than the lateness (1us) leaves them without their record
# (but for samples of the other event less than 100ns after the record)
script late.data --stitch-window 100ns
check "late samples, --stitch-window 100ns: orphans" gt "$(summary_count late.data.err orphans)" 0
check "late samples, --stitch-window 100ns: fewer late samples" gt "$nlate" "$(summary_count late.data.err 'late samples')"

# ------------------------------------------------------------ duplicates
deferred dup.data --dup-every 3
script dup.data
ndup=$(count dup.data.gen 'fate=record\+dup')
check "duplicate records: callchains as the original's" same dup.data.script ref.script
check "duplicate records: counted ($ndup)" eq "$(summary_count dup.data.err 'duplicate records')" "$ndup"

# ------------------------------------------------------------ lost records
deferred lost.data --drop-every 7 --lost
script lost.data
nlost=$(group_samples lost.data.gen lost)
check "lost records: orphans counted ($nlost)" has lost.data.err "$nlost orphans \(record lost $nlost\)"
check "lost records: one pseudo-frame per orphan" \
	eq "$(count lost.data.script '^[[:space:]]+[0-9a-f]+ \[user stack lost: record lost\]\+0x0 \(\[deferred\]\)$')" "$nlost"
# a frame line as stackcollapse-perf.pl parses them: pc, function, (module)
check "lost records: the pseudo-frame is a frame line" \
	eq "$(grep -c 'user stack lost' lost.data.script)" \
	   "$(grep -Ec '^\s*(\w+)\s*(.+) \((\S*)\)$' <(grep 'user stack lost' lost.data.script))"
# the orphan keeps its kernel frames: the pseudo-frame comes after them
awk '/user stack lost/ { if (prev !~ /kallsyms|^[a-z]/ && prev != "") bad++ } { prev = $0 } END { exit bad > 0 }' \
	lost.data.script
check "lost records: pseudo-frame right after the kernel frames" [ $? -eq 0 ]
"$PERF" report -i lost.data --stdio -g caller --children > lost.report 2> /dev/null
check "lost records: report shows the pseudo-frame" has lost.report '\[user stack lost: record lost\]'
check "lost records: report header has the summary" has lost.report "^# deferred callchains: .*$nlost orphans \(record lost $nlost\)"
check "lost records: --children entry in the [deferred] dso" has lost.report '\[deferred\] +\[\.\] \[user stack lost: record lost\]'
# every other sample still as the original's: drop the orphans from both
if "$PERF" version --build-options 2>/dev/null | grep -q 'libpython: .*on'; then
	"$PERF" script -i lost.data -s "$here/helpers/callchain-names.py" > lost.py.out 2> /dev/null
	check "lost records: python scripts see the pseudo-frame" \
		eq "$(grep -c 'user stack lost: record lost' lost.py.out)" "$nlost"
	fg=$("$PERF" --exec-path)/scripts/python/flamegraph.py
	if [ -f "$fg" ]; then
		"$PERF" script -i lost.data -s "$fg" -- -f json -o fg.json > /dev/null 2>&1
		n=$($PY "$here/helpers/flamegraph-check.py" stacks fg.json | sed -n 's/^lost //p')
		check "lost records: flamegraph.py puts the orphans under the pseudo-frame" eq "$n" "$nlost"
	fi
fi

# records missing without a lost notice: reasons from the evidence
deferred drop.data --drop-every 5
script drop.data
ndrop=$(group_samples drop.data.gen dropped)
check "dropped records: all orphans ($ndrop)" eq "$(summary_count drop.data.err orphans)" "$ndrop"
check "dropped records: reasons named" has drop.data.err 'orphans \((record lost|task exited|stream ended) [0-9]+'
check "dropped records: pseudo-frames" eq "$(count drop.data.script '\[user stack lost: (record lost|task exited|stream ended)\]')" "$ndrop"

# ------------------------------------------------------------ memory cap
# A file is indexed (util/deferred-index.c) once samples hold a sixteenth
# of the cap behind them: its samples take their records read ahead and
# nothing waits, so the cap is never reached; a pipe stream of the same
# events waits for its records in time order
script d1.data --stitch-max-mem 1K -v
check "--stitch-max-mem 1K, a file: nothing waits, no memory cap orphans" \
	eq "$(summary_count d1.data.err orphans)" 0
check "--stitch-max-mem 1K, a file: indexed at once ($(grep -c 'records indexed' d1.data.err))" \
	has d1.data.err 'deferred callchains: [1-9][0-9]* records indexed'
check "--stitch-max-mem 1K, a file: no warning" hasnt d1.data.err 'user stack lost: memory cap'
"$PERF" inject -i d1.data -o - 2> /dev/null | "$PERF" script -i - --stitch-max-mem 1K \
	> d1.pipe.script 2> d1.pipe.err
check "--stitch-max-mem 1K, a pipe: memory cap orphans" gt "$(sed -nE 's/.*memory cap ([0-9]+).*/\1/p' d1.pipe.err)" 0
check "--stitch-max-mem 1K, a pipe: one warning" eq "$(grep -ci 'cap' d1.pipe.err)" 2
check "--stitch-max-mem 1K, a pipe: said in perf's words, with the option and the size as given" \
	eval "grep -q 'memory cap of 1 KiB (--stitch-max-mem)' d1.pipe.err && ! grep -q libunwind-cookie d1.pipe.err"
"$PERF" script -i d1.data --stitch-max-mem 12X > /dev/null 2> opt.err
check "--stitch-max-mem 12X: rejected" [ $? -ne 0 ]
"$PERF" script -i d1.data --stitch-window 0 > /dev/null 2> opt.err
check "--stitch-window 0: rejected" [ $? -ne 0 ]

# ------------------------------------------------------------ blocked to the end
# A thread blocked until the recording ends (bench/gen-scale.py, 8 CPUs
# for 1 s, the first server thread blocked 2 s from the start): its
# record is not in the file, so its sample is the "stream ended" orphan at
# once instead of holding every later sample; as the order-free oracle
# says, in every reading mode
/usr/bin/python3 "$top/bench/gen-scale.py" blocked.data --cpus 8 --seconds 1 --block-max 2 \
	--blockers 16 > /dev/null
PERF=$PERF OUT=$tmp/blocked-oracle "$here/helpers/oracle-check.sh" blocked.data blocked \
	> blocked.oracle 2>&1
relay_results blocked.oracle
"$PERF" script -v -i blocked.data > /dev/null 2> blocked.err
nended=$(sed -nE 's/.*orphans \(stream ended ([0-9]+)\).*/\1/p' blocked.err | head -1)
check "blocked to the end: stream ended orphans (${nended:-0})" gt "${nended:-0}" 0
# their samples hold what follows them until it reaches 1 MiB, then the
# index is made and they are orphans at once, and nothing waits again
held=$(sed -nE 's/.*deferred callchains: [0-9]+ records indexed, ([0-9]+) bytes held.*/\1/p' blocked.err)
check "blocked to the end: indexed once 1 MiB was held behind them (${held:-none})" \
	eval "[ -n '$held' ] && [ '${held:-0}' -ge 1048576 ] && [ '${held:-0}' -lt 1179648 ]"
peak_kib=$(sed -nE 's/.*deferred callchains: peak [0-9]+ samples, ([0-9]+) KiB held.*/\1/p' blocked.err)
check "blocked to the end: at most what came before the index waits (peak ${peak_kib:-?} KiB)" \
	[ "${peak_kib:-99999}" -lt 4096 ]
# with a cap of 1 MiB the index comes at 64 KiB: no memory cap orphans,
# where a pipe of the same events, which cannot be indexed, has them
"$PERF" script -i blocked.data --stitch-max-mem 1M > blocked-cap.script 2> blocked-cap.err
"$PERF" inject -i blocked.data -o - 2> /dev/null |
	"$PERF" script -i - --stitch-max-mem 1M > /dev/null 2> blocked-pipe.err
check "blocked to the end, --stitch-max-mem 1M: the file, indexed, has no memory cap orphans" \
	hasnt blocked-cap.err 'memory cap'
check "blocked to the end, --stitch-max-mem 1M: its pipe has ($(sed -nE 's/.*memory cap ([0-9]+).*/\1/p' blocked-pipe.err | head -1))" \
	has blocked-pipe.err 'memory cap [1-9]'

# ------------------------------------------------------------ timestamp order
deferred mixed.data --share 4 --late-every 3 --record-pos before --record-cpu-shift 1 --dup-every 4 --drop-every 9 --lost
script mixed.data -F time
check "mixed: no out of order warning" hasnt mixed.data.err 'out of order'
check "mixed: samples in timestamp order" \
	awk '{ t = $1 + 0; if (t < prev) exit 1; prev = t }' mixed.data.script
script mixed.data --show-deferred-events -F comm,tid,time
nrec=$(count mixed.data.gen '^added type=22')
# upstream 7.2's line for a record (6.1's series: PERF_RECORD_CALLCHAIN_DEFERRED ...)
check "mixed: --show-deferred-events prints every record" eq "$(count mixed.data.script ': DEFERRED CALLCHAIN \[cookie: [0-9a-f]+\]$')" "$nrec"
check "mixed: records and samples in timestamp order" \
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0; if (t < prev) exit 1; prev = t } }' mixed.data.script

# ------------------------------------------------------------ perf report
# the callchain graphs are compared as trees (perfout.py graph): perf
# prints sibling branches of equal value in the order of the addresses of
# their struct dso in its heap, which differ between two perf processes
# (another perf, another file layout, other allocations before), so the
# same tree may print its equal branches in another order.  Frames,
# values and the order of unequal branches are compared.
#
# The reference is ours on the plain recording: upstream 7.2 drops the
# symbol of every callchain node it merges when entries collapse (hook
# 0040 keeps it), so its --children graphs show such frames as bare
# addresses, merged by address beside the named ones.  Ours reads the
# plain recording as upstream does (the perf script checks above); here
# the deferred file must report as the plain one, and ours may show no
# more bare addresses than upstream does.
graph() { $PY "$here/helpers/perfout.py" graph; }
# bare_frames FILE: callchain lines that end in an address, not a name
bare_frames() { grep -cE -- '-- ?0x[0-9a-f]+$' "$1"; }
for g in "callee --no-children" "caller --children" "caller --no-children"; do
	set -- $g
	"$PERF" report -i ref.data --stdio -g "$1" "$2" 2> /dev/null | grep -v '^#' > ref.report.raw
	graph < ref.report.raw > ref.report
	"$REF_PERF" report -i ref.data --stdio -g "$1" "$2" 2> /dev/null | grep -v '^#' > up.report.raw
	check "report -g $1 $2: no more bare addresses than $ref ($(bare_frames up.report.raw))" \
		[ "$(bare_frames ref.report.raw)" -le "$(bare_frames up.report.raw)" ]
	"$PERF" report -i share.data --stdio -g "$1" "$2" 2> /dev/null > share.report
	grep -v '^#' share.report | graph > share.report.body
	check "report -g $1 $2: the graphs read whole as trees, every frame kept" \
		eval "[ $(grep -cvE '^[ |]*\|[ |]*$' ref.report.raw) -eq $(wc -l < ref.report) ] &&
			hasnt ref.report '^\?\? ' && hasnt share.report.body '^\?\? ' && has ref.report '^ +--'"
	check "report -g $1 $2: same percentages and callchains" same share.report.body ref.report
done
check "report: summary in the header" has share.report "^# deferred callchains: $nsamples deferred samples, $nsamples stitched \(100\.0%\)"
"$PERF" report -i share.data --stats > share.stats 2>&1
check "report --stats: summary" has share.stats "^deferred callchains: $nsamples deferred samples"

# ------------------------------------------------------------ --no-merge-callchains
# upstream 7.2's option (6.1's series: --no-stitch, the same meaning).  It
# prints the records too, in upstream's format: the sample header fields,
# "DEFERRED CALLCHAIN [cookie: HEX]" (no 0x; 6.1's series printed
# "PERF_RECORD_CALLCHAIN_DEFERRED cookie 0x... (cpu N, counter N) nr N"),
# then the user frames
script mixed.data --no-merge-callchains
ndef=$(count mixed.data.script '^[[:space:]]+[0-9a-f]+ \[user stack deferred: cookie 0x[0-9a-f]+\]\+0x0 \(\[deferred\]\)$')
check "--no-merge-callchains: a pseudo-frame per sample" eq "$ndef" "$nsamples"
check "--no-merge-callchains: the frame's address is the cookie" \
	awk '/user stack deferred: cookie/ { a = $1; c = $6; sub(/^0x/, "", c); sub(/\].*/, "", c); if (a != c) exit 1 }' mixed.data.script
check "--no-merge-callchains: every record printed" eq "$(count mixed.data.script ': DEFERRED CALLCHAIN \[cookie: [0-9a-f]+\]$')" "$nrec"
check "--no-merge-callchains: no stitched sample" hasnt mixed.data.script 'user stack lost'
check "--no-merge-callchains: summary" has mixed.data.err "deferred callchains: $nsamples deferred samples, $nrec records, not stitched"
first=$(sed -nE '1s/.*cookie=(0x[0-9a-f]+) .*/\1/p' mixed.data.gen)
check "--no-merge-callchains: record of cookie $first shown with its user frames" \
	awk -v c="${first#0x}" 'f { exit ($0 ~ /^\t/) ? 0 : 1 } $0 ~ (": DEFERRED CALLCHAIN \\[cookie: " c "\\]$") { f = 1 } END { if (!f) exit 1 }' mixed.data.script
"$PERF" script -i mixed.data --no-merge-callchains -F time > nostitch-time.script 2> /dev/null
check "--no-merge-callchains -F time: records without frame lines" hasnt nostitch-time.script '^$'
"$PERF" report -i mixed.data --stdio --no-merge-callchains > nostitch.report 2> /dev/null
check "report --no-merge-callchains: pseudo-frames" has nostitch.report '\[user stack deferred\]'
check "report --no-merge-callchains: summary" has nostitch.report '^# deferred callchains: .* not stitched'
"$PERF" report -D -i mixed.data > dump.txt 2> dump.err
# 7.2 names the context entries of a callchain
check "-D: raw marker and cookie" \
	awk '/^\.\.\.\.\. +[0-9]+: fffffffffffffd80 \(PERF_CONTEXT_USER_DEFERRED\)$/ { m = 1; next }
		m && /^\.\.\.\.\. +[0-9]+: [0-9a-f]+$/ && length($NF) == 16 { n++ } { m = 0 } END { exit n > 0 ? 0 : 1 }' dump.txt

# ------------------------------------------------------------ pipe mode
"$PERF" inject -i mixed.data -o - 2> inject.err | "$PERF" script -i - > pipe.script 2> pipe.err
script mixed.data
check "pipe mode: same output as from the file" same pipe.script mixed.data.script
check "pipe mode: same summary" eq "$(grep 'deferred callchains' pipe.err)" "$(grep 'deferred callchains' mixed.data.err)"
"$PERF" inject -i mixed.data -o injected.data 2> inject.err
"$PERF" report --stats -i injected.data > injected.stats 2>&1
check "perf inject keeps the records" has injected.stats "CALLCHAIN_DEFERRED events: +$((nrec))"
"$PERF" script -i injected.data > injected.script 2> /dev/null
check "perf inject output stitches the same" same injected.script mixed.data.script
# --convert-callchain needs DWARF callchains: an error, and no output
# left as if it were a recording (pristine 7.2: status 0, a 0-byte file)
"$PERF" inject --convert-callchain -i mixed.data -o convert.data 2> convert.err
rc=$?
check "perf inject --convert-callchain, not DWARF: fails (status $rc), saying why" \
	eval "[ $rc -ne 0 ] && grep -q 'requires DWARF call graph' convert.err"
no_output "perf inject --convert-callchain, not DWARF" convert.data

# ------------------------------------------------------------ malformed input
deferred bad.data --bad-sample cookie0:3 --bad-sample nocookie:10 --bad-sample middle:20 --bad-record-cookie0 30
script bad.data
offs=$(sed -nE 's/.* bad=(0x[0-9a-f]+).*/\1/p' bad.data.gen)
check "malformed: exit status 0" eq "$(cat bad.data.rc)" 0
for o in $offs; do
	check "malformed sample at $o reported with its offset" has bad.data.err "^$o \[0x[0-9a-f]+\]: malformed deferred callchain in a sample: .*, its user part lost$"
done
check "malformed: cookie 0 named" has bad.data.err 'malformed deferred callchain in a sample: cookie 0, its user part lost'
check "malformed: misplaced marker named" has bad.data.err 'in a sample: PERF_CONTEXT_USER_DEFERRED at entry [0-9]+ of [0-9]+, not second to last, its user part lost'
check "malformed: record with cookie 0 reported" has bad.data.err 'malformed PERF_RECORD_CALLCHAIN_DEFERRED: cookie 0'
# kept, with their weight and kernel part: nothing is lost silently
check "malformed: samples kept" eq "$(grep -Ec '^ *[^ ].*(cpu|task)-clock:' bad.data.script)" "$nsamples"
check "malformed: counted at the end" has bad.data.err '^3 of [0-9]+ samples with a malformed deferred callchain were kept without their user part'
check "malformed: orphans of their own reason in the summary" has bad.data.err 'orphans \(.*malformed 3\)'
"$PERF" report --stats -i bad.data > bad.stats 2>&1
check "malformed: --stats counts them" has bad.stats ' 3  \(SAMPLE, malformed deferred callchain, user part lost\)'
check "malformed: no pseudo-frame from a malformed chain" hasnt bad.data.script 'user stack deferred'
check "malformed: one [user stack lost: malformed] frame each" \
	eq "$(count bad.data.script '\[user stack lost: malformed\]')" 3
# (a marker first: no kernel part, the frame right after the header)
awk '/user stack lost: malformed/ { if (prev !~ /kallsyms|^[a-z]/) bad++ } { prev = $0 } END { exit bad > 0 }' \
	bad.data.script
check "malformed: the frame right after the sample's kernel frames" [ $? -eq 0 ]

finish
