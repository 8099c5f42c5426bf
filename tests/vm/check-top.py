#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-top.py DIR: what `make vm-check` checks of the perf top runs
guest-record.sh made on Linux 7.2 (DIR = build/vm/rec, listed in DIR/TOPS,
screens in DIR/top/NAME.top, stderr in DIR/top/NAME.err).

A run with a reference recording DIR/NAME.data (perf record of the same
workload with the same --call-graph in the same guest) is held to perf
report of that recording, both in the children view, callchains in callee
order (a sample's frames from the sampled function outwards: its kernel
frames first, then the user frames stitched under them):

  - perf top stopped at the SIGINT, its end summary counts stitched samples,
    and every deferred sample in it is stitched or an orphan;
  - every screen's header counts the samples waiting ("deferred: N
    waiting"); no "[user stack deferred]" frame anywhere (a live view
    shows every sample stitched or as an orphan);
  - bounded: the samples waiting do not grow in the second half of the
    run; perf top's peak resident memory is at most 1.25x that of the
    frame pointer peer (the same workload, no deferral) where there is
    one;
  - the same functions: every function of the workload's binary with 20%
    or more (children) in one has 10% or more in the other, in perf top's
    last full screen (perf top runs with -z: a screen shows its own
    interval, as perf report's percentages; without it perf top decays
    every entry on its own);
  - stitched user frames under kernel ones: perf top's screens and perf
    report both show callchains where workload frames follow kernel
    frames, and every such workload frame of perf top's is a function
    perf report shows.  Not necessarily under kernel frames there: which
    functions a kernel entry interrupts is chance (a timer's softirq work
    in spin_leaf() showed in one run's perf top and not in the 13 s
    recording beside it, whose only such frames were the system calls'
    callers thread_loop() and thread_main()).

A frame pointer peer (top-fp-NAME: perf top -g of the same workload) is
held to the same report, of top-NAME.data.  The TUI's panes (status
'tui') must count the samples waiting in their titles, keep the
callchains expanded, show the hottest functions of the report of the same
workload, and let no sample wait once the workload is gone.  A run without a
reference (the ASan run) must stop at the SIGINT with no
sanitizer report and stitch samples.  Prints "ok   - ..." / "FAIL - ..."
lines; the exit status is the number of failures (at most 100).
"""
import glob
import os
import re
import subprocess
import sys

ENTRY = re.compile(r'^\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$')
SUMMARY = re.compile(r'perf top: deferred callchains: (\d+) deferred samples, (\d+) stitched '
                     r'\([\d.]+%\), (\d+) orphans.*')
WAITING = re.compile(r' deferred: (\d+) waiting, stitched: (\d+)/(\d+)')
SANITIZER = re.compile(r'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: \w+Sanitizer')
CLEAR = '\x1b[H\x1b[2J'

failures = 0


def check(name, ok, why=''):
    global failures
    if ok:
        print('ok   - %s' % name)
    else:
        failures += 1
        print('FAIL - %s%s' % (name, ': ' + why if why else ''))


def frame_name(line):
    """The frame a callchain line of perf's graph output names, or None."""
    s = line.strip().lstrip('|').strip()
    s = re.sub(r'^-*(?:[\d.]+%)?-*', '', s).strip()
    if not s or s.startswith('|'):
        return None
    return s


def parse_hists(text):
    """[(children, self, dso, level, symbol, [chains])], each chain a
    list of frame names in the order printed (one path of the graph)."""
    entries = []
    cur = None
    path = []
    for line in text.splitlines():
        if line.startswith('#'):
            continue
        m = ENTRY.match(line)
        if m:
            cur = (float(m.group(1)), float(m.group(2)), m.group(3), m.group(4),
                   m.group(5), [])
            entries.append(cur)
            path = []
            continue
        if cur is None or not line.strip():
            continue
        name = frame_name(line)
        if name is None:
            continue
        # a branch ("--x%--name", "---name") replaces the frames from its
        # column on; a line of just a name goes on the path it is under
        m = re.search(r'--[\d.]+%--|---', line)
        if m:
            path = [p for p in path if p[0] < m.start()] + [(m.start(), name)]
        else:
            path.append((line.index(name), name))
        cur[5].append([n for _, n in path])
    return entries


