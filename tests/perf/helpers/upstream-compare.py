#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the stitched callchains of a deferred recording in upstream perf
7.2 (build/perf-upstream, make perf-upstream) and in ours (build/perf).

    upstream-compare.py [options] DATA...

Both run `perf script -F event,tid[,cpu],time,ip,sym,dso --ns --max-stack
4096 --no-inline` on DATA (upstream merges deferred callchains by default; ours
stitches by default).  The deferred samples come from the order-free oracle
(tests/perf/helpers/oracle.py: a sample's user stack is the record of its tid and
cookie anywhere in the file), which gives each its kernel part; a printed
callchain is matched to its sample by tid, cpu, time and kernel addresses
(not names: 7.2 resolves the kernel addresses of a guest recording with the
host's kallsyms).  Addresses are compared as both print them, as recorded
(ours is perf 7.2 too), and checked against the record's (the oracle's).

For each deferred sample:
    upstream stitched   upstream printed user frames after its kernel part
                        (7.2 keeps PERF_CONTEXT_USER_DEFERRED in place of
                        PERF_CONTEXT_USER: it prints the frames alike);
                        a sample it did not merge keeps its chain as
                        recorded and 7.2 prints the cookie after the marker
                        as a user frame ("[unknown]"): that is no stitch
    ours stitched       ours printed user frames, not "[user stack lost: R]"

Checks: every sample upstream stitches comes out of ours with the same
chain, except the samples taken in execve() whose record holds the new
program's stack (upstream stitches them to it, ours names them "exec": the
oracle's verdict); where upstream dropped the user part, ours keeps it or
names a reason; both print every deferred sample.  Prints per recording
the counts (samples, deferred samples, stitched by upstream, stitched by
ours, upstream-dropped that ours kept, reasons), the samples whose chains
differ (up to --show), and exits 1 when a check fails.

Options:
    --upstream PERF   upstream perf (default build/perf-upstream)
    --ours PERF       our perf (default build/perf)
    --kallsyms FILE   give upstream perf this kallsyms (e.g. the guest's):
                      only names change, not what is compared
    --show N          print up to N samples per kind of difference (10)
    --keep DIR        keep both perf script outputs in DIR
    --json            one JSON object per recording on stdout instead
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import oracle  # noqa: E402

repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))

HEADER = re.compile(r'^\s*(-?\d+)\s+(?:\[(\d+)\]\s+)?(\d+)\.(\d+):\s+(\S+?):?\s')
FRAME = re.compile(r'^\s+([0-9a-f]+)(?:\s+(.*))?$')
LOST = re.compile(r'\[user stack lost: ([^\]]*)\]')


class Printed:
    """One sample as a perf script printed it."""
    __slots__ = ('event', 'ips', 'lost', 'text', 'raw')

    def __init__(self, event):
        self.event, self.ips, self.lost, self.text, self.raw = event, [], None, [], None


def parse_script(path):
    """{(tid, cpu, time): [Printed]} of perf script output."""
    out = collections.defaultdict(list)
    cur = None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = HEADER.match(line)
            if m:
                cur = Printed(m.group(5))
                key = (int(m.group(1)), int(m.group(2)) if m.group(2) else None,
                       int(m.group(3)) * 10**9 + int(m.group(4)))
                out[key].append(cur)
                continue
            if not line.strip():
                cur = None
                continue
            if cur is None:
                continue        # other lines (deferred records, round events)
            lm = LOST.search(line)
            if lm:
                cur.lost = lm.group(1)
                cur.text.append(line.strip())
                continue
            fm = FRAME.match(line)
            if fm and line.endswith(' (inlined)'):
                continue        # not a frame of the callchain
            if fm:
                cur.ips.append(int(fm.group(1), 16))
                cur.text.append(line.strip())
    return out


