#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""cover-letter.py read 0000-cover-letter.patch

Prints the text of a git format-patch cover letter as a branch description
(git format-patch --cover-from-description=subject reads it back): the
subject without its [PATCH 00/NN] prefix, a blank line, then the body up to
the shortlog git appends ("Author (N):").
"""
import re
import sys


def read(path):
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    i, subject = 0, None
    while i < len(lines) and lines[i] != '':
        if lines[i].startswith('Subject: '):
            subject = lines[i][len('Subject: '):]
            while i + 1 < len(lines) and lines[i + 1].startswith((' ', '\t')):
                i += 1
                subject += ' ' + lines[i].strip()
        i += 1
    if subject is None:
        sys.exit(f'cover-letter.py: {path}: no Subject: header')
    subject = re.sub(r'^\[[^]]*\]\s*', '', subject)
    body = []
    for line in lines[i + 1:]:
        if re.match(r'^\S.* \(\d+\):$', line):
            break
        body.append(line)
    while body and body[-1] == '':
        body.pop()
    if subject.startswith('*** ') or not body:
        sys.exit(f'cover-letter.py: {path}: the cover letter has no text')
    return subject + '\n\n' + '\n'.join(body) + '\n'


def main():
    if len(sys.argv) != 3 or sys.argv[1] != 'read':
        sys.exit(__doc__)
    sys.stdout.write(read(sys.argv[2]))


if __name__ == '__main__':
    main()
