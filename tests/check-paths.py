#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check-paths.py [DIR]: no committed file of the checkout DIR (default:
the one this script is in) names DIR's absolute path.

A recording, a binary built with -g or a README that names the checkout
it was made in points, in any other clone, at a path that is not there, or
worse at another checkout's files: what was read there then decides what
a test sees.  Every file git tracks is read as bytes (recordings and
binaries included), and so are the records a perf.data file holds
compressed (perf record -z); a path of DIR is DIR followed by '/', a NUL,
a quote, white space or the end.  Names each file that does, with the offset and
the path, and exits 1.  Recordings of tests/corpus/ name /mnt/clone
instead (tests/corpus/relocate.py; the guest mounts the checkout there).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus'))
from relocate import compressed_records, decompress  # noqa: E402


def main():
    top = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), '..'))
    files = subprocess.run(['git', '-C', top, 'ls-files', '-z'], check=True,
                           capture_output=True).stdout.split(b'\0')
    path = re.compile(re.escape(top.encode()) + rb'(?=[/\x00"\'\s]|$)')
    bad = 0
    for name in filter(None, files):
        full = os.path.join(top.encode(), name)
        if os.path.islink(full) or not os.path.isfile(full):
            continue
        with open(full, 'rb') as f:
            buf = f.read()
        where, hits = 'offset', list(path.finditer(buf))
        text = buf
        for off, _size, _typ, _start, payload in compressed_records(buf):
            if hits:
                break
            data = decompress(payload) or b''
            hits, text = list(path.finditer(data)), data
            where = 'the compressed record at %#x, at' % off
        if not hits:
            continue
        bad += 1
        m = hits[0]
        end = min(len(text), m.end() + 60)
        shown = re.split(rb'[\x00\n]', text[m.start():end])[0]
        print('check-paths: %s: names the checkout %d times, first at %s %d: %s'
              % (name.decode(errors='replace'), len(hits), where, m.start(),
                 shown.decode(errors='replace')))
    if bad:
        print('check-paths: %d committed files name %s: a clone elsewhere reads '
              'nothing there (tests/corpus/relocate.py renames the paths of a '
              'recording or binary)' % (bad, top))
        return 1
    print('check-paths: no committed file names %s (%d files)'
          % (top, len([f for f in files if f])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