def workload_functions(entries, dso):
    """The functions of @dso's callchain entries, children percentages
    added up per name: perf makes a second entry of a function at the
    addresses where it has others inlined (the inline list's symbol of its
    own: compute at 74.35% and 5.12%, seen), in either order.  Not the
    inlined frames perf adds from addr2line, which perf top and perf report
    do not always find alike."""
    fn = {}
    for e in entries:
        if e[2] == dso and not e[4].endswith('(inlined)'):
            fn[e[4]] = min(100.0, fn.get(e[4], 0.0) + e[0])
    return fn


def stitched_under_kernel(entries, kernel, workload):
    """Workload frames that follow a kernel frame in some chain."""
    found = set()
    for e in entries:
        for chain in e[5]:
            seen_kernel = False
            for f in chain:
                if f in kernel:
                    seen_kernel = True
                elif seen_kernel and f in workload:
                    found.add(f)
    return found


def last_full_screen(top_text):
    screens = [s for s in top_text.split(CLEAR) if 'PerfTop:' in s]
    # the last may have been cut by the signal
    for s in reversed(screens[:-1] if len(screens) > 2 else screens):
        if parse_hists(s.split('\n', 3)[-1]):
            return s, screens
    return (screens[-1] if screens else ''), screens


# a callchain line of the TUI that is an address only: a frame without its symbol
BARE_FRAME = re.compile(r'^[\s+-]*(?:[\d.]+% )?(0x[0-9a-f]+)\s*$', re.M)
EXPANDED = re.compile(r'^-\s+\d+\.\d+%\s+\d+\.\d+%\s', re.M)


def panes_of(d, name, kind):
    paths = sorted(glob.glob(os.path.join(d, 'top', '%s.%s.*' % (name, kind))),
                   key=lambda p: int(p.rsplit('.', 1)[1]))
    return [open(p, errors='replace').read() for p in paths]


def title_of(pane):
    return pane.splitlines()[0] if pane.strip() else ''


def check_tui(d, name, hottest):
    """The TUI's panes, a second apart once the callchains are expanded
    with 'E' (NAME.tui.N), then once the workload was killed (NAME.gone.N).
    perf top runs without -z there: its entries live on from refresh to
    refresh, unfolded once expanded.  Every pane draws the histogram
    expanded, its title's stitched total grows while the workload runs,
    the last pane shows the hottest functions of perf report, every frame
    drawn has its name (the workload's binaries all have symbols), and once the
    workload is gone the samples it left waiting leave: perf top's input
    is quiet then, and its clock alone moves the stitch engine on."""
    panes = panes_of(d, name, 'tui')
    gone = panes_of(d, name, 'gone')
    err = open(os.path.join(d, 'top', name + '.err'), errors='replace').read()
    titles = [title_of(p) for p in panes]
    totals = [int(m.group(3)) for m in (WAITING.search(t) for t in titles) if m]
    drawn = [p for p in panes if EXPANDED.search(p)]
    gone_waiting = [int(m.group(1)) for m in (WAITING.search(title_of(p)) for p in gone) if m]
    print('     %s: %d panes a second apart, %d drawing the histogram expanded; '
          'stitched total per pane %s; once the workload was killed, samples waiting %s' %
          (name, len(panes), len(drawn), totals, gone_waiting))
    if panes:
        print('     %s: the last pane:' % name)
        for line in panes[-1].splitlines()[:30]:
            print('     | %s' % line.rstrip())
    check('%s: every title counts the samples waiting' % name,
          panes and all(WAITING.search(t) for t in titles + [title_of(p) for p in gone]),
          'titles above')
    check('%s: perf top goes on stitching under the TUI (stitched total %s -> %s)' %
          (name, totals[0] if totals else '-', totals[-1] if totals else '-'),
          len(totals) >= 2 and totals[-1] > totals[0])
    check('%s: every pane draws the histogram with its callchains expanded (%d of %d)' %
          (name, len(drawn), len(panes)), panes and len(drawn) == len(panes))
    check('%s: no [user stack deferred] frame' % name,
          not any('[user stack deferred' in p for p in panes + gone))
    bare = sorted(set(m.group(1) for p in panes + gone for m in BARE_FRAME.finditer(p)))
    check('%s: every frame of the callchains drawn has its name (bare addresses: %s)' %
          (name, ', '.join(bare[:5]) or 'none'), not bare)
    check('%s: the hottest functions of the same workload in perf report (%s)' %
          (name, ', '.join(sorted(hottest or []))),
          hottest and panes and all(f in panes[-1] for f in hottest), 'last pane above')
    check('%s: once the workload is gone no sample waits (samples waiting %s)' %
          (name, gone_waiting), len(gone_waiting) == len(gone) and gone_waiting and
          gone_waiting[-1] == 0)
    check('%s: nothing on stderr' % name, not err.strip(), err.strip()[-300:])


