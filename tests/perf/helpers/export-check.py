#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Helpers of tests/perf/test-stitch-export.sh.

    export-check.py gen --workload BIN --out FILE.data
        a deferred recording (perfdata.py, scenarios.py's model) with the
        export's edge cases: a comm with spaces, orphans (record lost, task
        exited, stream ended), user and kernel addresses without a symbol
        or a map, a kernel-only sample, a sample taken in user mode, two
        events, a third without callchains (page-faults: its samples, the
        first of the file among them, are one line in perf script that
        stackcollapse-perf.pl never takes for a sample), a callchain of a
        context marker only (no frame: the root frame alone), a thread
        renaming itself between its samples ('io worker'); writes
        FILE.data, FILE.kallsyms, FILE.json (expected orphans and samples
        per event)
    export-check.py script-stacks EVENT < perf-script-output
        one line per run of EVENT samples with the same stack in a thread,
        "TID<tab>WEIGHT<tab>frame;..." root first, WEIGHT the sum of the
        periods, the frames named as perf stitch -F speedscope names them
        (perf script -F comm,tid,time,period,event,ip,sym,dso)
    export-check.py truth-orphans EVENT TRUTH
        the number of EVENT samples the emulation's truth expects orphaned
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402
import scenarios as sc  # noqa: E402


GONE = 0x7f0000000000
SW_PAGE_FAULTS = 2


def gen(workload, out):
    s = sc.Scenario('export', 'perf stitch -F edge cases', sc.Binary(workload))
    s.event('cpu-clock', pd.SW_CPU_CLOCK, defer_output=True)
    s.event('task-clock', pd.SW_TASK_CLOCK)
    s.event('page-faults', SW_PAGE_FAULTS, sample_type=sc.SAMPLE_TYPE & ~pd.S_CALLCHAIN)
    s.main.comm = 'V8 WorkerThread'
    s.setup(kworker=True)
    # a library perf finds no symbols for: its frames are "[libgone.so.1]"
    m = s.main
    s.op(lambda w, r: w.mmap2(w.attrs[0], m.pid, m.tid, GONE, 0x10000, 0,
                              '/nonexistent/libgone.so.1', s.t(10)))
    C = sc.Cookie
    # an event without callchains, the file's first sample: not the
    # event stackcollapse-perf.pl filters for (it never sees its line)
    s.sample(s.main, 50, 0, None, sc.U_LEAF, expect='plain', event=2)
    # stitched, twice the same stack
    s.sample(s.main, 100, 0, sc.K_SYSCALL, sc.U_LEAF, C(0, 1))
    s.sample(s.main, 105, 0, sc.K_SYSCALL, sc.U_LEAF, C(0, 1))
    s.record(s.main, 110, 0, C(0, 1), sc.U_LEAF)
    # user addresses without a symbol ("[libgone.so.1]") and without a map ("[unknown]")
    s.sample(s.main, 200, 0, sc.K_READ, ['leaf', GONE + 0x1230, 0x7, 'main'], C(0, 3))
    s.record(s.main, 210, 0, C(0, 3), ['leaf', GONE + 0x1230, 0x7, 'main'])
    # a kernel address outside the kernel map, amid the kernel frames
    k = [pd.CONTEXT_KERNEL, sc.kaddr('schedule') + 0x24, 0xffffffffa0001000,
         sc.kaddr('do_syscall_64') + 0x24, sc.kaddr('entry_SYSCALL_64') + 0x24]
    c = C(0, 5)
    s.sample(s.main, 300, 0, ['schedule'], sc.U_MIDDLE, c,
             raw_chain=k + [pd.CONTEXT_USER_DEFERRED, c.value(False)])
    s.record(s.main, 310, 0, c, sc.U_MIDDLE)
    # record lost: a later entry of the same thread completed
    s.sample(s.worker, 400, 1, sc.K_SYSCALL, sc.U_WORKER, C(1, 1), expect='orphan:record lost')
    s.sample(s.worker, 500, 1, sc.K_IRQ, sc.U_WORKER, C(1, 3))
    s.record(s.worker, 510, 1, C(1, 3), sc.U_WORKER)
    # the other event: left out by default, exported with --event
    s.sample(s.worker, 520, 1, sc.K_SYSCALL, sc.U_WORKER, C(1, 5), event=1)
    s.record(s.worker, 530, 1, C(1, 5), sc.U_WORKER)
    # another library mapped over libgone.so.1: the same chain in the same
    # process (maps shared by its threads) now resolves to the new file
    s.op(lambda w, r: w.mmap2(w.attrs[0], m.pid, m.tid, GONE, 0x10000, 0,
                              '/nonexistent/libnew.so.2', s.t(532)))
    s.sample(s.worker, 534, 1, sc.K_READ, ['leaf', GONE + 0x1230, 0x7, 'main'], C(1, 7))
    s.record(s.worker, 536, 1, C(1, 7), ['leaf', GONE + 0x1230, 0x7, 'main'])
    # a sample without callchain amid the others, of a kernel address
    s.sample(s.worker, 540, 1, sc.K_SYSCALL, [], expect='plain', event=2)
    # a kernel thread: kernel part only
    s.sample(s.kworker, 600, 2, sc.K_KTHREAD, [], expect='plain')
    # taken in user mode
    s.sample(s.worker2, 700, 2, None, sc.U_WORKER, C(2, 1))
    s.record(s.worker2, 701, 2, C(2, 1), sc.U_WORKER)
    # the thread names itself (prctl(PR_SET_NAME)): its later samples show
    # the new comm, its speedscope profile is named by it
    w2 = s.worker2
    s.op(lambda w, r: w.comm(w.attrs[0], w2.pid, w2.tid, 'io worker', s.t(750), 2))
    w2.comm = 'io worker'
    # task exited before its record
    s.sample(s.worker2, 800, 2, sc.K_EXIT, sc.U_WORKER, C(2, 3), expect='orphan:task exited')
    s.exit(s.worker2, 850, 2)
    # stream ended, in user mode: only the pseudo-frame
    s.sample(s.main, 900, 0, None, sc.U_LEAF, C(0, 7), expect='orphan:stream ended')
    # a callchain of its context marker only: no frame
    s.sample(s.main, 950, 0, None, sc.U_LEAF, expect='plain', raw_chain=[pd.CONTEXT_USER])
    s.round()

    s.render(out, sc.Render())
    base = os.path.splitext(out)[0]
    with open(base + '.kallsyms', 'w') as f:
        f.write(sc.kallsyms_text())
    summary = {}
    for smp in s.samples:
        e = summary.setdefault(smp['event'], {'samples': 0, 'orphans': {}})
        e['samples'] += 1
        if smp['outcome'] == 'orphan':
            e['orphans'][smp['reason']] = e['orphans'].get(smp['reason'], 0) + 1
    with open(base + '.json', 'w') as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write('\n')


