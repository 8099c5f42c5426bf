#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a perf.data file as a newer perf with a bigger perf_event_attr would.

usage: perf_data_bigger_attr.py IN OUT [EXTRA]

Writes to OUT the perf.data file IN with each attr of its attrs section
EXTRA bytes longer (default 8; zeroes, attr.size and the header's
attr_size raised to match) and every file offset after them (the ids of
each attr, the data, the feature sections) moved by what was inserted
before it.
"""
import bisect
import struct
import sys

SECTION = struct.Struct('<QQ')


def main():
    """Widen the attrs."""
    src, dst = sys.argv[1], sys.argv[2]
    extra = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    with open(src, 'rb') as f:
        data = f.read()
    magic, hsize, attr_size = struct.unpack_from('<8sQQ', data, 0)
    attrs_off, attrs_size = SECTION.unpack_from(data, 24)
    data_off, data_size = SECTION.unpack_from(data, 40)
    if magic != b'PERFILE2' or data_size == 0:
        sys.exit(f'{src}: not a perf.data file of a finished recording')
    # where the bytes go: after each attr, before its ids section
    entries = range(attrs_off, attrs_off + attrs_size, attr_size)
    points = [e + attr_size - SECTION.size for e in entries]

    def moved(off):
        return off + extra * bisect.bisect_right(points, off)

    out = bytearray(data)
    for e in entries:
        ids_off, ids_size = SECTION.unpack_from(data, e + attr_size - SECTION.size)
        SECTION.pack_into(out, e + attr_size - SECTION.size, moved(ids_off), ids_size)
        attr_len = struct.unpack_from('<I', data, e + 4)[0]
        struct.pack_into('<I', out, e + 4, attr_len + extra)
    features = int.from_bytes(data[hsize - 32:hsize], 'little')
    table = data_off + data_size
    for i in range(bin(features).count('1')):
        sec_off, sec_size = SECTION.unpack_from(data, table + SECTION.size * i)
        SECTION.pack_into(out, table + SECTION.size * i, moved(sec_off), sec_size)
    struct.pack_into('<Q', out, 16, attr_size + extra)
    SECTION.pack_into(out, 24, attrs_off, attrs_size + extra * len(points))
    SECTION.pack_into(out, 40, moved(data_off), data_size)
    ev_off, ev_size = SECTION.unpack_from(data, 56)
    if ev_size:
        SECTION.pack_into(out, 56, moved(ev_off), ev_size)
    for p in reversed(points):
        out[p:p] = bytes(extra)
    with open(dst, 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