def rss_series(d, name):
    path = os.path.join(d, 'top', name + '.rss')
    if not os.path.exists(path):
        return []
    return [(float(t), int(k)) for t, k in (l.split() for l in open(path) if l.strip())]


def memory(d, name, headers):
    """Bounded whatever the run length: the samples waiting do not grow
    in the second half of the run (perf top takes 10-25 s to start in the
    guest, its resident memory with it: that is compared with the frame
    pointer peer's instead, top-fp-NAME, the same perf top on the same
    workload without deferral)."""
    waiting = [int(m.group(1)) for m in (WAITING.search(h) for h in headers) if m]
    rss = rss_series(d, name)
    print('     %s: samples waiting per screen %s; resident KiB %s' %
          (name, waiting, ' '.join('%.0fs:%d' % x for x in rss)))
    half = len(waiting) // 2
    check('%s: samples waiting do not grow (second half at most twice the first)' % name,
          len(waiting) >= 4 and max(waiting[half:]) <= 2 * max(waiting[:half]) + 100)
    peer = rss_series(d, name.replace('top-', 'top-fp-', 1))
    if peer:
        mine, theirs = max(k for _, k in rss), max(k for _, k in peer)
        check('%s: peak resident memory %d KiB, at most 1.25x the frame pointer peer\'s (%d KiB)'
              % (name, mine, theirs), mine <= 1.25 * theirs)


def program(workload):
    """the name of the workload's program: 'threads' of 'nice -n 19 .../threads 2 50'"""
    words = workload.split()
    while words[0] == 'nice' or words[0].startswith('-') or words[0].isdigit():
        words.pop(0)
    return os.path.basename(words[0])


def compare(d, name, ref_name, workload, top_text, perf, kernel, hottest, peer=False):
    """perf top's last full screen against perf report of ref_name.data"""
    screen, screens = last_full_screen(top_text)
    dso = program(workload)
    ref = os.path.join(d, ref_name + '.data')
    rep = subprocess.run([perf, 'report', '-i', ref, '--children', '--stdio', '--sort=dso,sym',
                          '--call-graph=graph,0,callee', '--kallsyms',
                          os.path.join(d, 'kallsyms')],
                         capture_output=True, text=True)
    check('%s: perf report of %s.data' % (name, ref_name), rep.returncode == 0,
          rep.stderr.strip()[-300:])
    top_entries = parse_hists(screen)
    rep_entries = parse_hists(rep.stdout)
    t_fn = workload_functions(top_entries, dso)
    r_fn = workload_functions(rep_entries, dso)
    print('     %s: %s functions, perf top: %s' % (name, dso, sorted(
        ((f, c) for f, c in t_fn.items() if c >= 1), key=lambda x: -x[1])))
    print('     %s: %s functions, perf report: %s' % (name, dso, sorted(
        ((f, c) for f, c in r_fn.items() if c >= 1), key=lambda x: -x[1])))
    if not peer:
        # by program: the TUI runs the same one longer
        hottest[dso] = [f for f, c in r_fn.items() if c >= 20]
    miss_t = [f for f, c in r_fn.items() if c >= 20 and t_fn.get(f, 0) < 10]
    miss_r = [f for f, c in t_fn.items() if c >= 20 and r_fn.get(f, 0) < 10]
    check('%s: the same hottest %s functions as perf report' % (name, dso),
          any(c >= 20 for c in r_fn.values()) and not miss_t and not miss_r,
          'under 10%% in perf top: %s, under 10%% in perf report: %s' % (miss_t, miss_r))
    functions = set(t_fn) | set(r_fn)
    # in any full screen: a short interval may have few kernel samples
    t_st = set()
    for scr in screens[:-1] if len(screens) > 2 else screens:
        t_st |= stitched_under_kernel(parse_hists(scr), kernel, functions)
    r_st = stitched_under_kernel(rep_entries, kernel, functions)
    check('%s: stitched user frames under kernel ones (perf top: %s; perf report: %s)'
          % (name, ', '.join(sorted(t_st)), ', '.join(sorted(r_st))),
          t_st and r_st and t_st <= set(r_fn),
          'perf top: %s, perf report: %s, of the functions perf report shows: %s'
          % (sorted(t_st), sorted(r_st), sorted(r_fn)))


