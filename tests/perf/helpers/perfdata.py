# SPDX-License-Identifier: GPL-2.0
"""Test-only perf.data codec (stdlib only): the one reader and writer of
perf.data that the tests share.

PerfFile reads a little-endian file-mode perf.data as written (header,
attrs with their ids, records with their offsets, feature sections);
record_offsets() walks the records of a file or a pipe as far as they
parse.  Writer writes small file-mode perf.data files record by record, in exactly the
order the caller asks for, so tests can build the situations that are hard
to provoke with a real recording (a deferred record before its sample, a
lost record, tid reuse, ...).  Not a general tool: only what the scenario
tests need.

Layout written (what perf 6.1's perf_session__read_header() expects):

    perf_file_header (104 bytes, magic PERFILE2)
    ids of every attr (u64 each)
    attrs section: per event a 128-byte perf_event_attr (PERF_ATTR_SIZE_VER7,
                   the size perf 6.1 knows) + perf_file_section of its ids
    data section:  the records, in call order
    feature section table + feature data, right after the data section
                   (perf takes feat_offset = data.offset + data.size)

byteswap=True writes the file as a big-endian 64-bit host would: every
integer big-endian (the magic too: the bytes read "2ELIFREP"), the attr
bitfield word with each byte bit-reversed (GCC allocates bitfields from the
most significant bit on big-endian targets; perf undoes it with
swap_bitfield(), without a bswap), u32 pairs (pid/tid, cpu/res) as two
big-endian u32s.  perf 6.1 detects such a file by the swapped magic and
swaps every record with the per-type swap ops of util/session.c.  HOSTNAME
is always among the features: a swapped file without it makes perf guess
the feature bitmap is 32-bit and fall back to "BUILD_ID only".

Records carry sample_id (sample_id_all is always set), built from the
sample_type of the attr passed.  Attrs may have different sample_types
(the sample_id trailers then differ in size), as long as each includes
PERF_SAMPLE_IDENTIFIER when there is more than one event (as perf record
does), so perf finds the event of any record.
"""

import struct

# enum perf_event_type
MMAP, LOST, COMM, EXIT, FORK, SAMPLE, MMAP2 = 1, 2, 3, 4, 7, 9, 10
CALLCHAIN_DEFERRED = 22
FINISHED_ROUND = 68

MISC_KERNEL, MISC_USER = 1, 2
MISC_COMM_EXEC = 1 << 13

# sample_type bits
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID = 1, 2, 4, 8, 16, 32, 64, 128, 256, 512
S_IDENTIFIER = 1 << 16

# perf_event_attr flag bits (the u64 at attr offset 40)
A_DISABLED, A_MMAP, A_COMM, A_TASK, A_SAMPLE_ID_ALL = 0, 8, 9, 13, 18
A_MMAP2, A_COMM_EXEC = 23, 24
A_DEFER_CALLCHAIN, A_DEFER_OUTPUT = 38, 39

PERF_TYPE_SOFTWARE = 1
SW_CPU_CLOCK, SW_TASK_CLOCK, SW_DUMMY = 0, 1, 9

CONTEXT_MAX = (1 << 64) - 4095
CONTEXT_KERNEL = (1 << 64) - 128
CONTEXT_USER = (1 << 64) - 512
CONTEXT_USER_DEFERRED = (1 << 64) - 640


def sanitize(ips):
    """What a stitched chain keeps of a deferred user trace (stitching.md,
    Sanitising): the prefix before the first value >= PERF_CONTEXT_MAX.  A 0
    is kept: the kernel's unwinder stores 0 return addresses like any other.
    The one copy of the rule for every test helper."""
    n = 0
    while n < len(ips) and ips[n] < CONTEXT_MAX:
        n += 1
    return list(ips[:n])

# feature ids (enum HEADER_*)
F_HOSTNAME, F_OSRELEASE, F_VERSION, F_ARCH, F_NRCPUS = 3, 4, 5, 6, 7
F_EVENT_DESC = 12

ATTR_SIZE = 128         # PERF_ATTR_SIZE_VER7: perf 6.1's sizeof(perf_event_attr)
HEADER_SIZE = 104


