#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# perf2text-stacks.py: the stacks in perfparser's text dump (perf2text,
# perfparser's PerfParserTestClient::convertToText), sample for sample.
#
#   compare DEFERRED.txt CONVERTED.txt
#       the patched perfparser's dump of a deferred recording against its
#       dump of the same recording as perf stitch -o wrote it: every
#       sample's frames the same.  A sample whose user callchain never
#       came ends, in the deferred dump, in one frame named "[user stack
#       lost: REASON]"; in the converted file perf stitch put a user entry
#       in a map of that name, which perfparser shows after a guess of its
#       own (the sample's ip as a first user frame): there the deferred
#       dump's kernel frames are the start of the converted one's, and the
#       reason the same.  Prints the counts; status 1 on any difference.
#   script DUMP.txt SCRIPT.txt
#       the user-space addresses of each sample's frames against perf
#       script -F pid,tid,time,ip,sym,dso --ns of the same file, in order
#       (perfparser's lines for a frame's function and inlined calls
#       between them; 0 entries left out, as perfparser keeps no frame for
#       them; the offset in the page, see PAGE); samples either shows
#       without user stack are counted apart
#   userless DUMP.txt
#       how many samples have no user-space frame, and how many in all
#
# A dump is, per sample: "comm<TAB>pid<TAB>tid<TAB>sec.nsec", the values
# (lines starting with a tab), an empty line, the frames ("<TAB>address"
# and what perfparser resolved), an empty line.
import collections
import re
import sys

LOST = re.compile(r'\[user stack lost: ([^\]]+)\]')
USER_SPACE_END = 0x0000800000000000


def samples(path):
    """[(key, frames)] of @path, key = (pid, tid, time)"""
    out = []
    state = 'header'
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if state == 'header':
                if not line:
                    continue
                fields = line.split('\t')
                if len(fields) < 4:
                    raise SystemExit(f'{path}: not a sample header: {line!r}')
                frames = []
                out.append(((fields[-3], fields[-2], fields[-1]), frames))
                state = 'values'
            elif state == 'values':
                if not line:
                    state = 'frames'
            elif not line:
                state = 'header'
            else:
                frames.append(line)
    return out


def lost_reason(frames):
    for frame in frames:
        m = LOST.search(frame)
        if m:
            return m.group(1)
    return None


def address(frame):
    try:
        return int(frame.split('\t')[1], 16)
    except (IndexError, ValueError):
        return None


def compare(deferred_path, converted_path):
    deferred = samples(deferred_path)
    converted = samples(converted_path)
    whole_d = collections.Counter()
    whole_c = collections.Counter()
    lost_d = collections.defaultdict(list)
    lost_c = collections.defaultdict(list)
    for key, frames in deferred:
        why = lost_reason(frames)
        if why is None:
            whole_d[(key, tuple(frames))] += 1
        else:
            lost_d[(key, why)].append(frames[:-1])
    for key, frames in converted:
        why = lost_reason(frames)
        if why is None:
            whole_c[(key, tuple(frames))] += 1
        else:
            lost_c[(key, why)].append(frames)

    bad = 0
    for (key, frames), n in sorted((whole_d - whole_c).items()):
        bad += n
        if bad <= 5:
            print(f'  only in {deferred_path}: {key}: ' + ' | '.join(frames[:8]))
    for (key, frames), n in sorted((whole_c - whole_d).items()):
        bad += n
        if bad <= 10:
            print(f'  only in {converted_path}: {key}: ' + ' | '.join(frames[:8]))
    orphans = 0
    for k in sorted(set(lost_d) | set(lost_c)):
        mine, theirs = lost_d.get(k, []), lost_c.get(k, [])
        if len(mine) != len(theirs):
            bad += abs(len(mine) - len(theirs))
            print(f'  {k}: {len(mine)} without user stack in the deferred dump, {len(theirs)} in the converted')
            continue
        unmatched = list(theirs)
        for prefix in mine:
            hit = next((t for t in unmatched if t[:len(prefix)] == prefix), None)
            if hit is None:
                bad += 1
                print(f'  {k}: kernel frames ' + ' | '.join(prefix[:6]) + ' not in the converted dump')
            else:
                unmatched.remove(hit)
                orphans += 1
    print(f'{len(deferred)} samples in {deferred_path}, {len(converted)} in {converted_path}; '
          f'{sum((whole_d & whole_c).values())} with the same stack, '
          f'{orphans} without user stack for the same reason; {bad} differ')
    # no sample on either side is a parser that read nothing, not agreement
    return 1 if bad or len(deferred) != len(converted) or not deferred else 0


def user_addresses(addresses):
    out = []
    for a in addresses:
        if a is not None and 0 < a < USER_SPACE_END and (not out or out[-1] != a):
            out.append(a)
    return tuple(out)


def script_samples(path):
    """[(key, frames)] of perf script -F pid,tid,time,ip --ns output"""
    out = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = re.match(r'^\s*(\d+)/(\d+)\s+(\d+\.\d+):', line)
            if m:
                frames = []
                out.append(((m.group(1), m.group(2), m.group(3)), frames))
                # a sample without callchain: its ip on the same line
                rest = line[m.end():].strip()
                if rest:
                    frames.append(rest)
            elif line.strip() and out:
                out[-1][1].append(line.strip())
    return out


# how far from a frame's address perfparser's lines for the function it is
# in may lie (its parent locations: the symbol's start, an inlined call's
# site)
FUNCTION_REACH = 1 << 20


# perfparser keeps one location for an address of an ELF file and shows it
# with the address where it first met it: the same code of another process
# (mapped elsewhere, /bin/true run again) shows that first address.
# Mappings start on a page, so the offset in the page is the code's own.
PAGE = 4096


def same_frames(dump, script):
    """@script's addresses are @dump's (in the page: see PAGE), where
    @dump also has, after a frame, its parent locations"""
    i = 0
    last = None
    for a in dump:
        if i < len(script) and a % PAGE == script[i] % PAGE:
            last = a
            i += 1
        elif last is None or abs(a - last) > FUNCTION_REACH:
            return False
    return i == len(script)


def script(dump_path, script_path):
    ours = collections.defaultdict(list)
    lost = 0
    for key, frames in samples(dump_path):
        if lost_reason(frames):
            lost += 1
            continue
        ours[key].append(user_addresses(address(f) for f in frames))
    same = diff = 0
    for key, frames in script_samples(script_path):
        if lost_reason(frames):
            continue        # perf's "[user stack lost: ...]" frame
        addrs = []
        for f in frames:
            try:
                addrs.append(int(f.split()[0], 16))
            except ValueError:
                addrs.append(None)
        want = user_addresses(addrs)
        candidates = ours.get(key, [])
        hit = next((c for c in candidates if same_frames(c, want)), None)
        if hit is not None:
            candidates.remove(hit)
            same += 1
        else:
            diff += 1
            if diff <= 5:
                print(f'  {key}: perf script ' + ' '.join(hex(a) for a in want[:8]))
    print(f'{same} samples with the user addresses perf script shows, {diff} differ, '
          f'{lost} without user stack')
    return 1 if diff or not same else 0


def userless(path):
    all_samples = samples(path)
    n = 0
    for _, frames in all_samples:
        if not any(0 < (address(f) or 0) < USER_SPACE_END for f in frames):
            n += 1
    print(f'{n} of {len(all_samples)} samples without a user-space frame')
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == 'compare':
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == 'script':
        return script(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == 'userless':
        return userless(sys.argv[2])
    print(__doc__ or 'usage: perf2text-stacks.py compare DEFERRED CONVERTED | userless DUMP',
          file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
