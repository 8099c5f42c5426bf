#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""zcopy.py IN OUT: a copy of the file-mode perf.data IN as `perf record -z`
writes it, for make bench-scale's -z shapes.

What perf record -z writes (../shared/reference/ABI.md): the records of
each round in PERF_RECORD_COMPRESSED2 records, one zstd stream for the
whole session, flushed (not ended) at each record, so that no record can
be decompressed on its own; the FINISHED_ROUND records between them
uncompressed; HEADER_COMPRESSED (zstd, the level, the ratio, the mmap
length the reader sizes its buffer from) among the features.  Each
compressed record holds at most CHUNK bytes of whole records, below the
64 KiB a record can be.  The header, attrs and other features are IN's.

Streams IN (files of gigabytes); prints one line: the records, the sizes.
"""

import mmap
import os
import struct
import sys

import zstandard

FINISHED_ROUND, COMPRESSED2 = 68, 83
HEADER_COMPRESSED = 27
COMP_ZSTD, LEVEL = 1, 1
MMAP_LEN = 528384       # perf record's default: 129 pages of 4 KiB
CHUNK = 32768
HEADER = struct.Struct('<8sQQ QQ QQ QQ 32s')


def main():
    src, dst = sys.argv[1:3]
    with open(src, 'rb') as f:
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    (magic, hsize, attr_size, attrs_off, attrs_size, data_off, data_size, _, _,
     bitmap) = HEADER.unpack_from(buf, 0)
    if magic != b'PERFILE2' or hsize != HEADER.size:
        sys.exit('%s: not a little-endian file-mode perf.data' % src)
    bits = int.from_bytes(bitmap, 'little')
    if bits >> HEADER_COMPRESSED & 1:
        sys.exit('%s: compressed already' % src)
    feats, table = {}, data_off + data_size
    for fid in range(256):
        if bits >> fid & 1:
            off, size = struct.unpack_from('<QQ', buf, table)
            feats[fid] = buf[off:off + size]
            table += 16

    zc = zstandard.ZstdCompressor(level=LEVEL).compressobj()
    out = open(dst + '.tmp', 'wb')
    out.write(buf[:data_off])
    raw = comp = nrec = ncomp = 0
    pending = []

    def flush():
        nonlocal comp, ncomp, pending
        if not pending:
            return
        data = zc.compress(b''.join(pending)) + zc.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        pad = -len(data) % 8
        size = 16 + len(data) + pad
        assert size < 65536
        out.write(struct.pack('<IHHQ', COMPRESSED2, 0, size, len(data)) + data + b'\0' * pad)
        comp += size
        ncomp += 1
        pending = []

    pos, end, held = data_off, data_off + data_size, 0
    while pos + 8 <= end:
        typ, _, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            sys.exit('%s: record of size %d at %#x' % (src, size, pos))
        nrec += 1
        if typ == FINISHED_ROUND:
            flush()
            held = 0
            out.write(buf[pos:pos + size])
            comp += size
        else:
            if held + size > CHUNK:
                flush()
                held = 0
            pending.append(buf[pos:pos + size])
            held += size
            raw += size
        pos += size
    flush()

    ratio = max(1, raw // max(comp, 1))
    feats[HEADER_COMPRESSED] = struct.pack('<5I', 0, COMP_ZSTD, LEVEL, ratio, MMAP_LEN)
    new_size = out.tell() - data_off
    order = sorted(feats)
    fdata_off = data_off + new_size + 16 * len(order)
    table, fdata = b'', b''
    for fid in order:
        table += struct.pack('<QQ', fdata_off + len(fdata), len(feats[fid]))
        fdata += feats[fid]
    out.write(table + fdata)
    words = [0, 0, 0, 0]
    for fid in order:
        words[fid // 64] |= 1 << (fid % 64)
    out.seek(0)
    out.write(HEADER.pack(magic, hsize, attr_size, attrs_off, attrs_size, data_off, new_size,
                          0, 0, struct.pack('<4Q', *words)))
    out.close()
    os.rename(dst + '.tmp', dst)
    print('zcopy: %s: %d records, %d bytes in %d COMPRESSED2 records (%d bytes)' %
          (dst, nrec, raw, ncomp, comp))


if __name__ == '__main__':
    main()
