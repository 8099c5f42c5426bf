#!/bin/bash
# perf script reads a STAT_ROUND that comes before any counter
# SPDX-License-Identifier: GPL-2.0

# perf script sets up perf stat record's counters when their CPU and
# thread maps come.  A PERF_RECORD_STAT_ROUND before them, here in a
# recording of samples (where damage made one), has no counter to
# round: perf script must show the samples as without it, not crash.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init stat_round
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
perf script -i "$data" > "$data.want" 2> /dev/null ||
	{ echo "perf script of the recording failed [Failed]"; exit 1; }

# PERF_RECORD_STAT_ROUND (77): a header, its type and time, both 0
offset=$(python3 "$shelldir/lib/perf_data_insert.py" "$data" "$data.round" 77 24) ||
	{ echo "cannot write the file [Failed]"; exit 1; }
perf script -i "$data.round" > "$data.out" 2> "$data.err"
rc=$?
if [ $rc -ne 0 ]; then
	echo "a STAT_ROUND at $offset before any counter: exit status $rc [Failed]"
	cat "$data.err"
	exit 1
fi
if ! cmp -s "$data.out" "$data.want"; then
	echo "a STAT_ROUND at $offset before any counter: not every sample shown [Failed]"
	exit 1
fi
echo "a STAT_ROUND at $offset before any counter: read, every sample shown"
exit 0
