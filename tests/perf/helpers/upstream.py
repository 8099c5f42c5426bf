#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper: a perf.data file rewritten in the layouts upstream perf
(6.16 and later) writes, record for record the same data.

usage: upstream.py IN.data OUT [options]

IN is a little-endian file-mode perf.data as perf 6.1 writes it (what
perfdata.Writer and perf record make).  OUT holds the same records:

  --pipe            a pipe stream as perf_event__synthesize_for_pipe()
                    writes it: pipe header, one PERF_RECORD_HEADER_ATTR per
                    attr with its ids after attr.size bytes, the features
                    as PERF_RECORD_HEADER_FEATURE records (those perf
                    sends in a pipe) and an end marker (its id is the
                    writer's HEADER_LAST_FEATURE: 32 for 6.1, 35 with
                    --newer-features), the tracing data, then the data.
  --attr-size N     every attr (attrs section, HEADER_EVENT_DESC, pipe
                    attrs) N bytes with attr.size = N, the tail zero:
                    136 (PERF_ATTR_SIZE_VER8, 6.3+), 144 (VER9), or any
                    multiple of 8 above 64
  --compress        the data as PERF_RECORD_COMPRESSED2 records made with
                    libzstd as record__pushfn() and
                    zstd_compress_stream_to_records() make them: one zstd
                    stream for the whole session, flushed (not ended) at the
                    end of each record; each push compresses --push bytes of
                    the data (cut anywhere, as a ring buffer wraps inside an
                    event), in records of at most --cap bytes of zstd data
                    (upstream: 65536 - 16 - 1), each padded to 8 bytes;
                    FINISHED_ROUND records and the first --plain records
                    stay uncompressed (perf record writes those itself);
                    HEADER_COMPRESSED (zstd, the mmap length --mmap-len)
                    is added
  --newer-records   a BPF_METADATA (84), a SCHEDSTAT_CPU (85) and a
                    SCHEDSTAT_DOMAIN (86) record ahead of the data
  --newer-features  HEADER_CPU_DOMAIN_INFO (32), HEADER_E_MACHINE (33),
                    HEADER_CLN_SIZE (34) and a feature 40 nobody knows yet
  --wrap-size       the last COMPRESSED2 record gets the size of the 6.16
                    writer bug: its data grown past 64 KiB with stored
                    (incompressible) bytes and header.size wrapped to 16 bits
  --tracing-data-size 12|16  (--pipe) the PERF_RECORD_HEADER_TRACING_DATA
                    record of IN's HEADER_TRACING_DATA: 12 bytes as perf
                    6.1 writes it, 16 (with a u32 pad) as perf since
                    August 2025 does

