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

      Options of defer mode, to build the cases a stitcher must handle:
        --cut-user        (without --defer) rewrite the samples in place, each
                          user chain cut before its first marker-range entry
                          (>= PERF_CONTEXT_MAX), 0 entries kept: the reference
                          a stitched file must reproduce.  The records of
                          --defer always carry the user chain as the kernel's
                          unwinder writes it, every entry included.
        --share N         up to N consecutive samples of a thread with the same
                          user chain share one cookie and one record (one kernel
                          entry), whatever their event
        --record-pos P    'after' (default) the last sample of the entry,
                          'before' its first sample (earlier in the file)
        --record-delay NS record time = last sample time + NS (default 0)
        --record-cpu-shift K  the record was written on CPU (cpu + K) % ncpus
        --late-every N    every Nth record is written 1us before the last
                          sample of its entry (a late sample; less where
                          the entry's other samples or the thread's record
                          before are closer); not where --drop-every drops
                          the record.  A thread's records keep the order of
                          its entries, each before the next entry's first
                          sample, as the kernel writes them
        --dup-every N     every Nth record gets a duplicate copy
        --drop-every N    every Nth record is dropped, with --lost a
                          PERF_RECORD_LOST takes its place
        --bad-sample KIND:N  the Nth deferred sample (0-based; 'all': every
                          one) gets a malformed chain: cookie0, nocookie
                          (marker last), middle (one more marker first,
                          before the kernel part), unknownid (the ids of
                          its PERF_SAMPLE_READ values name no event: perf
                          counts it and delivers none of it)
        --bad-record-cookie0 N  the Nth record has cookie 0
      Each record prints "added type=22 offset=... cookie=... nr=... ips=..."
      as before; --print-groups adds "group cookie=... samples=OFF,OFF,...
      fate=... [bad=OFF,...]" for every entry (fate: record, record+dup,
      dropped, lost, cookie0; OFF: file offsets of its samples).

--grow-attr N makes every attr of the attrs section N bytes bigger, as a
perf with a newer struct perf_event_attr (e.g. 6.3+: config3) writes them.
The added bytes are --grow-attr-fill, but the first --grow-attr-known of
them, which are 0: the fields a newer perf writes that the perf under test
knows too (perf 7.2's attr is 144 bytes, 16 more than 6.1's: config3 and
config4, 0 for a software event), so that only the bytes past its struct
are unknown to it.

The data section size and the feature section offsets are fixed up.

--attr-size N only rewrites the attrs section with attrs of N bytes (the
size field too) and leaves everything else as it is: bigger ones get zero
bytes, smaller ones lose bytes that must be zero (an attr that has any of
them set is refused).  perf 7.2 writes 144-byte attrs; cut back to 6.1's
128 bytes (PERF_ATTR_SIZE_VER7: config3 and config4 dropped) a perf 6.1
reads the attrs of a file of it and then shows what it makes of the rest.

