#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hotspot (Debian's 1.3.0) on deferred and converted recordings.
#
# hotspot reads perf.data with its own parser, hotspot-perfparser, which
# knows nothing of deferred callchains.  On the deferred recording it
# skips every CALLCHAIN_DEFERRED record ("unhandled event type 22") and
# so shows kernel-only stacks; on the file perf stitch -o converted, every
# sample of the input arrives, with its stitched callchain, and nothing is
# unhandled but the records perf itself writes that perfparser ignores.
# The GUI, under Xvfb, draws the user frames of make demo's converted
# recording in its flame graph (a screenshot, ImageMagick's import).
#
# usage: tests/perf/test-hotspot.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF, PYTHON, CC, KEEP, and
#   PERFPARSER=...  hotspot's parser (default: Debian's, in libexec);
#   HOTSPOT_BUILD (make hotspot's, default build/hotspot), whose patched
#   parser opens the deferred recording in the GUI; HOTSPOT_SHOTS=DIR
#   keeps the screenshots
# Needs root (or perf_event_paranoid <= 1 and tracefs access) for the
# recording.  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || SYS_PERF=$PERF
PERFPARSER=${PERFPARSER:-/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser}
[ -x "$PERFPARSER" ] || abort "no hotspot-perfparser at $PERFPARSER (make deps: hotspot)"

# parse FILE: perfparser's statistics of FILE, as FILE.stats (its messages too)
parse() { timeout 300 "$PERFPARSER" --input "$1" --print-stats > "$1.stats" 2>&1; }
# pstat FILE NAME: the number after "NAME:" in FILE.stats
pstat() { sed -nE "s/^$2: ([0-9]+)$/\1/p" "$1.stats" | head -1; }

record_fp fp.data 300
"$PERF" stitch --emulate -q --seed 5 --drop 0.1 -i fp.data -o deferred.data
"$PERF" stitch -q -i deferred.data -o stitched.data || bad "perf stitch -o"
"$PERF" report --stats -i deferred.data > deferred.rstats 2> /dev/null
nsamples=$(stat deferred.rstats SAMPLE)
nrec=$(stat deferred.rstats CALLCHAIN_DEFERRED)
check "the recording: samples ($nsamples) and CALLCHAIN_DEFERRED records ($nrec)" \
	eval "[ $nsamples -gt 100 ] && [ $nrec -gt 100 ]"

parse deferred.data
check "deferred: perfparser reads it" eq "$?" 0
check "deferred: every sample arrives" eq "$(pstat deferred.data samples)" "$nsamples"
check "deferred: each CALLCHAIN_DEFERRED record unhandled, so no user stack" \
	eq "$(grep -c '^unhandled event type 22 ' deferred.data.stats)" "$nrec"

parse stitched.data
check "stitched: perfparser reads it" eq "$?" 0
check "stitched: every sample of the input arrives" eq "$(pstat stitched.data samples)" "$nsamples"
check "stitched: no CALLCHAIN_DEFERRED left" hasnt stitched.data.stats '^unhandled event type 22 '
check "stitched: the lost-stack maps among the mmaps" \
	gt "$(pstat stitched.data mmaps)" "$(pstat deferred.data mmaps)"
check "stitched: no time order violation" \
	eval "[ '$(pstat stitched.data 'samples time violations')' = 0 ] && [ '$(pstat stitched.data 'mmaps time violations')' = 0 ]"

# ------------------------------------------------------------ the GUI
# make demo's recording (deferred, perf.data) and its conversion
# (stitched.data) opened in hotspot under Xvfb, a screenshot of each flame
# graph (tests/perf/helpers/hotspot-shot.sh): the stitched one draws the user
# frames under every sample, so rows of bars that span (nearly) the whole
# graph, where the deferred one has its kernel-only stacks, few such rows.
if DEMO_OUT=$tmp/demo PERF=$PERF DEMO_SECONDS=1 "$top/demo/run-demo.sh" > demo.log 2>&1; then
	ok "make demo's run-demo.sh: stitched.data written"
