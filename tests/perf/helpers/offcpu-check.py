# SPDX-License-Identifier: GPL-2.0
"""Test-only: --count=off-cpu weighs what the switches say, task by task,
and what the workload measured, function by function.

usage: offcpu-check.py SWITCHES FOLDED [TIMEHIST]
       offcpu-check.py workload WORKLOAD_OUTPUT FOLDED
       offcpu-check.py wall WORKLOAD_OUTPUT FOLDED_TID

The second form: WORKLOAD_OUTPUT has the "offcpu FUNCTION NANOSECONDS
CALLS" lines of tests/workloads/offcpu.c (its own clock: wall minus
thread CPU time around each blocking call); each FUNCTION's off-CPU time
in FOLDED (the lines with a FUNCTION frame) must be within 5% of it, or
below it by at most 5% and the "stolen NANOSECONDS" the workload saw the
hypervisor take meanwhile: a thread CPU clock does not count steal while
the thread runs, its switches do.  A function that blocked less than 50 ms in all (block_io on a tmpfs) is
reported as a skip ("SKIP" line), not checked.  Prints "check NAME ok" /
"check NAME <why not>" lines (tests/perf/lib.sh relay_checks).

The third form: FOLDED_TID is perf stitch -F folded --count=wall --tid
(time on CPU by the runs between the switches, split among the clock
samples; off CPU by the switches): each of the workload's four threads
("thread FUNCTION TID NANOSECONDS", its wall time from start to end) must
weigh within 5% of its wall time.

SWITCHES: `perf script --ns -F tid,cpu,time,trace` of the sched:sched_switch
samples of a recording (in time order); FOLDED: `perf stitch -F folded
--count=off-cpu --tid` of it; TIMEHIST: `perf sched timehist --state` of it.

From the switches alone, each task (tid) is off CPU from a switch that
names it prev_pid (not the idle task, nor an exiting one: prev_state X,
Z) to the next that names it next_pid, or to the last switch of the
recording; a second switch-out before a switch-in drops the first.  The
totals per task and prev_state (the leaf "[off-cpu: S]" of the folded
stacks; "[off-cpu: S, to the end]" for the open ones) must be those of
FOLDED, exactly.  With TIMEHIST: timehist's "wait time" of a task's row is
the time it was out before the run that row ends; every such wait must be
one of the intervals above (to timehist's microseconds).  timehist takes
a run's start from the switch before it on the same CPU; where that switch
did not put the task on (the recording lost the one that did: a system-wide
recording in a slow guest loses records), the row is not comparable and is
counted apart, never more of them than the CPUs' broken links.

Prints the counts and the first differences; exits 1 on any.
"""
import collections
import re
import sys

SWITCH = re.compile(r'^\s*(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):.*?prev_pid=(-?\d+)\s.*?'
                    r'prev_state=(\S+)\s+==>.*?next_pid=(-?\d+)\s')
ROOT_TID = re.compile(r'^(.*)-(-?\d+)/(-?\d+)$')
LEAF = re.compile(r'\[off-cpu: (.)(, to the end)?\]$')
TIMEHIST = re.compile(r'^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.*?)\[(\d+)(?:/\d+)?\]\s+([\d.]+)\s+'
                      r'([\d.]+)\s+([\d.]+)\s+(\S)')


def state_char(s):
    # perf_sample__taskstate(): the first letter; 'R' for a preempted 'R+'
    return s[0] if s else '?'


