#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# cputime.py -o FILE CMD...: run CMD as /usr/bin/time -f '%U %S %M' would,
# writing "user sys maxrss maxanon" (seconds, seconds, KiB, KiB) into
# FILE, but with the cpu of every process CMD started, whether CMD waited
# for it or not.
#
# perf script and perf report start addr2line processes to resolve
# inlined functions: one perf kills and waits for them at exit, and
# /usr/bin/time counts them; another exits without and leaves them to
# finish on their own, uncounted, though they did its work.  As a child
# subreaper (PR_SET_CHILD_SUBREAPER) this reaps them all and counts them
# for the command.  maxrss is the command's own peak RSS, not its
# helpers'; maxanon the peak of its anonymous memory (RssAnon, read every
# POLL seconds: the kernel keeps no peak of it), what perf allocates as
# against the pages of the file it maps.  Exits with the command's
# status.
import ctypes
import os
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
POLL = 0.01


def rss_anon(pid):
    """RssAnon of @pid in KiB, 0 once it is gone"""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('RssAnon:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


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
    maxrss = maxanon = 0
    status = 1
    running = True
    while True:
        try:
            child, st, ru = os.wait4(-1, os.WNOHANG if running else 0)
        except ChildProcessError:
            break
        if child == 0:
            maxanon = max(maxanon, rss_anon(pid))
            time.sleep(POLL)
            continue
        user += ru.ru_utime
        system += ru.ru_stime
        if child == pid:
            maxrss = ru.ru_maxrss
            running = False
            status = os.waitstatus_to_exitcode(st)
            status = status if status >= 0 else 128 - status
    with open(out, 'w') as f:
        f.write('%.2f %.2f %d %d\n' % (user, system, maxrss, maxanon))
    sys.exit(status)


main()
