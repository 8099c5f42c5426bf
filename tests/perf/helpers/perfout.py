#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Canonical forms of perf output, for tests/perf/test-scenarios.sh and
tests/perf/test-upstream-files.sh.

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
    perfout.py graph < perf-report-output
        `perf report --stdio` with its callchain graphs (-g graph, the
        default) as trees: every line outside a graph as it is; in a graph
        the same frames and values, one line each ('---' the root chain,
        '--VALUE--' a branch, its further frames indented below it, four
        columns a level), without the '|' lines, and the sibling branches
        of equal value in sorted order.  perf orders siblings by value,
        and those of equal value by the address of their struct dso in
        perf's heap (match_chain_dso_addresses() in util/callchain.c),
        which changes with anything perf allocated before: the order of
        the same tree differs between files holding the same records in
        other layouts.  A frame, a value, or branches of different values
        in another order still make the output differ.
    perfout.py deferred < perf-script-output
        the PERF_RECORD_CALLCHAIN_DEFERRED records `perf script
        --show-deferred-events -F comm,tid,time,...,ip,sym` printed (perf
        7.2's "DEFERRED CALLCHAIN [cookie: HEX]" lines), in file order, as
            COMM TID SECS.USECS cookie HEX
              IP SYM                       one line per user frame
            (blank line)
        and nothing of the samples.  A line in a record's frames that is
        not a frame comes out as '?? LINE'.
    perfout.py sorted FILE
        the blank-line-separated blocks of FILE (canonical script output:
        one block per sample) in sorted order, to compare regardless of
        the order perf printed the samples in
    perfout.py blocks EXPECTED FILE
        exit 0 if every blank-line-separated block of EXPECTED appears in
        FILE as consecutive whole lines; else print the missing ones.
    perfout.py summary SCENARIO.json
        the stitch summary line perf script prints on stderr at the end
        (deferred-callchains.txt), computed from the scenario alone:
            deferred callchains: N deferred samples, N stitched (x.y%),
            N orphans[ (REASON N, ...)], N records, N duplicate records[
            (N conflicting)], N cross-CPU records, N late samples
        deferred samples: samples with a well-formed cookie; orphans by
        reason in the engine's order; records: those fed to the stitcher
        (not malformed); a duplicate is a record of the tid, pid and cookie
        of an earlier kept one, within the window (1s) and no exit of
        the tid in between (stitching.md, Joining); cross-CPU: a record
        whose cpu is not the one its cookie names; late: a stitched sample
        timed after its record.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

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


DEFERRED = re.compile(r'^\s*(\S.*?)\s+(\d+)\s+(\d+\.\d+):\s+'
                      r'DEFERRED CALLCHAIN \[cookie: ([0-9a-f]+)\]\s*$')


def deferred(lines):
    out, inside = [], False
    for line in lines:
        line = line.rstrip('\n')
        m = DEFERRED.match(line)
        if m:
            if inside:
                out.append('')
            out.append('%s %s %s cookie %s' % m.group(1, 2, 3, 4))
            inside = True
            continue
        if not inside:
            continue
        if not line.strip():
            out.append('')
            inside = False
            continue
        m = FRAME.match(line)
        out.append('  %s %s' % m.group(1, 2) if m else '?? ' + line)
    if inside:
        out.append('')
    return '\n'.join(out) + '\n' if out else ''


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
            # An address without a symbol (a 0 return address): its level
            # letter says whether perf's kernel map loaded here
            # (machine__kernel_ip() against kernel_start), not what the
            # sample holds, so it is not compared.
            level = '?' if re.match(r'^[0-9a-f]{16}$', m.group(4)) else m.group(3)
            rows.append('%s %s %s [%s] %s' % (event, m.group(1), m.group(2), level, m.group(4)))
    flush()
    return '\n'.join(out) + '\n'


# a line of a graph: a branch ('--VALUE--' after its depth's '|' or
# blank), the root chain's first frame ('---'), a structure line, a frame
GRAPH_BRANCH = re.compile(r'^([ |]*)--([0-9.]+%?)--(.*)$')
GRAPH_ROOT = re.compile(r'^( *)---(.*)$')
GRAPH_BAR = re.compile(r'^[ |]*\|[ |]*$')
GRAPH_FRAME = re.compile(r'^([ |]*)(\S.*)$')
ENTRY = re.compile(r'^\s+[0-9.]+%\s')


class GraphError(Exception):
    pass


def graph_tree(block):
    """The lines of one callchain graph (ui/stdio/hist.c) as a tree of
    [value, frames, children].  Each depth of the graph takes 11 columns
    ('|' or blank, then '--VALUE--' on a branch's first line, else 10
    blanks), so a node is told by the column of its '--' (the root chain,
    printed 3 columns in, by its frames' column minus 10, as a frame's)."""
    root = [None, [], []]
    stack = [(-1 << 30, root)]
    for line in block:
        if GRAPH_BAR.match(line):
            continue
        m = GRAPH_ROOT.match(line)
        if m and not GRAPH_BRANCH.match(line):
            key, node = len(m.group(1)) + 3 - 10, ['', [m.group(2)], []]
        else:
            m = GRAPH_BRANCH.match(line)
            if m:
                key, node = len(m.group(1)), [m.group(2), [m.group(3)], []]
            else:
                m = GRAPH_FRAME.match(line)
                if not m or len(stack) == 1 or stack[-1][0] != len(m.group(1)) - 10:
                    raise GraphError(line)
                stack[-1][1][1].append(m.group(2))
                continue
        while stack[-1][0] >= key:
            stack.pop()
        stack[-1][1][2].append(node)
        stack.append((key, node))
    return root


def graph_lines(node, depth):
    """node's lines, its children's after its frames, equal values sorted"""
    value, frames, children = node
    pad = '    ' * depth
    if value is None:
        out = []
    elif value == '':
        out = [pad + '---' + frames[0]] + [pad + '   ' + f for f in frames[1:]]
    else:
        out = [pad + '--%s-- %s' % (value, frames[0])]
        out += [pad + ' ' * (len(value) + 5) + f for f in frames[1:]]
    subs = [(c[0], graph_lines(c, depth + 1)) for c in children]
    i = 0
    while i < len(subs):            # runs of equal value, perf's order kept between them
        j = i
        while j < len(subs) and subs[j][0] == subs[i][0]:
            j += 1
        for _, sub in sorted(subs[i:j], key=lambda vs: vs[1]):
            out += sub
        i = j
    return out


def graph(lines):
    """perf report --stdio with each callchain graph in canonical form: the
    graph is the lines after an entry line, from the first '|' line to the
    blank line closing it.  A line that does not fit the graph's columns
    comes out as '?? LINE', after the graph's lines, so that a diff shows
    it."""
    out, block, prev = [], None, ''
    for line in lines:
        line = line.rstrip('\n')
        if block is None:
            if ENTRY.match(prev) and GRAPH_BAR.match(line):
                block = [line]
            else:
                out.append(line)
            prev = line
            continue
        if line.strip():
            block.append(line)
            continue
        try:
            out += graph_lines(graph_tree(block), 0)
        except GraphError as e:
            out += block + ['?? ' + str(e)]
        out.append(line)
        block, prev = None, line
    if block is not None:
        out += block + ['?? graph without its closing blank line']
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


ORPHAN_REASONS = ('record lost', 'task exited', 'stream ended', 'memory cap', 'exec',
                  'unwind failed', 'malformed')
WINDOW = 1000 * 1000 * 1000     # --stitch-window default, ns


def summary(d):
    smp = [s for s in d['samples'] if s['deferred']]
    stitched = [s for s in smp if s['outcome'] == 'stitched']
    orphans = [s['reason'] for s in smp if s['outcome'] in ('orphan', 'malformed')]
    assert all(r in ORPHAN_REASONS for r in orphans), orphans
    recs = sorted((r for r in d['records'] if not r['malformed']),
                  key=lambda r: (r['time'], r['seq']))
    exits = [e for e in d['task_events'] if e['kind'] == 'exit']

    def exit_between(tid, a, b):
        """an exit that separates two items of tid: one less than a window
        before the later does not (the record of an exiting task's last
        entry follows its exit; stitching.md, Incarnations)"""
        return any(e['tid'] == tid and min(a, b) <= e['time'] < max(a, b) - WINDOW
                   for e in exits)

    kept, dups, conflicting, cross = [], 0, 0, 0
    for r in recs:
        cpu1, cnt = r['cookie'] & 0xffffffff, r['cookie'] >> 32
        if cpu1 and cnt & 1 and r['cpu'] is not None and cpu1 - 1 != r['cpu']:
            cross += 1
        first = [k for k in kept if (k['tid'], k['pid'], k['cookie']) ==
                 (r['tid'], r['pid'], r['cookie']) and abs(r['time'] - k['time']) <= WINDOW
                 and not exit_between(r['tid'], r['time'], k['time'])]
        if not first:
            kept.append(r)
        elif pd.sanitize(first[0]['ips']) == pd.sanitize(r['ips']) and pd.sanitize(r['ips']):
            dups += 1
        else:
            conflicting += 1
    late = 0
    for s in stitched:
        rec = [k for k in kept if (k['tid'], k['pid'], k['cookie']) ==
               (s['tid'], s['pid'], s['cookie'])
               and not exit_between(s['tid'], s['time'], k['time'])]
        rec.sort(key=lambda k: abs(k['time'] - s['time']))
        assert rec, s
        late += s['time'] > rec[0]['time']
    line = 'deferred callchains: %d deferred samples, %d stitched (%.1f%%), %d orphans' % (
        len(smp), len(stitched), 100.0 * len(stitched) / len(smp) if smp else 0.0,
        len(orphans))
    if orphans:
        line += ' (%s)' % ', '.join('%s %d' % (r, orphans.count(r))
                                    for r in ORPHAN_REASONS if r in orphans)
    line += ', %d records, %d duplicate records' % (len(recs), dups + conflicting)
    if conflicting:
        line += ' (%d conflicting)' % conflicting
    # a record written by an event without PERF_SAMPLE_CPU: count unknown
    if any(r['cpu'] is None for r in recs):
        line += ', cross-CPU records unknown, %d late samples' % late
    else:
        line += ', %d cross-CPU records, %d late samples' % (cross, late)
    return line + '\n' if smp or recs else ''


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ''
    if cmd == 'script':
        sys.stdout.write(script(sys.stdin, '--no-lost' not in sys.argv))
    elif cmd == 'report':
        sys.stdout.write(report(sys.stdin))
    elif cmd == 'deferred':
        sys.stdout.write(deferred(sys.stdin))
    elif cmd == 'graph':
        sys.stdout.write(graph(sys.stdin))
    elif cmd == 'sorted' and len(sys.argv) == 3:
        blks = open(sys.argv[2]).read().strip('\n').split('\n\n')
        sys.stdout.write(''.join(b + '\n\n' for b in sorted(blks) if b))
    elif cmd == 'blocks' and len(sys.argv) == 4:
        sys.exit(0 if blocks(open(sys.argv[2]).read(), open(sys.argv[3]).read()) else 1)
    elif cmd == 'summary' and len(sys.argv) == 3:
        import json
        sys.stdout.write(summary(json.load(open(sys.argv[2]))))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
