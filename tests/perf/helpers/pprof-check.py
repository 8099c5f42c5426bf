#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper: what the pprof CLI prints of a perf stitch -F pprof
profile, in the terms of perf stitch -F folded, to compare the two.

    pprof -traces -unit=ns PROFILE | pprof-check.py traces
        folded lines, "comm;root;...;leaf weight", sorted: each trace's
        comm label as the root frame (spaces made '_'), its frames root
        first, named as folded names them (stackcollapse-perf.py's tidy())
    pprof-check.py folded-functions < FOLDED
        per function of folded lines: "name flat cum", sorted by name; flat
        the weight of the lines it is the leaf of, cum of those it is in
        (once per line), the root frame (the comm) left out
    pprof -top -unit=ns -nodecount=N PROFILE | pprof-check.py top
        the same from pprof's table, names tidied as folded names them

Weights are the numbers pprof prints, without the unit: with -unit=ns a
time profile is in nanoseconds, a count profile has no unit.
"""

import importlib.util
import os
import re
import sys

_spec = importlib.util.spec_from_file_location(
    'stackcollapse', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  'stackcollapse-perf.py'))
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)

VALUE = re.compile(r'^\s*(\d+)(?:ns)?\s{2,}(\S.*)$')
FRAME = re.compile(r'^\s{5,}(\S.*)$')
LABEL = re.compile(r'^\s*(\w+):\s+(.*)$')
TOP = re.compile(r'^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.*)$')


def name(func, comm):
    return sc.tidy(func, comm)


def traces():
    out = {}
    labels, frames, weight = {}, [], None

    def end():
        if weight is None:
            return
        comm = labels.get('comm', '').replace(' ', '_')
        key = ';'.join([comm] + [name(f, comm) for f in reversed(frames)])
        out[key] = out.get(key, 0) + weight
    for line in sys.stdin:
        line = line.rstrip('\n')
        if line.startswith('-----------+'):
            end()
            labels, frames, weight = {}, [], None
            continue
        m = VALUE.match(line)
        if m and weight is None:
            weight = int(m.group(1))
            frames.append(m.group(2).strip())
            continue
        if weight is not None:
            m = FRAME.match(line)
            if m:
                frames.append(m.group(1).strip())
            continue
        m = LABEL.match(line)
        if m:
            labels[m.group(1)] = m.group(2).strip()
    end()
    for k in sorted(out):
        print('%s %d' % (k, out[k]))


def folded_functions():
    flat, cum = {}, {}
    for line in sys.stdin:
        stack, w = line.rstrip('\n').rsplit(' ', 1)
        frames = stack.split(';')[1:]
        if not frames:
            continue
        w = int(w)
        flat[frames[-1]] = flat.get(frames[-1], 0) + w
        for f in set(frames):
            cum[f] = cum.get(f, 0) + w
    for f in sorted(cum):
        print('%s %d %d' % (f, flat.get(f, 0), cum[f]))


def top():
    rows = {}
    for line in sys.stdin:
        m = TOP.match(line.rstrip('\n'))
        if not m:
            continue
        f = name(m.group(3).strip(), '')
        a, b = rows.get(f, (0, 0))
        rows[f] = (a + int(m.group(1)), b + int(m.group(2)))
    for f in sorted(rows):
        print('%s %d %d' % (f, rows[f][0], rows[f][1]))


if __name__ == '__main__':
    cmds = {'traces': traces, 'folded-functions': folded_functions, 'top': top}
    if len(sys.argv) != 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]]()
