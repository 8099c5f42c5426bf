#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""dircopy.py [-z] IN OUT: a copy of the file-mode perf.data IN as
`perf record --threads` writes it (OUT a directory), for make
bench-scale's and test-shapes.sh's --threads shapes.

What perf record --threads writes (the real 7.2 recordings of
tests/corpus/real-7.2/*-dir.data): OUT/data holds the header, the attrs,
the records perf record synthesizes before the workload runs and the
features, with HEADER_DIR_FORMAT (version 1); each reader thread's
ring buffers go to OUT/data.N, here one per CPU: the records of CPU N in
the order they were written, no FINISHED_ROUND anywhere.  With -z, as
perf record --threads -z: each data.N its own zstd stream of
COMPRESSED2 records (bench/zcopy.py's), HEADER_COMPRESSED in data.

Here the records before IN's first sample or deferred callchain are the
synthesized ones; a record's CPU is its sample's or its sample_id's (IN's
attrs must all have the same sample_type, with CPU).  IN may be a
perf record -z file: its records are decompressed first.  Prints one
line.
"""

import os
import shutil
import struct
import sys

from zcopy import PerfFile, Compressor, HEADER_COMPRESSED, FINISHED_ROUND

SAMPLE, CALLCHAIN_DEFERRED = 9, 22
HEADER_DIR_FORMAT = 24
PERF_DIR_VERSION = 1
S_IP, S_TID, S_TIME, S_ADDR, S_ID, S_CPU, S_STREAM_ID, S_IDENTIFIER = \
    1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 6, 1 << 7, 1 << 9, 1 << 16
U32 = struct.Struct('<I')


def cpu_offsets(sample_type):
    """(the CPU's offset in a SAMPLE, its offset from a sample_id's end)"""
    if not sample_type & S_CPU:
        sys.exit('dircopy: the attrs have no PERF_SAMPLE_CPU')
    before = [S_IDENTIFIER, S_IP, S_TID, S_TIME, S_ADDR, S_ID, S_STREAM_ID]
    in_sample = 8 + 8 * sum(1 for b in before if sample_type & b)
    from_end = 8 + (8 if sample_type & S_IDENTIFIER else 0)
    return in_sample, from_end


def main():
    args = sys.argv[1:]
    compress = args[:1] == ['-z']
    if compress:
        args = args[1:]
    if len(args) != 2:
        sys.exit('usage: dircopy.py [-z] IN OUT')
    src, dst = args
    pf = PerfFile(src)
    types = {struct.unpack_from('<Q', pf.buf, off + 24)[0]
             for off in range(pf.attrs_off, pf.attrs_off + pf.attrs_size, pf.attr_size)}
    if len(types) != 1:
        sys.exit('dircopy: %s: attrs of %d sample_types' % (src, len(types)))
    in_sample, from_end = cpu_offsets(types.pop())

    tmp = dst + '.tmp'
    shutil.rmtree(tmp, ignore_errors=True)
    os.mkdir(tmp)
    main_out = open(os.path.join(tmp, 'data'), 'wb')
    main_out.write(pf.buf[:pf.data_off])
    files = {}          # cpu -> (file, Compressor or None)
    synthesized = True
    nrec = raw = 0
    for typ, rec in pf.plain_records():
        if typ == FINISHED_ROUND:
            continue
        nrec += 1
        if typ in (SAMPLE, CALLCHAIN_DEFERRED):
            synthesized = False
        if synthesized:
            main_out.write(rec)
            continue
        cpu = U32.unpack_from(rec, in_sample if typ == SAMPLE else len(rec) - from_end)[0]
        if cpu not in files:
            f = open(os.path.join(tmp, 'data.%d' % cpu), 'wb')
            files[cpu] = (f, Compressor(f) if compress else None)
        f, zc = files[cpu]
        raw += len(rec)
        if zc:
            zc.add(rec)
        else:
            f.write(rec)
    ratio_src = None
    for f, zc in files.values():
        if zc:
            zc.flush()
            ratio_src = ratio_src or zc
        f.close()
    feats = dict(pf.feats)
    feats[HEADER_DIR_FORMAT] = struct.pack('<Q', PERF_DIR_VERSION)
    feats.pop(HEADER_COMPRESSED, None)
    if ratio_src:
        feats[HEADER_COMPRESSED] = ratio_src.header_feature()
    pf.write_tail(main_out, pf.data_off, main_out.tell() - pf.data_off, feats)
    main_out.close()
    shutil.rmtree(dst, ignore_errors=True)
    os.rename(tmp, dst)
    print('dircopy: %s: %d records, %d bytes in %d files%s' %
          (dst, nrec, raw, len(files), ' (zstd)' if compress else ''))


if __name__ == '__main__':
    main()
