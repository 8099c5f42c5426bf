# SPDX-License-Identifier: GPL-2.0
"""Test-only: the user part of a stitched sample resolves as its record does.

usage: record-maps-check.py MERGED UNMERGED

MERGED: perf script's output of a file (samples stitched); UNMERGED: perf
script --no-merge-callchains --show-deferred-events of the same file (each
sample with its kernel frames and the "[user stack deferred: cookie C]"
pseudo-frame, each PERF_RECORD_CALLCHAIN_DEFERRED with its frames, resolved
when the record comes).  Both print the samples in the same (time) order.
For every stitched sample, the frames after its kernel part must be those
of its record, symbol and dso as perf shows the record: the user stack was
taken when the record was written, and resolves against the maps of then
(an exec between: the new program's).

Prints the counts, the first samples that differ, and exits 1 on any, or
on a record printed with blank lines for frames.
"""
import re
import sys

RECORD = re.compile(r'DEFERRED CALLCHAIN \[cookie: ([0-9a-f]+)\]')
PSEUDO = re.compile(r'\[user stack deferred: cookie 0x([0-9a-f]+)\]')
# pid/tid -1: a sample of no task (system-wide), its comm ":-1"
TID = re.compile(r'^\s*\S.*?\s(-?\d+)(?:/(-?\d+))?\s+(?:\[\d+\]\s+)?[0-9.]+:')


def blocks(path):
    """perf script's output as (header, frame lines) per event."""
    with open(path, errors='replace') as f:
        head, frames = None, []
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            if line[0] == '\t' or not TID.match(line):
                if head is not None:
                    frames.append(line.strip())
                continue
            if head is not None:
                yield head, frames
            head, frames = line, []
        if head is not None:
            yield head, frames


def tid_of(head):
    m = TID.match(head)
    return (m.group(2) or m.group(1)) if m else None


def main():
    merged = [b for b in blocks(sys.argv[1])]
    records, samples = {}, []
    for head, frames in blocks(sys.argv[2]):
        m = RECORD.search(head)
        if m:
            # a cookie names one kernel entry of one task
            records[(tid_of(head), m.group(1))] = frames
        else:
            samples.append((head, frames))
    if len(merged) != len(samples):
        print(f'{len(merged)} samples merged, {len(samples)} not: not the same file')
        return 1
    stitched = differ = 0
    for (mhead, mframes), (uhead, uframes) in zip(merged, samples):
        if mhead != uhead:
            print(f'sample order differs:\n  {mhead}\n  {uhead}')
            return 1
        m = PSEUDO.search(uframes[-1]) if uframes else None
        if not m or any('[user stack lost: ' in f for f in mframes):
            continue
        rec = records.get((tid_of(uhead), m.group(1)))
        if not rec or not all(re.match(r'[0-9a-f]+ ', f) for f in rec):
            # joined to a record of another incarnation (the oracle checks
            # it), or of an event whose records perf script prints without
            # frames (tracepoints)
            continue
        stitched += 1
        user = mframes[len(uframes) - 1:]
        if user != rec:
            differ += 1
            if differ <= 3:
                i = next((i for i, (a, b) in enumerate(zip(user, rec)) if a != b),
                         min(len(user), len(rec)))
                print(f'{mhead}\n  frame {i} of {len(user)} stitched, {len(rec)} in the record:'
                      f'\n  stitched: {user[i:i + 2]}\n  record:   {rec[i:i + 2]}')
    # a frame line printed empty (no print options for the record's
    # event): blank lines where the record's frames are
    with open(sys.argv[2], errors='replace') as f:
        text = f.read()
    blank = len(re.findall(r'DEFERRED CALLCHAIN \[cookie: [0-9a-f]+\]\n\n\n', text))
    print(f'{len(samples)} samples, {stitched} stitched to a record shown, {differ} resolved otherwise'
          + (f', {blank} records printed with blank frames' if blank else ''))
    return 1 if differ or blank else 0


if __name__ == '__main__':
    sys.exit(main())
