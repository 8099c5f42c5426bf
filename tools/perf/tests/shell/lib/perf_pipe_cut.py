#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cut a perf pipe stream (perf record -o -) inside a record.

usage: perf_pipe_cut.py STREAM OUT {header|body}

Writes to OUT the stream up to the last PERF_RECORD_SAMPLE, cut 5 bytes
into its header ('header') or half-way through its body ('body'), and
prints the record's offset as perf counts a stream's offsets (from the
end of its 16-byte header, as perf report -D shows them; hex) and how
many bytes of the record OUT holds: what perf names when it meets the
cut.
"""
import struct
import sys

PERF_RECORD_SAMPLE = 9


def main():
    """Cut the stream where asked."""
    src, dst, where = sys.argv[1:4]
    with open(src, 'rb') as f:
        data = f.read()
    magic, size = struct.unpack_from('<8sQ', data, 0)
    if magic != b'PERFILE2' or size != 16:
        sys.exit(f'{src}: not a perf pipe stream')
    off, last = size, None
    while off + 8 <= len(data):
        rtype, _, rsize = struct.unpack_from('<IHH', data, off)
        if rsize < 8:
            sys.exit(f'{src}: 0x{off:x}: a record of size {rsize}')
        if rtype == PERF_RECORD_SAMPLE:
            last = (off, rsize)
        off += rsize
    if last is None:
        sys.exit(f'{src}: no sample')
    off, rsize = last
    kept = 5 if where == 'header' else rsize // 2
    with open(dst, 'wb') as f:
        f.write(data[:off + kept])
    print(f'0x{off - size:x} {kept}')


if __name__ == '__main__':
    main()