else
	tail -5 demo.log
	abort "demo/run-demo.sh"
fi
# full PNG: the pixel rows of the flame graph at least 80% coloured
full() { "$here/helpers/hotspot-shot.sh" --full-rows "$1"; }
for f in stitched perf; do
	if xvfb-run -a -s "-screen 0 1280x1024x24" "$here/helpers/hotspot-shot.sh" \
			"$tmp/demo/$f.data" "$f.png" 2> "$f.shot.err"; then
		ok "hotspot: a screenshot of the flame graph of $f.data"
	else
		bad "hotspot: a screenshot of the flame graph of $f.data"
		cat "$f.shot.err"
	fi
done
nfull=$(full stitched.png)
dfull=$(full perf.png)
echo "# flame graph rows spanning the graph: stitched $nfull px, deferred $dfull px"
check "hotspot, stitched.data: user frames drawn under the samples (3 bars or more across)" \
	gt "$nfull" 60
check "hotspot, stitched.data: more than twice the deferred recording's full rows" \
	gt "$nfull" $((2 * dfull))

# A real deferred recording of Linux 7.2 (the corpus' threads-2ev-fpdefer,
# perf record --call-graph=fp,defer of 16 threads) opened in the same
# hotspot three ways: converted by perf stitch -o, and the deferred file
# itself through Debian's parser and through ours (make hotspot; hotspot
# runs the parser HOTSPOT_PERFPARSER names).  The program is the one the
# corpus' build-id cache keeps (--appPath).
patched=${HOTSPOT_BUILD:-$top/build/hotspot}/obj/hotspot-perfparser
[ -x "$patched" ] || abort "no patched perfparser at $patched (make hotspot)"
real=$top/tests/corpus/real-7.2/threads-2ev-fpdefer.data
mkdir -p app
cp "$top/tests/corpus/real-7.2/buildid/.build-id/3d/9924720be688274c22a824e41071706d6fb183" app/threads
"$PERF" stitch -q -i "$real" -o real-stitched.data || bad "perf stitch -o $real"
# shot NAME FILE [PARSER]: NAME.png of FILE's flame graph
shot() {
	if HOTSPOT_ARGS="--appPath $tmp/app --kallsyms /dev/null" HOTSPOT_PERFPARSER=${3:-} \
			xvfb-run -a -s "-screen 0 1280x1024x24" \
			"$here/helpers/hotspot-shot.sh" "$2" "$1.png" 2> "$1.shot.err"; then
		ok "hotspot: a screenshot of the flame graph of $(basename "$2")${3:+ through the patched parser}"
	else
		bad "hotspot: a screenshot of the flame graph of $(basename "$2")${3:+ through the patched parser}"
		cat "$1.shot.err"
	fi
}
shot real-stitched real-stitched.data
shot real-debian "$real"
shot real-patched "$real" "$patched"
sfull=$(full real-stitched.png)
dfull=$(full real-debian.png)
pfull=$(full real-patched.png)
echo "# flame graph rows spanning the graph, the real recording: converted $sfull px, deferred through Debian's parser $dfull px, through ours $pfull px"
check "hotspot, the converted real recording: user frames drawn (3 bars or more across)" \
	gt "$sfull" 60
check "hotspot, patched parser, the deferred real recording: the converted one's full rows ($pfull px against $sfull)" \
	eval "[ $pfull -ge $((sfull * 9 / 10)) ] && [ $pfull -le $((sfull * 11 / 10)) ]"
check "hotspot, patched parser: more than twice the full rows of Debian's parser on the same file" \
	gt "$pfull" $((2 * dfull))
# HOTSPOT_SHOTS=DIR: the screenshots, for the README
if [ -n "${HOTSPOT_SHOTS:-}" ]; then
	mkdir -p "$HOTSPOT_SHOTS"
	cp real-stitched.png real-debian.png real-patched.png "$HOTSPOT_SHOTS/"
fi

finish
