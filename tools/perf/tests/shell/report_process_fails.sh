#!/bin/bash
# perf report exits with an error when it cannot process the events
# SPDX-License-Identifier: GPL-2.0

# perf report --stdio on a perf.data whose events cannot be processed (a
# compressed record in a file without HEADER_COMPRESSED) says so; its
# exit status must say so too, or a script takes the report for whole.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init report_fails
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
python3 "$shelldir/lib/perf_data_insert.py" "$data" "$data.damaged" 81 16 > /dev/null || exit 1

if ! perf report --stdio -i "$data" > /dev/null 2>&1; then
	echo "perf report of the recording failed [Failed]"
	exit 1
fi
perf report --stdio -i "$data.damaged" > /dev/null 2> "$data.err"
rc=$?
if [ $rc -eq 0 ]; then
	echo "perf report of a file it could not process exited 0 [Failed]"
	cat "$data.err"
	exit 1
fi
echo "perf report of a file it could not process: exit status $rc"
exit 0
