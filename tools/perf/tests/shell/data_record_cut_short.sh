#!/bin/bash
# perf shows the samples before a record the end of the data cuts
# SPDX-License-Identifier: GPL-2.0

# A perf.data whose last record runs past the end of its data section
# (here: the last record's size raised by 64 bytes) must show every
# sample before that record and say where the data ends, rather than
# show nothing.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init record_cut
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
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
