#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test-only helper for tests/perf/test-stitch-convert.sh: writes the
deferred-format files its writer-made cases convert (tests/perf/helpers/perfdata.py).

  convert-gen.py NAME...     writes NAME.data for each NAME:

  edge       a record earlier in the file than its samples (another CPU's
             buffer), two samples sharing it, its duplicate, a user-mode
             sample, a sample whose record never comes (stream ended)
  garbage    a CALLCHAIN_DEFERRED whose nr overruns the record
  cut        the data ends inside the last record
  bigendian  the edge case's start, as a big-endian host writes it
  time0      an event without a time (perf record --tail-synthesize
             writes time 0) after timed ones were flushed
  oversize   a sample whose stitched callchain (300 kernel entries, the
             marker, 8000 user frames) is larger than a record can be
  untimed    the records written through a dummy event (defer_output)
             without PERF_SAMPLE_TIME: no time to place them by
  untimed_nocpu  the same dummy without PERF_SAMPLE_CPU either
  inplace        in-place user stacks holding the marker's value: not deferred
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402
KERNEL = pd.CONTEXT_KERNEL
UDEF = pd.CONTEXT_USER_DEFERRED
ST = pd.S_IP | pd.S_TID | pd.S_TIME | pd.S_CPU | pd.S_PERIOD | pd.S_CALLCHAIN | pd.S_IDENTIFIER

def base(be=False):
    w = pd.Writer(byteswap=be)
    a = w.add_attr('cpu-clock', pd.SW_CPU_CLOCK, ST,
                   flags=(pd.A_MMAP, pd.A_COMM, pd.A_TASK, pd.A_MMAP2, pd.A_COMM_EXEC,
                          pd.A_DEFER_CALLCHAIN, pd.A_DEFER_OUTPUT))
    w.kernel_mmap(a, 0xffffffff81000000, 0x1000000, 0xffffffff81000000, 1)
    w.comm(a, 100, 100, 'app', 10)
    w.comm(a, 100, 101, 'app', 11)
    w.mmap2(a, 100, 100, 0x400000, 0x10000, 0, '/nonexistent/app', 12)
    return w, a

def edge(path):
    w, a = base()
    c1, c2, c3 = pd.cookie(0, 1), pd.cookie(2, 1), pd.cookie(0, 3)
    # the record (CPU 1's buffer) earlier in the file, later in time: cross-CPU
    w.callchain_deferred(a, 100, 100, 300, 1, c1, [0x401000, 0x402000])
    w.sample(a, 100, 100, 200, 0, 0xffffffff81001000, [KERNEL, 0xffffffff81001000, UDEF, c1])
    w.sample(a, 100, 100, 250, 0, 0xffffffff81002000, [KERNEL, 0xffffffff81002000, UDEF, c1])
    w.finished_round()
    w.callchain_deferred(a, 100, 100, 300, 1, c1, [0x401000, 0x402000])   # duplicate
    w.sample(a, 100, 101, 400, 2, 0xffffffff81003000, [KERNEL, 0xffffffff81003000, UDEF, c2])
    w.sample(a, 100, 100, 500, 0, 0x403000, [UDEF, c3], misc=pd.MISC_USER)
    w.callchain_deferred(a, 100, 100, 501, 0, c3, [0x403000, 0x401000])
    w.finished_round()
    w.write(path)

def garbage(path):
    w, a = base()
    w.sample(a, 100, 100, 200, 0, 0xffffffff81001000, [KERNEL, 0xffffffff81001000, UDEF, pd.cookie(0, 1)])
    w.callchain_deferred(a, 100, 100, 300, 0, pd.cookie(0, 1), [0x401000], nr=1000)
    w.write(path)

def inplace(path):
    """User stacks unwound in place whose garbage takes the deferred
    marker's value, second to last and elsewhere: not deferred, the chain
    is the kernel's and perf must show what 6.1 shows."""
    w, a = base()
    user = pd.CONTEXT_USER
    w.sample(a, 100, 100, 200, 0, 0xffffffff81001000,
             [KERNEL, 0xffffffff81001000, user, 0x401000, UDEF, 0x402000])
    w.sample(a, 100, 100, 300, 0, 0x401000, [user, 0x401000, 0x402000, UDEF, 0x403000],
             misc=pd.MISC_USER)
    w.sample(a, 100, 100, 400, 0, 0x401000, [user, 0x401000, 0x402000], misc=pd.MISC_USER)
    w.write(path)

