#!/bin/bash
# perf reads a perf.data file cut short in its data section
# SPDX-License-Identifier: GPL-2.0

# A perf.data copied while perf record wrote it, or cut by a full disk,
# ends inside its data section, and the feature sections that follow the
# data are not there.  perf must say so, naming the file, and show the
# samples before the cut rather than refuse the file as of an
# incompatible format.

if ! command -v python3 > /dev/null; then
	echo "no python3 [Skipped]"
	exit 2
fi
data=$(mktemp /tmp/__perf_test.data_cut.XXXXX)
cleanup() {
	rm -f "$data" "$data".*
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if ! perf record -q -e cpu-clock -c 100000 -o "$data" -- perf test -w noploop 1 \
		> "$data.rec" 2>&1; then
	echo "perf record [Skipped: cannot record]"
	cat "$data.rec"
	exit 2
fi
# the header's data section (offset, size) at bytes 40 to 56: cut in its middle
cut=$(python3 -c 'import struct, sys
off, size = struct.unpack_from("<QQ", open(sys.argv[1], "rb").read(56), 40)
print(off + size // 2)' "$data") || { echo "cannot read the header [Failed]"; exit 1; }
head -c "$cut" "$data" > "$data.cut"

perf script -i "$data.cut" > "$data.out" 2> "$data.err"
samples=$(grep -c noploop "$data.out")
if ! grep -q "$data.cut is cut short" "$data.err"; then
	echo "a file cut short at $cut bytes: not said [Failed]"
	cat "$data.err"
	exit 1
fi
if [ "$samples" -eq 0 ]; then
	echo "a file cut short at $cut bytes: no sample before the cut shown [Failed]"
	exit 1
fi
echo "a file cut short at $cut bytes: said, $samples samples before the cut shown"
exit 0
