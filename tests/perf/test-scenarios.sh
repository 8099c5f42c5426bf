#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deferred-callchain scenarios: generated perf.data files with exact
# situations (scenarios.py, written by perfdata.py) and their oracle (the
# same events already stitched), read by the patched perf and, for
# contrast, by the distro's perf 6.1.
#
# usage: tests/perf/test-scenarios.sh [SCENARIO...]
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (the unpatched perf 6.1:
#   it reads the oracles, and its failure on the raw files is checked;
#   required), PYTHON (here /usr/bin/python3 by default, Debian's; stdlib
#   only), CC, KEEP, VERBOSE, and
#   UPSTREAM_PERF=...  pristine upstream perf 7.2, the version ours is
#                 built on (default: build/perf-upstream, make
#                 perf-upstream): what ours prints of the raw file is
#                 compared with what it prints of the oracle; $PERF itself
#                 reads the oracle instead, said so, when it is not built
#   LIBUNWIND_COOKIE=...  the stitch engine's shared library (default:
#                 build/libunwind-cookie/libunwind-cookie.so, built by `make`);
#                 when present, the scenarios' expectations are also checked
#                 against the engine itself (engine-check.py)
# Output and exit status: see lib.sh.
#
# The checks of each scenario, in order (see scenarios.py for what each
# scenario is and Documentation/stitching.md for the expected outcomes):
#   6.1:   fails on the raw file (why this project exists), reads the oracle
#          with exactly the expected callchains, big-endian oracle alike;
#   7.2:   upstream perf 7.2 (ours when it is not built) reads the oracle
#          with exactly the expected callchains and percentages;
#   perf:  --stats counts and -D shows the type-22 records (no stitching
#          needed), the big-endian raw file alike;
#   engine: libunwind-cookie's stitcher, fed the scenario in time and in
#          file order, gives the expected outcomes (if the library is built);
#   stitch: perf script of the raw file = upstream 7.2's script of the
#          oracle, plus a [user stack lost: REASON] frame after the kernel
#          frames of each orphan; perf report percentages; big-endian gives
#          the same; --show-deferred-events prints every record;
#   convert: perf stitch -o of the raw file, read by 6.1, prints the same
#          (an orphan's [user stack lost: REASON] as its pseudo-map); the
#          malformed records are skipped, the malformed samples kept as
#          "malformed" orphans, both counted (refused with --strict), the
#          cut file refused, leaving no output.

PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
[ -x "$SYS_PERF" ] || abort "$SYS_PERF missing"
sys_is_61=
sys_perf_is_61 && sys_is_61=1
OUT="$PY $here/helpers/perfout.py"
LIBUNWIND_COOKIE=$(abs_path "${LIBUNWIND_COOKIE:-$top/build/libunwind-cookie/libunwind-cookie.so}")
require_upstream_perf
up="upstream 7.2"

# names FILE OFFSET: a line of FILE names the file offset OFFSET (0x...)
names() { grep -Eq -- "(^|[^0-9a-fx])$2([^0-9a-f]|\$)" "$1"; }
# rx STRING: STRING as an extended regex matching itself
rx() { printf '%s' "$1" | sed 's/[][\.*^$()+?{}|]/\\&/g'; }
# crashed STATUS: killed by a signal (bash: 128 + signal number); perf's
# own errors exit with (-errno) & 0xff, e.g. 234 for -EINVAL, or 255
crashed() { [ "$1" -gt 128 ] && [ "$1" -le 192 ]; }
# summary_only FILE WANT: perf script's stderr FILE holds the stitch summary
# line WANT (perfout.py summary: counts from the scenario) and nothing else
# but perf's warning about lost chunks (where the scenario has
# PERF_RECORD_LOST)
summary_only() {
	grep -Ev '^(Warning:|Processed [0-9]+ events and lost [0-9]+ chunks!|Check IO/CPU overload!|)$' "$1" > "$1.rest"
	same "$2" "$1.rest"
}

# the frame-pointer test binary whose symbols the user ips point to
build_workload "$top/tests/workloads/workload.c" workload -O0 -fno-inline -no-pie -pthread
if ! "$PY" "$here/helpers/scenarios.py" gen --workload workload --out . "$@" > scenarios.list 2> gen.log; then
	cat gen.log
	abort "scenarios.py gen"
fi

[ -f "$LIBUNWIND_COOKIE" ] || echo "# no $LIBUNWIND_COOKIE: engine checks skipped (build it: make)"
KS=--kallsyms=$tmp/kallsyms
FIELDS=-Fcomm,tid,time,event,ip,sym
REPORT="report --stdio --children --sort sym -g none"

for n in $(cat scenarios.list); do
	echo "# $n: $(js $n.json "d['doc'].split(chr(10))[0]")"
	nrec=$(js $n.json "d['counts']['CALLCHAIN_DEFERRED']")
	nsmp=$(js $n.json "d['counts']['SAMPLE']")
	nlost=$(js $n.json "d['counts']['LOST']")
	nbad=$(js $n.json "d['counts']['malformed_records']")
	first22=$(js $n.json "'%#x [%#x]' % min((r['offset'], r['size']) for r in d['records'])")

	# ---------------------------------------------------------- perf 6.1
	if [ -n "$sys_is_61" ]; then
		# a type-22 record hits machines__deliver_event()'s default case:
		# perf script stops there (status 255), perf report keeps what it
		# had read (status 0!), --stats prints nothing but the error
		"$SYS_PERF" script -i $n.raw.data $KS $FIELDS > sys.raw.out 2> sys.raw.err
		st=$?
		if [ $n = truncated ]; then
			# the record cut short stops it before the type-22 ones
			check "$n: 6.1 script fails on the raw file (status $st)" [ $st -ne 0 ]
		else
			check "$n: 6.1 script fails on the raw file (status $st, unknown event)" \
				eval '[ $st -ne 0 ] && has sys.raw.err "^Found 1 unknown events!"'
		fi
		"$SYS_PERF" report --stats -i $n.raw.data > /dev/null 2> sys.stats.err
		check "$n: 6.1 report --stats: $first22: failed to process type: 22" \
			has sys.stats.err "^$(rx "$first22"): failed to process type: 22 "
		"$SYS_PERF" $REPORT -i $n.raw.data $KS > /dev/null 2> sys.report.err
		st=$?
		check "$n: 6.1 report: 'failed to process sample' (status $st)" \
			has sys.report.err "^failed to process sample"
		# the defer bits in HEADER_EVENT_DESC's attr copies
		check "$n: 6.1 rejects the event descriptions (Reserved bits)" \
			has sys.raw.err "^Reserved bits are set unexpectedly"
		# without type-22 records, the deferred marker alone makes 6.1
		# drop every such chain whole (its kernel part included)
		"$SYS_PERF" script -i $n.raw-no22.data $KS $FIELDS 2> /dev/null | $OUT script > sys.no22
		check "$n: 6.1 drops deferred chains whole, kernel frames too" same $n.no22.script sys.no22
	fi
	"$SYS_PERF" script -i $n.oracle.data $KS $FIELDS > sys.oracle.out 2> sys.oracle.err
	st=$?
	$OUT script < sys.oracle.out > sys.oracle
	check "$n: 6.1 reads the oracle (status $st), callchains symbol by symbol" \
		eval '[ $st -eq 0 ] && same $n.oracle.script sys.oracle'
	"$SYS_PERF" script -i $n.oracle-be.data $KS $FIELDS > sys.oracle-be.out 2> sys.oracle-be.err
	check "$n: 6.1 reads the big-endian oracle alike" \
		eval 'same sys.oracle.out sys.oracle-be.out && same sys.oracle.err sys.oracle-be.err'
	"$SYS_PERF" $REPORT -i $n.oracle.data $KS 2> /dev/null | $OUT report > sys.report
	check "$n: 6.1 report of the oracle: percentages" same $n.report sys.report

	# ---------------------------------------------------------- upstream perf 7.2
	# the yardstick of what ours prints: 7.2 prints user addresses as
	# recorded (6.1: offsets in the file) and other level letters in
	# perf report --children (scenarios.py, expected_report())
	"$UP_PERF" script -i $n.oracle.data $KS $FIELDS > up.oracle.out 2> up.oracle.err
	st=$?
	$OUT script < up.oracle.out > up.oracle
	check "$n: $up reads the oracle (status $st), callchains symbol by symbol" \
		eval '[ $st -eq 0 ] && same $n.oracle-72.script up.oracle'
	"$UP_PERF" $REPORT -i $n.oracle.data $KS 2> /dev/null | $OUT report > up.report
	check "$n: $up report of the oracle: percentages" same $n.report-72 up.report

	# ---------------------------------------------------------- patched perf, no stitching
	for v in raw raw-be; do
		"$PERF" report --stats -i $n.$v.data > $v.stats 2> $v.stats.err
		st=$?
		# a file cut short: the counts of what is there, then an error
		want=0
		[ $n = truncated ] && want=1
		check "$n: $v --stats: status $([ $want = 1 ] && echo 'non-zero (cut short)' || echo 0), CALLCHAIN_DEFERRED $nrec, SAMPLE $nsmp" \
			eval '[ $(( st != 0 )) -eq $want ] && eq "$(stat $v.stats CALLCHAIN_DEFERRED)" $nrec &&
			      eq "$(stat $v.stats SAMPLE)" $nsmp'
		if [ "$nlost" -gt 0 ]; then
			check "$n: $v --stats: LOST $nlost" eq "$(stat $v.stats LOST)" "$nlost"
		fi
		if [ "$nbad" -gt 0 ]; then
			check "$n: $v --stats: $nbad malformed" \
				has $v.stats "^ +$nbad  \(malformed CALLCHAIN_DEFERRED, skipped\)\$"
		fi
		# stdout alone: perf's messages on stderr would land inside a
		# record's lines where the buffer happens to be flushed
		"$PERF" report -D -i $n.$v.data > $v.dump 2> $v.dump.err
		dump=$n.dump
		[ $v = raw-be ] && dump=$n.dump-be
		# upstream 7.2's format; the ips only of records through an
		# event sampling callchains (scenarios.py, expected_dump())
		check "$n: $v -D: every type-22 record (cpu, time, offset, pid/tid, cookie, ips)" \
			$OUT blocks $dump $v.dump
	done
	check "$n: perf reads the event descriptions (defer bits known)" \
		hasnt raw.stats.err "Reserved bits"

	# ---------------------------------------------------------- the engine
	if [ -f "$LIBUNWIND_COOKIE" ]; then
		for order in time file; do
			check "$n: engine, fed in $order order, gives the expected outcomes" \
				"$PY" "$here/helpers/engine-check.py" "$LIBUNWIND_COOKIE" $n.json $order
		done
	fi

	# ---------------------------------------------------------- stitching
	"$PERF" script -i $n.raw.data $KS $FIELDS > raw.out 2> raw.err
	st=$?
	crashed $st && bad "$n: perf script crashed (status $st)"
	$OUT script < raw.out > raw.canon
	$OUT sorted $n.script > want.sorted
	$OUT sorted raw.canon > raw.sorted
	check "$n: script: stitched chains, orphans end in [user stack lost: REASON]" \
		same want.sorted raw.sorted
	check "$n: script: the same, in time order" same $n.script raw.canon
	grep -v 'user stack lost' raw.out > raw.nolost
	# verbatim: the perf ours is built on, upstream 7.2, reading the
	# oracle (6.1's layout and addresses differ from 7.2's)
	check "$n: script without the lost frames = $up's script of the oracle, verbatim" \
		same up.oracle.out raw.nolost
	$OUT summary $n.json > want.summary
	case $n in
	malformed|truncated|dummy_long_trailer) ;;
	*) check "$n: script: status 0, only the stitch summary: $(cat want.summary)" \
		eval '[ $st -eq 0 ] && summary_only raw.err want.summary' ;;
	esac
	"$PERF" script -i $n.raw-be.data $KS $FIELDS > raw-be.out 2> raw-be.err
	# the messages name the file read
	sed "s/$n\.raw-be\.data/$n.raw.data/g" raw-be.err > raw-be.err.named
	check "$n: big-endian raw file: same script output and messages" \
		eval 'same raw.out raw-be.out && same raw.err raw-be.err.named'
	"$PERF" $REPORT -i $n.raw.data $KS 2> raw.report.err | $OUT report > raw.report
	check "$n: report: percentages" same $n.report-72 raw.report
	# every type-22 record read whole, with its user frames: also those -D
	# shows without them (a dummy event's)
	"$PERF" script --show-deferred-events -i $n.raw.data $KS $FIELDS 2> /dev/null |
		$OUT deferred > raw.deferred
	check "$n: script --show-deferred-events: every record (comm, tid, time, cookie, frames)" \
		same $n.deferred raw.deferred
	# the counts of perf stitch --stats; the cross-CPU count is unknown
	# (null) when an event without PERF_SAMPLE_CPU wrote a record
	"$PERF" stitch --stats=json -i $n.raw.data > stats.json 2> /dev/null
	want=$(js $n.json "[d['counts']['stitched'], d['counts']['orphans'], any(r['cpu'] is None for r in d['records'] if not r['malformed'])]")
	got=$(js stats.json "[d['stitched'], d['orphans_total'], d['cross_cpu_records'] is None]")
	check "$n: stitch --stats=json: [stitched, orphans, cross-CPU unknown] $want" eq "$got" "$want"

	# ---------------------------------------------------------- perf stitch (convert)
	# perf 6.1 on the converted file prints what the patched perf prints on
	# the deferred one: the stitched chains, and for an orphan its kernel
	# part and the pseudo-map "[user stack lost: REASON]" as the user part
	# (its dso; the other frames' dsos are dropped to fit perfout.py's form)
	"$PERF" stitch -i $n.raw.data -o $n.conv.data > conv.out 2> conv.err
	cst=$?
	case $n in
	malformed | dummy_long_trailer)
		# the malformed records skipped, samples kept, counted; --strict: refused
		check "$n: perf stitch converts it (status $cst), counts what was malformed" \
			eval "[ $cst -eq 0 ] && [ -s $n.conv.data ] && has conv.err ', [0-9]+ (malformed CALLCHAIN_DEFERRED records skipped|samples with a malformed deferred callchain kept without their user part)'"
		"$PERF" stitch --strict -i $n.raw.data -o $n.strict.data > /dev/null 2> strict.err
		cst=$?
		check "$n: perf stitch --strict refuses it (status $cst), names the file, no output" \
			eval "[ $cst -ne 0 ] && [ ! -e $n.strict.data ] && has strict.err '^$n.raw.data: error: .*--strict$'" ;;
	truncated)
		check "$n: perf stitch refuses to convert it, names the file, no output" \
			eval '[ $cst -ne 0 ] && [ ! -e $n.conv.data ] && has conv.err "^$n.raw.data: "' ;;
	*)
		check "$n: perf stitch converts it (status 0, its summary only)" \
			eval '[ $cst -eq 0 ] && [ "$(grep -vc "^perf stitch: [0-9]* samples" conv.err)" = 0 ]'
		"$SYS_PERF" script -i $n.conv.data $KS $FIELDS,dso > sys.conv.out 2> sys.conv.err
		cst=$?
		sed -E '/\[user stack lost: /! s/ \([^()]*\)$//' sys.conv.out | $OUT script > sys.conv
		# a LOST record warns, counting the events: the lost-stack maps
		# are events the oracle does not have
		sed -E 's/^Processed [0-9]+ events/Processed N events/' sys.oracle.err > want.err
		sed -E 's/^Processed [0-9]+ events/Processed N events/' sys.conv.err > got.err
		check "$n: 6.1 script of the converted file: status 0, the oracle's messages only" \
			eval '[ $cst -eq 0 ] && same want.err got.err'
		# the same samples, frames and symbols as ours prints of the
		# deferred one, user addresses in 6.1's form (offsets in the file)
		check "$n: 6.1 script of the converted file = patched perf on the deferred one" \
			same $n.script-61 sys.conv ;;
	esac

	# ---------------------------------------------------------- malformed input
	if [ $n = malformed ]; then
		for what in nr size; do
			off=$(js $n.json "'%#x [%#x]' % [(r['offset'], r['size']) for r in d['records'] if r['malformed'] == '$what'][0]")
			check "$n: bad $what: error names the record's offset ($off)" \
				has raw.err "^$(rx "$off"): malformed PERF_RECORD_CALLCHAIN_DEFERRED: "
		done
		check "$n: script: status 0" eq $st 0
		check "$n: script: malformed records summarized" \
			has raw.err "^$nbad of $nrec CALLCHAIN_DEFERRED records were malformed and skipped\.\$"
		nbads=$(js $n.json "d['counts']['malformed_samples']")
		check "$n: script: malformed samples summarized" \
			has raw.err "^$nbads of $nsmp samples with a malformed deferred callchain were kept without their user part\.\$"
		check "$n: --stats: $nbads samples with a malformed deferred callchain" \
			has raw.stats "^ +$nbads  \(SAMPLE, malformed deferred callchain, user part lost\)\$"
		check "$n: script: the stitch summary: $(cat want.summary)" \
			eval 'grep -Fx -f want.summary raw.err > /dev/null'
		# every message: the offsets above, the two warnings, the summary
		check "$n: script: no other messages" \
			eval '! grep -Ev "^(0x[0-9a-f]+ \[0x[0-9a-f]+\]: malformed |Warning:\$|[0-9]+ of [0-9]+ (CALLCHAIN_DEFERRED records|samples) |deferred callchains: )" raw.err'

		# not covered by the session's record check: left to the stitching code
		off=$(js $n.json "'%#x' % [r['offset'] for r in d['records'] if r['malformed'] == 'cookie0'][0]")
		check "$n: record with cookie 0: error names its offset ($off)" \
			eval 'grep -i cookie raw.err > cookie.err; names cookie.err $off'
		for i in 0 1; do
			what=("marker without cookie" "marker with cookie 0")
			off=$(js $n.json "'%#x' % [s['offset'] for s in d['samples'] if s['outcome'] == 'malformed'][$i]")
			check "$n: sample, ${what[$i]}: error names its offset ($off)" \
				eval 'grep -v PERF_RECORD_CALLCHAIN_DEFERRED raw.err > sample.err; names sample.err $off'
		done
	fi
	if [ $n = dummy_long_trailer ]; then
		# the record's size is checked against its own event's trailer
		# (the dummy's, 8 bytes longer than the first event's): nr one
		# too many is refused, not read from the trailer
		off=$(js $n.json "'%#x [%#x]' % [(r['offset'], r['size']) for r in d['records'] if r['malformed'] == 'nr'][0]")
		room=$(js $n.json "[r['nr'] - 1 for r in d['records'] if r['malformed'] == 'nr'][0]")
		check "$n: script: status 0, the bad record ($off, room for $room) and the summary only" \
			eval '[ $st -eq 0 ] && grep -Ev "^(Warning:|1 of 2 CALLCHAIN_DEFERRED records were malformed and skipped\.)\$" raw.err > raw.err.rest &&
			      printf "%s: malformed PERF_RECORD_CALLCHAIN_DEFERRED: nr %d but room for %d entries, skipping it\n" "$off" $((room + 1)) $room | cat - want.summary > want.err &&
			      same want.err raw.err.rest'
	fi
	if [ $n = dummy_no_cpu ]; then
		# Python scripting: a record without a CPU has record_cpu None
		"$PERF" script -i $n.raw.data $KS -s "$here/helpers/python-deferred-dump.py" \
			> py.out 2> /dev/null
		check "$n: python: stitched samples have record_cpu None" \
			eval '[ "$(grep -c "^S .*status=stitched" py.out)" -gt 0 ] &&
			      ! grep "^S .*status=stitched" py.out | grep -qv "record_cpu=None "'
	fi
	if [ $n = truncated ]; then
		# the cut record is named and skipped, the data ends there: what
		# came before is processed as at a normal end, then perf fails,
		# as upstream's own test wants of a truncated file
		# (deferred-callchains.txt, the cut-short hooks)
		off=$(js $n.json "'%#x' % [r['offset'] for r in d['records'] if r['malformed'] == 'eof'][0]")
		check "$n: script: error names the offset of the cut record ($off)" \
			names raw.err $off
		check "$n: script: fails (status $st) after the cut record, the stitch summary and the cut's error only" \
			eval '[ $st -ne 0 ] && grep -v -e "^$(rx "$off") \[0x[0-9a-f]*\]: the data ends [0-9]* bytes into this record, $n.raw.data cut short? Skipping it\$" -e "^$n.raw.data: the data is cut short (where: above): read as far as it goes\$" raw.err > raw.err.rest && same want.summary raw.err.rest'
		"$PERF" $REPORT -i $n.raw.data $KS > report.out 2>&1
		st=$?
		check "$n: report: shows what there is, then fails (status $st)" \
			eval '[ $st -ne 0 ] && grep -qE "^ +[0-9.]+%" report.out && grep -q "^$n.raw.data: the data is cut short (where: above): read as far as it goes\$" report.out'
	fi
done

finish