HEADER = re.compile(r'^(\S.*?)\s+(\d+)(?:/(\d+))?\s+.*?(\S+):\s*$')
FRAME = re.compile(r'^\s*([0-9a-f]+) (.+) \(([^()]*)\)$')
PERIOD = re.compile(r':\s*(\d+)\s+\S+:\s*$')


def script_stacks(event):
    """See the usage above: what -F speedscope must hold, run by run."""
    runs = {}           # tid -> [[stack, weight]], in time order
    order = []
    cur = None

    def end():
        stack = ';'.join(reversed(cur[2]))
        r = runs.setdefault(cur[0], [])
        if not r:
            order.append(cur[0])
        if r and r[-1][0] == stack:
            r[-1][1] += cur[1]
        else:
            r.append([stack, cur[1]])
    for line in sys.stdin:
        line = line.rstrip('\n')
        if not line:
            if cur is not None:
                end()
            cur = None
            continue
        m = HEADER.match(line)
        if m and not line.startswith((' ', '\t')):
            tid = m.group(3) or m.group(2)
            p = PERIOD.search(line)
            cur = (tid, int(p.group(1)) if p else 1, []) if m.group(4) == event else None
            continue
        if cur is None:
            continue
        m = FRAME.match(line)
        if not m:
            sys.exit('unexpected perf script line: %r' % line)
        name, mod = m.group(2), m.group(3)
        if name == '[unknown]' and mod != '[unknown]':
            name = '[%s]' % os.path.basename(mod)
        cur[2].append(name)
    for tid in order:
        for stack, weight in runs[tid]:
            sys.stdout.write('%s\t%d\t%s\n' % (tid, weight, stack))


def truth_orphans(event, truth):
    n = 0
    with open(truth) as f:
        for line in f:
            d = json.loads(line)
            if d.get('event') == event and d.get('expect') == 'orphan':
                n += 1
    print(n)


def main():
    a = sys.argv[1:]
    if a[:1] == ['gen'] and len(a) == 5 and a[1] == '--workload' and a[3] == '--out':
        gen(a[2], a[4])
    elif a[:1] == ['script-stacks'] and len(a) == 2:
        script_stacks(a[1])
    elif a[:1] == ['truth-orphans'] and len(a) == 3:
        truth_orphans(a[1], a[2])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
