#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Canonical forms of perf output, for tests/perf/test-scenarios.sh.

    perfout.py script [--no-lost] < perf-script-output
        `perf script -F comm,tid,time,event,ip,sym` as
            COMM TID SECS.USECS EVENT      one line per sample
              IP SYM                       one line per callchain frame
              [user stack lost: REASON]    the pseudo-frame, whatever else
                                           the line holds
            (blank line)
        Event modifiers (cpu-clock:HG) are dropped.  Lines perf script
        prints that fit none of these come out as '?? LINE', so that a
        diff shows them.  --no-lost drops the pseudo-frame lines.
    perfout.py report < perf-report-output
        `perf report --stdio --children --sort sym -g none` as
            EVENT samples=N period=P
            EVENT CHILDREN% SELF% [k|.] SYM    sorted
        Rows of a `user stack lost` pseudo-symbol are dropped: whether the
        stitcher shows one in perf report is not specified.
    perfout.py sorted FILE
        the blank-line-separated blocks of FILE (canonical script output:
        one block per sample) in sorted order, to compare regardless of
        the order perf printed the samples in
    perfout.py blocks EXPECTED FILE
        exit 0 if every blank-line-separated block of EXPECTED appears in
        FILE as consecutive whole lines; else print the missing ones.
"""

import re
import sys

HEADER = re.compile(r'^\s*(\S.*?)\s+(\d+)\s+(\d+\.\d+):\s+([^\s:]+)(:\S*)?:\s*$')
FRAME = re.compile(r'^\s+([0-9a-f]+)\s+(.*?)\s*$')
LOST = re.compile(r'\[user stack lost: [^\]]*\]')


def script(lines, keep_lost=True):
    out = []
    for line in lines:
        line = line.rstrip('\n')
        m = LOST.search(line)
        if m:
            if keep_lost:
                out.append('  ' + m.group(0))
            continue
        if not line.strip():
            out.append('')
            continue
        m = HEADER.match(line)
        if m:
            out.append('%s %s %s %s' % m.group(1, 2, 3, 4))
            continue
        m = FRAME.match(line)
        if m:
            out.append('  %s %s' % m.group(1, 2))
            continue
        out.append('?? ' + line)
    while out and out[-1] == '':
        out.pop()
    return '\n'.join(out) + '\n\n' if out else ''


def report(lines):
    out, rows, event = [], [], None
    samples = period = None

    def flush():
        if event is not None:
            out.append('%s samples=%s period=%s' % (event, samples, period))
            out.extend(sorted(rows))
    for line in lines:
        m = re.match(r"^# Samples: (\d+)\s+of event '([^']*)'", line)
        if m:
            flush()
            samples, event, rows[:] = m.group(1), m.group(2).split(':')[0], []
            continue
        m = re.match(r'^# Event count \(approx\.\): (\d+)', line)
        if m:
            period = m.group(1)
            continue
        m = re.match(r'^\s+([\d.]+%)\s+([\d.]+%)\s+\[(.)\]\s+(.*?)\s*$', line)
        if m and event is not None and 'user stack lost' not in m.group(4):
            rows.append('%s %s %s [%s] %s' % ((event,) + m.group(1, 2, 3, 4)))
    flush()
    return '\n'.join(out) + '\n'


def blocks(expected, text):
    lines = text.split('\n')
    missing = []
    for blk in expected.strip('\n').split('\n\n'):
        want = blk.split('\n')
        n = len(want)
        if not any(lines[i:i + n] == want for i in range(len(lines) - n + 1)):
            missing.append(blk)
    for blk in missing:
        print('missing:\n' + blk)
    return not missing


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ''
    if cmd == 'script':
        sys.stdout.write(script(sys.stdin, '--no-lost' not in sys.argv))
    elif cmd == 'report':
        sys.stdout.write(report(sys.stdin))
    elif cmd == 'sorted' and len(sys.argv) == 3:
        blks = open(sys.argv[2]).read().strip('\n').split('\n\n')
        sys.stdout.write(''.join(b + '\n\n' for b in sorted(blks) if b))
    elif cmd == 'blocks' and len(sys.argv) == 4:
        sys.exit(0 if blocks(open(sys.argv[2]).read(), open(sys.argv[3]).read()) else 1)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
