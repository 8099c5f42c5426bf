#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper: a perf.data file rewritten in pipe format, as is.

usage: file2pipe.py IN.data OUT.pipe

Writes the pipe header, one PERF_RECORD_HEADER_ATTR per attr (with its
ids), the HEADER_TRACING_DATA feature as a PERF_RECORD_HEADER_TRACING_DATA
record followed by the data, then the data section unchanged.  Nothing is
interpreted: records perf 6.1 does not know (PERF_RECORD_CALLCHAIN_DEFERRED)
pass through.  'perf inject -i IN -o -' would do this, but perf 6.1's
writes the tracing data before the attrs (Documentation/perf-build.md,
known issues).  Little-endian files only.
"""
import struct
import sys

PERF_RECORD_HEADER_ATTR = 64
PERF_RECORD_HEADER_TRACING_DATA = 66
HEADER_TRACING_DATA = 1


def main(src, dst):
    buf = open(src, 'rb').read()
    magic, hsize, attr_size = struct.unpack_from('<8sQQ', buf, 0)
    if magic != b'PERFILE2' or hsize != 104:
        sys.exit('%s: not a little-endian perf.data file' % src)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    features = int.from_bytes(buf[72:104], 'little')
    out = bytearray(b'PERFILE2' + struct.pack('<Q', 16))
    for off in range(attrs_off, attrs_off + attrs_size, attr_size):
        attr = buf[off:off + attr_size - 16]
        ids_off, ids_size = struct.unpack_from('<QQ', buf, off + attr_size - 16)
        body = attr + buf[ids_off:ids_off + ids_size]
        out += struct.pack('<IHH', PERF_RECORD_HEADER_ATTR, 0, 8 + len(body)) + body
    if features & (1 << HEADER_TRACING_DATA):
        # the first section of the table after the data: bit 1 is the lowest used
        sec_off, sec_size = struct.unpack_from('<QQ', buf, data_off + data_size)
        aligned = (sec_size + 7) & ~7
        out += struct.pack('<IHHII', PERF_RECORD_HEADER_TRACING_DATA, 0, 16, aligned, 0)
        out += buf[sec_off:sec_off + sec_size] + b'\0' * (aligned - sec_size)
    out += buf[data_off:data_off + data_size]
    with open(dst, 'wb') as fp:
        fp.write(out)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