def main(d):
    perf = os.environ.get('PERF') or os.path.join(os.path.dirname(__file__), '../../build/perf')
    tops = os.path.join(d, 'TOPS')
    if not os.path.exists(tops):
        check('perf top runs: %s' % tops, False, 'missing')
        return
    kernel = set()
    with open(os.path.join(d, 'kallsyms')) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3:
                kernel.add(p[2])
    hottest = {}    # workload program -> its functions with 20% or more
    for line in open(tops):
        if line.startswith('#') or not line.strip():
            continue
        name, cmd, workload, status = line.rstrip('\n').split('\t')
        if status == 'tui':
            check_tui(d, name, hottest.get(program(workload)))
            continue
        top_text = open(os.path.join(d, 'top', name + '.top'), errors='replace').read()
        err = open(os.path.join(d, 'top', name + '.err'), errors='replace').read()
        check('%s: perf top stopped at SIGINT, exit status 0' % name, status == '0',
              'exit status %s; %s' % (status, err.strip()[-300:]))
        # the frame pointer peer: perf top -g of the same workload
        peer = name.startswith('top-fp-')
        if peer:
            check('%s: no deferral, no deferred summary' % name,
                  not any(SUMMARY.search(l) for l in err.splitlines()))
            compare(d, name, name.replace('top-fp-', 'top-', 1), workload, top_text, perf,
                    kernel, hottest, peer=True)
            continue
        summary = [SUMMARY.search(l) for l in err.splitlines()]
        summary = [m for m in summary if m]
        check('%s: its summary counts stitched samples' % name,
              summary and int(summary[-1].group(2)) > 0,
              summary and summary[-1].group(0) or 'no summary in stderr')
        if summary:
            print('     %s' % summary[-1].group(0))
        # the samples still waiting at the stop leave too, stitched or orphans
        check('%s: every deferred sample of the summary stitched or an orphan' % name,
              summary and int(summary[-1].group(1)) ==
              int(summary[-1].group(2)) + int(summary[-1].group(3)))
        if 'asan' in name:
            bad = [l for l in err.splitlines() if SANITIZER.search(l)]
            check('%s: no sanitizer report' % name, not bad, '; '.join(bad[:3]))
            continue

        headers = [h for h in top_text.splitlines() if 'PerfTop:' in h]
        check('%s: screens (%d), every header counts the samples waiting' % (name, len(headers)),
              len(headers) >= 2 and all(WAITING.search(h) for h in headers),
              headers[-1] if headers else 'no screen')
        check('%s: no [user stack deferred] frame' % name,
              '[user stack deferred' not in top_text)
        memory(d, name, headers)
        lost = top_text.count('[user stack lost')
        if lost:
            print('     %s: %d lines with "[user stack lost: ...]"' % (name, lost))

        compare(d, name, name, workload, top_text, perf, kernel, hottest)

if __name__ == '__main__':
    main(sys.argv[1])
    sys.exit(min(failures, 100))
