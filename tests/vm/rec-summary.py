#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""rec-summary.py [--perf PERF] [--tsv] FILE...: what a real deferred
recording contains, from `perf report -D` (compressed and pipe files
alike; perf prints the events in time order, with their file offsets).  Per file: samples, deferred samples, CALLCHAIN_DEFERRED
records, and for the deferred samples matched by the order-free rule (the
record with the same tid and cookie anywhere in the file):

  orphans        deferred samples with no such record
  rec<smp time   matched samples whose record is earlier in time
  rec<smp file   matched samples whose record is earlier in the file (by
                 offset; in a -z file only across compressed records)
  other cpu      matched samples whose record is on another CPU
  after exit     records written after their tid's PERF_RECORD_EXIT
  exec           matched samples with a COMM exec of their tid between
                 the sample and its record (stack of the new program)
  max delay      longest sample -> record time (ms), p99 too
  dup records    (tid, cookie) pairs with more than one record

A summary for README files and for picking corpus files, not the oracle.
"""
import argparse
import collections
import re
import subprocess
import sys

MARKER = 0xfffffffffffffd80  # PERF_CONTEXT_USER_DEFERRED

HEAD = re.compile(r'^(?:(-?\d+) )?(\d+) (0x[0-9a-f]+) \[(0x[0-9a-f]+)\]: PERF_RECORD_(\w+)(.*)$')
SAMPLE = re.compile(r'\(IP, 0x[0-9a-f]+\): (-?\d+)/(-?\d+):')
DEFERRED = re.compile(r' cookie: (0x[0-9a-f]+) nr: (\d+)')
EXIT = re.compile(r'\((-?\d+):(-?\d+)\)')
COMM_EXEC = re.compile(r' exec: .*:(-?\d+)/(-?\d+)')
HEX = re.compile(r'^\.  ([0-9a-f]{4}):  ((?:[0-9a-f]{2} )+)')
CHAIN = re.compile(r'^\.\.\.\.\. +\d+: ([0-9a-f]+)')


def parse(perf, path):
    out = subprocess.run([perf, 'report', '-D', '-i', path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=False).stdout
    samples, records, exits, execs = [], [], [], []
    raw = {}
    cur = None
    for seq, line in enumerate(out.decode('latin-1').splitlines()):
        if line.startswith('. ... raw event'):
            raw = {}
            continue
        m = HEX.match(line)
        if m:
            raw.setdefault(int(m.group(1), 16), bytes.fromhex(m.group(2)))
            continue
        m = CHAIN.match(line)
        if m and cur is not None:
            cur['chain'].append(int(m.group(1), 16))
            continue
        m = HEAD.match(line)
        if not m:
            continue
        cur = None
        cpu = int(m.group(1)) if m.group(1) is not None else None
        time = int(m.group(2))
        kind, rest = m.group(5), m.group(6)
        if kind == 'SAMPLE':
            s = SAMPLE.search(rest)
            cur = dict(seq=seq, off=int(m.group(3), 16), cpu=cpu, time=time, tid=int(s.group(2)),
                       chain=[])
            samples.append(cur)
        elif kind == 'CALLCHAIN_DEFERRED':
            d = DEFERRED.search(rest)
            nr = int(d.group(2))
            buf = b''.join(raw[k] for k in sorted(raw))
            off = 24 + 8 * nr
            tid = int.from_bytes(buf[off + 4:off + 8], 'little') if len(buf) >= off + 8 else -1
            cur = dict(seq=seq, off=int(m.group(3), 16), cpu=cpu, time=time, tid=tid,
                       cookie=int(d.group(1), 16),
                       nr=nr, chain=[])
            records.append(cur)
        elif kind == 'EXIT':
            e = EXIT.search(rest)
            exits.append(dict(seq=seq, time=time, tid=int(e.group(2))))
        elif kind == 'COMM' and ' exec: ' in rest:
            c = COMM_EXEC.search(rest)
            execs.append(dict(seq=seq, time=time, tid=int(c.group(2))))
    return samples, records, exits, execs


def summarize(samples, records, exits, execs):
    by_key = collections.defaultdict(list)
    for r in records:
        by_key[(r['tid'], r['cookie'])].append(r)
    exit_time = {}
    for e in exits:
        exit_time.setdefault(e['tid'], e['time'])
    exec_times = collections.defaultdict(list)
    for e in execs:
        exec_times[e['tid']].append(e['time'])
    st = collections.Counter()
    delays = []
    for s in samples:
        st['samples'] += 1
        ch = s['chain']
        if len(ch) < 2 or ch[-2] != MARKER:
            continue
        st['deferred samples'] += 1
        recs = by_key.get((s['tid'], ch[-1]))
        if not recs:
            st['orphans'] += 1
            continue
        r = recs[0]
        st['matched'] += 1
        if r['time'] < s['time']:
            st['rec<smp time'] += 1
        if r['off'] < s['off']:
            st['rec<smp file'] += 1
        if s['cpu'] is not None and r['cpu'] != s['cpu']:
            st['other cpu'] += 1
        if any(s['time'] < t < r['time'] for t in exec_times.get(s['tid'], ())):
            st['exec'] += 1
        delays.append(r['time'] - s['time'])
    st['records'] = len(records)
    for r in records:
        t = exit_time.get(r['tid'])
        if t is not None and r['time'] > t:
            st['after exit'] += 1
    st['dup records'] = sum(1 for v in by_key.values() if len(v) > 1)
    delays.sort()
    st['max delay ms'] = round(delays[-1] / 1e6, 1) if delays else 0
    st['p99 delay ms'] = round(delays[int(len(delays) * 0.99)] / 1e6, 1) if delays else 0
    return st


COLS = ['samples', 'deferred samples', 'records', 'matched', 'orphans', 'rec<smp time',
        'rec<smp file', 'other cpu', 'after exit', 'exec', 'dup records', 'max delay ms',
        'p99 delay ms']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--perf', default='perf')
    ap.add_argument('--tsv', action='store_true', help='one tab-separated line per file')
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()
    if a.tsv:
        print('\t'.join(['file'] + COLS))
    for f in a.files:
        st = summarize(*parse(a.perf, f))
        if a.tsv:
            print('\t'.join([f] + [str(st[c]) for c in COLS]))
        else:
            print('%s: %s' % (f, ', '.join('%s %s' % (c, st[c]) for c in COLS)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
