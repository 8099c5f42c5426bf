#!/bin/bash
# perf reads the unaligned HEADER_BUILD_ID records of old perf inject -b
# SPDX-License-Identifier: GPL-2.0

# perf inject -b of perf 6.1 and before wrote HEADER_BUILD_ID records 4
# bytes past a multiple of 8 (perf 6.1 reads them).  A file with one in
# the middle of its data, written here from one of ours, must read with
# every sample, those after it (at unaligned offsets) included.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init unaligned_bid
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
# PERF_RECORD_HEADER_BUILD_ID (67): pid, build id, an empty file name;
# 44 bytes, as the old perf inject -b did not round up to 8
offset=$(python3 "$shelldir/lib/perf_data_insert.py" "$data" "$data.bid" 67 44) ||
	{ echo "cannot write the file [Failed]"; exit 1; }
perf script -i "$data" > "$data.want" 2> /dev/null
perf script -i "$data.bid" > "$data.out" 2> "$data.err"
rc=$?
if [ $rc -ne 0 ]; then
	echo "a 44-byte HEADER_BUILD_ID at $offset: exit status $rc [Failed]"
	cat "$data.err"
	exit 1
fi
if [ ! -s "$data.want" ] || ! cmp -s "$data.out" "$data.want"; then
	echo "a 44-byte HEADER_BUILD_ID at $offset: not every sample shown [Failed]"
	exit 1
fi
echo "a 44-byte HEADER_BUILD_ID at $offset: read, every sample after it too"
exit 0
