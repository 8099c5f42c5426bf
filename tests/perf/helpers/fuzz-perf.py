#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A mutation fuzzer of perf.data readers: perf script, perf report, perf
stitch -o, -F folded and --stats on damaged copies of seed files.

usage: fuzz-perf.py --perf PERF --out DIR [--count N] [--seed S]
                    [--timeout SECONDS] [--jobs J] [--commands C,...] SEED.data...
       fuzz-perf.py --perf PERF --out DIR --replay FILE.data...

Each mutant is a seed (file or pipe format) with one to four damages,
chosen at random from those a disk, a cut copy or a bad writer makes:
bit flips and runs of one byte anywhere, a record's size, a sample's or a
CALLCHAIN_DEFERRED record's nr field, a header field (sections, attr size,
feature bits), a feature section's offset or size, truncation.  Every
command runs on it with ASAN_OPTIONS and UBSAN_OPTIONS that make a
sanitizer report an error (leaks are not reported: perf does not free
everything at exit); the result is a crash (killed by a signal), a
sanitizer report (in stderr), a hang (the timeout, default 30 s), or fine
(any exit status: a damaged file may be refused).  Each of the first three
is kept in DIR as MUTANT.data with MUTANT.txt (command, status, and
stderr from the first sanitizer line, or its end).  Prints one line per
finding and last "mutants N, runs R, crashes C, sanitizer reports S, hangs
H"; exits 1 when anything was found.  --replay runs the commands on each
file as it is, no mutation: the kept findings of earlier runs, so that a
fixed reader stays fixed.  --jobs J runs J mutants at a time; the mutants
are the same whatever J (one generator, drawn in order).  --commands runs
some of the commands only (script, report, stitch, folded, stats; default
all): the same mutants, to fuzz again what a change touched.
"""

import argparse
import concurrent.futures
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

COMMANDS = {
    'script': ['script'],
    'report': ['report', '--stdio'],
    'stitch': ['stitch', '-f', '-o', '{out}'],
    'folded': ['stitch', '-f', '-F', 'folded', '-o', '{out}'],
    'stats': ['stitch', '--stats'],
}
SANITIZER = (b'ERROR: AddressSanitizer', b'runtime error:', b'ERROR: LeakSanitizer')
ENV = dict(os.environ, ASAN_OPTIONS='detect_leaks=0:abort_on_error=0:exitcode=99',
           UBSAN_OPTIONS='print_stacktrace=1:halt_on_error=0')


def mutate(rng, seed):
    buf = bytearray(seed)
    recs = pd.record_offsets(seed)
    for _ in range(rng.randint(1, 4)):
        recs = [r for r in recs if r + 16 <= len(buf)]      # a cut may have come first
        kind = rng.randrange(8)
        if kind == 0:                   # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(buf))
                buf[i] ^= 1 << rng.randrange(8)
        elif kind == 1:                 # a run of one byte
            i = rng.randrange(len(buf))
            n = rng.randint(1, 64)
            buf[i:i + n] = bytes([rng.choice((0, 0xff, rng.randrange(256)))]) * len(buf[i:i + n])
        elif kind == 2 and recs:        # a record's size
            r = rng.choice(recs)
            struct.pack_into('<H', buf, r + 6, rng.choice((0, 1, 8, 9, 0xffff,
                                                            rng.randrange(0x10000))))
        elif kind == 3 and recs:        # an nr field (a sample's callchain, a type-22 record's)
            r = rng.choice(recs)
            size = struct.unpack_from('<H', buf, r + 6)[0]
            if size >= 24 and r + size <= len(buf):
                off = r + 8 + 8 * rng.randrange((size - 16) // 8)
                struct.pack_into('<Q', buf, off, rng.choice((0, 1, 510, 1 << 32, (1 << 64) - 1)))
        elif kind == 4 and len(buf) >= 104 and struct.unpack_from('<Q', buf, 8)[0] == 104:
            field = rng.randrange(3, 13)        # header: sizes, sections, feature bits
            struct.pack_into('<Q', buf, 8 * field, rng.choice((0, 1, 1 << 40, (1 << 64) - 1,
                                                               rng.randrange(len(buf) * 2))))
        elif kind == 5 and len(buf) >= 104 and struct.unpack_from('<Q', buf, 8)[0] == 104:
            off, size = struct.unpack_from('<QQ', buf, 40)      # the feature table
            table = off + size
            if table + 16 <= len(buf):
                i = table + 8 * rng.randrange(min(32, (len(buf) - table) // 8))
                struct.pack_into('<Q', buf, i, rng.choice((0, 1 << 31, (1 << 64) - 1,
                                                           rng.randrange(len(buf) * 2))))
        elif kind == 6:                 # cut short
            del buf[rng.randrange(len(buf)):]
        else:                           # a random byte in a record's payload
            if recs:
                r = rng.choice(recs)
                size = struct.unpack_from('<H', buf, r + 6)[0]
                if r + size <= len(buf) and size > 8:
                    buf[r + rng.randrange(8, size)] = rng.randrange(256)
        if not buf:
            buf = bytearray(seed[:8])
    return bytes(buf)


def report(err):
    """The part of stderr worth keeping: from the first sanitizer line on."""
    at = min([err.find(s) for s in SANITIZER if s in err] or [max(len(err) - 4000, 0)])
    start = err.rfind(b'\n', 0, at) + 1
    return err[start:start + 8000]


def run(perf, cmd, path, out, timeout):
    args = [perf] + [a.replace('{out}', out) for a in cmd] + ['-i', path]
    try:
        r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout, env=ENV)
    except subprocess.TimeoutExpired:
        return 'hang', None, b''
    err = r.stderr
    if any(s in err for s in SANITIZER):
        return 'sanitizer report', r.returncode, err
    if r.returncode < 0 or 128 < r.returncode <= 192:
        return 'crash', r.returncode, err
    return None, r.returncode, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--perf', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--timeout', type=int, default=30)
    ap.add_argument('--replay', action='store_true')
    ap.add_argument('--jobs', type=int, default=1)
    ap.add_argument('--commands', default=','.join(COMMANDS))
    ap.add_argument('seeds', nargs='+')
    a = ap.parse_args()
    unknown = [c for c in a.commands.split(',') if c not in COMMANDS]
    if unknown:
        ap.error('unknown command %s (of %s)' % (unknown[0], ', '.join(COMMANDS)))
    commands = [COMMANDS[c] for c in a.commands.split(',')]

    os.makedirs(a.out, exist_ok=True)
    seeds = [open(p, 'rb').read() for p in a.seeds]
    rng = random.Random(a.seed)
    found = {'crash': 0, 'sanitizer report': 0, 'hang': 0}
    runs = 0
    if a.replay:
        a.count = len(seeds)

    def one(n, data):
        """Runs the commands on mutant n: (runs, (what, cmd, status, err) or None)."""
        # of this run only: a file rewritten under another run's reader is a SIGBUS
        base = os.path.join(a.out, 'mutant-%d-%d' % (os.getpid(), n))
        with open(base + '.data', 'wb') as f:
            f.write(data)
        done = 0
        result = None
        for cmd in commands:
            done += 1
            what, status, err = run(a.perf, cmd, base + '.data', base + '.out', a.timeout)
            if what:
                result = (what, cmd, status, err)
                break
        for p in (base + '.data', base + '.out'):
            if os.path.exists(p):
                os.unlink(p)
        return done, result

    def keep(n, data, result):
        what, cmd, status, err = result
        found[what] += 1
        name = os.path.join(a.out, '%s-%s' % (what.split()[0], os.path.basename(
            a.seeds[n]).rsplit('.', 1)[0] if a.replay else '%d-%d' % (a.seed, n)))
        with open(name + '.data', 'wb') as f:
            f.write(data)
        with open(name + '.txt', 'wb') as f:
            f.write(('perf %s -i FILE: %s, status %s\n' % (' '.join(cmd), what, status))
                    .encode() + report(err))
        print('%s: perf %s (status %s), kept as %s.data' % (what, ' '.join(cmd), status, name),
              flush=True)

    # The mutants are drawn in order from the one generator, whatever --jobs:
    # a seed and count name the same mutants on every machine.
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        n = 0
        while n < a.count:
            batch = []
            for _ in range(min(4 * a.jobs, a.count - n)):
                data = seeds[n] if a.replay else mutate(rng, rng.choice(seeds))
                batch.append((n, data, pool.submit(one, n, data)))
                n += 1
            for i, data, fut in batch:
                done, result = fut.result()
                runs += done
                if result:
                    keep(i, data, result)
    print('%s %d, runs %d, crashes %d, sanitizer reports %d, hangs %d' %
          ('files' if a.replay else 'mutants', a.count, runs, found['crash'], found['sanitizer report'], found['hang']))
    return 1 if any(found.values()) else 0


if __name__ == '__main__':
    sys.exit(main())
