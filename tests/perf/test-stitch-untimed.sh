#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deferred records written by an event without sample times.
#
# The stitch engine places every deferred sample and record in time (see
# util/deferred-callchain.c, deferred__untimed_source()).  When the event
# that writes the PERF_RECORD_CALLCHAIN_DEFERRED records (the dummy with
# defer_output) has no PERF_SAMPLE_TIME, perf does not stitch: it says so
# once, naming the event, and shows every deferred sample as recorded, with
# its "[user stack deferred]" frame; nothing is held back; perf stitch
# refuses to convert (a converted file would have no user stacks), leaving
# no output.  Files from tests/perf/helpers/convert-gen.py (untimed, untimed_nocpu).
# The other mix, a dummy with times but without PERF_SAMPLE_CPU, is
# stitched: test-scenarios.sh, scenario dummy_no_cpu.
#
# usage: tests/perf/test-stitch-untimed.sh   (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, PYTHON, KEEP, VERBOSE.
#   Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf

if ! $PY "$here/helpers/convert-gen.py" untimed untimed_nocpu > gen.log 2>&1; then
	cat gen.log
	abort "convert-gen.py"
fi

warning="Event 'dummy' has no sample times (PERF_SAMPLE_TIME): deferred user callchains are not stitched."
printf '%s T %s\n' ffffffff81000000 _text ffffffff81001000 k_one ffffffff81002000 k_two \
	ffffffff81003000 k_three ffffffff81004000 _etext > kallsyms
# perf 7.2 prints the tid as %7d (6.1: %5d)
printf '    100     0.000000200: \n\tffffffff81001000 k_one ([kernel.kallsyms])\n\t       100000001 [user stack deferred: cookie 0x100000001] ([deferred])\n\n' > want.script
printf '    100     0.000000400: \n\tffffffff81002000 k_two ([kernel.kallsyms])\n\t       100000002 [user stack deferred: cookie 0x100000002] ([deferred])\n\n' >> want.script
printf '    100     0.000000450: \n\tffffffff81003000 k_three ([kernel.kallsyms])\n\n' >> want.script

for n in untimed untimed_nocpu; do
	"$PERF" script --kallsyms=kallsyms -F tid,time,ip,sym,dso --ns -i $n.data > $n.script 2> $n.err
	st=$?
	check "$n: script: status 0, the samples in time order as recorded, user part deferred" \
		eval '[ $st -eq 0 ] && same want.script $n.script'
	printf '%s\n%s\n' "$warning" \
		"deferred callchains: 2 deferred samples, 2 records, not stitched" > want.err
	check "$n: script: says once why, naming the event, and the summary" same want.err $n.err

	"$PERF" stitch --stats=json -i $n.data > $n.json 2> $n.stats.err
	st=$?
	check "$n: --stats=json: status 0, not stitching, 2 deferred samples, 2 records, nothing held" \
		eval '[ $st -eq 0 ] && eq "$(js $n.json "[d[k] for k in (\"stitching\", \"deferred_samples\", \"records\", \"stitched\", \"orphans_total\", \"peak_pending_samples\")]")" "[False, 2, 2, 0, 0, 0]"'
	check "$n: --stats=json: says why" same $n.stats.err <(echo "$warning")
	"$PERF" stitch --stats -i $n.data > $n.stats 2> /dev/null
	check "$n: --stats: not stitched" has $n.stats '^stitched: +not stitched'

	"$PERF" stitch -i $n.data -o $n.out > $n.conv.out 2> $n.conv.err
	st=$?
	check "$n: stitch -o: refused, says why" \
		eval '[ $st -ne 0 ] && has $n.conv.err "^$(printf "%s" "$warning" | sed "s/[].()[]/\\\\&/g")\$" &&
		      has $n.conv.err "could not be stitched"'
	no_output "$n: stitch -o" $n.out
done

finish