A pipe-mode input (perf record -o -) only supports appending: --feature N
adds a HEADER_FEATURE record with feature id N, --raw-type (>= 64) a bare
record.  Prints
one line per added record ("added type=22 offset=0x... cookie=0x... nr=N
ips=a,b,c") so tests can check the tools' output against it.

Why defer mode beside 'perf stitch --emulate', which makes the same kind
of file: the emulator and the stitcher are C code of this project on one
library (its kernel model and its engine); a stitching test fed only by
the emulator would share their mistakes.  This producer is independent of
both, written from the ABI alone, and says per kernel entry what it did
(--print-groups), so test-script-report, test-python and test-stitch-stats
judge the stitcher against it; test-emulate judges the emulator against
perf record's own in-place callchains.
"""

import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

# perfdata's names, as this helper spells them
PERF_RECORD_COMM, PERF_RECORD_SAMPLE = pd.COMM, pd.SAMPLE
PERF_RECORD_MISC_COMM_EXEC = pd.MISC_COMM_EXEC
PERF_RECORD_CALLCHAIN_DEFERRED = pd.CALLCHAIN_DEFERRED
PERF_RECORD_FINISHED_ROUND = pd.FINISHED_ROUND
PERF_RECORD_HEADER_FEATURE = 80
PERF_RECORD_MISC_USER = pd.MISC_USER

PERF_CONTEXT_USER = pd.CONTEXT_USER
PERF_CONTEXT_USER_DEFERRED = pd.CONTEXT_USER_DEFERRED

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = (
    pd.S_IP, pd.S_TID, pd.S_TIME, pd.S_ADDR, pd.S_READ, pd.S_CALLCHAIN, pd.S_ID, pd.S_CPU,
    pd.S_PERIOD, pd.S_STREAM_ID)
S_IDENTIFIER = pd.S_IDENTIFIER

HDR = struct.Struct('<IHH')


class Attr:
    def __init__(self, raw):
        (self.type, self.size, self.config, self.period, self.sample_type,
         self.read_format, self.flags) = struct.unpack_from('<IIQQQQQ', raw)
        self.sample_id_all = bool(self.flags >> 18 & 1)


def parse(path):
    """(the file, its attrs parsed, its records as bytearrays)"""
    try:
        f = pd.PerfFile(path)
    except ValueError as e:
        sys.exit(str(e))
    attrs = [Attr(raw) for raw, _ in f.attrs]
    if not attrs:
        sys.exit('no attrs')
    st = attrs[0].sample_type
    for a in attrs[1:]:
        if a.sample_type != st or a.read_format != attrs[0].read_format:
            sys.exit('mixed sample_type or read_format is not supported by this helper')
    return f, attrs, [bytearray(r) for r in f.records]


def id_trailer(st, v):
    """sample_id as the kernel appends it when sample_id_all is set."""
    return pd.sample_id(st, v['pid'], v['tid'], v['time'], v.get('id', v.get('identifier', 0)),
                        v.get('stream_id', 0), v.get('cpu', 0))


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


def id_time(rec, st):
    """The time of a non-sample record's sample_id trailer."""
    return pd.parse_sample_id(rec, st).get('time')


def set_chain(r, off, ips, chain):
    old_len = 8 + 8 * len(ips)
    new = (r[:off] + struct.pack('<Q', len(chain)) +
           struct.pack('<%dQ' % len(chain), *chain) + r[off + old_len:])
    struct.pack_into('<H', new, 6, len(new))
    return bytearray(new)


def lost_record(st, v, time, cpu):
    t = dict(v)
    t['time'] = time
    if cpu is not None:
        t['cpu'] = cpu
    body = struct.pack('<QQ', v.get('id', v.get('identifier', 0)), 1) + id_trailer(st, t)
    return bytearray(HDR.pack(2, 0, HDR.size + len(body)) + body)   # PERF_RECORD_LOST


def defer_mode(a, records, st, attrs):
    """--defer or --cut-user: see the description at the top."""
    ncpus = 1
    parsed = []         # per record: None or (v, off, ips, at, user)
    for r in records:
        if HDR.unpack_from(r, 0)[0] != PERF_RECORD_SAMPLE:
            parsed.append(None)
            continue
        v, off = pd.sample_fields(r, st, attrs[0].read_format)
        if off is None or v['callchain_off'] is None:
            sys.exit('samples need a callchain')
        ips = callchain(r, off)
        at, user = user_part(ips)
        ncpus = max(ncpus, v.get('cpu', 0) + 1)
        parsed.append((v, off, ips, at, user))

    if not a.defer:
        out = []
        for r, p in zip(records, parsed):
            if p is None or p[3] is None:
                out.append(r)
                continue
            v, off, ips, at, user = p
            out.append(set_chain(r, off, ips, ips[:at + 1] + pd.sanitize(user)))
        return out, [], []

    # exec comms end a kernel entry; FINISHED_ROUND starts a round
    execs = {}          # tid -> [(record index, time)]
    round_start = []    # per record: index of the first record of its round
    start = 0
    for i, r in enumerate(records):
        typ, misc = HDR.unpack_from(r, 0)[:2]
        round_start.append(start)
        if typ == PERF_RECORD_FINISHED_ROUND:
            start = i + 1
        if typ == PERF_RECORD_COMM and misc & PERF_RECORD_MISC_COMM_EXEC:
            pid, tid = struct.unpack_from('<II', r, HDR.size)
            t = id_time(r, st) if attrs[0].sample_id_all else None
            execs.setdefault(tid, []).append((i, t))

    # kernel entries: samples sharing one cookie, taken in a row (in time,
    # not file order: the buffers of two events or CPUs interleave) by one
    # thread with the same user chain and no exec in between
    order = [i for i, p in enumerate(parsed) if p is not None and p[3] is not None]
    if a.share > 1:
        order.sort(key=lambda i: (parsed[i][0]['time'], i))
    groups = []
    last = {}           # tid -> open group
    cnt = {}
    for i in order:
        v, off, ips, at, user = parsed[i]
        g = last.get(v['tid'])
        if (a.share > 1 and g is not None and g['user'] == user and
                len(g['samples']) < a.share and
                not any(g['time'] < et <= v['time']
                        for ei, et in execs.get(v['tid'], []) if et is not None)):
            g['samples'].append(i)
            g['time'] = v['time']
            continue
        cpu = v.get('cpu', 0)
        cnt[cpu] = cnt.get(cpu, -1) + 2
        g = {'cookie': pd.cookie(cpu, cnt[cpu]), 'samples': [i], 'user': user,
             'fate': 'record', 'time': v['time']}
        groups.append(g)
        last[v['tid']] = g

    bad, bad_all = {}, None
    for spec in a.bad_sample:
        kind, n = spec.split(':')
        if n == 'all':
            bad_all = kind
        else:
            bad[int(n)] = kind
    # A thread's kernel entries follow one another: an entry's record is
    # written at its return to user space, after the record of the entry
    # before and before the next entry's first sample, as the kernel does.
    next_first = {}     # group index -> first sample time of the tid's next
    prev_group = {}     # group index -> the tid's group before
    seen = {}
    for gi, g in enumerate(groups):
        tid = parsed[g['samples'][0]][0]['tid']
        if tid in seen:
            next_first[seen[tid]] = parsed[g['samples'][0]][0]['time']
            prev_group[gi] = seen[tid]
        seen[tid] = gi
    rec_time = {}       # group index -> its record's time
    nth_sample = 0
    before, after = {}, {}      # record index -> records to put there
    for gi, g in enumerate(groups):
        k = gi + 1
        # in time: the first and last sample; in the file: the first and last
        tfirst, tlast = g['samples'][0], g['samples'][-1]
        first, lastidx = min(g['samples']), max(g['samples'])
        v = dict(parsed[tlast][0])
        v['time'] = v['time'] + a.record_delay
        if gi in next_first and v['time'] >= next_first[gi]:
            v['time'] = max(next_first[gi] - 1, parsed[tlast][0]['time'])
        late = False
        # written at the return to user space, before a later exec
        for ei, et in execs.get(v['tid'], []):
            if et is not None and parsed[tlast][0]['time'] < et <= v['time']:
                v['time'] = max(et - 1, parsed[tlast][0]['time'])
                break
        dropped = a.drop_every and k % a.drop_every == 0
        # late only where the record is written: a lost record's notice
        # 1us before an entry's only sample cannot be told from a loss that
        # is not this entry's, so the engine would rightly say 'task exited'
        # after the entry's other samples and the record of the entry before
        tlast_time = parsed[tlast][0]['time']
        bound = max([parsed[i][0]['time'] for i in g['samples'][:-1]] +
                    [rec_time.get(prev_group.get(gi), 0)])
        if (a.late_every and k % a.late_every == 0 and not dropped and
                tlast_time - bound >= 2):
            # an NMI on the way out: the last sample comes (up to) 1us
            # after the record
            v['time'] = tlast_time - min(1000, (tlast_time - bound) // 2)
            late = True
        rec_time[gi] = v['time']
        cpu = v.get('cpu', 0)
        if a.record_cpu_shift and 'cpu' in v:
            v['cpu'] = (cpu + a.record_cpu_shift) % max(ncpus, 2)
        cookie = g['cookie']
        if a.bad_record_cookie0 is not None and gi == a.bad_record_cookie0:
            cookie = 0
            g['fate'] = 'cookie0'
        recs = [deferred_record(PERF_RECORD_CALLCHAIN_DEFERRED, cookie, g['user'],
                                id_trailer(st, v))]
        if a.dup_every and k % a.dup_every == 0:
            recs.append(bytearray(recs[0]))
            g['fate'] = 'record+dup'
        if dropped:
            if a.lost:
                recs = [lost_record(st, v, v['time'], v.get('cpu'))]
                g['fate'] = 'lost'
            else:
                recs = []
                g['fate'] = 'dropped'
        if late:
            # right before its late sample: never in a later round
            before.setdefault(tlast, []).extend(recs)
        elif a.record_pos == 'before':
            # earlier in the file, but not rounds before its last sample
            before.setdefault(max(first, round_start[lastidx]), []).extend(recs)
        else:
            after.setdefault(lastidx, []).extend(recs)

    out, added = [], []
    for i, r in enumerate(records):
        for rec in before.get(i, []):
            out.append(rec)
            if HDR.unpack_from(rec, 0)[0] == PERF_RECORD_CALLCHAIN_DEFERRED:
                added.append((len(out) - 1, rec, *rec_fields(rec)))
        p = parsed[i]
        if p is None or p[3] is None:
            out.append(r)
        else:
            v, off, ips, at, user = p
            g = group_of(groups, i)
            chain = ips[:at] + [PERF_CONTEXT_USER_DEFERRED, g['cookie']]
            kind = bad.get(nth_sample, bad_all)
            if kind == 'cookie0':
                chain = ips[:at] + [PERF_CONTEXT_USER_DEFERRED, 0]
            elif kind == 'nocookie':
                chain = ips[:at] + [PERF_CONTEXT_USER_DEFERRED]
            elif kind == 'middle':
                # a marker where the kernel part starts, another at the end
                chain = [PERF_CONTEXT_USER_DEFERRED] + ips[:at] + \
                    [PERF_CONTEXT_USER_DEFERRED, g['cookie']]
            elif kind == 'unknownid':
                if not v.get('read_id_offs'):
                    sys.exit('--bad-sample unknownid: the samples have no PERF_SAMPLE_READ ids')
            elif kind is not None:
                sys.exit('--bad-sample: unknown kind %s' % kind)
            nth_sample += 1
            new = set_chain(r, off, ips, chain)
            if kind == 'unknownid':
                for o in v['read_id_offs']:
                    struct.pack_into('<Q', new, o, 0xbad1dbad1d)
            out.append(new)
            g.setdefault('out', []).append(len(out) - 1)
            if kind:
                g.setdefault('bad_out', []).append(len(out) - 1)
        for rec in after.get(i, []):
            out.append(rec)
            if HDR.unpack_from(rec, 0)[0] == PERF_RECORD_CALLCHAIN_DEFERRED:
                added.append((len(out) - 1, rec, *rec_fields(rec)))
    return out, added, groups


def group_of(groups, i):
    # samples are few per group; index built lazily
    idx = getattr(group_of, 'idx', None)
    if idx is None or group_of.groups is not groups:
        idx = {s: g for g in groups for s in g['samples']}
        group_of.idx, group_of.groups = idx, groups
    return idx[i]


def rec_fields(rec):
    cookie, nr = struct.unpack_from('<QQ', rec, HDR.size)
    ips = list(struct.unpack_from('<%dQ' % nr, rec, HDR.size + 16))
    return cookie, nr, ips


def resize_attrs(a):
    """--attr-size: see the description at the top."""
    try:
        f = pd.PerfFile(a.input)
    except ValueError as e:
        sys.exit(str(e))
    buf, n = f.buf, a.attr_size
    if n < 64 or n % 8:
        sys.exit('--attr-size %d: not a multiple of 8 of at least 64' % n)
    attrs_end = f.attrs_off + f.attrs_size
    new_attrs = bytearray()
    for off in range(f.attrs_off, attrs_end, f.attr_size):
        attr = bytearray(buf[off:off + f.attr_size - 16])
        ids = bytearray(buf[off + f.attr_size - 16:off + f.attr_size])
        if n < len(attr):
            if any(attr[n:]):
                sys.exit('--attr-size %d: attr at %#x has non-zero bytes past %d' %
                         (n, off, n))
            del attr[n:]
        else:
            attr += bytes(n - len(attr))
        struct.pack_into('<I', attr, 4, n)
        new_attrs += attr + ids
    shift = len(new_attrs) - f.attrs_size
    # ids sections past the attrs move with what follows them
    for i in range(0, len(new_attrs), n + 16):
        o, sz = struct.unpack_from('<QQ', new_attrs, i + n)
        if o >= attrs_end:
            struct.pack_into('<QQ', new_attrs, i + n, o + shift, sz)
    head = bytearray(buf[:f.attrs_off])
    rest = bytearray(buf[attrs_end:])
    table = f.data_off + f.data_size - attrs_end
    for i in range(len(f.features)):
        o, sz = struct.unpack_from('<QQ', rest, table + 16 * i)
        if o >= attrs_end:
            struct.pack_into('<QQ', rest, table + 16 * i, o + shift, sz)
    struct.pack_into('<Q', head, 16, n + 16)                        # attr_size
    struct.pack_into('<QQ', head, 24, f.attrs_off, len(new_attrs))   # attrs
    struct.pack_into('<QQ', head, 40, f.data_off + shift, f.data_size)
    with open(a.output, 'wb') as fp:
        fp.write(head + new_attrs + rest)
    print('attrs resized from %d to %d bytes' % (f.attr_size - 16, n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('input')
    ap.add_argument('output')
    ap.add_argument('--defer', action='store_true', help='defer mode (see above)')
    ap.add_argument('--cut-user', action='store_true')
    ap.add_argument('--print-groups', action='store_true')
    ap.add_argument('--share', type=int, default=0)
    ap.add_argument('--record-pos', choices=['after', 'before'], default='after')
    ap.add_argument('--record-delay', type=int, default=0)
    ap.add_argument('--record-cpu-shift', type=int, default=0)
    ap.add_argument('--late-every', type=int, default=0)
    ap.add_argument('--dup-every', type=int, default=0)
    ap.add_argument('--drop-every', type=int, default=0)
    ap.add_argument('--lost', action='store_true')
    ap.add_argument('--bad-sample', action='append', default=[])
    ap.add_argument('--bad-record-cookie0', type=int, default=None)
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
    ap.add_argument('--grow-attr-known', type=int, default=0,
                    help='the first this many added attr bytes are 0 whatever '
                    '--grow-attr-fill says (fields the perf under test knows)')
    ap.add_argument('--raw-type', type=int, action='append', default=[],
                    help='also append a record of this type (8 bytes of payload '
                    'and, for types < 64, the sample_id trailer) at the end')
    ap.add_argument('--feature', type=int, action='append', default=[],
                    help='pipe-mode input only: append a HEADER_FEATURE record '
                    'with this feature id')
    ap.add_argument('--attr-size', type=int, default=0,
                    help='only rewrite the attrs to this size (see above)')
    a = ap.parse_args()
    if a.attr_size:
        return resize_attrs(a)

    raw = open(a.input, 'rb').read(16)
    if raw[:8] == b'PERFILE2' and struct.unpack_from('<Q', raw, 8)[0] == 16:
        return pipe_mode(a, open(a.input, 'rb').read())
    if a.feature:
        sys.exit('--feature needs a pipe-mode input (perf record -o -)')

    f, attrs, records = parse(a.input)
    buf, data_off, data_size = f.buf, f.data_off, f.data_size
    st = attrs[0].sample_type
    if not attrs[0].sample_id_all:
        sys.exit('attr has no sample_id_all')
    samples = [i for i, r in enumerate(records)
               if HDR.unpack_from(r, 0)[0] == PERF_RECORD_SAMPLE]
    if not samples:
        sys.exit('no samples in input')

    added = []          # (index in new list, record)
    out = []
    groups = []
    if a.defer and a.cut_user:
        sys.exit('--cut-user builds the reference: not with --defer')
    if a.defer or a.cut_user:
        out, added, groups = defer_mode(a, records, st, attrs)
    else:
        si = samples[a.after]
        v, off = pd.sample_fields(records[si], st)
        if a.ips is not None:
            user = [int(x, 0) for x in a.ips.split(',') if x]
        elif off is not None and v['callchain_off'] is not None:
            user = user_part(callchain(records[si], off))[1]
        else:
            user = []
        cpu = v.get('cpu', 0)
        out = list(records[:si + 1])
        for k in range(a.count):
            cookie = a.cookie if a.cookie is not None else pd.cookie(cpu, 2 * k + 1)
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
    attr_size, attrs_off, attrs_size = f.attr_size, f.attrs_off, f.attrs_size
    attrs_end = attrs_off + attrs_size
    new_attrs = bytearray()
    for i in range(attrs_size // attr_size):
        ent = bytearray(buf[attrs_off + i * attr_size:attrs_off + (i + 1) * attr_size])
        asz = struct.unpack_from('<I', ent, 4)[0]
        if a.grow_attr:
            struct.pack_into('<I', ent, 4, asz + a.grow_attr)
            known = min(a.grow_attr_known, a.grow_attr)
            ent[asz:asz] = bytes(known) + bytes([a.grow_attr_fill]) * (a.grow_attr - known)
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
    nfeat = len(f.features)
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
    for g in groups if a.print_groups else []:
        print('group cookie=%#x samples=%s fate=%s%s' % (
            g['cookie'], ','.join('%#x' % offsets[i] for i in g['out']), g['fate'],
            ' bad=' + ','.join('%#x' % offsets[i] for i in g['bad_out']) if 'bad_out' in g else ''))


if __name__ == '__main__':
    main()
