#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# cputime.py -o FILE CMD...: run CMD as /usr/bin/time -f '%U %S %M' would,
# writing "user sys maxrss" (seconds, seconds, KiB) into FILE, but with
# the cpu of every process CMD started, whether CMD waited for it or not.
#
# perf script and perf report start addr2line processes to resolve
# inlined functions: one perf kills and waits for them at exit, and
# /usr/bin/time counts them; another exits without and leaves them to
# finish on their own, uncounted, though they did its work.  As a child
# subreaper (PR_SET_CHILD_SUBREAPER) this reaps them all and counts them
# for the command.  maxrss is the command's own peak RSS, not its
# helpers'.  Exits with the command's status.
import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def main():
    if len(sys.argv) < 4 or sys.argv[1] != '-o':
        sys.exit('usage: cputime.py -o FILE CMD...')
    out, cmd = sys.argv[2], sys.argv[3:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
        sys.exit('cputime.py: PR_SET_CHILD_SUBREAPER: %s' % os.strerror(ctypes.get_errno()))
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write('cputime.py: %s: %s\n' % (cmd[0], e.strerror))
            os._exit(127)
    user = system = 0.0
    maxrss = 0
    status = 1
    while True:
        try:
            child, st, ru = os.wait4(-1, 0)
        except ChildProcessError:
            break
        user += ru.ru_utime
        system += ru.ru_stime
        if child == pid:
            maxrss = ru.ru_maxrss
            status = os.waitstatus_to_exitcode(st)
            status = status if status >= 0 else 128 - status
    with open(out, 'w') as f:
        f.write('%.2f %.2f %d\n' % (user, system, maxrss))
    sys.exit(status)


main()