def cookie(cpu, cnt, big_endian=False):
    """Merged 6.19 layout: union { struct { u32 cpu; u32 cnt; }; u64 id; }
    with cpu = smp_processor_id() + 1 and cnt odd; the u64 value depends on
    the host's byte order."""
    assert cnt & 1, 'the kernel keeps the low bit of cnt set'
    if big_endian:
        return ((cpu + 1) << 32) | cnt
    return (cnt << 32) | (cpu + 1)


# the sample_id trailer's fields, in the kernel's order (sample_id_all)
SAMPLE_ID_BITS = (S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER)


def sample_id(st, pid=0, tid=0, time=0, id_=0, stream_id=0, cpu=0, endian='<'):
    """The sample_id trailer the kernel appends to a non-sample record of an
    event of sample_type st (sample_id_all)."""
    out = b''
    if st & S_TID:
        out += struct.pack(endian + 'II', pid, tid)
    if st & S_TIME:
        out += struct.pack(endian + 'Q', time)
    if st & S_ID:
        out += struct.pack(endian + 'Q', id_)
    if st & S_STREAM_ID:
        out += struct.pack(endian + 'Q', stream_id)
    if st & S_CPU:
        out += struct.pack(endian + 'II', cpu, 0)
    if st & S_IDENTIFIER:
        out += struct.pack(endian + 'Q', id_)
    return out


def parse_sample_id(rec, st):
    """The fields of a little-endian non-sample record's sample_id trailer:
    {pid, tid, time, id, stream_id, cpu, identifier}, those st has."""
    size = struct.unpack_from('<H', rec, 6)[0]
    off = size - 8 * sum(1 for bit in SAMPLE_ID_BITS if st & bit)
    v = {}
    for bit in SAMPLE_ID_BITS:
        if not st & bit:
            continue
        if bit == S_TID:
            v['pid'], v['tid'] = struct.unpack_from('<II', rec, off)
        elif bit == S_CPU:
            v['cpu'] = struct.unpack_from('<I', rec, off)[0]
        else:
            v[{S_TIME: 'time', S_ID: 'id', S_STREAM_ID: 'stream_id',
               S_IDENTIFIER: 'identifier'}[bit]] = struct.unpack_from('<Q', rec, off)[0]
        off += 8
    return v


# read_format bits
R_TOTAL_TIME_ENABLED, R_TOTAL_TIME_RUNNING, R_ID, R_GROUP, R_LOST = 1, 2, 4, 8, 16


def sample_fields(rec, st, read_format=None):
    """The fixed leading fields of a little-endian SAMPLE record of
    sample_type st: ({identifier, ip, pid, tid, time, id, stream_id, cpu,
    callchain_off}, the offset of the callchain, or None past a READ of
    an unknown read_format).  Past a READ, v['read_id_offs']: where the
    ids of its values are (read_format with PERF_FORMAT_ID)."""
    v = {}
    off = 8

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
        if read_format is None:
            return v, None
        nr = u64() if read_format & R_GROUP else 1
        if not read_format & R_GROUP:
            u64()                               # the value
        for bit in (R_TOTAL_TIME_ENABLED, R_TOTAL_TIME_RUNNING):
            if read_format & bit:
                u64()
        v['read_id_offs'] = []
        for _ in range(nr):
            if read_format & R_GROUP:
                u64()                           # the value
            if read_format & R_ID:
                v['read_id_offs'].append(off)
                u64()
            if read_format & R_LOST:
                u64()
    v['callchain_off'] = off if st & S_CALLCHAIN else None
    return v, off


def _bitrev8(b):
    return int('{:08b}'.format(b)[::-1], 2)


class Attr:
    """One event. `name` goes to HEADER_EVENT_DESC."""

    def __init__(self, name, config, sample_type, period=1000, flags=(),
                 idx=0, ncpus=4):
        self.name, self.config = name, config
        self.sample_type, self.period = sample_type, period
        self.flags = set(flags) | {A_SAMPLE_ID_ALL}
        # one id per CPU, as perf record opens one fd per CPU
        self.ids = [1000 * (idx + 1) + cpu for cpu in range(ncpus)]

    def id_for(self, cpu):
        return self.ids[cpu % len(self.ids)]


