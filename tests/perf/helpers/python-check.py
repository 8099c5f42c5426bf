#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only checker for tests/perf/test-python.sh, run in its work
directory: the "deferred" entry of perf script's Python sample dict
(d.dump, nostitch.dump, plain.dump, from python-deferred-dump.py) against
what inject-deferred.py wrote (d.gen, d.data) and pristine perf 7.2's
view of the reference (ref.dump, ref.comms), and perf script report
stitch-coverage's table.  Prints one "ok ..." or "FAIL ..." line per check.
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402


def res(ok, what, detail=None):
    print(('ok ' if ok else 'FAIL ') + what)
    if not ok and detail is not None:
        print(detail)


data = pd.PerfFile('d.data')
sample_type = struct.unpack_from('<Q', data.attrs[0][0], 24)[0]
record_at = dict(zip(data.offsets, data.records))


def record_id(off):
    """(cpu, time) of the sample_id trailer of the record at @off"""
    v = pd.parse_sample_id(record_at[off], sample_type)
    return v.get('cpu'), v.get('time')


def sample_tid_time(off):
    v, _ = pd.sample_fields(record_at[off], sample_type)
    return v['tid'], v['time']


# what inject-deferred.py wrote
records = {}        # cookie -> (cpu, time) of its (first) record
groups = {}         # cookie -> (fate, [sample offsets])
for line in open('d.gen'):
    m = re.match(r'added type=22 offset=(\S+) size=\d+ cookie=(\S+)', line)
    if m:
        records.setdefault(int(m.group(2), 0), record_id(int(m.group(1), 0)))
    m = re.match(r'group cookie=(\S+) samples=(\S+) fate=(\S+)', line)
    if m:
        groups[int(m.group(1), 0)] = (m.group(3), [int(x, 0) for x in m.group(2).split(',')])


def parse_dump(path):
    out = []
    for line in open(path):
        if line.startswith('S '):
            f = line.split()
            d = None
            if f[6] != '-':
                d = dict(kv.split('=', 1) for kv in f[6:])
            out.append({'ev': f[1], 'comm': f[2], 'tid': int(f[3]), 'cpu': int(f[4]),
                        'time': int(f[5]), 'deferred': d, 'chain': []})
        elif line.startswith('  F '):
            out[-1]['chain'].append(line[4:].rstrip('\n'))
    return out


ref = parse_dump('ref.dump')
got = parse_dump('d.dump')
res(len(got) == len(ref), 'as many samples as the reference (%d)' % len(ref),
    '%d vs %d' % (len(got), len(ref)))

# expected "deferred" entry of every deferred sample
exp = {}            # cookie -> expected fields
for cookie, (fate, offs) in groups.items():
    e = {'cookie': cookie, 'cookie_cpu': (cookie & 0xffffffff) - 1, 'cookie_counter': cookie >> 32}
    if fate in ('record', 'record+dup'):
        cpu, t = records[cookie]
        e.update(status='stitched', reason=None, record_cpu=cpu, record_time=t)
    elif fate == 'lost':
        e.update(status='orphan', reason='record_lost', record_cpu=None, record_time=None)
    else:
        e.update(status='?', reason='?', record_cpu=None, record_time=None)
    exp[cookie] = e


def conv(v):
    if v == 'None':
        return None
    if v in ('True', 'False'):
        return v == 'True'
    if re.match(r'^(0x[0-9a-f]+|\d+)$', v):
        return int(v, 0)
    return v


deferred = [s for s in got if s['deferred'] is not None]
nsamples = sum(len(offs) for fate, offs in groups.values())
res(len(deferred) == nsamples, 'every deferred sample has a "deferred" entry (%d)' % nsamples,
    '%d vs %d' % (len(deferred), nsamples))
keys = sorted(['cookie', 'cookie_cpu', 'cookie_counter', 'status', 'reason', 'record_cpu',
               'record_time', 'late'])
res(all(sorted(s['deferred']) == keys for s in deferred), 'entry keys: ' + ' '.join(keys))

per_cookie = {}
wrong = []
for s in deferred:
    d = {k: conv(v) for k, v in s['deferred'].items()}
    s['d'] = d
    per_cookie[d['cookie']] = per_cookie.get(d['cookie'], 0) + 1
    e = exp.get(d['cookie'])
    if e is None:
        wrong.append('unknown cookie %#x' % d['cookie'])
        continue
    e = dict(e)
    e['late'] = e['record_time'] is not None and s['time'] > e['record_time']
    if e != d:
        wrong.append('%s %d: got %s, expected %s' % (s['comm'], s['time'], d, e))
res(not wrong, 'deferred entries as inject-deferred.py wrote them (cookie, cookie_cpu, '
    'status, reason, record_cpu, record_time, late)', '\n'.join(wrong[:5]))
res(all(per_cookie.get(c, 0) == len(offs) for c, (f, offs) in groups.items()),
    'samples per cookie as the groups')