def run_script(perf, data, out_path, with_cpu, extra=()):
    fields = 'event,tid,%stime,ip,sym,dso' % ('cpu,' if with_cpu else '')
    # --no-inline: 7.2 shows inlined functions as frames of their own, of
    # the same address (6.1 does not by default)
    cmd = [perf, 'script', '-i', data, '-F', fields, '--ns', '--max-stack', '4096',
           '--no-inline'] + list(extra)
    err_path = out_path + '.err'
    with open(out_path, 'w') as out, open(err_path, 'w') as err:
        rc = subprocess.call(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    if rc != 0:
        raise oracle.Fail('%s failed (exit %d): %s' % (' '.join(cmd), rc,
                                                        open(err_path).read().strip()[-2000:]))
    return err_path


def pair(ups, ours):
    """Pair the printed samples of one (tid, cpu, time) with its oracle
    samples (of equal kernel part: a multiset), identical chains first."""
    pairs = []
    ups, ours = list(ups), list(ours)
    for u in list(ups):
        for o in ours:
            if o.lost is None and o.ips == u.ips:
                pairs.append((u, o))
                ups.remove(u)
                ours.remove(o)
                break
    pairs.extend(zip(ups, ours))
    return pairs


def take(printed, kernel):
    """The printed samples whose chain starts with kernel (the kernel ips),
    taken out of printed."""
    got = [p for p in printed if p.ips[:len(kernel)] == kernel]
    for p in got:
        printed.remove(p)
    return got


def fmt(p):
    if p is None:
        return '(not printed)'
    return ' '.join('%x' % ip for ip in p.ips) + (' [user stack lost: %s]' % p.lost
                                                  if p.lost else '')


def compare(data, args, tmp):
    judged = oracle.judge(data, with_maps=True)
    # the time of each sample's record: is it earlier than the sample?
    _, records, _ = oracle.parse_samples(oracle.Recording(data))
    late = {id(s) for s in judged
            if records.get((s.tid, s.cookie)) and records[(s.tid, s.cookie)][0][0] < s.time}
    with_cpu = all(s.cpu is not None for s in judged) if judged else True
    name = os.path.basename(data)
    up_out = os.path.join(tmp, name + '.upstream.txt')
    our_out = os.path.join(tmp, name + '.ours.txt')
    extra = ['--kallsyms', args['kallsyms']] if args.get('kallsyms') else []
    run_script(args['upstream'], data, up_out, with_cpu, extra)
    our_err = run_script(args['ours'], data, our_out, with_cpu)
    up = parse_script(up_out)
    ours = parse_script(our_out)
    summary = ''
    for line in open(our_err):
        if 'deferred callchains:' in line:
            summary = line.strip()

    c = collections.Counter()
    c['samples_upstream'] = sum(len(v) for v in up.values())
    c['samples_ours'] = sum(len(v) for v in ours.values())
    c['deferred'] = len(judged)
    c['late'] = len(late)
    reasons_ours = collections.Counter()        # ours' reasons, all lost samples
    dropped_reasons = collections.Counter()     # upstream dropped, ours lost: why
    verdicts_up_dropped = collections.Counter()  # oracle's verdict where upstream dropped
    bad = collections.defaultdict(list)

    groups = collections.defaultdict(list)
    for s in judged:
        kernel = oracle.kernel_ips(s)
        groups[(s.tid, s.cpu if with_cpu else None, s.time)].append((kernel, s))
    for key, ss in groups.items():
        up_left = list(up.get(key, []))
        our_left = list(ours.get(key, []))
        # longest kernel parts first: a shorter one may be a prefix of it
        by_kernel = collections.defaultdict(list)
        for kernel, s in ss:
            by_kernel[tuple(kernel)].append(s)
        for kernel in sorted(by_kernel, key=len, reverse=True):
            samples = by_kernel[kernel]
            k = list(kernel)
            u_got = take(up_left, k)[:len(samples)]
            o_got = take(our_left, k)[:len(samples)]
            for u in u_got:
                u.raw = u.ips[len(k):]
            pairs = pair(u_got, o_got)
            for what, got in (('upstream', u_got), ('ours', o_got)):
                if len(got) < len(samples):
                    c['missing_' + what] += len(samples) - len(got)
                    for s in samples[len(pairs):]:
                        bad['deferred sample missing in %s output' % what].append(
                            (s, None if what == 'upstream' else (u_got or [None])[0],
                             None if what == 'ours' else (o_got or [None])[0]))
            for s, (u, o) in zip(samples, pairs):
                # 7.2 prints an unmerged sample's cookie as a user frame
                # (after PERF_CONTEXT_USER_DEFERRED it takes it for an ip)
                up_cookie = u.raw == [s.cookie]
                up_st = len(u.ips) > len(k) and not up_cookie
                c['upstream_cookie_frame'] += up_cookie
                if up_st and s.verdict == 'stitched' and u.raw != s.user:
                    c['upstream_not_oracle'] += 1
                    bad['upstream stitched other than the record (oracle)'].append((s, u, o))
                our_st = o.lost is None and len(o.ips) > len(k)
                if our_st and s.verdict == 'stitched' and o.ips != k + list(s.user):
                    bad['ours stitched other than the record (oracle)'].append((s, u, o))
                c['upstream_stitched'] += up_st
                c['ours_stitched'] += our_st
                if o.lost is not None:
                    reasons_ours[o.lost] += 1
                if up_st and our_st:
                    if u.ips == o.ips:
                        c['both_same'] += 1
                    else:
                        c['both_differ'] += 1
                        bad['both stitch, chains differ'].append((s, u, o))
                elif up_st:
                    if s.verdict == 'exec' and o.lost == 'exec':
                        c['upstream_across_exec'] += 1
                    else:
                        c['upstream_stitched_ours_lost'] += 1
                        bad['upstream stitched, ours did not'].append((s, u, o))
                else:
                    verdicts_up_dropped[s.verdict] += 1
                    if id(s) in late:
                        c['upstream_dropped_late'] += 1
                    if our_st:
                        c['upstream_dropped_ours_kept'] += 1
                        if s.verdict != 'stitched':
                            bad['ours stitched where the oracle has no stack'].append((s, u, o))
                    elif o.lost is not None:
                        c['upstream_dropped_ours_reason'] += 1
                        dropped_reasons[o.lost] += 1
                    else:
                        c['both_dropped_no_reason'] += 1
                        bad['ours dropped the user part without a reason'].append((s, u, o))
    return {
        'file': data, 'counts': c, 'reasons_ours': reasons_ours,
        'dropped_reasons': dropped_reasons, 'verdicts_up_dropped': verdicts_up_dropped,
        'oracle': oracle.counts(judged), 'bad': bad, 'summary': summary,
        'outputs': (up_out, our_out),
    }


def show(r, nshow):
    c = r['counts']
    print('%s:' % r['file'])
    print('  samples printed: upstream %d, ours %d; deferred samples %d (oracle: %s)' % (
        c['samples_upstream'], c['samples_ours'], c['deferred'],
        ', '.join('%s %d' % kv for kv in sorted(r['oracle'].items()) if kv[0] != 'deferred')))
    print('  stitched by upstream %d, by ours %d; same chain %d, chains differ %d' % (
        c['upstream_stitched'], c['ours_stitched'], c['both_same'], c['both_differ']))
    print('  upstream dropped the user part of %d (printed the cookie as a frame: %d):'
          ' ours kept %d, named a reason for %d%s' % (
        sum(r['verdicts_up_dropped'].values()), c['upstream_cookie_frame'],
        c['upstream_dropped_ours_kept'],
        c['upstream_dropped_ours_reason'],
        ' (%s)' % ', '.join('%s %d' % kv for kv in sorted(r['dropped_reasons'].items()))
        if r['dropped_reasons'] else ''))
    if r['verdicts_up_dropped']:
        print('    oracle verdicts of those: %s; record earlier in time than the sample: %d'
              ' (of %d such samples)' % (', '.join(
                  '%s %d' % kv for kv in sorted(r['verdicts_up_dropped'].items())),
                  c['upstream_dropped_late'], c['late']))
    if c['upstream_across_exec']:
        print('  upstream stitched across execve() %d (the new program\'s stack; ours: exec)' %
              c['upstream_across_exec'])
    if c['upstream_stitched_ours_lost']:
        print('  upstream stitched, ours did not: %d' % c['upstream_stitched_ours_lost'])
    if c['missing_upstream'] or c['missing_ours']:
        print('  deferred samples not printed: upstream %d, ours %d' % (
            c['missing_upstream'], c['missing_ours']))
    if r['summary']:
        print('  ours: %s' % r['summary'])
    for kind, items in sorted(r['bad'].items()):
        print('  %s: %d' % (kind, len(items)))
        for s, u, o in items[:nshow]:
            print('    tid %d cpu %s time %d cookie %#x (oracle: %s)' % (
                s.tid, s.cpu, s.time, s.cookie, s.verdict))
            print('      upstream: %s' % fmt(u))
            print('      ours:     %s' % fmt(o))


def main(argv):
    args = {'upstream': os.path.join(repo, 'build/perf-upstream'),
            'ours': os.path.join(repo, 'build/perf'), 'show': 10}
    files = []
    it = iter(argv[1:])
    for a in it:
        if a in ('--upstream', '--ours', '--kallsyms', '--keep', '--show'):
            args[a[2:]] = next(it, None)
        elif a == '--json':
            args['json'] = True
        elif a in ('-h', '--help'):
            sys.stdout.write(__doc__)
            return 0
        elif a.startswith('-'):
            sys.stderr.write(__doc__)
            return 2
        else:
            files.append(a)
    if not files:
        sys.stderr.write(__doc__)
        return 2
    for p in ('upstream', 'ours'):
        if not os.access(args[p], os.X_OK):
            print('upstream-compare: no %s perf at %s%s' % (
                p, args[p], ' (make perf-upstream)' if p == 'upstream' else ''))
            return 2
    keep = args.get('keep')
    tmp = keep or tempfile.mkdtemp(prefix='upstream-compare.')
    if keep:
        os.makedirs(keep, exist_ok=True)
    status = 0
    try:
        for data in files:
            try:
                r = compare(data, args, tmp)
            except oracle.Fail as e:
                print('upstream-compare: %s: %s' % (data, e))
                status = 1
                continue
            if args.get('json'):
                print(json.dumps({
                    'file': data, 'counts': dict(r['counts']),
                    'oracle': dict(r['oracle']), 'reasons_ours': dict(r['reasons_ours']),
                    'upstream_dropped_ours_reasons': dict(r['dropped_reasons']),
                    'upstream_dropped_oracle_verdicts': dict(r['verdicts_up_dropped']),
                    'problems': {k: len(v) for k, v in r['bad'].items()}}, sort_keys=True))
            else:
                show(r, int(args['show']))
            if r['bad']:
                status = 1
    finally:
        if not keep:
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
            os.rmdir(tmp)
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv))