class Writer:
    def __init__(self, byteswap=False, ncpus=4, hostname='perf-scenarios',
                 event_desc=True):
        self.be = byteswap
        self.e = '>' if byteswap else '<'
        self.ncpus = ncpus
        self.hostname = hostname
        self.event_desc = event_desc
        self.attrs = []
        self.recs = []          # (bytes, info dict) in file order

    # ------------------------------------------------------------ helpers
    def p(self, fmt, *v):
        return struct.pack(self.e + fmt, *v)

    def add_attr(self, name, config, sample_type, period=1000, flags=()):
        a = Attr(name, config, sample_type, period, flags, len(self.attrs),
                 self.ncpus)
        if self.attrs:
            assert all(x.sample_type & S_IDENTIFIER
                       for x in self.attrs + [a]), 'several events need IDENTIFIER'
        self.attrs.append(a)
        return a

    def _sample_id(self, attr, pid, tid, time, cpu):
        return sample_id(attr.sample_type, pid, tid, time, attr.id_for(cpu), 0, cpu, self.e)

    def _add(self, typ, misc, body, info):
        size = 8 + len(body)
        hdr = self.p('IHH', typ, misc, size)
        info = dict(info, type=typ, size=size)
        self.recs.append((hdr + body, info))
        return info

    def _str(self, s):
        b = s.encode() + b'\0'
        return b + b'\0' * (-len(b) % 8)

    # ------------------------------------------------------------ records
    def comm(self, attr, pid, tid, comm, time, cpu=0, exec_=False):
        body = self.p('II', pid, tid) + self._str(comm) + \
            self._sample_id(attr, pid, tid, time, cpu)
        return self._add(COMM, MISC_COMM_EXEC if exec_ else 0, body,
                         dict(pid=pid, tid=tid, time=time, comm=comm))

    def mmap2(self, attr, pid, tid, start, length, pgoff, filename, time,
              cpu=0, maj=0, min_=0, ino=0, prot=5, flags=2):
        # prot PROT_READ|PROT_EXEC, flags MAP_PRIVATE.  Note: perf 6.1's
        # perf_event__mmap2_swap() does not swap prot/flags; it does not
        # use them for file-backed maps either.
        body = self.p('IIQQQIIQQII', pid, tid, start, length, pgoff, maj,
                      min_, ino, 0, prot, flags) + self._str(filename) + \
            self._sample_id(attr, pid, tid, time, cpu)
        return self._add(MMAP2, MISC_USER, body,
                         dict(pid=pid, tid=tid, time=time, filename=filename))

    def kernel_mmap(self, attr, start, length, pgoff, time,
                    name='[kernel.kallsyms]_text'):
        """The kernel map perf record synthesizes: pid -1, pgoff = address
        of the ref-reloc symbol (_text), so a --kallsyms file with _text at
        that address gives a relocation delta of 0."""
        body = self.p('IIQQQ', 0xffffffff, 0, start, length, pgoff) + \
            self._str(name) + self._sample_id(attr, 0xffffffff, 0, time, 0)
        return self._add(MMAP, MISC_KERNEL, body, dict(time=time))

    def fork(self, attr, pid, ppid, tid, ptid, time, cpu=0):
        body = self.p('IIIIQ', pid, ppid, tid, ptid, time) + \
            self._sample_id(attr, pid, tid, time, cpu)
        return self._add(FORK, 0, body, dict(pid=pid, tid=tid, time=time))

    def exit(self, attr, pid, tid, time, cpu=0, ppid=1, ptid=1):
        body = self.p('IIIIQ', pid, ppid, tid, ptid, time) + \
            self._sample_id(attr, pid, tid, time, cpu)
        return self._add(EXIT, 0, body, dict(pid=pid, tid=tid, time=time))

    def lost(self, attr, count, time, cpu=0):
        body = self.p('QQ', attr.id_for(cpu), count) + \
            self._sample_id(attr, 0xffffffff, 0xffffffff, time, cpu)
        return self._add(LOST, 0, body, dict(time=time, cpu=cpu, lost=count))

    def sample(self, attr, pid, tid, time, cpu, ip, chain, period=None,
               misc=MISC_KERNEL):
        st, p = attr.sample_type, self.p
        body = b''
        if st & S_IDENTIFIER:
            body += p('Q', attr.id_for(cpu))
        if st & S_IP:
            body += p('Q', ip)
        if st & S_TID:
            body += p('II', pid, tid)
        if st & S_TIME:
            body += p('Q', time)
        if st & S_ID:
            body += p('Q', attr.id_for(cpu))
        if st & S_CPU:
            body += p('II', cpu, 0)
        if st & S_PERIOD:
            body += p('Q', attr.period if period is None else period)
        if st & S_CALLCHAIN:
            body += p('Q', len(chain)) + b''.join(p('Q', x) for x in chain)
        return self._add(SAMPLE, misc, body,
                         dict(pid=pid, tid=tid, time=time, cpu=cpu))

    def callchain_deferred(self, attr, pid, tid, time, cpu, cookie_, ips,
                           nr=None, size=None):
        """PERF_RECORD_CALLCHAIN_DEFERRED.  nr and size override the real
        values, to write malformed records."""
        nr = len(ips) if nr is None else nr
        body = self.p('QQ', cookie_, nr) + b''.join(self.p('Q', x) for x in ips) + \
            self._sample_id(attr, pid, tid, time, cpu)
        if size is not None:
            body = body[:size - 8]
        return self._add(CALLCHAIN_DEFERRED, MISC_USER, body,
                         dict(pid=pid, tid=tid, time=time, cpu=cpu,
                              cookie=cookie_, nr=nr, ips=list(ips)))

    def finished_round(self):
        return self._add(FINISHED_ROUND, 0, b'', {})

    def raw(self, data, info=None):
        """Bytes written as they are (a record cut short, garbage)."""
        self.recs.append((bytes(data), dict(info or {}, type=None, size=len(data))))

    # ------------------------------------------------------------ file
    def _attr_bytes(self, a, clear_defer):
        flags = 0
        for b in a.flags:
            if clear_defer and b in (A_DEFER_CALLCHAIN, A_DEFER_OUTPUT):
                continue
            flags |= 1 << b
        fl = struct.pack('<Q', flags)
        if self.be:
            fl = bytes(_bitrev8(x) for x in fl)
        out = self.p('IIQQQQ', PERF_TYPE_SOFTWARE, ATTR_SIZE, a.config,
                     a.period, a.sample_type, 0) + fl
        out += b'\0' * (ATTR_SIZE - len(out))  # the rest is all zero
        assert len(out) == ATTR_SIZE
        return out

    def _string_feat(self, s):
        b = s.encode() + b'\0'
        b += b'\0' * (-len(b) % 64)             # do_write_string(): NAME_ALIGN 64
        return self.p('I', len(b)) + b

    def _features(self, clear_defer):
        f = {
            F_HOSTNAME: self._string_feat(self.hostname),
            F_OSRELEASE: self._string_feat('6.19.0-scenario'),
            F_VERSION: self._string_feat('6.19.0'),
            F_ARCH: self._string_feat('x86_64'),
            F_NRCPUS: self.p('II', self.ncpus, self.ncpus),
        }
        if self.event_desc:
            # perf record copies every attr here too; perf 6.1 rejects the
            # whole section when the defer bits are set (perf_attr_check())
            d = self.p('II', len(self.attrs), ATTR_SIZE)
            for a in self.attrs:
                d += self._attr_bytes(a, clear_defer) + self.p('I', len(a.ids))
                d += self._string_feat(a.name)
                d += b''.join(self.p('Q', i) for i in a.ids)
            f[F_EVENT_DESC] = d
        return f

    def write(self, path, clear_defer=False):
        """Write the file; returns the records' info dicts with their file
        offsets ('offset').  clear_defer drops the defer bits from every
        copy of the attrs (what a stitched file must do)."""
        p = self.p
        ids_off = HEADER_SIZE
        ids = b''
        id_secs = []
        for a in self.attrs:
            id_secs.append((ids_off + len(ids), 8 * len(a.ids)))
            ids += b''.join(p('Q', i) for i in a.ids)
        attrs_off = ids_off + len(ids)
        attrs = b''
        for a, (o, s) in zip(self.attrs, id_secs):
            attrs += self._attr_bytes(a, clear_defer) + p('QQ', o, s)
        data_off = attrs_off + len(attrs)
        infos = []
        pos = data_off
        for rec, info in self.recs:
            infos.append(dict(info, offset=pos))
            pos += len(rec)
        data = b''.join(r for r, _ in self.recs)

        feats, hdr = self.tail(clear_defer, attrs_off, len(attrs), data_off, len(data))
        with open(path, 'wb') as fp:
            fp.write(hdr + ids + attrs + data + feats)
        return infos

    def tail(self, clear_defer, attrs_off, attrs_len, data_off, data_len):
        """(the feature sections, written right after the data, and the
        file header) of a file whose attrs and data are where they say."""
        p = self.p
        feats = self._features(clear_defer)
        order = sorted(feats)
        table_off = data_off + data_len
        fdata_off = table_off + 16 * len(order)
        table, fdata = b'', b''
        for fid in order:
            table += p('QQ', fdata_off + len(fdata), len(feats[fid]))
            fdata += feats[fid]
        bitmap = [0, 0, 0, 0]
        for fid in order:
            bitmap[fid // 64] |= 1 << (fid % 64)

        magic = b'PERFILE2' if not self.be else b'PERFILE2'[::-1]
        hdr = magic + p('QQ', HEADER_SIZE, ATTR_SIZE + 16)
        hdr += p('QQ', attrs_off, attrs_len) + p('QQ', data_off, data_len)
        hdr += p('QQ', 0, 0)                    # event_types: unused
        hdr += b''.join(p('Q', w) for w in bitmap)
        assert len(hdr) == HEADER_SIZE
        return table + fdata, hdr


# ---------------------------------------------------------------- reading
FILE_HEADER = struct.Struct('<8sQQ QQ QQ QQ 32s')
PIPE_HEADER_SIZE = 16


class PerfFile:
    """A little-endian file-mode perf.data, as written: the header's fields,
    attrs [(attr bytes without the ids section, ids bytes)], records [bytes]
    with their file offsets, features {id: section bytes}."""

    def __init__(self, path):
        self.path = path
        buf = self.buf = open(path, 'rb').read()
        if len(buf) < HEADER_SIZE:
            raise ValueError('%s: shorter than a perf.data header' % path)
        (magic, hsize, self.attr_size, self.attrs_off, self.attrs_size, self.data_off,
         self.data_size, _, _, self.features_bitmap) = FILE_HEADER.unpack_from(buf, 0)
        if magic != b'PERFILE2' or hsize != HEADER_SIZE:
            raise ValueError('%s: not a little-endian file-mode perf.data' % path)
        self.attrs = []
        for off in range(self.attrs_off, self.attrs_off + self.attrs_size, self.attr_size):
            ids_off, ids_size = struct.unpack_from('<QQ', buf, off + self.attr_size - 16)
            self.attrs.append((buf[off:off + self.attr_size - 16],
                               buf[ids_off:ids_off + ids_size]))
        self.records, self.offsets = [], []
        pos, end = self.data_off, self.data_off + self.data_size
        while pos < end:
            size = struct.unpack_from('<H', buf, pos + 6)[0]
            if size < 8:
                raise ValueError('%s: record of size %d at %#x' % (path, size, pos))
            self.records.append(buf[pos:pos + size])
            self.offsets.append(pos)
            pos += size
        self.features = {}
        bits = int.from_bytes(self.features_bitmap, 'little')
        table = self.data_off + self.data_size
        for fid in range(256):
            if bits >> fid & 1:
                off, size = struct.unpack_from('<QQ', buf, table)
                self.features[fid] = buf[off:off + size]
                table += 16


def record_offsets(buf):
    """Offsets of the records of a file or pipe (bytes), as far as they
    parse; [] for anything but a little-endian perf.data."""
    if buf[:8] != b'PERFILE2' or len(buf) < PIPE_HEADER_SIZE:
        return []
    hsize = struct.unpack_from('<Q', buf, 8)[0]
    if hsize == PIPE_HEADER_SIZE:
        pos, end = PIPE_HEADER_SIZE, len(buf)
    elif len(buf) >= HEADER_SIZE:
        pos, size = struct.unpack_from('<QQ', buf, 40)
        end = min(pos + size, len(buf))
    else:
        return []
    out = []
    while pos + 8 <= end:
        size = struct.unpack_from('<H', buf, pos + 6)[0]
        if size < 8:
            break
        out.append(pos)
        pos += size
    return out