def cut(path):
    w, a = base()
    w.sample(a, 100, 100, 200, 0, 0xffffffff81001000, [KERNEL, 0xffffffff81001000, UDEF, pd.cookie(0, 1)])
    w.callchain_deferred(a, 100, 100, 300, 0, pd.cookie(0, 1), [0x401000])
    rec = w.recs[-1][0]
    w.raw(rec[:len(rec) - 16])
    w.write(path)

def bigendian(path):
    w, a = base(be=True)
    w.sample(a, 100, 100, 200, 0, 0xffffffff81001000, [KERNEL, 0xffffffff81001000, UDEF, pd.cookie(0, 1, True)])
    w.callchain_deferred(a, 100, 100, 300, 0, pd.cookie(0, 1, True), [0x401000])
    w.write(path)

def time0(path):
    w, a = base()
    w.sample(a, 100, 100, 200, 0, 0x401000, [UDEF, pd.cookie(0, 1)], misc=pd.MISC_USER)
    w.callchain_deferred(a, 100, 100, 201, 0, pd.cookie(0, 1), [0x401000, 0x402000])
    w.finished_round()
    w.sample(a, 100, 100, 300, 0, 0x401000, [UDEF, pd.cookie(0, 3)], misc=pd.MISC_USER)
    w.callchain_deferred(a, 100, 100, 301, 0, pd.cookie(0, 3), [0x401000, 0x402000])
    w.finished_round()
    w.comm(a, 100, 100, 'app', 0)
    w.finished_round()
    w.write(path)

def oversize(path):
    w, a = base()
    kernel = [0xffffffff81001000 + 16 * i for i in range(299)]
    user = [0x401000 + 8 * i for i in range(8000)]
    c = pd.cookie(0, 1)
    w.sample(a, 100, 100, 200, 0, kernel[0], [KERNEL] + kernel + [UDEF, c])
    w.callchain_deferred(a, 100, 100, 300, 0, c, user)
    w.write(path)
def untimed_case(path, dummy_type):
    """cpu-clock samples (with time and CPU) defer their user part to
    records written by a dummy event of sample_type dummy_type."""
    w = pd.Writer()
    a = w.add_attr('cpu-clock', pd.SW_CPU_CLOCK, ST,
                   flags=(pd.A_MMAP, pd.A_COMM, pd.A_TASK, pd.A_MMAP2, pd.A_COMM_EXEC,
                          pd.A_DEFER_CALLCHAIN))
    d = w.add_attr('dummy', pd.SW_DUMMY, dummy_type, flags=(pd.A_DEFER_OUTPUT,))
    w.kernel_mmap(a, 0xffffffff81000000, 0x1000000, 0xffffffff81000000, 1)
    w.comm(a, 100, 100, 'app', 10)
    w.mmap2(a, 100, 100, 0x400000, 0x10000, 0, '/nonexistent/app', 12)
    c1, c2 = pd.cookie(0, 1), pd.cookie(1, 1)
    w.sample(a, 100, 100, 200, 0, 0xffffffff81001000, [KERNEL, 0xffffffff81001000, UDEF, c1])
    w.callchain_deferred(d, 100, 100, 300, 1, c1, [0x401000, 0x402000])
    w.finished_round()
    w.sample(a, 100, 100, 400, 1, 0xffffffff81002000, [KERNEL, 0xffffffff81002000, UDEF, c2])
    w.sample(a, 100, 100, 450, 1, 0xffffffff81003000, [KERNEL, 0xffffffff81003000])
    w.callchain_deferred(d, 100, 100, 500, 1, c2, [0x403000])
    w.finished_round()
    w.write(path)

def untimed(path):
    untimed_case(path, pd.S_IDENTIFIER | pd.S_TID | pd.S_CPU)

def untimed_nocpu(path):
    untimed_case(path, pd.S_IDENTIFIER | pd.S_TID)

for name in sys.argv[1:]:
    globals()[name](name + '.data')
