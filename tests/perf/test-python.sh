#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf's Python scripting with deferred user callchains
# (the mail "perf scripting python: Add how a deferred user callchain was joined"):
# the "deferred" entry of the sample dict, the stitched "callchain", and
# the stitch-coverage script (perf script report stitch-coverage).
#
# Records a frame-pointer perf.data with the system perf, turns it into a
# 6.19-style file with inject-deferred.py (some records shared, on another
# CPU, late, replaced by PERF_RECORD_LOST), runs build/perf script -s
# python-deferred-dump.py on it and checks every sample against what
# inject-deferred.py wrote: cookie, status, orphan reason, the CPU and time
# of the record (read from the file), late; stitched callchains against
# pristine perf 7.2's Python view of the original recording (the same
# scripting as ours but for the "deferred" dict: callchains with the
# inlined frames perf 7.2 adds, which the 6.1 we compared with before
# had not).
#
# usage: tests/perf/test-python.sh     (after make -f Makefile.perf-patch
#                                       and make perf-upstream)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (records), PYTHON,
#   KEEP, VERBOSE, and
#   UPSTREAM_PERF=...  pristine perf 7.2, the reference (default:
#                      build/perf-upstream)
#   Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || SYS_PERF=$PERF
require_upstream_perf python
GEN="$PY $here/helpers/inject-deferred.py"
DUMP=$here/helpers/python-deferred-dump.py

# report FILE: count the "ok ..." / "FAIL ..." lines of the Python checks
report() {
	local l
	while IFS= read -r l; do
		case $l in
		ok\ *) ok "${l#ok }";;
		FAIL\ *) bad "${l#FAIL }";;
		*) echo "     $l";;
		esac
	done < "$1"
}

# ------------------------------------------------------------ recording
record_shell_mix orig.data 100000 2
# the reference: user chains cut where a stitched chain stops (marker-range entries)
$GEN --cut-user orig.data ref.data > /dev/null || bad "inject-deferred.py --cut-user"
"$UP_PERF" script -i ref.data -s "$DUMP" > ref.dump 2> ref.dump.err
check "reference: pristine perf 7.2's Python view" gt "$(grep -c '^S ' ref.dump)" 100

# ------------------------------------------------------------ deferred file
$GEN --defer --print-groups --share 3 --record-cpu-shift 1 --record-delay 3000 \
	--late-every 5 --drop-every 7 --lost orig.data d.data > d.gen || bad "inject-deferred.py --defer"
"$PERF" script -i d.data -s "$DUMP" > d.dump 2> d.dump.err
check "perf script -s: exit status 0" eq "$?" 0
check "perf script -s: no Python error" eq "$(grep -Ec 'Traceback|Error' d.dump.err)" 0
# (perf 7.2's --no-merge-callchains is our 6.1 series' --no-stitch)
"$PERF" script -i d.data --no-merge-callchains -s "$DUMP" > nostitch.dump 2> nostitch.dump.err
"$PERF" script -i ref.data -s "$DUMP" > plain.dump 2> plain.dump.err

# ------------------------------------------------------------ stitch-coverage
"$PERF" script -l > list.out 2>&1
check "perf script -l lists stitch-coverage" \
	grep -Eq '^ +stitch-coverage +deferred user callchains stitched per thread' list.out
"$PERF" script report stitch-coverage -i d.data > cov.out 2> cov.err
check "perf script report stitch-coverage: exit status 0" eq "$?" 0
"$PERF" script report stitch-coverage -i ref.data > cov-plain.out 2> cov-plain.err
"$PERF" script -i d.data --no-merge-callchains -s \
	"$top/build/perf-prefix/libexec/perf-core/scripts/python/stitch-coverage.py" \
	> cov-nostitch.out 2> cov-nostitch.err
# the comm of every sample, by tid and time (pristine perf 7.2 on the reference)
"$UP_PERF" script -i ref.data -F comm,tid,time --ns > ref.comms 2> /dev/null

# ------------------------------------------------------------ checks
$PY "$here/helpers/python-check.py" > verify.out 2>&1
report verify.out
check "stitch-coverage: the per-thread table" same cov.out cov.expected
check "stitch-coverage: no Python error" eq "$(grep -Ec 'Traceback|Error' cov.err)" 0
check "stitch-coverage, file without deferred callchains" \
	eq "$(cat cov-plain.out)" "stitch coverage: no deferred user callchains ($(grep -c '^S ' ref.dump) samples)"
check "stitch-coverage, --no-merge-callchains: 0 stitched, all unstitched" \
	grep -Eq "^total +[0-9]+ +([0-9]+) +0 +0\.0%  0, \1 unstitched$" cov-nostitch.out

finish
