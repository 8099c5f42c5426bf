#!/bin/bash
# perf reads a perf.data file cut short in its data section
# SPDX-License-Identifier: GPL-2.0

# A perf.data copied while perf record wrote it, or cut by a full disk,
# ends inside its data section, and the feature sections that follow the
# data are not there.  perf must say so, naming the file, and show the
# samples before the cut (here: in the last sample) rather than refuse
# the file as of an incompatible format.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init data_cut
record_or_skip -e cpu-clock -c 100000 -- perf test -w noploop 1
# the header's data section (offset, size) at bytes 40 to 56: cut in the
# middle of its last PERF_RECORD_SAMPLE
cut=$(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
off, size = struct.unpack_from("<QQ", d, 40)
end, cut = off + size, None
while off < end:
    rtype, rsize = struct.unpack_from("<IxxH", d, off)
    if rtype == 9:
        cut = off + rsize // 2
    off += rsize
print(cut)' "$data") || { echo "cannot read the file [Failed]"; exit 1; }
head -c "$cut" "$data" > "$data.cut"

want=$(($(perf script -i "$data" 2> /dev/null | wc -l) - 1))
perf script -i "$data.cut" > "$data.out" 2> "$data.err"
samples=$(wc -l < "$data.out")
if ! grep -q "$data.cut is cut short" "$data.err"; then
	echo "a file cut short at $cut bytes: not said [Failed]"
	cat "$data.err"
	exit 1
fi
if [ "$want" -lt 1 ] || [ "$samples" -ne "$want" ]; then
	echo "a file cut short at $cut bytes: $samples samples shown, not $want [Failed]"
	exit 1
fi
echo "a file cut short at $cut bytes: said, $samples samples before the cut shown"
exit 0