def oracle(path):
    out = {}                 # tid -> (time, state)
    totals = collections.Counter()
    intervals = collections.defaultdict(list)
    on_cpu = {}              # cpu -> next_pid of its last switch
    broken = set()           # (cpu, usec) of switches whose prev_pid is not it
    end = 0
    for line in open(path, errors='replace'):
        m = SWITCH.match(line)
        if not m:
            continue
        t = int(m.group(3)) * 10**9 + int(m.group(4))
        end = max(end, t)
        prev, state, nxt = int(m.group(5)), state_char(m.group(6)), int(m.group(7))
        cpu = int(m.group(2))
        if cpu in on_cpu and on_cpu[cpu] != prev:
            broken.add((cpu, t // 1000))
        on_cpu[cpu] = nxt
        if nxt in out:
            t0, st = out.pop(nxt)
            totals[(nxt, st, False)] += t - t0
            intervals[nxt].append(t - t0)
        if prev == 0 or state in 'XZ':
            continue
        out[prev] = (t, state)
    for tid, (t0, st) in out.items():
        totals[(tid, st, True)] += end - t0
    return totals, intervals, broken


def folded(path):
    totals = collections.Counter()
    for line in open(path, errors='replace'):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        frames = stack.split(';')
        r, leaf = ROOT_TID.match(frames[0]), LEAF.search(frames[-1])
        if not r or not leaf:
            print('  not an off-CPU stack with a --tid root: ' + line[:120])
            totals[('?', '?', False)] += int(n)
            continue
        totals[(int(r.group(3)), leaf.group(1), bool(leaf.group(2)))] += int(n)
    return totals


def workload(out_path, folded_path):
    measured = {}
    stolen = 0
    for line in open(out_path, errors='replace'):
        f = line.split()
        if len(f) == 4 and f[0] == 'offcpu':
            measured[f[1]] = (int(f[2]), int(f[3]))
        elif len(f) == 2 and f[0] == 'stolen':
            stolen = int(f[1])
    got = collections.Counter()
    for line in open(folded_path, errors='replace'):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        frames = set(stack.split(';'))
        for fn in measured:
            if fn in frames:
                got[fn] += int(n)
    if not measured:
        print('check workload-output no "offcpu" lines in %s' % out_path)
        return 1
    for fn, (ns, calls) in sorted(measured.items()):
        if ns < 50 * 10**6:
            print('SKIP %s: blocked %.1f ms in %d calls (no I/O here)' % (fn, ns / 1e6, calls))
            continue
        err = (got[fn] - ns) / ns
        low = ns * 0.95 - stolen
        within = 'within 5%%%s' % (' - %.1f ms stolen' % (stolen / 1e6) if stolen else '')
        print('check %s off CPU: the workload measured %.1f ms in %d calls, perf %.1f ms '
              '(%+.2f%%, %s) %s' % (fn, ns / 1e6, calls, got[fn] / 1e6, 100 * err, within,
                                    'ok' if low <= got[fn] <= ns * 1.05 else 'NOT ' + within))
    return 0


def wall(out_path, folded_path):
    threads = []
    for line in open(out_path, errors='replace'):
        f = line.split()
        if len(f) == 4 and f[0] == 'thread':
            threads.append((f[1], int(f[2]), int(f[3])))
    got = collections.Counter()
    for line in open(folded_path, errors='replace'):
        stack, _, n = line.rstrip('\n').rpartition(' ')
        r = ROOT_TID.match(stack.split(';')[0])
        if r:
            got[int(r.group(3))] += int(n)
    if not threads:
        print('check workload-output no "thread" lines in %s' % out_path)
        return 1
    for fn, tid, ns in threads:
        err = (got[tid] - ns) / ns if ns else 1
        print('check the thread of %s (tid %d) on and off CPU: its wall time %.1f ms, perf %.1f ms '
              '(%+.2f%%, within 5%%) %s' % (fn, tid, ns / 1e6, got[tid] / 1e6, 100 * err,
                                            'ok' if abs(err) <= 0.05 else 'NOT within 5%'))
    return 0


def main():
    if sys.argv[1] == 'wall':
        return wall(sys.argv[2], sys.argv[3])
    if sys.argv[1] == 'workload':
        return workload(sys.argv[2], sys.argv[3])
    want, intervals, broken = oracle(sys.argv[1])
    got = folded(sys.argv[2])
    diff = [k for k in set(want) | set(got) if want[k] != got[k]]
    print('%d tasks, %d (task, state) totals, %d ns off-CPU (%d to the end); %d differ'
          % (len({k[0] for k in want}), len(want), sum(want.values()),
             sum(v for k, v in want.items() if k[2]), len(diff)))
    for k in sorted(diff, key=str)[:5]:
        print('  tid %s state %s%s: switches say %d ns, folded %d'
              % (k[0], k[1], ', to the end' if k[2] else '', want[k], got[k]))
    bad = bool(diff) or not want
    if len(sys.argv) > 3:
        rows = missing = lost = 0
        for line in open(sys.argv[3], errors='replace'):
            m = TIMEHIST.match(line)
            if not m or float(m.group(5)) == 0:
                continue
            rows += 1
            sec, _, usec = m.group(1).partition('.')
            if (int(m.group(2)), int(sec) * 10**6 + int(usec)) in broken:
                lost += 1
                continue
            wait_us = round(float(m.group(5)) * 1000)
            if not any(abs(iv / 1000 - wait_us) <= 1 for iv in intervals[int(m.group(4))]):
                missing += 1
                if missing <= 3:
                    print('  timehist: %s' % line.strip()[:100])
        print('timehist: %d waits, %d not an off-CPU interval of their task%s'
              % (rows, missing, ', %d after a lost switch on their CPU (%d lost links)'
                 % (lost, len(broken)) if broken else ''))
        bad = bad or missing > 0 or not rows
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
