#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper for tests/perf/test-stitch-convert.sh: what the suite
checks of a converted file, one subcommand each, each printing counts for
the suite to compare.

  convert-check.py reasons TRUTH.jsonl OUT.script
      the orphans the truth expects: how many, and how many of them do
      not end in exactly one '[user stack lost: REASON]' frame of their
      fault's reasons (a dropped record: record lost or task exited; a
      record starting with a bogus ip: unwind failed).  OUT.script is the
      system perf's default perf script of the converted file.
  convert-check.py same TRUTH.jsonl OURS.script REF.script
      the samples the truth expects stitched: how many, and how many show
      another callchain in REF.script (a perf without deferral, pristine
      perf 7.2, on the converted file) than in OURS.script (our perf on
      the deferred input); both 'perf script -F comm,tid,time,event,ip,sym
      --ns'.  A sample is known by its tid, time and event: two samples of
      one thread can have the same time, one of each event (a sys_exit
      tracepoint and a cpu-clock tick in the same nanosecond), and perf
      prints samples of equal time in the order it queued them, which may
      differ between the two files.  Samples of the same tid, time and
      event are matched as a group, whatever their order: a stitched one
      counts as shown the same when its callchain is among the other
      output's for that key as often as the truth expects.
  convert-check.py order DUMP
      'perf report -D' of the converted file: FINISHED_ROUND records,
      timed events, and how many of those are below the time of an event
      before them or the largest time of the previous round.
"""

import json
import re
import sys
from collections import Counter

DEFAULT_HDR = re.compile(r'^\s*(\d+)\s+(\d+)\.(\d{9}):\s+(\S+):\s*$')
FIELDS_HDR = re.compile(r'^\s*\S+\s+(\d+)\s+(\d+)\.(\d{9}):\s+(\S+):\s*$')
DUMP_EVENT = re.compile(r'^(\d+) (\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_(\w+)')


def samples_by_header(path, hdr, key):
    """{key(header match): [(frame lines) per sample, in output order]}"""
    out, cur = {}, None
    for line in open(path):
        m = hdr.match(line)
        if m:
            cur = []
            out.setdefault(key(m), []).append(cur)
        elif cur is not None and line.startswith('\t'):
            cur.append(line.strip())
    return {k: [tuple(f) for f in v] for k, v in out.items()}


def ns(m):
    return int(m[2]) * 10**9 + int(m[3])


def truth(path, expect):
    return [t for t in map(json.loads, open(path)) if t.get('expect') == expect]


def reasons(truth_path, script):
    samples = samples_by_header(script, DEFAULT_HDR, lambda m: (int(m[1]), ns(m), m[4]))
    want = {'drop': ('record lost', 'task exited'), 'empty': ('unwind failed',)}
    orphans = truth(truth_path, 'orphan')

    def shows(fr, kind):
        lost = [f for f in fr if '([user stack lost: ' in f]
        return (len(lost) == 1 and fr[-1] == lost[0] and
                any('[user stack lost: %s])' % r in lost[0] for r in want[kind]))
    # samples of one tid, time and event (see same) are matched as a group:
    # each orphan needs a sample of its own showing its reason
    left = {}
    bad = 0
    for t in orphans:
        k = (t['tid'], t['time'], t['event'])
        group = left.setdefault(k, list(samples.get(k, [])))
        match = next((i for i, fr in enumerate(group) if shows(fr, t['orphan'])), None)
        if match is None:
            bad += 1
        else:
            del group[match]
    print(len(orphans), bad)


def same(truth_path, ours_path, ref_path):
    def key(m):
        return (int(m[1]), ns(m), m[4])
    ours = samples_by_header(ours_path, FIELDS_HDR, key)
    ref = samples_by_header(ref_path, FIELDS_HDR, key)
    stitched = truth(truth_path, 'stitched')
    want = Counter((t['tid'], t['time'], t['event']) for t in stitched)
    bad = 0
    for k, n in want.items():
        # the callchains both outputs show for the key, as often as both do
        common = Counter(ours.get(k, [])) & Counter(ref.get(k, []))
        bad += max(0, n - sum(common.values()))
    print(len(stitched), bad)


def order(dump):
    rounds = bad = timed = 0
    last = prev_round_max = cur_max = 0
    for line in open(dump):
        m = DUMP_EVENT.match(line)
        if not m:
            continue
        t, kind = int(m[2]), m[3]
        if kind == 'FINISHED_ROUND':
            rounds += 1
            prev_round_max = cur_max
            continue
        if not t:
            continue        # no time: readers do not queue it
        timed += 1
        bad += t < last or t < prev_round_max
        last = max(last, t)
        cur_max = max(cur_max, t)
    print(rounds, timed, bad)


def main(argv):
    cmds = {'reasons': (reasons, 2), 'same': (same, 3), 'order': (order, 1)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.exit(__doc__)
    cmds[argv[1]][0](*argv[2:])


if __name__ == '__main__':
    main(sys.argv)
