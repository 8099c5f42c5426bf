# SPDX-License-Identifier: GPL-2.0
"""Test-only: make the tid of sched_switch samples -1, as Linux writes it
for a task whose pid is gone while it runs on (preempted while it exits).

usage: tid-gone.py IN OUT SWITCHES

SWITCHES: `perf script --ns -F tid,cpu,time,trace` of IN.  Every other
switch-out of a task preempted (prev_state R) and switched in again later
gets tid -1 in OUT, nothing else changed.  The samples must lead with
IDENTIFIER and IP (perf record -e sched:sched_switch).  Prints "made N of
M preempted switches tid -1".
"""
import re
import struct
import sys

import perfdata

SWITCH = re.compile(r'^\s*(\d+)\s+\[\d+\]\s+(\d+)\.(\d{9}):.*?prev_pid=(\d+)\s.*?'
                    r'prev_state=(\S+).*?next_pid=(\d+)')
PERF_RECORD_SAMPLE = 9


def main():
    src, dst, switches = sys.argv[1:4]
    # (tid, time) of the preempted switch-outs whose task comes back
    out, back, order = {}, set(), []
    for line in open(switches, errors='replace'):
        m = SWITCH.match(line)
        if not m:
            continue
        tid, time = int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3))
        prev, state, nxt = int(m.group(4)), m.group(5), int(m.group(6))
        if nxt in out:
            back.add(out.pop(nxt))
        if prev == tid and prev and state.startswith('R'):
            out[prev] = (tid, time)
            order.append((tid, time))
    preempted = [k for k in order if k in back]
    chosen = set(preempted[::2])
    f = perfdata.PerfFile(src)
    for a, _ in f.attrs:
        st = struct.unpack_from('<Q', a, 24)[0]
        if st & (perfdata.S_IDENTIFIER | perfdata.S_IP) != (perfdata.S_IDENTIFIER | perfdata.S_IP):
            sys.exit('%s: samples without IDENTIFIER and IP' % src)
    buf = bytearray(f.buf)
    made = 0
    for rec, pos in zip(f.records, f.offsets):
        if struct.unpack_from('<I', rec, 0)[0] != PERF_RECORD_SAMPLE:
            continue
        # header, identifier, ip, then pid, tid and time
        _, tid, time = struct.unpack_from('<IIQ', rec, 24)
        if (tid, time) in chosen:
            struct.pack_into('<I', buf, pos + 28, 0xffffffff)
            made += 1
    open(dst, 'wb').write(buf)
    print('made %d of %d preempted switches tid -1' % (made, len(preempted)))


if __name__ == '__main__':
    main()
