#!/bin/bash
# perf shows the samples before a record the end of the data cuts
# SPDX-License-Identifier: GPL-2.0

# A perf.data whose last record runs past the end of its data section
# (here: the last record's size raised by 64 bytes) must show every
# sample before that record and say where the data ends, rather than
# show nothing.

if ! command -v python3 > /dev/null; then
	echo "no python3 [Skipped]"
	exit 2
fi
data=$(mktemp /tmp/__perf_test.record_cut.XXXXX)
cleanup() {
	rm -f "$data" "$data".*
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if ! perf record -q -e cpu-clock -c 100000 -o "$data" -- sleep 0.1 > "$data.rec" 2>&1; then
	echo "perf record [Skipped: cannot record]"
	cat "$data.rec"
	exit 2
fi
offset=$(python3 -c 'import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", d, 40)
end, last = off + size, off
while off < end:
    last, off = off, off + struct.unpack_from("<H", d, off + 6)[0]
rtype, rsize = struct.unpack_from("<IxxH", d, last)
if rtype == 9:
    sys.exit("the last record is a sample")
struct.pack_into("<H", d, last + 6, rsize + 64)
open(sys.argv[2], "wb").write(d)
print(hex(last))' "$data" "$data.cut") || { echo "cannot write the file [Failed]"; exit 1; }

perf script -i "$data" > "$data.want" 2> /dev/null
perf script -i "$data.cut" > "$data.out" 2> "$data.err"
if ! grep -q "^$offset .*: the data ends [0-9]* bytes into this record" "$data.err"; then
	echo "the record at $offset, cut by the end of the data: not said [Failed]"
	cat "$data.err"
	exit 1
fi
if [ ! -s "$data.want" ] || ! cmp -s "$data.out" "$data.want"; then
	echo "the record at $offset, cut by the end of the data:" \
	     "not every sample before it shown [Failed]"
	exit 1
fi
echo "the record at $offset, cut by the end of the data: said, every sample before it shown"
exit 0
