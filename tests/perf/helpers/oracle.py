#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The order-free oracle of deferred user callchains: what the kernel says
each sample's user stack is, found without any streaming, window or file
order, and the checks of every perf reading mode against it.

Rule (ABI.md, "Seen on a real kernel"): a deferred sample's user stack is
the PERF_RECORD_CALLCHAIN_DEFERRED record with the sample's tid and cookie,
anywhere in the file.  Its verdict:

    stitched         the record's ips up to the first value >= PERF_CONTEXT_MAX
    exec             the record exists, but the tid exec'd between the sample
                     and the record (the record holds the new program)
    unwind_failed    the record exists and holds no usable entry
    no_record        there is no such record in the file; the engine may
                     call it record_lost, task_exited or stream_ended

Every sample is identified by (event id, tid, cpu, time, kernel part), a key
that survives perf stitch -o and perf's output; samples with equal keys are
compared as multisets.

Usage (stdlib and Debian's python3-zstandard for -z files; run with
/usr/bin/python3):

    oracle.py verdicts DATA              one line per deferred sample
    oracle.py counts DATA                the verdict counts, one per line
    oracle.py features DATA              what the kernel wrote that a stitcher
                                         must handle, counted: samples,
                                         records, verdicts, late samples
                                         (record earlier in time), records
                                         earlier in the file, records after
                                         their task's EXIT, records written on
                                         another CPU than the cookie's, the
                                         longest wait, the latest late sample
    oracle.py stitched DATA OUT.data     perf stitch -o's OUT against DATA
    oracle.py script DATA SCRIPT.txt     `perf script -F event,tid,cpu,time,
                                         ip,sym,dso --ns --max-stack 4096` of DATA
    oracle.py script DATA SCRIPT.txt --file-order
                                         the same of perf script --show-round-events
    oracle.py python DATA DUMP.txt       perf script -s python-deferred-dump.py
    oracle.py summary DATA SUMMARY.txt   a "deferred callchains: ..." line
                                         (perf script's stderr, perf report's
                                         header or --stats)

