#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper: add hand-made records to a real perf.data file.

Reads a little-endian, file-mode perf.data (as written by `perf record`),
rewrites its data section and writes a new file with:

  append mode (default)
      after the sample number --after (default: the last sample), one
      PERF_RECORD_CALLCHAIN_DEFERRED (type 22) record per --count, carrying the
      user part of that sample's callchain, a cookie, and a sample_id trailer
      copied from the sample (pid/tid/time/id/cpu as the attr's sample_type
      asks).  --nr overrides the nr field and --cut shortens the record (to
      build malformed records),
      --type writes another record type with the same layout (to test unknown
      record types), --raw-type appends a small record of any type at the
      end of the data section.

  defer mode (--defer)
      every sample whose callchain has a user part is rewritten the way a
      6.19 kernel with defer_callchain writes it (user part replaced by
      PERF_CONTEXT_USER_DEFERRED, cookie) and a type-22 record with the user
      ips follows it.

--grow-attr N makes every attr of the attrs section N bytes bigger, as a
perf with a newer struct perf_event_attr (e.g. 6.3+: config3) writes them.

The data section size and the feature section offsets are fixed up.

A pipe-mode input (perf record -o -) only supports appending: --feature N
adds a HEADER_FEATURE record with feature id N, --raw-type (>= 64) a bare
record.  Prints
one line per added record ("added type=22 offset=0x... cookie=0x... nr=N
ips=a,b,c") so tests can check the tools' output against it.
"""

import argparse
import struct
import sys

PERF_RECORD_SAMPLE = 9
PERF_RECORD_CALLCHAIN_DEFERRED = 22
PERF_RECORD_FINISHED_ROUND = 68
PERF_RECORD_HEADER_FEATURE = 80

PERF_CONTEXT_MAX = (1 << 64) - 4095
PERF_CONTEXT_KERNEL = (1 << 64) - 128
PERF_CONTEXT_USER = (1 << 64) - 512
PERF_CONTEXT_USER_DEFERRED = (1 << 64) - 640

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID = 1, 2, 4, 8, 16, 32, 64, 128, 256, 512
S_IDENTIFIER = 1 << 16

HDR = struct.Struct('<IHH')
FILE_HDR = struct.Struct('<8sQQ QQ QQ QQ 4Q')

PERF_RECORD_MISC_USER = 2


class Attr:
    def __init__(self, raw):
        (self.type, self.size, self.config, self.period, self.sample_type,
         self.read_format, self.flags) = struct.unpack_from('<IIQQQQQ', raw)
        self.sample_id_all = bool(self.flags >> 18 & 1)


def parse(path):
    buf = open(path, 'rb').read()
    f = FILE_HDR.unpack_from(buf, 0)
    if f[0] != b'PERFILE2':
        sys.exit('%s: not a little-endian file-mode perf.data' % path)
    hdr_size, attr_size = f[1], f[2]
    attrs_off, attrs_size, data_off, data_size = f[3], f[4], f[5], f[6]
    attrs = []
    for i in range(attrs_size // attr_size):
        attrs.append(Attr(buf[attrs_off + i * attr_size:]))
    if not attrs:
        sys.exit('no attrs')
    st = attrs[0].sample_type
    for a in attrs[1:]:
        if a.sample_type != st:
            sys.exit('mixed sample_type is not supported by this helper')
    records = []
    pos, end = data_off, data_off + data_size
    while pos < end:
        typ, misc, size = HDR.unpack_from(buf, pos)
        if size < HDR.size:
            sys.exit('bad record at %#x' % pos)
        records.append(bytearray(buf[pos:pos + size]))
        pos += size
    return buf, hdr_size, data_off, data_size, attrs, records


def sample_fields(rec, st):
    """Parse the fixed leading fields of a SAMPLE record."""
    v = {}
    off = HDR.size

    def u64():
        nonlocal off
        x = struct.unpack_from('<Q', rec, off)[0]
        off += 8
        return x
    if st & S_IDENTIFIER:
        v['identifier'] = u64()
    if st & S_IP:
        v['ip'] = u64()
    if st & S_TID:
        v['pid'], v['tid'] = struct.unpack_from('<II', rec, off)
        off += 8
    if st & S_TIME:
        v['time'] = u64()
    if st & S_ADDR:
        u64()
    if st & S_ID:
        v['id'] = u64()
    if st & S_STREAM_ID:
        v['stream_id'] = u64()
    if st & S_CPU:
        v['cpu'] = struct.unpack_from('<I', rec, off)[0]
        off += 8
    if st & S_PERIOD:
        u64()
    if st & S_READ:
        return v, None
    v['callchain_off'] = off if st & S_CALLCHAIN else None
    return v, off


def id_trailer(st, v):
    """sample_id as the kernel appends it when sample_id_all is set."""
    out = b''
    if st & S_TID:
        out += struct.pack('<II', v['pid'], v['tid'])
    if st & S_TIME:
        out += struct.pack('<Q', v['time'])
    if st & S_ID:
        out += struct.pack('<Q', v.get('id', v.get('identifier', 0)))
    if st & S_STREAM_ID:
        out += struct.pack('<Q', v.get('stream_id', 0))
    if st & S_CPU:
        out += struct.pack('<II', v.get('cpu', 0), 0)
    if st & S_IDENTIFIER:
        out += struct.pack('<Q', v.get('identifier', v.get('id', 0)))
    return out


def callchain(rec, off):
    nr = struct.unpack_from('<Q', rec, off)[0]
    return list(struct.unpack_from('<%dQ' % nr, rec, off + 8))


def user_part(ips):
    """Entries after the last PERF_CONTEXT_USER marker (none if absent)."""
    for i in range(len(ips) - 1, -1, -1):
        if ips[i] == PERF_CONTEXT_USER:
            return i, ips[i + 1:]
    return None, []


def deferred_record(typ, cookie, ips, trailer, nr=None, cut=0):
    if nr is None:
        nr = len(ips)
    body = struct.pack('<QQ', cookie, nr) + struct.pack('<%dQ' % len(ips), *ips) + trailer
    if cut:
        body = body[:-cut]
    size = HDR.size + len(body)
    if size > 0xffff:
        sys.exit('record too large')
    return bytearray(HDR.pack(typ, PERF_RECORD_MISC_USER, size) + body)


def make_cookie(cpu, cnt):
    # merged layout, little-endian host: (u64)cnt << 32 | (cpu + 1), cnt odd
    return (cnt << 32) | (cpu + 1)


def pipe_mode(a, buf):
    """Pipe-mode input (perf record -o -): only appends are supported."""
    out = bytearray(buf)
    for feat in a.feature:
        body = struct.pack('<Q', feat) + b'\0' * 8
        rec = HDR.pack(PERF_RECORD_HEADER_FEATURE, 0, HDR.size + len(body)) + body
        print('added type=%d offset=%#x size=%d feat=%d' % (PERF_RECORD_HEADER_FEATURE,
                                                          len(out), len(rec), feat))
        out += rec
    for t in a.raw_type:
        if t < 64:
            sys.exit('--raw-type < 64 needs a file-mode input')
        rec = HDR.pack(t, 0, 16) + b'\0' * 8
        print('added type=%d offset=%#x size=%d' % (t, len(out), len(rec)))
        out += rec
    with open(a.output, 'wb') as fp:
        fp.write(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('input')
    ap.add_argument('output')
    ap.add_argument('--defer', action='store_true', help='defer mode (see above)')
    ap.add_argument('--after', type=int, default=-1,
                    help='append after this sample (0-based, -1 = last)')
    ap.add_argument('--count', type=int, default=1)
    ap.add_argument('--type', type=int, default=PERF_RECORD_CALLCHAIN_DEFERRED)
    ap.add_argument('--cookie', type=lambda s: int(s, 0), default=None)
    ap.add_argument('--nr', type=lambda s: int(s, 0), default=None,
                    help='write this nr instead of the real one (malformed)')
    ap.add_argument('--cut', type=int, default=0,
                    help='drop this many bytes from the end of each record (malformed)')
    ap.add_argument('--ips', default=None,
                    help='comma-separated ips instead of the sample\'s user chain')
    ap.add_argument('--grow-attr', type=int, default=0,
                    help='make each attr in the attrs section this many bytes '
                    'bigger (multiple of 8), as a newer perf writes them')
    ap.add_argument('--grow-attr-fill', type=int, default=0,
                    help='byte value for the added attr bytes (default 0)')
    ap.add_argument('--raw-type', type=int, action='append', default=[],
                    help='also append a record of this type (8 bytes of payload '
                    'and, for types < 64, the sample_id trailer) at the end')
    ap.add_argument('--feature', type=int, action='append', default=[],
                    help='pipe-mode input only: append a HEADER_FEATURE record '
                    'with this feature id')
    a = ap.parse_args()

    raw = open(a.input, 'rb').read(16)
    if raw[:8] == b'PERFILE2' and struct.unpack_from('<Q', raw, 8)[0] == 16:
        return pipe_mode(a, open(a.input, 'rb').read())
    if a.feature:
        sys.exit('--feature needs a pipe-mode input (perf record -o -)')

    buf, hdr_size, data_off, data_size, attrs, records = parse(a.input)
    st = attrs[0].sample_type
    if not attrs[0].sample_id_all:
        sys.exit('attr has no sample_id_all')
    samples = [i for i, r in enumerate(records)
               if HDR.unpack_from(r, 0)[0] == PERF_RECORD_SAMPLE]
    if not samples:
        sys.exit('no samples in input')

    added = []          # (index in new list, record)
    out = []
    cnt = {}
    if a.defer:
        for r in records:
            typ = HDR.unpack_from(r, 0)[0]
            if typ != PERF_RECORD_SAMPLE:
                out.append(r)
                continue
            v, off = sample_fields(r, st)
            if off is None or v['callchain_off'] is None:
                sys.exit('samples need a callchain and no PERF_SAMPLE_READ')
            ips = callchain(r, off)
            at, user = user_part(ips)
            if at is None:
                out.append(r)
                continue
            cpu = v.get('cpu', 0)
            cnt[cpu] = cnt.get(cpu, -1) + 2
            cookie = make_cookie(cpu, cnt[cpu])
            chain = ips[:at] + [PERF_CONTEXT_USER_DEFERRED, cookie]
            old_len = 8 + 8 * len(ips)
            new = (r[:off] + struct.pack('<Q', len(chain)) +
                   struct.pack('<%dQ' % len(chain), *chain) + r[off + old_len:])
            struct.pack_into('<H', new, 6, len(new))
            out.append(bytearray(new))
            rec = deferred_record(PERF_RECORD_CALLCHAIN_DEFERRED, cookie, user,
                                  id_trailer(st, v))
            out.append(rec)
            added.append((len(out) - 1, rec, cookie, len(user), user))
    else:
        si = samples[a.after]
        v, off = sample_fields(records[si], st)
        if a.ips is not None:
            user = [int(x, 0) for x in a.ips.split(',') if x]
        elif off is not None and v['callchain_off'] is not None:
            user = user_part(callchain(records[si], off))[1]
        else:
            user = []
        cpu = v.get('cpu', 0)
        out = list(records[:si + 1])
        for k in range(a.count):
            cookie = a.cookie if a.cookie is not None else make_cookie(cpu, 2 * k + 1)
            if a.cookie is not None:
                cookie += k
            nr = a.nr if a.nr is not None else len(user)
            rec = deferred_record(a.type, cookie, user, id_trailer(st, v), nr, a.cut)
            out.append(rec)
            added.append((len(out) - 1, rec, cookie, nr, user))
        out += records[si + 1:]
        for t in a.raw_type:
            # 8 bytes of payload, then the sample_id trailer as the kernel
            # would append it (only kernel types < 64 get one)
            body = struct.pack('<Q', 0x5a5a5a5a5a5a5a5a)
            if t < 64:
                body += id_trailer(st, v)
            rec = bytearray(HDR.pack(t, PERF_RECORD_MISC_USER, HDR.size + len(body)) + body)
            out.append(rec)
            added.append((len(out) - 1, rec, None, None, []))

    data = b''.join(bytes(r) for r in out)
    delta = len(data) - data_size

    # --grow-attr: rewrite the attrs section with bigger attrs (as a newer
    # perf with a bigger struct perf_event_attr writes them)
    attr_size = FILE_HDR.unpack_from(buf, 0)[2]
    attrs_off, attrs_size = FILE_HDR.unpack_from(buf, 0)[3:5]
    attrs_end = attrs_off + attrs_size
    new_attrs = bytearray()
    for i in range(attrs_size // attr_size):
        ent = bytearray(buf[attrs_off + i * attr_size:attrs_off + (i + 1) * attr_size])
        asz = struct.unpack_from('<I', ent, 4)[0]
        if a.grow_attr:
            struct.pack_into('<I', ent, 4, asz + a.grow_attr)
            ent[asz:asz] = bytes([a.grow_attr_fill]) * a.grow_attr
        ids_at = len(ent) - 16
        o, sz = struct.unpack_from('<QQ', ent, ids_at)
        new_attrs += ent
    shift = len(new_attrs) - attrs_size
    if shift:
        for i in range(attrs_size // attr_size):
            ids_at = (i + 1) * (attr_size + a.grow_attr) - 16
            o, sz = struct.unpack_from('<QQ', new_attrs, ids_at)
            if o >= attrs_end:
                struct.pack_into('<QQ', new_attrs, ids_at, o + shift, sz)

    # new file: header .. data, then the feature section table and sections
    old_feat_off = data_off + data_size
    head = bytearray(buf[:attrs_off]) + new_attrs + buf[attrs_end:data_off]
    struct.pack_into('<Q', head, 16, attr_size + a.grow_attr)       # attr_size
    struct.pack_into('<QQ', head, 24, attrs_off, len(new_attrs))     # attrs
    struct.pack_into('<QQ', head, 40, data_off + shift, len(data))   # data
    feats = struct.unpack_from('<4Q', buf, 8 + 8 + 8 + 16 * 3)
    nfeat = sum(bin(x).count('1') for x in feats)
    tail = bytearray(buf[old_feat_off:])
    for i in range(nfeat):
        o, s = struct.unpack_from('<QQ', tail, 16 * i)
        if o >= old_feat_off:
            o += delta + shift
        struct.pack_into('<QQ', tail, 16 * i, o, s)
    offsets = []
    pos = data_off + shift
    for r in out:
        offsets.append(pos)
        pos += len(r)
    with open(a.output, 'wb') as fp:
        fp.write(head + data + tail)

    for idx, rec, cookie, nr, user in added:
        typ, misc, size = HDR.unpack_from(rec, 0)
        line = 'added type=%d offset=%#x size=%d' % (typ, offsets[idx], size)
        if cookie is not None:
            line += ' cookie=%#x nr=%d ips=%s' % (cookie, nr, ','.join('%#x' % x for x in user))
        print(line)


if __name__ == '__main__':
    main()
