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
bench/dircopy.py uses its pieces (PerfFile, Compressor) for --threads -z.
"""

import mmap
import os
import struct
import sys

import zstandard

FINISHED_ROUND, COMPRESSED, COMPRESSED2 = 68, 81, 83
HEADER_COMPRESSED = 27
COMP_ZSTD, LEVEL = 1, 1
MMAP_LEN = 528384       # perf record's default: 129 pages of 4 KiB
CHUNK = 32768
HEADER = struct.Struct('<8sQQ QQ QQ QQ 32s')
REC_HEADER = struct.Struct('<IHH')


class PerfFile:
    """A little-endian file-mode perf.data, mapped: its header's fields,
    its features by id, its records."""

    def __init__(self, path):
        self.path = path
        with open(path, 'rb') as f:
            self.buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        (self.magic, hsize, self.attr_size, self.attrs_off, self.attrs_size,
         self.data_off, self.data_size, _, _, bitmap) = HEADER.unpack_from(self.buf, 0)
        if self.magic != b'PERFILE2' or hsize != HEADER.size:
            sys.exit('%s: not a little-endian file-mode perf.data' % path)
        bits = int.from_bytes(bitmap, 'little')
        self.feats, table = {}, self.data_off + self.data_size
        for fid in range(256):
            if bits >> fid & 1:
                off, size = struct.unpack_from('<QQ', self.buf, table)
                self.feats[fid] = self.buf[off:off + size]
                table += 16

    def records(self):
        """(type, record bytes) of the data section, in file order"""
        buf, pos, end = self.buf, self.data_off, self.data_off + self.data_size
        while pos + 8 <= end:
            typ, _, size = REC_HEADER.unpack_from(buf, pos)
            if size < 8:
                sys.exit('%s: record of size %d at %#x' % (self.path, size, pos))
            yield typ, buf[pos:pos + size]
            pos += size

    def plain_records(self):
        """records(), those of a perf record -z file decompressed: its
        COMPRESSED(2) records are one zstd stream, in which a record may
        go on into the next one"""
        dec, pending = zstandard.ZstdDecompressor().decompressobj(), b''
        for typ, rec in self.records():
            if typ not in (COMPRESSED, COMPRESSED2):
                yield typ, rec
                continue
            if typ == COMPRESSED2:
                size = struct.unpack_from('<Q', rec, 8)[0]
                pending += dec.decompress(bytes(rec[16:16 + size]))
            else:
                pending += dec.decompress(bytes(rec[8:]))
            pos = 0
            while pos + 8 <= len(pending):
                rtyp, _, rsize = REC_HEADER.unpack_from(pending, pos)
                if rsize < 8:
                    sys.exit('%s: decompressed record of size %d' % (self.path, rsize))
                if pos + rsize > len(pending):
                    break
                yield rtyp, pending[pos:pos + rsize]
                pos += rsize
            pending = pending[pos:]
        if pending:
            sys.exit('%s: %d bytes of a record cut at the end' % (self.path, len(pending)))

    def write_tail(self, out, data_off, data_size, feats):
        """After the data section written to @out (at @data_off, of
        @data_size bytes): the features @feats, then the header again."""
        order = sorted(feats)
        fdata_off = data_off + data_size + 16 * len(order)
        table, fdata = b'', b''
        for fid in order:
            table += struct.pack('<QQ', fdata_off + len(fdata), len(feats[fid]))
            fdata += feats[fid]
        out.write(table + fdata)
        words = [0, 0, 0, 0]
        for fid in order:
            words[fid // 64] |= 1 << (fid % 64)
        out.seek(0)
        out.write(HEADER.pack(self.magic, HEADER.size, self.attr_size, self.attrs_off,
                              self.attrs_size, data_off, data_size, 0, 0,
                              struct.pack('<4Q', *words)))


class Compressor:
    """One zstd stream written to @out as COMPRESSED2 records of whole
    records, at most CHUNK bytes of them each."""

    def __init__(self, out):
        self.out = out
        self.zc = zstandard.ZstdCompressor(level=LEVEL).compressobj()
        self.pending, self.held = [], 0
        self.raw = self.comp = self.ncomp = 0

    def add(self, rec):
        if self.held + len(rec) > CHUNK:
            self.flush()
        self.pending.append(rec)
        self.held += len(rec)
        self.raw += len(rec)

    def flush(self):
        if not self.pending:
            return
        zc = self.zc
        data = zc.compress(b''.join(self.pending)) + zc.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        pad = -len(data) % 8
        size = 16 + len(data) + pad
        assert size < 65536
        self.out.write(struct.pack('<IHHQ', COMPRESSED2, 0, size, len(data)) + data +
                       b'\0' * pad)
        self.comp += size
        self.ncomp += 1
        self.pending, self.held = [], 0

    def header_feature(self):
        """HEADER_COMPRESSED's body, as perf record writes it"""
        ratio = max(1, self.raw // max(self.comp, 1))
        return struct.pack('<5I', 0, COMP_ZSTD, LEVEL, ratio, MMAP_LEN)


def main():
    src, dst = sys.argv[1:3]
    pf = PerfFile(src)
    if HEADER_COMPRESSED in pf.feats:
        sys.exit('%s: compressed already' % src)
    out = open(dst + '.tmp', 'wb')
    out.write(pf.buf[:pf.data_off])
    zc = Compressor(out)
    nrec = 0
    for typ, rec in pf.records():
        nrec += 1
        if typ == FINISHED_ROUND:
            zc.flush()
            out.write(rec)
            zc.comp += len(rec)
        else:
            zc.add(rec)
    zc.flush()
    pf.feats[HEADER_COMPRESSED] = zc.header_feature()
    pf.write_tail(out, pf.data_off, out.tell() - pf.data_off, pf.feats)
    out.close()
    os.rename(dst + '.tmp', dst)
    print('zcopy: %s: %d records, %d bytes in %d COMPRESSED2 records (%d bytes)' %
          (dst, nrec, zc.raw, zc.ncomp, zc.comp))


if __name__ == '__main__':
    main()