Each check prints "oracle: MODE: N samples agree" and exits 0, or prints up
to 10 disagreements and exits 1.  ORACLE_CACHE=DIR keeps each recording's
verdicts there (a file per recording, its size and mtime in the name), so
that the checks of one recording read it once.
"""

import collections
import json
import os
import pickle
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

COMPRESSED, COMPRESSED2 = 81, 83
HEADER_ATTR = 64
NO_RECORD = ('record_lost', 'task_exited', 'stream_ended')


class Fail(Exception):
    pass


def read_attr(buf, off):
    """(sample_type, sample_id_all, size) of the perf_event_attr at off."""
    size = struct.unpack_from('<I', buf, off + 4)[0]
    sample_type = struct.unpack_from('<Q', buf, off + 24)[0]
    flags = struct.unpack_from('<Q', buf, off + 40)[0]
    return sample_type, bool(flags >> pd.A_SAMPLE_ID_ALL & 1), size


class Recording:
    """The records of a little-endian perf.data file or pipe stream, -z
    ones decompressed, with each event's sample_type found by its id."""

    def __init__(self, path):
        self.path = path
        # perf record --threads: a directory, the header and perf's own
        # records in DIR/data, each reader thread's in DIR/data.N
        is_dir = os.path.isdir(path)
        buf = open(os.path.join(path, 'data') if is_dir else path, 'rb').read()
        if buf[:8] != b'PERFILE2':
            raise Fail('%s: not a little-endian perf.data' % path)
        self.types = {}         # id -> sample_type
        self.default_type = None
        hsize = struct.unpack_from('<Q', buf, 8)[0]
        if hsize == pd.PIPE_HEADER_SIZE:
            start, end = hsize, len(buf)
        else:
            attr_size, attrs_off, attrs_size, start, size = \
                struct.unpack_from('<QQQQQ', buf, 16)
            end = start + size
            for off in range(attrs_off, attrs_off + attrs_size, attr_size):
                st, _, _ = read_attr(buf, off)
                ids_off, ids_size = struct.unpack_from('<QQ', buf, off + attr_size - 16)
                self._add_attr(st, struct.unpack_from('<%dQ' % (ids_size // 8), buf, ids_off))
        self.events = []        # (file offset, record bytes)
        self._zstd = None
        self._walk(buf, start, end, outer=True)
        # a directory's files one after the other, as if one file: the
        # offsets go on from file to file (records earlier "in the file")
        for name in sorted(os.listdir(path) if is_dir else [],
                           key=lambda n: int(n[5:]) if n[5:].isdigit() else -1):
            if not re.fullmatch(r'data\.[0-9]+', name):
                continue
            more = open(os.path.join(path, name), 'rb').read()
            self._zstd = None   # each file its own zstd stream (-z)
            self._walk(more, 0, len(more), outer=True, base=end)
            end += len(more)

    def _add_attr(self, st, ids):
        if self.default_type is None:
            self.default_type = st
        for i in ids:
            self.types[i] = st

    def _walk(self, buf, pos, end, outer, base=0):
        while pos + 8 <= end:
            typ, _, size = struct.unpack_from('<IHH', buf, pos)
            if size < 8 or pos + size > end:
                if outer:
                    raise Fail('%s: bad record size %d at offset %#x' % (self.path, size,
                                                                         base + pos))
                return pos
            rec = buf[pos:pos + size]
            if typ == HEADER_ATTR:
                st, _, asize = read_attr(rec, 8)
                n = (size - 8 - asize) // 8
                self._add_attr(st, struct.unpack_from('<%dQ' % n, rec, 8 + asize))
            elif typ in (COMPRESSED, COMPRESSED2):
                self._decompress(rec, typ, pos)
            else:
                self.events.append((base + pos if outer else -1, rec))
            pos += size
        return pos

    def _decompress(self, rec, typ, pos):
        try:
            import zstandard
        except ImportError:
            raise Fail('%s: -z recording: needs python3-zstandard' % self.path)
        if self._zstd is None:
            self._zstd = zstandard.ZstdDecompressor().decompressobj()
            self._tail = b''
        if typ == COMPRESSED2:
            data = rec[16:16 + struct.unpack_from('<Q', rec, 8)[0]]
        else:
            data = rec[8:]
        out = self._tail + self._zstd.decompress(data)
        used = self._walk(out, 0, len(out), outer=False)
        self._tail = out[used:]

    def sample_type(self, rec, is_sample):
        """The sample_type of the event that wrote rec."""
        if len(set(self.types.values())) <= 1:
            return self.default_type
        if is_sample:
            ident = struct.unpack_from('<Q', rec, 8)[0]
        else:
            ident = struct.unpack_from('<Q', rec, len(rec) - 8)[0]
        if ident == 0:          # perf's own synthesized records: the first event's
            return self.default_type
        if ident not in self.types:
            raise Fail('%s: record of unknown id %d' % (self.path, ident))
        return self.types[ident]


def split_chain(chain):
    """(kernel part, cookie) of a deferred chain, else (chain, None).  The
    marker counts only before any PERF_CONTEXT_USER (an in-place user
    stack may hold any value)."""
    for i, ip in enumerate(chain):
        if ip == pd.CONTEXT_USER:
            break
        if ip == pd.CONTEXT_USER_DEFERRED:
            if i == len(chain) - 2:
                return chain[:i], chain[i + 1]
            break
    return chain, None


class Sample:
    __slots__ = ('key', 'tid', 'time', 'cpu', 'cookie', 'chain', 'kernel',
                 'verdict', 'user', 'offset', 'maps')


class Maps:
    """A process's user mappings as perf keeps them, in time order (perf
    reads in time order, the file is not): at a given time the latest
    mapping over an address wins; a child starts with its parent's
    (PERF_RECORD_FORK)."""

    def __init__(self, parent=None, fork_time=0):
        # the parent's as they were at the fork, looked up when needed: the
        # file may hold the parent's mmaps after the child's FORK
        self.parent, self.fork_time = parent, fork_time
        self.maps = []

    def add(self, time, start, length, pgoff):
        self.maps.append((time, start, start + length, pgoff))

    def offsets(self, ip):
        """What ip could be printed as with any mapping of it, at any time."""
        out = {ip - start + pgoff for _, start, end, pgoff in self.maps if start <= ip < end}
        return out | (self.parent.offsets(ip) if self.parent is not None else set())

    def find(self, ip, time):
        """(map time, start, pgoff) of the latest mapping of ip at time."""
        best = None
        for t, start, end, pgoff in self.maps:
            if start <= ip < end and t <= time and (best is None or t >= best[0]):
                best = (t, start, pgoff)
        if best is None and self.parent is not None:
            best = self.parent.find(ip, min(time, self.fork_time))
        return best


def map_ip(sample, ip):
    """What perf script prints for a user address: its offset in the file
    of the mapping holding it when the sample was taken (map->map_ip()),
    else the address."""
    best = sample.maps.find(ip, sample.time) if sample.maps else None
    return ip - best[1] + best[2] if best else ip


def parse_samples(rec_file, with_maps=False, exits=None):
    """The samples (all of them), records {(tid, cookie): [(time, ips,
    index in the file, cpu)]} and exec times {tid: [time]} of a recording;
    with_maps: each sample with its process's mappings at that point of
    the file; exits: a dict to fill with {tid: [EXIT time]}."""
    samples, records, execs = [], collections.defaultdict(list), collections.defaultdict(list)
    procs = {}
    for index, (offset, rec) in enumerate(rec_file.events):
        typ, misc = struct.unpack_from('<IH', rec, 0)
        if exits is not None and typ == pd.EXIT:
            tid = struct.unpack_from('<I', rec, 16)[0]
            exits.setdefault(tid, []).append(struct.unpack_from('<Q', rec, 24)[0])
        if with_maps and typ in (pd.MMAP, pd.MMAP2):
            pid = struct.unpack_from('<I', rec, 8)[0]
            start, length, pgoff = struct.unpack_from('<QQQ', rec, 16)
            time = pd.parse_sample_id(rec, rec_file.sample_type(rec, False)).get('time', 0)
            procs.setdefault(pid, Maps()).add(time, start, length, pgoff)
        elif with_maps and typ == pd.FORK:
            pid, ppid = struct.unpack_from('<II', rec, 8)
            if pid != ppid:     # samples of the child may come first in the file
                child = procs.setdefault(pid, Maps())
                child.parent = procs.setdefault(ppid, Maps())
                child.fork_time = struct.unpack_from('<Q', rec, 24)[0]
        if typ == pd.SAMPLE:
            st = rec_file.sample_type(rec, True)
            v, off = pd.sample_fields(rec, st)
            if off is None or v.get('callchain_off') is None:
                continue
            nr = struct.unpack_from('<Q', rec, off)[0]
            chain = list(struct.unpack_from('<%dQ' % nr, rec, off + 8))
            s = Sample()
            s.tid, s.time, s.cpu = v.get('tid'), v.get('time'), v.get('cpu')
            s.offset = index
            s.chain = chain
            s.maps = procs.setdefault(v['pid'], Maps()) if with_maps else None
            s.kernel, s.cookie = split_chain(chain)
            s.key = (v.get('identifier', v.get('id')), s.tid, s.cpu, s.time,
                     tuple(s.kernel) if s.cookie is not None else None)
            samples.append(s)
        elif typ == pd.CALLCHAIN_DEFERRED:
            st = rec_file.sample_type(rec, False)
            cookie_, nr = struct.unpack_from('<QQ', rec, 8)
            ips = struct.unpack_from('<%dQ' % nr, rec, 24)
            sid = pd.parse_sample_id(rec, st)
            records[(sid['tid'], cookie_)].append((sid['time'], list(ips), index,
                                                   sid.get('cpu')))
        elif typ == pd.COMM and misc & pd.MISC_COMM_EXEC:
            st = rec_file.sample_type(rec, False)
            tid = struct.unpack_from('<I', rec, 12)[0]
            execs[tid].append(pd.parse_sample_id(rec, st)['time'])
    return samples, records, execs


def judge(path, with_maps=False, features=None):
    """The deferred samples of path, each with its verdict and user stack;
    features: a Counter to count what the kernel wrote into (see main).
    Kept in $ORACLE_CACHE, when set, for the next check of the same file."""
    cache = os.environ.get('ORACLE_CACHE')
    if not cache or features is not None:
        return judge_file(path, with_maps, features)
    files = [path] if os.path.isfile(path) else \
        [os.path.join(path, f) for f in sorted(os.listdir(path))]
    stats = [os.stat(f) for f in files]
    name = '%s-%d-%d-%d.pickle' % (os.path.basename(os.path.abspath(path)),
                                   sum(st.st_size for st in stats),
                                   max(st.st_mtime_ns for st in stats), with_maps)
    kept = os.path.join(cache, name)
    try:
        with open(kept, 'rb') as f:
            return pickle.load(f)
    except FileNotFoundError:
        pass
    judged = judge_file(path, with_maps)
    with open(kept + '.tmp', 'wb') as f:
        pickle.dump(judged, f, pickle.HIGHEST_PROTOCOL)
    os.replace(kept + '.tmp', kept)
    return judged


def judge_file(path, with_maps=False, features=None):
    exits = {} if features is not None else None
    samples, records, execs = parse_samples(Recording(path), with_maps, exits)
    if features is not None:
        features['samples'] = len(samples)
        features['records'] = sum(len(r) for r in records.values())
        features['records_after_exit'] = sum(
            1 for (tid, _), recs in records.items() for t, _, _, _ in recs
            if any(e < t for e in exits.get(tid, ())))
        # written on another CPU than the cookie's ((cnt << 32) | (cpu + 1))
        features['records_cross_cpu'] = sum(
            1 for (_, c), recs in records.items() for _, _, _, cpu in recs
            if cpu is not None and (c & 0xffffffff) - 1 != cpu)
    out = []
    for s in samples:
        if s.cookie is None:
            continue
        recs = records.get((s.tid, s.cookie))
        s.user = None
        if not recs:
            s.verdict = 'no_record'
            out.append(s)
            continue
        rtime, ips, rindex, _ = recs[0]
        if features is not None:
            features['late_samples'] += rtime < s.time
            features['records_earlier_in_file'] += rindex < s.offset
            features['max_wait_ns'] = max(features['max_wait_ns'], rtime - s.time)
            features['max_late_ns'] = max(features['max_late_ns'], s.time - rtime)
        for other in recs[1:]:
            if other[1] != ips:
                raise Fail('%s: two records of tid %d cookie %#x with other ips' %
                           (path, s.tid, s.cookie))
        lo, hi = (s.time, rtime) if s.time <= rtime else (rtime, s.time)
        if any(lo <= e < hi for e in execs.get(s.tid, ())):
            s.verdict = 'exec'     # the record shows another program than the sample
        elif not pd.sanitize(ips):
            s.verdict = 'unwind_failed'
        else:
            s.verdict = 'stitched'
            s.user = pd.sanitize(ips)
        out.append(s)
    return out


def counts(judged):
    c = collections.Counter(s.verdict for s in judged)
    c['deferred'] = len(judged)
    return c


def agrees(verdict, reason):
    """Does an engine's orphan reason agree with the oracle's verdict?"""
    if verdict == 'no_record':
        return reason in NO_RECORD
    return verdict == reason


def differ(w, h):
    """Where two texts part: their common start cut short, then each rest."""
    n = 0
    while n < min(len(w), len(h)) and w[n] == h[n]:
        n += 1
    start = n - 40 if n > 60 else 0
    return '"%s%s" where the oracle has "%s"' % ('...' if start else '', h[start:n + 80],
                                                 w[start:n + 80])


def same(want, seen):
    """Does a text seen agree with the oracle's?  Orphans agree when their
    reasons do (agrees()) and whatever follows the reason (';' ...) is equal."""
    if want == seen:
        return True
    if not (want.startswith('orphan ') and seen.startswith('orphan ')):
        return False
    w_reason, _, w_rest = want[7:].partition(';')
    s_reason, _, s_rest = seen[7:].partition(';')
    return agrees(w_reason, s_reason) and w_rest == s_rest


def mismatches(want, seen):
    """The (oracle, seen) pairs of two equally long lists of texts of the
    samples of one key that disagree, each list taken in sorted order."""
    return [(w, h) for w, h in zip(sorted(want), sorted(seen)) if not same(w, h)]


def report(mode, bad, n):
    if bad:
        print('oracle: %s: %d of %d samples disagree' % (mode, len(bad), n))
        for line in bad[:10]:
            print('   ', line)
        return 1
    print('oracle: %s: %d samples agree' % (mode, n))
    return 0


def by_key(judged):
    out = collections.defaultdict(list)
    for s in judged:
        out[s.key].append(s)
    return out


def expected_text(s):
    if s.verdict == 'stitched':
        return 'stitched ' + ' '.join('%x' % ip for ip in s.user)
    return 'orphan ' + s.verdict


# ------------------------------------------------------------ perf stitch -o

LOST_MAP = re.compile(rb'^\[user stack lost: ([^\]]*)\]')


def check_stitched(data, out_path):
    """perf stitch -o: the same samples, each with the standard chain
    kernel..., PERF_CONTEXT_USER, user... or a frame in a "[user stack
    lost: <reason>]" map."""
    judged = judge(data)
    expect = by_key(judged)
    out = Recording(out_path)
    lost_maps = []
    got = collections.defaultdict(list)
    for _, rec in out.events:
        typ = struct.unpack_from('<I', rec, 0)[0]
        if typ == pd.MMAP2:
            start, length = struct.unpack_from('<QQ', rec, 16)
            m = LOST_MAP.match(rec[72:])
            if m:
                lost_maps.append((start, start + length,
                                  m.group(1).decode().replace(' ', '_')))
        elif typ == pd.CALLCHAIN_DEFERRED:
            raise Fail('%s: a PERF_RECORD_CALLCHAIN_DEFERRED is left' % out_path)
    samples, _, _ = parse_samples(out)
    for s in samples:
        if s.cookie is not None:
            raise Fail('%s: a deferred chain is left' % out_path)
        chain = s.chain
        if pd.CONTEXT_USER not in chain:
            continue
        u = chain.index(pd.CONTEXT_USER)
        kernel, user = chain[:u], chain[u + 1:]
        key = (s.key[0], s.tid, s.cpu, s.time, tuple(kernel))
        if key not in expect:
            continue        # a sample unwound in place
        text = 'stitched ' + ' '.join('%x' % ip for ip in user)
        if len(user) == 1:
            for lo, hi, reason in lost_maps:
                if lo <= user[0] < hi:
                    text = 'orphan ' + reason
        got[key].append(text)
    return compare('perf stitch -o', judged, expect, got)


def compare(mode, judged, expect, got):
    """Per key, the multiset of expected texts against the one seen."""
    bad = []
    for key, ss in expect.items():
        want = [expected_text(s) for s in ss]
        have = got.get(key, [])
        if len(want) != len(have):
            bad.append('tid %d time %d: %d samples expected, %d seen' %
                       (key[1], key[3], len(want), len(have)))
            continue
        for w, h in mismatches(want, have):
            bad.append('tid %d time %d cookie %#x: seen %s' %
                       (key[1], key[3], ss[0].cookie, differ(w, h)))
    return report(mode, bad, len(judged))


# ------------------------------------------------------------ perf script

SCRIPT_HEADER = re.compile(r'^\s*(-?\d+)\s+(?:\[(\d+)\]\s+)?(\d+)\.(\d+):')
SCRIPT_FRAME = re.compile(r'^\s+([0-9a-f]+)\s*(.*)$')
SCRIPT_LOST = re.compile(r'\[user stack lost: ([^\]]*)\]')


def script_samples(lines):
    """(tid, cpu, time, [frame lines]) per sample of perf script output
    (-F event,tid,cpu,time,ip,sym,dso --ns): a header line, then its frames; a
    sample without a callchain is its header line alone."""
    cur = None
    for line in lines:
        line = line.rstrip('\n')
        m = SCRIPT_HEADER.match(line)
        if m or not line.strip():
            if cur:
                yield cur
            cur = None
        if m:
            cur = (int(m.group(1)), int(m.group(2)) if m.group(2) else None,
                   int(m.group(3)) * 10**9 + int(m.group(4)), [])
        elif line.strip():
            if cur is None:
                raise Fail('perf script: cannot parse "%s"' % line)
            cur[3].append(line)
    if cur:
        yield cur


def check_script(data, script_path, file_order=False):
    """perf script prints a deferred sample's kernel frames, then its user
    frames or the "[user stack lost: <reason>]" pseudo-frame.  file_order:
    the output of perf script --show-round-events, which reads the file in
    file order (its round lines are left out)."""
    judged = judge(data, with_maps=True)
    expect = collections.defaultdict(list)
    for s in judged:
        expect[(s.tid, s.time)].append(s)
    got = collections.defaultdict(list)
    with open(script_path) as f:
        lines = (line for line in f if 'PERF_RECORD_FINISHED_ROUND' not in line)
        for tid, cpu, time, frames in script_samples(lines):
            if (tid, time) not in expect:
                continue
            ips, lost = [], None
            for fr in frames:
                m = SCRIPT_LOST.search(fr)
                if m:
                    lost = m.group(1).replace(' ', '_')
                    continue
                m = SCRIPT_FRAME.match(fr)
                if not m:
                    raise Fail('perf script: cannot parse frame "%s"' % fr)
                ips.append(int(m.group(1), 16))
            got[(tid, time)].append((ips, lost))
    bad = []
    for key, ss in expect.items():
        have = got.get(key, [])
        if len(have) != len(ss):
            bad.append('tid %d time %d: %d samples expected, %d printed' %
                       (key[0], key[1], len(ss), len(have)))
            continue
        want = [script_text(s) for s in ss]
        seen = [seen_text(ips, lost, s, file_order) for (ips, lost), s in zip(have, ss)]
        for w, h in mismatches(want, seen):
            bad.append('tid %d time %d: printed %s' % (key[0], key[1], differ(w, h)))
    return report('perf script' + (' in file order' if file_order else ''), bad, len(judged))


def kernel_ips(s):
    return [ip for ip in s.kernel if ip < pd.CONTEXT_MAX]


def script_text(s):
    k = ' '.join('%x' % ip for ip in kernel_ips(s))
    if s.verdict == 'stitched':
        return 'stitched ' + k + ' | ' + ' '.join('%x' % map_ip(s, ip) for ip in s.user)
    return 'orphan %s;%s' % (s.verdict, k)


def seen_text(ips, lost, s, file_order=False):
    """The printed chain in script_text()'s form.  perf 7.2 prints a user
    address as recorded, perf before 6.4 its offset in its mapping: the
    recorded address counts as the mapped one.  In file order perf
    resolves a user address with the mappings met so far in the file, not
    those of the sample's time: it may print the address as it is (the
    mmap, or the fork, comes later in the file) or through a mapping made
    later in time.  Either counts as the mapped address there; only ordered
    reading must resolve as the oracle does."""
    nk = len(kernel_ips(s))
    k = ' '.join('%x' % ip for ip in ips[:nk])
    if lost is not None:
        return 'orphan %s;%s' % (lost, ' '.join('%x' % ip for ip in ips))
    user = ips[nk:]
    user = [map_ip(s, ip) if i < len(s.user) and ip == s.user[i] else ip
            for i, ip in enumerate(user)]
    if file_order and s.user:
        user = [map_ip(s, s.user[i]) if i < len(s.user) and
                (ip == s.user[i] or ip in s.maps.offsets(s.user[i])) else ip
                for i, ip in enumerate(user)]
    return 'stitched ' + k + ' | ' + ' '.join('%x' % ip for ip in user)


# ------------------------------------------------------------ Python dict

PY_SAMPLE = re.compile(r'^S (\S+) (.*) (-?\d+) (-?\d+) (\d+) (.*)$')


def check_python(data, dump_path):
    """perf script -s python-deferred-dump.py: each deferred sample's
    'deferred' dict names its status and reason; its callchain ends with
    the user stack."""
    judged = judge(data)
    expect = collections.defaultdict(list)
    for s in judged:
        expect[(s.tid, s.time)].append(s)
    got = collections.defaultdict(list)
    cur = None
    with open(dump_path) as f:
        for line in f:
            if line.startswith('S '):
                m = PY_SAMPLE.match(line.rstrip('\n'))
                if not m:
                    raise Fail('python dump: cannot parse "%s"' % line.strip())
                d = dict(kv.split('=', 1) for kv in m.group(6).split() if '=' in kv)
                cur = [d, []]
                got[(int(m.group(3)), int(m.group(5)))].append(cur)
            elif line.startswith('  F ') and cur is not None:
                cur[1].append(int(line.split()[1], 16))
    bad = []
    for key, ss in expect.items():
        have = got.get(key, [])
        if len(have) != len(ss):
            bad.append('tid %d time %d: %d samples expected, %d dumped' %
                       (key[0], key[1], len(ss), len(have)))
            continue
        want = [expected_text(s) for s in ss]
        seen = []
        for d, ips in have:
            if d.get('status') == 'stitched':
                n = len(ss[0].user or [])
                seen.append('stitched ' + ' '.join('%x' % ip for ip in ips[-n:] if n))
            else:
                seen.append('orphan %s' % d.get('reason', d.get('status')))
        for w, h in mismatches(want, seen):
            bad.append('tid %d time %d: dict %s' % (key[0], key[1], differ(w, h)))
    return report('python dict', bad, len(judged))


# ------------------------------------------------------------ summary lines

SUMMARY = re.compile(r'deferred callchains: (\d+) deferred samples, (\d+) stitched[^,]*,'
                     r' (\d+) orphans(?: \(([^)]*)\))?')


def summary_counts(text, path):
    """(deferred samples, stitched, orphans, {reason: n}) of a "deferred
    callchains: ..." line or of perf stitch --stats=json."""
    reasons = collections.Counter()
    m = SUMMARY.search(text)
    if m:
        for part in (m.group(4) or '').split(', '):
            if part:
                name, n = part.rsplit(' ', 1)
                reasons[name.replace(' ', '_')] += int(n)
        return int(m.group(1)), int(m.group(2)), int(m.group(3)), reasons
    if text.lstrip().startswith('{'):
        j = json.loads(text)
        reasons.update({k: v for k, v in j['orphans'].items() if v})
        return j['deferred_samples'], j['stitched'], j['orphans_total'], reasons
    raise Fail('%s: no "deferred callchains:" line' % path)


def check_summary(data, text_path, mode='summary'):
    """The counts of a "deferred callchains: ..." line (or perf stitch
    --stats=json) against the oracle: every sample whose record is in the
    file stitched (or exec, unwind failed), the rest orphans for want of a
    record."""
    c = counts(judge(data))
    deferred, stitched, orphans, reasons = summary_counts(open(text_path).read(), text_path)
    seen_no_record = sum(reasons[r] for r in NO_RECORD)
    bad = []
    for what, want, have in (('deferred samples', c['deferred'], deferred),
                             ('stitched', c['stitched'], stitched),
                             ('orphans', c['deferred'] - c['stitched'], orphans),
                             ('no record', c['no_record'], seen_no_record),
                             ('exec', c['exec'], reasons['exec']),
                             ('unwind failed', c['unwind_failed'], reasons['unwind_failed'])):
        if want != have:
            bad.append('%s: oracle %d, %s %d' % (what, want, mode, have))
    extra = set(reasons) - set(NO_RECORD) - {'exec', 'unwind_failed'}
    for r in sorted(extra):
        bad.append('reason "%s" (%d): the oracle has none' % (r, reasons[r]))
    return report(mode, bad, c['deferred'])


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    cmd, data = argv[1], argv[2]
    try:
        if cmd == 'verdicts':
            for s in judge(data):
                print('%d %d %d %#x %s' % (s.tid, s.cpu, s.time, s.cookie, expected_text(s)))
            return 0
        if cmd == 'features':
            f = collections.Counter()
            f.update(counts(judge(data, features=f)))
            for k, v in sorted(f.items()):
                print(k, v)
            return 0
        if cmd == 'counts':
            for k, v in sorted(counts(judge(data)).items()):
                print(k, v)
            return 0
        if len(argv) < 4:
            sys.stderr.write(__doc__)
            return 2
        check = {'stitched': check_stitched, 'script': check_script,
                 'python': check_python, 'summary': check_summary}.get(cmd)
        if check is None:
            sys.stderr.write(__doc__)
            return 2
        if cmd == 'script' and argv[4:] == ['--file-order']:
            return check_script(data, argv[3], file_order=True)
        if cmd == 'summary' and len(argv) > 4:
            return check_summary(data, argv[3], argv[4])
        return check(data, argv[3])
    except Fail as e:
        print('oracle: %s' % e)
        return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
