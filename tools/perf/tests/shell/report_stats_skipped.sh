#!/bin/bash
# perf report --stats counts the records it skipped
# SPDX-License-Identifier: GPL-2.0

# --stats lists the records of a perf.data by type; records perf skips
# (here two of a type it does not know, put into a recording) must be
# listed too, or its counts do not add up to what the file holds.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init stats_skipped
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
python3 "$shelldir/lib/perf_data_insert.py" "$data" "$data.1" 200 16 > /dev/null &&
python3 "$shelldir/lib/perf_data_insert.py" "$data.1" "$data.2" 200 16 2 > /dev/null ||
	{ echo "cannot write the file [Failed]"; exit 1; }
perf report --stats -i "$data.2" > "$data.out" 2> "$data.err"
rc=$?
if [ $rc -ne 0 ] || ! grep -Eq '^ *UNKNOWN events: +2 ' "$data.out"; then
	echo "two records of an unknown type: not counted in --stats (exit status $rc) [Failed]"
	cat "$data.out"
	exit 1
fi
echo "two records of an unknown type: counted in --stats"
exit 0