st = [s for s in deferred if s['d']['status'] == 'stitched']
orph = [s for s in deferred if s['d']['status'] == 'orphan']
nlost = sum(len(offs) for f, offs in groups.values() if f == 'lost')
res(len(orph) == nlost and nlost > 0, 'orphans: the samples of lost records (%d)' % nlost)
res(any(s['d']['late'] for s in st), 'some stitched samples are late (%d)'
    % sum(1 for s in st if s['d']['late']))
res(any(s['d']['record_cpu'] != s['cpu'] for s in st), 'records from another CPU')
res(any(per_cookie[c] > 1 for c in per_cookie), 'samples sharing a cookie')

# callchains against the reference (same samples, same order)
bad_chain = [(s, r) for s, r in zip(got, ref)
             if (s['d']['status'] if 'd' in s else None) != 'orphan' and s['chain'] != r['chain']]
res(not bad_chain, 'callchains of stitched (and plain) samples as pristine perf 7.2 shows the '
    'original', '\n'.join('%s %d:\n  got %s\n  ref %s' % (s['comm'], s['time'], s['chain'], r['chain'])
                          for s, r in bad_chain[:2]))
res(sum(1 for s in st if any('[kernel.kallsyms]' in f for f in s['chain']) and
        not s['chain'][-1].endswith('[kernel.kallsyms]')) > 0,
    'stitched callchains: kernel frames, then user frames')
bad_orph = []
for s, r in zip(got, ref):
    if 'd' not in s or s['d']['status'] != 'orphan':
        continue
    last = s['chain'][-1].split(' ', 1)[1] if s['chain'] else ''
    if last != '[user stack lost: record lost] [deferred]' or \
            s['chain'][:-1] != r['chain'][:len(s['chain']) - 1] or \
            any('[kernel.kallsyms]' not in f for f in s['chain'][:-1]):
        bad_orph.append('%s %d: %s' % (s['comm'], s['time'], s['chain']))
res(not bad_orph, 'orphans: kernel frames, then "[user stack lost: record lost]"',
    '\n'.join(bad_orph[:3]))

# --no-merge-callchains: status unstitched, no record, pseudo-frame with the cookie
ns = [s for s in parse_dump('nostitch.dump') if s['deferred'] is not None]
res(len(ns) == nsamples and
    all(s['deferred']['status'] == 'unstitched' and s['deferred']['reason'] == 'None' and
        s['deferred']['record_time'] == 'None' and s['deferred']['late'] == 'False' and
        s['chain'][-1].split(' ', 1)[1].startswith('[user stack deferred: cookie ')
        for s in ns), '--no-merge-callchains: every deferred sample "unstitched", no record')
plain = parse_dump('plain.dump')
res(len(plain) == len(ref) and all(s['deferred'] is None for s in plain) and
    [s['chain'] for s in plain] == [s['chain'] for s in ref],
    'file without deferred callchains: no "deferred" entry, callchains as pristine perf 7.2\'s')

# ------------------------------------------------------------ stitch-coverage table
comms = {}
nall = {}
for line in open('ref.comms'):
    m = re.match(r'^\s*(.*?)\s+(\d+)\s+(\d+)\.(\d{9}):\s*$', line)
    if not m:
        continue
    comm, tid, t = m.group(1), int(m.group(2)), int(m.group(3)) * 10**9 + int(m.group(4))
    comms[(tid, t)] = comm
    nall[(comm, tid)] = nall.get((comm, tid), 0) + 1
th = {}
for cookie, (fate, offs) in groups.items():
    for off in offs:
        tid, t = sample_tid_time(off)
        c = th.setdefault((comms[(tid, t)], tid), {'def': 0, 'st': 0, 'lost': 0})
        c['def'] += 1
        c['st' if fate.startswith('record') else 'lost'] += 1


def row(comm, tid, n, c):
    pct = '%.1f%%' % (100.0 * c['st'] / c['def'])
    orphans = '%d (record_lost %d)' % (c['lost'], c['lost']) if c['lost'] else '0'
    return '%-16s %7s %8d %8d %8d %8s  %s' % (comm, tid, n, c['def'], c['st'], pct, orphans)


lines = ['%-16s %7s %8s %8s %8s %8s  %s' % ('comm', 'tid', 'samples', 'deferred', 'stitched',
                                          '%', 'orphans')]
for k in sorted(th, key=lambda k: (-th[k]['def'], k[0], k[1])):
    lines.append(row(k[0], k[1], nall[k], th[k]))
tot = {'def': 0, 'st': 0, 'lost': 0}
for c in th.values():
    for f in tot:
        tot[f] += c[f]
lines.append(row('total', '', sum(nall.values()), tot))
open('cov.expected', 'w').write('\n'.join(lines) + '\n')
res(len(th) > 1, 'several threads with deferred samples (%d)' % len(th))
