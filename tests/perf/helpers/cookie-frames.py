# SPDX-License-Identifier: GPL-2.0
"""Test-only: how many frames of a tool's output are a deferred cookie.

usage: cookie-frames.py COOKIES OUTPUT...

COOKIES: perf script --show-deferred-events output, or any text with
"[cookie: HEX]"; OUTPUT: what a perf tool printed or wrote (perf script,
perf report, perf data convert --to-json ...).  A frame whose address is a
cookie is the deferred marker's second word read as a user address: the
tool did not know the chain was deferred.  Prints the count and the first
such lines.
"""
import re
import sys

COOKIE = re.compile(r'\[cookie: ([0-9a-f]+)\]')
# a frame's address as perf prints it: bare hex in perf script's and
# perf report's frame lines, "0x..." in JSON and in perf report's
# unresolved entries
ADDRESS = re.compile(r'(?<![0-9a-zA-Z_])(?:0x)?([0-9a-f]{5,16})(?![0-9a-zA-Z_])')


def main():
    with open(sys.argv[1], errors='replace') as f:
        cookies = {c.lstrip('0') for c in COOKIE.findall(f.read())}
    cookies.discard('')
    found, shown = 0, []
    for path in sys.argv[2:]:
        with open(path, errors='replace') as f:
            for line in f:
                if '[cookie: ' in line or 'user stack deferred: cookie' in line:
                    continue	# a record's own line, or the pseudo-frame naming it
                for a in ADDRESS.findall(line):
                    if a.lstrip('0') in cookies:
                        found += 1
                        if len(shown) < 3:
                            shown.append(f'{path}: {line.strip()}')
    print(found)
    for s in shown:
        print(s)
    return 0


if __name__ == '__main__':
    sys.exit(main())