Without options OUT is IN byte for byte (file) or the plain 6.1 pipe.
Prints one line per COMPRESSED2 record: "compressed2 offset=0x... size=N
data_size=N".
"""

import argparse
import ctypes
import ctypes.util
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

HEADER_ATTR, HEADER_TRACING_DATA, HEADER_FEATURE = 64, 66, 80
COMPRESSED2, BPF_METADATA, SCHEDSTAT_CPU, SCHEDSTAT_DOMAIN = 83, 84, 85, 86
F_TRACING_DATA, F_EVENT_DESC, F_COMPRESSED = 1, 12, 27
# FEAT_OPN in header.c: features never sent in a pipe (their readers read
# the file, not the record): TRACING_DATA, BUILD_ID, BRANCH_STACK,
# AUXTRACE, STAT, CACHE, DIR_FORMAT, HYBRID_TOPOLOGY
NOT_IN_PIPES = (1, 2, 15, 18, 19, 20, 24, 30)
F_CPU_DOMAIN_INFO, F_E_MACHINE, F_CLN_SIZE, F_NOBODY_KNOWS = 32, 33, 34, 40
LAST_FEATURE_61, LAST_FEATURE_UPSTREAM = 32, 35
COMPRESSED2_CAP = 65536 - 16 - 1        # upstream's max_record_size
ZSTD_E_FLUSH = 1
EM_X86_64 = 62


def resize_attr(attr, size):
    """attr (a perf_event_attr) as `size` bytes, attr.size = size."""
    if size is None:
        return attr
    assert size >= 64 and size % 8 == 0, size
    out = bytearray(attr[:size].ljust(size, b'\0'))
    if any(attr[size:]):
        sys.exit('attr has non-zero bytes past %d' % size)
    struct.pack_into('<I', out, 4, size)
    return bytes(out)


def event_desc(data, size):
    """HEADER_EVENT_DESC with each attr at `size` bytes."""
    if size is None:
        return data
    nr, old = struct.unpack_from('<II', data, 0)
    out, pos = bytearray(struct.pack('<II', nr, size)), 8
    for _ in range(nr):
        out += resize_attr(data[pos:pos + old], size)
        pos += old
        nr_ids, slen = struct.unpack_from('<II', data, pos)
        end = pos + 8 + slen + 8 * nr_ids
        out += data[pos:end]
        pos = end
    return bytes(out)


# ---------------------------------------------------------------- zstd
class ZstdStream:
    """One zstd compression stream, as perf record keeps per mmap."""

    class Buf(ctypes.Structure):
        _fields_ = [('ptr', ctypes.c_void_p), ('size', ctypes.c_size_t),
                    ('pos', ctypes.c_size_t)]

    def __init__(self, level=1):
        name = ctypes.util.find_library('zstd') or 'libzstd.so.1'
        z = self.z = ctypes.CDLL(name)
        z.ZSTD_createCStream.restype = ctypes.c_void_p
        z.ZSTD_initCStream.argtypes = [ctypes.c_void_p, ctypes.c_int]
        z.ZSTD_compressStream2.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_int]
        z.ZSTD_compressStream2.restype = ctypes.c_size_t
        z.ZSTD_isError.argtypes = [ctypes.c_size_t]
        self.cs = z.ZSTD_createCStream()
        z.ZSTD_initCStream(self.cs, level)

    def push(self, data, cap):
        """Compress `data`, flushing; returns the zstd data of each record
        (at most `cap` bytes each) in order."""
        src = ctypes.create_string_buffer(bytes(data), len(data))
        inb = self.Buf(ctypes.cast(src, ctypes.c_void_p), len(data), 0)
        out, dst = [], ctypes.create_string_buffer(cap)
        while True:
            outb = self.Buf(ctypes.cast(dst, ctypes.c_void_p), cap, 0)
            left = self.z.ZSTD_compressStream2(self.cs, ctypes.byref(outb),
                                               ctypes.byref(inb), ZSTD_E_FLUSH)
            if self.z.ZSTD_isError(left):
                sys.exit('ZSTD_compressStream2 failed')
            if outb.pos:
                out.append(dst.raw[:outb.pos])
            if inb.pos == inb.size and left == 0:
                return out


def compressed2(zdata):
    """PERF_RECORD_COMPRESSED2: header, data_size, data, zero padding."""
    size = 16 + len(zdata)
    pad = -size % 8
    return struct.pack('<IHHQ', COMPRESSED2, 0, size + pad, len(zdata)) + zdata + b'\0' * pad


def compress(records, push, cap, plain):
    """The data as perf record -z writes it."""
    z = ZstdStream()
    out, pending = list(records[:plain]), b''

    def flush():
        nonlocal pending
        for i in range(0, len(pending), push):
            out.extend(compressed2(d) for d in z.push(pending[i:i + push], cap))
        pending = b''
    for r in records[plain:]:
        if struct.unpack_from('<I', r, 0)[0] == pd.FINISHED_ROUND:
            flush()
            out.append(r)
        else:
            pending += r
    flush()
    return out


def wrap_last(records):
    """The 6.16 writer bug on the last COMPRESSED2 record: data past 64 KiB
    (a stored zstd block of zeros the stream still decodes) and the u16
    header.size wrapped."""
    i = max(k for k, r in enumerate(records) if struct.unpack_from('<I', r, 0)[0] == COMPRESSED2)
    data = records[i][16:16 + struct.unpack_from('<Q', records[i], 8)[0]]
    # an uncompressed zstd block: 3-byte header (last=0, type raw, size)
    blk = 70000
    data += struct.pack('<I', blk << 3)[:3] + b'\0' * blk
    size = 16 + len(data)
    size += -size % 8
    records[i] = struct.pack('<IHHQ', COMPRESSED2, 0, size & 0xffff, len(data)) + data
    return records


# ---------------------------------------------------------------- newer data
def sample_id_size(attr):
    st = struct.unpack_from('<Q', attr, 24)[0]
    return 8 * sum(1 for b in (pd.S_TID, pd.S_TIME, pd.S_ID, pd.S_STREAM_ID, pd.S_CPU,
                               pd.S_IDENTIFIER) if st & b)


def newer_records(attr):
    """One of each record type perf after 6.1 writes into perf.data."""
    name = b'bpf_prog_d3adbeef_handler'.ljust(512, b'\0')
    entry = b'bpf_metadata_version'.ljust(64, b'\0') + b'2.1'.ljust(256, b'\0')
    bpf = name + struct.pack('<Q', 1) + entry + b'\0' * sample_id_size(attr)
    cpu = struct.pack('<QIHH', 1000, 1, 17, 0) + struct.pack('<9Q', *range(1, 10))
    dom = struct.pack('<QIHH', 1000, 1, 17, 0) + struct.pack('<24Q', *range(24))
    return [struct.pack('<IHH', t, 0, 8 + len(b)) + b
            for t, b in ((BPF_METADATA, bpf), (SCHEDSTAT_CPU, cpu), (SCHEDSTAT_DOMAIN, dom))]


def string_feat(s):
    b = s.encode() + b'\0'
    b += b'\0' * (-len(b) % 64)
    return struct.pack('<I', len(b)) + b


def newer_features(ncpus=4):
    dom = struct.pack('<II', 17, 1)             # schedstat version, max domains
    for cpu in range(ncpus):
        dom += struct.pack('<II', cpu, 1) + struct.pack('<I', 0)
        dom += string_feat('SMT') + string_feat('%x' % (1 << cpu)) + string_feat(str(cpu))
    return {F_CPU_DOMAIN_INFO: dom, F_E_MACHINE: struct.pack('<II', EM_X86_64, 0),
            F_CLN_SIZE: struct.pack('<I', 64), F_NOBODY_KNOWS: struct.pack('<Q', 0x600d)}


# ---------------------------------------------------------------- writing
def write_file(path, f, attrs, records, feats):
    ids_off = pd.HEADER_SIZE
    ids, secs = b'', []
    for attr, i in attrs:
        secs.append((ids_off + len(ids), len(i)))
        ids += i
    attr_size = len(attrs[0][0]) + 16
    attrs_off = ids_off + len(ids)
    abytes = b''.join(a + struct.pack('<QQ', o, s) for (a, _), (o, s) in zip(attrs, secs))
    data_off = attrs_off + len(abytes)
    data = b''.join(records)
    order = sorted(feats)
    table_off = data_off + len(data)
    fdata_off = table_off + 16 * len(order)
    table, fdata = b'', b''
    for fid in order:
        table += struct.pack('<QQ', fdata_off + len(fdata), len(feats[fid]))
        fdata += feats[fid]
    bits = sum(1 << fid for fid in order)
    hdr = b'PERFILE2' + struct.pack('<QQ', pd.HEADER_SIZE, attr_size)
    hdr += struct.pack('<6Q', attrs_off, len(abytes), data_off, len(data), 0, 0)
    hdr += bits.to_bytes(32, 'little')
    with open(path, 'wb') as fp:
        fp.write(hdr + ids + abytes + data + table + fdata)
    return data_off


def write_pipe(path, attrs, records, feats, last_feature, td_size):
    out = bytearray(b'PERFILE2' + struct.pack('<Q', 16))
    for attr, ids in attrs:
        body = attr + ids
        out += struct.pack('<IHH', HEADER_ATTR, 0, 8 + len(body)) + body
    for fid in sorted(feats):
        if fid in NOT_IN_PIPES:
            continue
        body = struct.pack('<Q', fid) + feats[fid]
        out += struct.pack('<IHH', HEADER_FEATURE, 0, 8 + len(body)) + body
    out += struct.pack('<IHHQ', HEADER_FEATURE, 0, 16, last_feature)
    if F_TRACING_DATA in feats:
        td = feats[F_TRACING_DATA]
        aligned = len(td) + (-len(td) % 8)
        if td_size == 12:
            out += struct.pack('<IHHI', HEADER_TRACING_DATA, 0, 12, aligned)
        else:
            out += struct.pack('<IHHII', HEADER_TRACING_DATA, 0, 16, aligned, 0)
        out += td + b'\0' * (aligned - len(td))
    data_off = len(out)
    out += b''.join(records)
    with open(path, 'wb') as fp:
        fp.write(out)
    return data_off


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('input')
    ap.add_argument('output')
    ap.add_argument('--pipe', action='store_true')
    ap.add_argument('--attr-size', type=int)
    ap.add_argument('--compress', action='store_true')
    ap.add_argument('--push', type=int, default=4096)
    ap.add_argument('--cap', type=int, default=COMPRESSED2_CAP)
    ap.add_argument('--plain', type=int, default=0)
    ap.add_argument('--mmap-len', type=int, default=528384)
    ap.add_argument('--newer-records', action='store_true')
    ap.add_argument('--newer-features', action='store_true')
    ap.add_argument('--wrap-size', action='store_true')
    ap.add_argument('--tracing-data-size', type=int, choices=(12, 16), default=12)
    a = ap.parse_args()

    try:
        f = pd.PerfFile(a.input)
    except ValueError as e:
        sys.exit(str(e))
    attrs = [(resize_attr(x, a.attr_size), i) for x, i in f.attrs]
    feats = dict(f.features)
    if F_EVENT_DESC in feats:
        feats[F_EVENT_DESC] = event_desc(feats[F_EVENT_DESC], a.attr_size)
    records = list(f.records)
    if a.newer_records:
        records = newer_records(attrs[0][0]) + records
    if a.compress:
        records = compress(records, a.push, a.cap, a.plain)
        # comp_ver, comp_type (1: zstd), comp_level, comp_ratio, comp_mmap_len
        feats[F_COMPRESSED] = struct.pack('<5I', 1, 1, 1, 4, a.mmap_len)
        if a.wrap_size:
            records = wrap_last(records)
    last = LAST_FEATURE_61
    if a.newer_features:
        feats.update(newer_features())
        last = LAST_FEATURE_UPSTREAM
    if a.pipe:
        off = write_pipe(a.output, attrs, records, feats, last, a.tracing_data_size)
    else:
        off = write_file(a.output, f, attrs, records, feats)
    for r in records:
        if struct.unpack_from('<I', r, 0)[0] == COMPRESSED2:
            print('compressed2 offset=%#x size=%d data_size=%d' %
                  (off, struct.unpack_from('<H', r, 6)[0], struct.unpack_from('<Q', r, 8)[0]))
        off += len(r)


if __name__ == '__main__':
    main()
