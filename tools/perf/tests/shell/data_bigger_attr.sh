#!/bin/bash
# perf reads a perf.data whose attrs are bigger than its own
# SPDX-License-Identifier: GPL-2.0

# A newer perf writes a bigger perf_event_attr.  perf reads a pipe of
# such a perf, using the part it knows; a perf.data file of it, written
# here from one of ours with each attr 8 bytes longer, must read the
# same: every sample of every event shown as in the original.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init bigger_attr
record_or_skip -e cpu-clock,task-clock -c 100000 -- sleep 0.1
python3 "$shelldir/lib/perf_data_bigger_attr.py" "$data" "$data.big" 8 ||
	{ echo "cannot write the file [Failed]"; exit 1; }
perf script -i "$data" > "$data.want" 2> /dev/null
perf script -i "$data.big" > "$data.out" 2> "$data.err"
rc=$?
if [ $rc -ne 0 ]; then
	echo "attrs 8 bytes bigger: exit status $rc [Failed]"
	cat "$data.err"
	exit 1
fi
if [ ! -s "$data.want" ] || ! cmp -s "$data.out" "$data.want"; then
	echo "attrs 8 bytes bigger: not the samples of the original [Failed]"
	exit 1
fi
echo "attrs 8 bytes bigger: read, $(wc -l < "$data.out") samples as in the original"
exit 0
