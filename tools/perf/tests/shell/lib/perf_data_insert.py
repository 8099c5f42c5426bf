#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Insert a record into the data section of a perf.data file.

usage: perf_data_insert.py IN OUT TYPE SIZE|like:TYPE2 [AFTER]

Writes to OUT the perf.data file IN with a record of type TYPE and SIZE
bytes (a perf_event_header, then zeroes; like:TYPE2: a copy of the
first record of type TYPE2, the sample_id fields a kernel record ends
with included, but of type TYPE) inserted after the first AFTER
records of its data section (default: half of them), the data section's
size and the offsets of the feature sections after it moved to match.
Prints the inserted record's file offset (hex), as perf names it.
"""
import struct
import sys

HEADER = struct.Struct('<8sQQ QQ QQ QQ')  # magic, size, attr_size, attrs, data, event_types


def main():
    """Insert the record where asked."""
    src, dst, rtype, body = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(src, 'rb') as f:
        data = bytearray(f.read())
    (magic, hsize, _, _, _, data_off, data_size, _, _) = HEADER.unpack_from(data, 0)
    if magic != b'PERFILE2' or data_size == 0:
        sys.exit(f'{src}: not a perf.data file of a finished recording')
    offsets, off, end, like = [], data_off, data_off + data_size, None
    while off < end:
        otype, _, size = struct.unpack_from('<IHH', data, off)
        if size < 8:
            sys.exit(f'{src}: 0x{off:x}: a record of size {size}')
        if like is None and body == f'like:{otype}':
            like = data[off + 8:off + size]
        offsets.append(off)
        off += size
    after = int(sys.argv[5]) if len(sys.argv) > 5 else len(offsets) // 2
    at = offsets[after] if after < len(offsets) else end
    if body.startswith('like:'):
        if like is None:
            sys.exit(f'{src}: no record of type {body[5:]}')
        rsize = 8 + len(like)
        record = struct.pack('<IHH', rtype, 0, rsize) + like
    else:
        rsize = int(body)
        record = struct.pack('<IHH', rtype, 0, rsize) + bytes(rsize - 8)
    # the feature section table follows the data: one (offset, size) per
    # feature bit set, each pointing past the data
    features = int.from_bytes(data[hsize - 32:hsize], 'little')
    table = end
    for i in range(bin(features).count('1')):
        pos = table + 16 * i
        sec_off = struct.unpack_from('<Q', data, pos)[0]
        struct.pack_into('<Q', data, pos, sec_off + rsize)
    struct.pack_into('<Q', data, 48, data_size + rsize)
    data[at:at] = record
    with open(dst, 'wb') as f:
        f.write(data)
    print(f'0x{at:x}')


if __name__ == '__main__':
    main()
