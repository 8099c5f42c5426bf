# SPDX-License-Identifier: GPL-2.0
"""Test-only: perf data convert --to-ctf carries perf script's callchains.

usage: ctf-check.py BABELTRACE_TEXT PERF_SCRIPT

BABELTRACE_TEXT: `babeltrace2 --clock-cycles CTF_DIR` of what perf data
convert --to-ctf wrote (a line per event; the clock in nanoseconds, as
perf's sample times).  PERF_SCRIPT: `perf script --ns --no-inline
--max-stack=1024 -F tid,time,ip,sym` of the same file.

Each sample becomes (time, tid, frame addresses, lost reason):
  - from CTF: perf_callchain's entries below PERF_CONTEXT_MAX, but the
    cookie after PERF_CONTEXT_USER_DEFERRED (a user part that never came),
    and perf_user_stack_lost ("none": the user part came, or was not
    deferred);
  - from perf script: the address of each frame line, but the pseudo-frame
    "[user stack lost: <reason>]", whose reason is the sample's.
The two multisets must be equal.  Also fails when a CTF callchain that
ends deferred has no perf_user_stack_lost, or when there are no samples.
Prints the counts and the first differences.
"""
import collections
import re
import sys

PERF_CONTEXT_MAX = 2**64 - 4095
PERF_CONTEXT_USER_DEFERRED = 2**64 - 640

CTF_EVENT = re.compile(r'^\[(\d+)\]')
CTF_TID = re.compile(r'\bperf_tid = (-?\d+)')
CTF_CHAIN = 'perf_callchain = ['
CTF_ENTRY = re.compile(r'\s*\[(\d+)\] = (0x[0-9A-Fa-f]+|\d+),?')
CTF_LOST = re.compile(r'\bperf_user_stack_lost = "([^"]*)"')

SCRIPT_HEAD = re.compile(r'^\s*(-?\d+)\s+(\d+)\.(\d{9}):')
SCRIPT_FRAME = re.compile(r'^\s+([0-9a-f]+)\s(.*)$')
LOST = re.compile(r'\[user stack lost: ([^\]]+)\]')


def chain_entries(line, pos):
    """The sequence's "[0] = 0x..., [1] = ..." from @pos, in order."""
    entries = []
    while True:
        e = CTF_ENTRY.match(line, pos)
        if not e or int(e.group(1)) != len(entries):
            return entries
        entries.append(int(e.group(2), 0))
        pos = e.end()


def ctf_samples(path):
    out, no_lost_field, deferred = [], 0, 0
    with open(path, errors='replace') as f:
        for line in f:
            m = CTF_EVENT.match(line)
            c = line.find(CTF_CHAIN)
            if not m or c < 0:
                continue
            tid = CTF_TID.search(line)
            entries = chain_entries(line, c + len(CTF_CHAIN))
            frames, skip, ends_deferred = [], False, False
            for e in entries:
                if skip:
                    skip = False
                    continue
                if e == PERF_CONTEXT_USER_DEFERRED:
                    skip = ends_deferred = True
                elif e < PERF_CONTEXT_MAX:
                    frames.append(e)
            lost = CTF_LOST.search(line)
            deferred += ends_deferred
            if ends_deferred and not lost:
                no_lost_field += 1
            # "none": stitched, or not deferred
            reason = lost.group(1) if lost and lost.group(1) != 'none' else ''
            out.append((int(m.group(1)), int(tid.group(1)) if tid else None,
                        tuple(frames), reason))
    return out, no_lost_field, deferred


def script_samples(path):
    out, cur = [], None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            h = SCRIPT_HEAD.match(line)
            if h:
                if cur:
                    out.append(cur)
                t = int(h.group(2)) * 10**9 + int(h.group(3))
                cur = [t, int(h.group(1)), [], '']
                continue
            fr = SCRIPT_FRAME.match(line)
            if cur is None or not fr:
                continue
            lost = LOST.search(fr.group(2))
            if lost:
                cur[3] = lost.group(1)
            else:
                cur[2].append(int(fr.group(1), 16))
    if cur:
        out.append(cur)
    return [(t, tid, tuple(fr), lost) for t, tid, fr, lost in out]


def main():
    ctf, no_lost_field, deferred = ctf_samples(sys.argv[1])
    script = script_samples(sys.argv[2])
    a, b = collections.Counter(ctf), collections.Counter(script)
    only_ctf, only_script = a - b, b - a
    lost = sum(1 for s in ctf if s[3])
    print(f'{len(ctf)} CTF samples with callchains, {len(script)} perf script samples, '
          f'{lost} with perf_user_stack_lost, {deferred} ending deferred, '
          f'{sum(only_ctf.values())} only in CTF, {sum(only_script.values())} only in perf script')
    for name, d in (('only in CTF', only_ctf), ('only in perf script', only_script)):
        for s in sorted(d)[:3]:
            print(f'  {name}: time {s[0]} tid {s[1]} lost "{s[3]}" frames '
                  + ' '.join(f'{x:x}' for x in s[2][:12]))
    bad = bool(only_ctf or only_script) or not ctf
    if no_lost_field:
        print(f'  {no_lost_field} CTF samples end deferred without perf_user_stack_lost')
        bad = True
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
