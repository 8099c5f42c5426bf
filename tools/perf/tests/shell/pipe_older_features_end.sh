#!/bin/bash
# perf reads the end-of-features mark of an older perf's pipe
# SPDX-License-Identifier: GPL-2.0

# In a pipe the features come as PERF_RECORD_HEADER_FEATURE records,
# ended by an empty one whose id is the writer's HEADER_LAST_FEATURE:
# 32 for perf 6.1, a feature (HEADER_CPU_DOMAIN_INFO) for this perf.
# Such a stream, written here from one of ours (its features from 32 on
# left out, its end mark 32), must read without an error about the
# feature the mark's id names, and with every sample.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init pipe_features
record_pipe_or_skip -e cpu-clock -c 100000 -- sleep 0.1
python3 -c 'import struct, sys
PERF_RECORD_HEADER_FEATURE, LAST_FEATURE_OF_PERF_6_1 = 80, 32
d = open(sys.argv[1], "rb").read()
out, off, marks = bytearray(d[:16]), 16, 0
while off + 8 <= len(d):
    rtype, size = struct.unpack_from("<IxxH", d, off)
    rec = bytearray(d[off:off + size])
    off += size
    if rtype == PERF_RECORD_HEADER_FEATURE:
        if size == 16:
            struct.pack_into("<Q", rec, 8, LAST_FEATURE_OF_PERF_6_1)
            marks += 1
        elif struct.unpack_from("<Q", rec, 8)[0] >= LAST_FEATURE_OF_PERF_6_1:
            continue
    out += rec
open(sys.argv[2], "wb").write(out)
sys.exit(marks != 1)' "$data" "$data.old" ||
	{ echo "no end-of-features mark in the stream [Failed]"; exit 1; }

perf script -i - < "$data" > "$data.want" 2> /dev/null
perf script -i - < "$data.old" > "$data.out" 2> "$data.err"
rc=$?
if [ $rc -ne 0 ] || grep -q 'Invalid HEADER_' "$data.err"; then
	echo "a pipe whose features end at 32: exit status $rc [Failed]"
	cat "$data.err"
	exit 1
fi
if ! cmp -s "$data.out" "$data.want"; then
	echo "a pipe whose features end at 32: not every sample shown [Failed]"
	exit 1
fi
echo "a pipe whose features end at 32: read, every sample shown"
exit 0
