#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""offcpu-bpf.py DIR [BIN]: perf's BPF --off-cpu beside the deferred one,
from what tests/vm/offcpu-bpf.sh left in DIR (BIN: the workloads'
binaries, build/vm/bin):

  rec/COUNTS, rec/*.data     the guest's recordings (guest-record.sh's
                             offcpu-bpf set) and their seconds
  rec/logs/W-S.workload.log  each workload's own clock ("offcpu FUNCTION
                             NANOSECONDS CALLS", "requests N SECONDS"),
                             S = none (unrecorded), bpf, deferred
  rec/logs/attach-S.server.log  the server a perf was attached to
  W-bpf.script               perf script -F tid,period,event,ip,sym,dso of
                             the BPF recording (offcpu-time samples: the
                             user stack, the time off CPU as period)
  W-deferred.script          perf script -F tid,event,ip,sym,dso of ours
  W-deferred.folded          perf stitch -F folded --count=off-cpu of ours

Writes DIR/table.md (the tables of Documentation/off-cpu.md) and
DIR/offcpu-bpf.png (matplotlib); prints the table.  Exits 1 when a file
is missing or a profile holds no off-CPU time at all.
"""

import collections
import os
import re
import sys

FRAME = re.compile(r'^\t\s*([0-9a-f]+)(?:\s+(.*?))?(?:\s*\((.*)\))?\s*$')
MMAP2 = re.compile(r'PERF_RECORD_MMAP2 (\d+)/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) '
                   r'.*?\]: r-xp (\S+)$')
HEADER = re.compile(r'^\s*(-?\d+)\s+(?:(\d+)\s+)?([\w:-]+):\s*$')
BPF_STACK_MAX = 32      # util/bpf_skel/off_cpu.bpf.c: MAX_STACKS
WORKLOADS = ('offcpu', 'server')


def die(msg):
    sys.stderr.write('offcpu-bpf: %s\n' % msg)
    sys.exit(1)


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError as e:
        die('%s: %s' % (path, e.strerror))


def clock(path):
    """the workload's own lines: {function: (ns, calls)}, requests, and
    the seconds it ran (the server's, or offcpu's longest thread)"""
    funcs, requests, secs = {}, None, 0.0
    for line in read(path).splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == 'offcpu':
            funcs[f[1]] = (int(f[2]), int(f[3]))
        elif len(f) == 3 and f[0] == 'requests':
            requests, secs = int(f[1]), float(f[2])
        elif len(f) == 4 and f[0] == 'thread':
            secs = max(secs, int(f[3]) / 1e9)
    return funcs, requests, secs


def script_samples(path):
    """(tid, period, event, [(sym, dso), ...] leaf first) of perf script"""
    cur = None
    for line in read(path).splitlines():
        m = FRAME.match(line)
        if m:
            if cur is not None:
                cur[3].append(((m.group(2) or '').split('+')[0], m.group(3) or '',
                               int(m.group(1), 16)))
            continue
        if cur is not None:
            yield cur
        h = HEADER.match(line)
        cur = (int(h.group(1)), int(h.group(2) or 0), h.group(3), []) if h else None
    if cur is not None:
        yield cur


def user_frames(frames):
    return [f for f in frames if f[1] not in ('[kernel.kallsyms]', '[unknown]')
            and not f[1].startswith('[guest.kernel')]


def bpf_profile(path, funcs):
    """BPF's time off CPU per function as perf shows it (the offcpu-time
    samples whose user stack perf script resolves to it), and the time
    of the stacks it resolves no frame of"""
    got, unresolved = collections.Counter(), 0
    for _, period, event, frames in script_samples(path):
        if event != 'offcpu-time':
            continue
        syms = {f[0] for f in frames}
        for fn in funcs:
            if fn in syms:
                got[fn] += period
        if all(f[1] in ('[unknown]', '') for f in frames):
            unresolved += period
    return got, unresolved


class Symbols:
    """the workload's functions by file offset (nm; its text's offsets and
    addresses are the same, as the PIE binaries gcc links here)"""

    def __init__(self, binary):
        import subprocess
        out = subprocess.run(['nm', '-n', '--defined-only', binary], capture_output=True,
                             text=True, check=True).stdout
        self.syms = []
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'tT':
                self.syms.append((int(f[0], 16), f[2]))

    def name(self, offset):
        best = None
        for value, name in self.syms:
            if value > offset:
                break
            best = name
        return best


def bpf_by_address(path, funcs, binary):
    """BPF's time off CPU per function, its user addresses resolved here in
    the workload's binary through its PERF_RECORD_MMAP2 (perf script
    --show-mmap-events -F tid,period,event,ip), and the number of frames of
    each stack as written"""
    syms = Symbols(binary)
    maps = []
    for line in read(path).splitlines():
        m = MMAP2.search(line)
        if m and os.path.basename(m.group(5)) == os.path.basename(binary):
            maps.append((int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)))
    got, depths = collections.Counter(), []
    for _, period, event, frames in script_samples(path):
        if event != 'offcpu-time':
            continue
        names = set()
        for f in frames:
            for start, length, pgoff in maps:
                if start <= f[2] < start + length:
                    names.add(syms.name(f[2] - start + pgoff))
        for fn in funcs:
            if fn in names:
                got[fn] += period
        depths.append(len(frames))
    return got, depths


def folded_profile(path, funcs):
    got = collections.Counter()
    lost = collections.Counter()
    for line in read(path).splitlines():
        stack, _, n = line.rpartition(' ')
        frames = stack.split(';')
        for fn in funcs:
            if fn in frames:
                got[fn] += int(n)
        for f in frames:
            if f.startswith('[user stack lost'):
                lost[f] += int(n)
    return got, lost


def deferred_depths(path):
    """user frames of each sched_switch sample perf script stitched"""
    depths = []
    for _, _, event, frames in script_samples(path):
        if event.endswith('sched_switch'):
            u = user_frames(frames)
            if u:
                depths.append(len(u))
    return depths


def counts(path):
    secs = {}
    for line in read(path).splitlines():
        f = line.split('\t')
        if len(f) == 4 and not line.startswith('#'):
            secs[f[0]] = float(f[3])
    return secs


def stats(path):
    """the samples written and lost (perf report --stats: the per-event
    sections' SAMPLE and LOST_SAMPLES), and the LOST records (records of
    any type the ring buffer dropped)"""
    got = {'SAMPLE': 0, 'LOST_SAMPLES': 0, 'LOST': 0}
    per_event = False
    for line in read(path).splitlines():
        f = line.split()
        if len(f) >= 2 and f[-1] == 'stats:':
            per_event = f[0] != 'Aggregated'
            continue
        if len(f) >= 3 and f[1] == 'events:' and f[0] in got:
            if per_event and f[0] != 'LOST':
                got[f[0]] += int(f[2])
            elif not per_event and f[0] == 'LOST':
                got['LOST'] = int(f[2])
    return got['SAMPLE'], got['LOST_SAMPLES'], got['LOST']


def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


def pct(got, want):
    return '%+.1f%%' % (100.0 * (got - want) / want) if want else 'n/a'


def main():
    if len(sys.argv) not in (2, 3):
        die('usage: offcpu-bpf.py DIR [BIN]')
    d = sys.argv[1]
    rec = os.path.join(d, 'rec')
    secs = counts(os.path.join(rec, 'COUNTS'))
    logs = os.path.join(rec, 'logs')
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bindir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(repo, 'build', 'vm', 'bin')
    out, bars, depth, unresolved, ours_lost = [], [], {}, {}, {}

    out.append('| workload | function | its own clock (BPF run, ours) | BPF `--off-cpu`: '
               'by address | as perf script shows it | deferred (ours) |')
    out.append('|---|---|---|---|---|---|')
    for w in WORKLOADS:
        funcs_b, _, _ = clock(os.path.join(logs, '%s-bpf.data.workload.log' % w))
        funcs_o, _, _ = clock(os.path.join(logs, '%s-deferred.data.workload.log' % w))
        binary = os.path.join(bindir, w)
        shown, unresolved[w] = bpf_profile(os.path.join(d, '%s-bpf.script' % w), funcs_b)
        addr, depth[(w, 'bpf')] = bpf_by_address(os.path.join(d, '%s-bpf.raw' % w), funcs_b, binary)
        ours, ours_lost[w] = folded_profile(os.path.join(d, '%s-deferred.folded' % w), funcs_o)
        depth[(w, 'deferred')] = deferred_depths(os.path.join(d, '%s-deferred.script' % w))
        if not sum(addr.values()) or not sum(ours.values()):
            die('%s: no off-CPU time of its functions in a profile (BPF %d ns, ours %d ns)' %
                (w, sum(addr.values()), sum(ours.values())))
        for fn in sorted(funcs_b):
            if fn == 'block_long':
                continue        # blocked to the end: the attached runs show it
            bw, ow = funcs_b[fn][0], funcs_o[fn][0]
            out.append('| %s | %s | %.0f ms, %.0f ms | %.0f ms (%s) | %.0f ms (%s) | %.0f ms (%s) |' %
                       (w, fn, bw / 1e6, ow / 1e6, addr[fn] / 1e6, pct(addr[fn], bw),
                        shown[fn] / 1e6, pct(shown[fn], bw), ours[fn] / 1e6, pct(ours[fn], ow)))
            bars.append(('%s\n(%s)' % (fn, w), 100.0 * (addr[fn] - bw) / bw,
                         100.0 * (ours[fn] - ow) / ow))

    out.append('')
    out.append('| | not recorded | BPF `--off-cpu` | deferred (ours) |')
    out.append('|---|---|---|---|')
    thr = {}
    for side in ('none', 'bpf', 'deferred'):
        name = 'server-none.workload.log' if side == 'none' else 'server-%s.data.workload.log' % side
        _, n, t = clock(os.path.join(logs, name))
        if not n or not t:
            die('%s: no "requests" line' % name)
        thr[side] = n / t
    out.append('| server: requests/s (each one block and wake-up) | %.0f | %.0f (%.2fx) | %.0f (%.2fx) |' %
               (thr['none'], thr['bpf'], thr['bpf'] / thr['none'],
                thr['deferred'], thr['deferred'] / thr['none']))
    for w in WORKLOADS:
        row = []
        for side in ('bpf', 'deferred'):
            f = '%s-%s.data' % (w, side)
            n = size(os.path.join(rec, f))
            _, _, ran = clock(os.path.join(logs, f + '.workload.log'))
            row.append('%.0f KiB/s (%.0f KiB, the workload ran %.1f s; perf record %.1f s)' %
                       (n / 1024 / ran, n / 1024, ran, secs[f]))
        out.append('| %s: file size per second of the workload | | %s | %s |' % (w, row[0], row[1]))
    for w in WORKLOADS:
        bd, od = depth[(w, 'bpf')], depth[(w, 'deferred')]
        out.append('| %s: user frames of the deepest stack (stacks at BPF\'s %d) | | %d (%d of %d) | %d |' %
                   (w, BPF_STACK_MAX, max(bd, default=0),
                    sum(1 for x in bd if x >= BPF_STACK_MAX), len(bd), max(od, default=0)))
    for w in WORKLOADS:
        out.append('| %s: off-CPU time shown without its user stack (BPF: no frame perf script '
                   'resolves; ours: `[user stack lost: ...]`) | | %.0f ms | %.0f ms |' %
                   (w, unresolved[w] / 1e6, sum(ours_lost[w].values()) / 1e6))
    for w in WORKLOADS + ('attach',):
        row = []
        for side in ('bpf', 'deferred'):
            got, lost, records = stats(os.path.join(logs, '%s-%s.data.stats' % (w, side)))
            row.append('%d of %d (%.0f%%), %d LOST records' %
                       (lost, got + lost, 100.0 * lost / (got + lost) if got + lost else 0, records))
        out.append('| %s: samples the ring buffers dropped | | %s | %s |' % (w, row[0], row[1]))

    # attached for 1.5 s while block_long() blocks past the end: only when
    # the recording's command reached the server (its block_long() blocked)
    for side in ('bpf', 'deferred'):
        served, _, _ = clock(os.path.join(logs, 'attach-%s.server.log' % side))
        if served.get('block_long', (0, 0))[0] <= 0:
            die('attach-%s: the server\'s block_long() never blocked: the SIGUSR1 of the '
                'recording\'s command did not reach it' % side)
    funcs = {'block_long': 0, 'block_request': 0}
    bpf_long, _ = bpf_by_address(os.path.join(d, 'attach-bpf.raw'), funcs,
                                 os.path.join(bindir, 'server'))
    ours_long, ours_lost = folded_profile(os.path.join(d, 'attach-deferred.folded'), funcs)
    lost_text = ', '.join('%s %.0f ms' % (k, v / 1e6) for k, v in sorted(ours_lost.items()))
    out.append('| block_long(), blocked past the end of a 1.5 s attached recording | | %.0f ms | '
               '%.0f ms%s |' % (bpf_long['block_long'] / 1e6, ours_long['block_long'] / 1e6,
                                '; ' + lost_text if lost_text else ''))

    text = '\n'.join(out) + '\n'
    with open(os.path.join(d, 'table.md'), 'w') as f:
        f.write(text)
    sys.stdout.write(text)
    plot(bars, thr, os.path.join(d, 'offcpu-bpf.png'))
    return 0


def plot(bars, thr, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={'width_ratios': [3, 1]})
    xs = range(len(bars))
    a.bar([x - 0.2 for x in xs], [v[1] for v in bars], 0.4, label='BPF --off-cpu (by address)')
    a.bar([x + 0.2 for x in xs], [v[2] for v in bars], 0.4, label='deferred (ours)')
    a.axhline(0, color='black', linewidth=0.8)
    a.set_xticks(list(xs))
    a.set_xticklabels([v[0] for v in bars], fontsize=8)
    a.set_ylabel('off-CPU time vs the workload\'s clock (%)')
    a.set_title('Time off CPU by function, Linux 7.2 guest')
    a.legend()
    sides = ['none', 'bpf', 'deferred']
    b.bar(sides, [thr[s] / thr['none'] for s in sides], color=['grey', 'C0', 'C1'])
    b.set_ylabel('server requests/s, vs not recorded')
    b.set_title('Throughput')
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == '__main__':
    sys.exit(main())
