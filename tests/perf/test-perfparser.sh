#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hotspot's perfparser with our patches (make hotspot: build/hotspot) on the
# real Linux 7.2 corpus.  For each recording: the stacks the patched
# parser gives for the deferred file itself are those it gives for perf
# stitch -o's output of the same file, sample for sample
# (tests/hotspot/perf2text-stacks.py compare), and their user addresses
# are those perf script shows (... script).  Debian's unpatched parser on
# the same files is measured beside it: how many samples it shows without
# a user frame.  Then perfparser's own tests (tst_perfdata), ours among
# them.
#
# usage: tests/perf/test-perfparser.sh [DIR]   (default tests/corpus/real-7.2)
#   Environment (tests/perf/lib.sh): PERF, KEEP; HOTSPOT_BUILD (default
#   build/hotspot).  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
use_corpus_buildids
hs=${HOTSPOT_BUILD:-$top/build/hotspot}
[ -x "$hs/obj/perf2text" ] && [ -x "$hs/obj/tst_perfdata" ] ||
	abort "no patched perfparser in $hs (make hotspot)"
[ -x "$hs/debian/perf2text" ] && [ -x "$hs/debian/perfparser" ] ||
	abort "no Debian perfparser beside it in $hs/debian (make deps: hotspot)"
corpus=$(abs_path "${1:-$top/tests/corpus/real-7.2}")
stacks=$top/tests/hotspot/perf2text-stacks.py

# dump PERF2TEXT FILE OUT: perfparser's text of FILE (its messages in
# OUT.err); perf2text exits 0 when the perfparser it runs failed
dump() {
	timeout 300 "$1" --input "$2" > "$3" 2> "$3.err" &&
		! grep -q 'perfparser process finished abnormally' "$3.err"
}

for f in "$corpus"/*.data; do
	n=$(basename "$f" .data)
	"$PERF" stitch -q -i "$f" -o "$n.stitched.data" 2> "$n.stitch.err" ||
		{ bad "$n: perf stitch -o"; continue; }
	"$PERF" script -F pid,tid,time,ip,sym,dso --ns -i "$f" > "$n.script" 2> /dev/null
	dump "$hs/obj/perf2text" "$f" "$n.txt"
	check "$n: patched perfparser reads it" eq "$?" 0
	dump "$hs/obj/perf2text" "$n.stitched.data" "$n.stitched.txt"
	check "$n: ... and perf stitch -o's output" eq "$?" 0
	check "$n: no CALLCHAIN_DEFERRED left unhandled, no marker taken for a context" \
		eval "! grep -Eq 'unhandled event type 22|invalid callchain context' '$n.txt.err'"

	"$stacks" compare "$n.txt" "$n.stitched.txt" > "$n.compare" 2>&1
	rc=$?
	check "$n: the deferred file's stacks are the converted file's: $(tail -1 "$n.compare")" \
		eq "$rc" 0
	"$stacks" script "$n.txt" "$n.script" > "$n.vs-script" 2>&1
	rc=$?
	check "$n: user frames as perf script shows them: $(tail -1 "$n.vs-script")" eq "$rc" 0

	# the same file through Debian's hotspot-perfparser (1.3.0, unpatched)
	dump "$hs/debian/perf2text" "$f" "$n.debian.txt"
	ours=$("$stacks" userless "$n.txt")
	theirs=$("$stacks" userless "$n.debian.txt")
	echo "     $n: patched: $ours; Debian's: $theirs"
	"$stacks" script "$n.debian.txt" "$n.script" > "$n.debian.vs-script" 2>&1
	case $n in
	threads-z)
		# PERF_RECORD_COMPRESSED2: Debian's sees no sample at all
		check "$n: Debian's perfparser reads no sample of a perf record -z file of 7.2" \
			eval "[ '$theirs' = '0 of 0 samples without a user-space frame' ]" ;;
	*-dir)
		# perf record --threads: Debian's reads no directory
		check "$n: Debian's perfparser reads no sample of a perf.data directory" \
			eval "[ '$theirs' = '0 of 0 samples without a user-space frame' ]" ;;
	*)
		check "$n: Debian's perfparser shows other user frames than perf script ($(tail -1 "$n.debian.vs-script"))" \
			eval "! tail -1 '$n.debian.vs-script' | grep -q ' 0 differ'" ;;
	esac
done

# perfparser's own tests, the series' four among them.  vector_static_clang
# fails without our patches too: Debian 12's demangler spells two names
# otherwise than the expected text (perfparser 1.3.0 as shipped)
"$hs/obj/tst_perfdata" testTracingData testContentSize \
	testFiles:vector_static_gcc/perf.data testFiles:vector_static_gcc/perf.data.zstd \
	testFiles:fork_static_gcc/perf.data.zstd \
	testCompressed2 testCallchainDeferredRecords testDeferredCallchains testDirectory \
	> tst_perfdata.out 2>&1
rc=$?
check "tst_perfdata: $(grep '^Totals' tst_perfdata.out)" eq "$rc" 0
for t in testCompressed2 testCallchainDeferredRecords testDeferredCallchains testDirectory; do
	check "tst_perfdata: $t (the series' test) passed" has tst_perfdata.out "^PASS   : TestPerfData::$t\\(\\)"
done

finish
