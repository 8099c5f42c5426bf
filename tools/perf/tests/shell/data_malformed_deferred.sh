#!/bin/bash
# perf skips a malformed deferred callchain record, naming it
# SPDX-License-Identifier: GPL-2.0

# A PERF_RECORD_CALLCHAIN_DEFERRED whose nr claims more entries than the
# record holds must be reported with its file offset and skipped: its
# samples keep their kernel part, and no byte after the record is read
# as a user frame.  The recording is a frame-pointer one rewritten as a
# Linux 6.19+ kernel writes it (lib/perf_data_deferred.py), then one
# record's nr raised by 4000.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init malformed_deferred
record_or_skip -e cpu-clock -c 100000 --call-graph fp -- perf test -w noploop 1
python3 "$shelldir/lib/perf_data_deferred.py" "$data" "$data.deferred" > /dev/null
case $? in
0) ;;
2) echo "not a recording to rewrite [Skipped]"; exit 2 ;;
*) echo "cannot write the file [Failed]"; exit 1 ;;
esac
offset=$(python3 -c 'import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", d, 40)
end, seen = off + size, 0
while off < end:
    rtype, rsize = struct.unpack_from("<IxxH", d, off)
    if rtype == 22:
        seen += 1
        if seen == 10:
            nr = struct.unpack_from("<Q", d, off + 16)[0]
            struct.pack_into("<Q", d, off + 16, nr + 4000)
            open(sys.argv[2], "wb").write(d)
            print(hex(off))
            sys.exit(0)
    off += rsize
sys.exit("fewer than 10 records")' "$data.deferred" "$data.bad") ||
	{ echo "cannot write the file [Failed]"; exit 1; }

perf script -i "$data.deferred" -F tid,time,ip,sym > "$data.want" 2> /dev/null
perf script -i "$data.bad" -F tid,time,ip,sym > "$data.got" 2> "$data.err"
err=0
if ! grep -q "^$offset .*malformed PERF_RECORD_CALLCHAIN_DEFERRED" "$data.err"; then
	echo "the record at $offset, its nr raised: not reported [Failed]"
	cat "$data.err"
	err=1
fi
if [ ! -s "$data.want" ] || [ "$(wc -l < "$data.got")" -gt "$(wc -l < "$data.want")" ]; then
	echo "the record at $offset, its nr raised: bytes after it shown as frames" \
	     "($(wc -l < "$data.got") lines, $(wc -l < "$data.want") without the damage) [Failed]"
	err=1
fi
[ $err -ne 0 ] || echo "the record at $offset, its nr raised: reported and skipped"
exit $err
