#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""gen-scale.py OUT [options]: a generated system-wide perf.data of a
many-CPU machine with deferred user callchains, for make bench-scale.

What the kernel writes (../shared/reference/ABI.md), at the size of a big
machine: on each of --cpus CPUs a worker task takes a cpu-clock sample
every 1/--hz s, half in user mode (PERF_CONTEXT_USER_DEFERRED, cookie; the
record written as the interrupt returns, 5 us later), half in a system
call (kernel frames, the marker, the cookie; the record at the return, 20
us later), each record in its CPU's buffer.  Beside them a server process
of --blockers threads that block as servers do: each runs a millisecond
on some CPU, then blocks (a context-switches sample, period 1, taken in
the kernel) for a time drawn log-uniformly between 1 ms and --block-max
seconds, and its record is written when it wakes up, on another CPU.  The
first blocker blocks for --block-max seconds from the start: the longest
wait, which a reader keeping time order must hold everything behind.
--shape changes that first block, of the first --long blockers: never
(the above; with --block-max past the end, the blocker never wakes and
its record is never written), end (it wakes at the end: its record is
the last), random (16 blockers wake at random times), many (64 blockers
each block most of the recording).  --remap-ms maps code into the server
every so many ms, on some CPU: a plugin at an address of its own (no
stack lies in it), or with --remap-in-place every 4th time the server's
binary again in place (a new version of it), under its threads' stacks.

The file is written as perf record writes one: the events of each round
of --round-ms, CPU by CPU, each CPU's in time order, a FINISHED_ROUND after
each round; attrs of 128 bytes (both perfs read them), the tracking event's
defer_output on cpu-clock.  Binaries and kernel frames do not resolve
(the bench measures reading and stitching, not symbols).

Prints one line: the samples, records and bytes written, the longest block.
"""

import argparse
import heapq
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tests', 'perf', 'helpers'))
import perfdata as pd  # noqa: E402

SW_CONTEXT_SWITCHES = 3
NS = 1000000000
SAMPLE_TYPE = pd.S_IDENTIFIER | pd.S_IP | pd.S_TID | pd.S_TIME | pd.S_CPU | \
    pd.S_PERIOD | pd.S_CALLCHAIN
KERNEL_BASE = 0xffffffff81000000
WORKER_BASE = 0x555555554000
SERVER_BASE = 0x555555800000
PLUGIN_BASE = 0x7f0000000000
CONTEXT_KERNEL_B = struct.pack('<Q', pd.CONTEXT_KERNEL)


class StreamWriter(pd.Writer):
    """perfdata.Writer, its records written as they come: the header,
    ids and attrs first (the attrs are known before the data), the
    features after the data, then the header again with the sizes."""

    def start(self, path):
        p = self.p
        self.fp = open(path, 'wb')
        ids, secs = b'', []
        for a in self.attrs:
            secs.append((pd.HEADER_SIZE + len(ids), 8 * len(a.ids)))
            ids += b''.join(p('Q', i) for i in a.ids)
        self.attrs_off = pd.HEADER_SIZE + len(ids)
        attrs = b''.join(self._attr_bytes(a, False) + p('QQ', o, s)
                         for a, (o, s) in zip(self.attrs, secs))
        self.attrs_len = len(attrs)
        self.data_off = self.attrs_off + len(attrs)
        self.data_len = 0
        self.fp.write(b'\0' * pd.HEADER_SIZE + ids + attrs)

    def _add(self, typ, misc, body, info):
        size = 8 + len(body)
        self.fp.write(self.p('IHH', typ, misc, size) + body)
        self.data_len += size
        return info

    def put(self, rec):
        """A record already packed."""
        self.fp.write(rec)
        self.data_len += len(rec)

    def finish(self):
        feats, hdr = self.tail(False, self.attrs_off, self.attrs_len, self.data_off,
                               self.data_len)
        self.fp.write(feats)
        self.fp.seek(0)
        self.fp.write(hdr)
        self.fp.close()


class Gen:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.w = StreamWriter(ncpus=a.cpus, hostname='bench-scale')
        flags = (pd.A_MMAP, pd.A_COMM, pd.A_TASK, pd.A_MMAP2, pd.A_COMM_EXEC,
                 pd.A_DEFER_CALLCHAIN, pd.A_DEFER_OUTPUT)
        self.clock = self.w.add_attr('cpu-clock', pd.SW_CPU_CLOCK, SAMPLE_TYPE,
                                     period=NS // a.hz, flags=flags)
        self.cs = self.w.add_attr('context-switches', SW_CONTEXT_SWITCHES, SAMPLE_TYPE,
                                  period=1, flags=(pd.A_DEFER_CALLCHAIN,))
        self.cnt = [1] * a.cpus         # per-CPU cookie counters, odd
        self.samples = self.records = 0
        # 16 user stacks per program, 8 frames and the 0 glibc's _start
        # leaves, and 32 kernel paths of 6 frames, packed once
        self.stacks = {base: [struct.pack('<9Q', *[base + 0x1000 + self.rng.randrange(0, 0x8000, 4)
                                                   for _ in range(8)], 0)
                              for _ in range(16)]
                       for base in (WORKER_BASE, SERVER_BASE)}
        self.kpaths = [struct.pack('<6Q', *[KERNEL_BASE + self.rng.randrange(0, 0x800000, 16)
                                            for _ in range(6)])
                       for _ in range(32)]
        # IDENTIFIER, IP, TID, TIME, CPU, PERIOD, the callchain's nr
        self.shead = struct.Struct('<QQIIQIIQQ')
        self.tail = struct.Struct('<QQ')
        self.hdr = struct.Struct('<IHH')
        # the records' sample_id: TID, TIME, CPU, IDENTIFIER (perfdata.sample_id())
        self.sid = struct.Struct('<IIQIIQ')
        self.mmap2 = struct.Struct('<IIQQQIIQQII')
        assert self.sid.size == len(pd.sample_id(SAMPLE_TYPE))

    def cookie(self, cpu):
        c = pd.cookie(cpu, self.cnt[cpu])
        self.cnt[cpu] += 2
        return c

    def sample(self, attr, pid, tid, time, cpu, kpath, cookie, period):
        """A deferred sample: in the kernel (@kpath, packed) or in user mode."""
        nr = (2 + len(kpath) // 8 + 1) if kpath else 2
        body = self.shead.pack(attr.id_for(cpu), KERNEL_BASE if kpath else WORKER_BASE,
                               pid, tid, time, cpu, 0, period, nr)
        if kpath:
            body += CONTEXT_KERNEL_B + kpath
        body += self.tail.pack(pd.CONTEXT_USER_DEFERRED, cookie)
        return self.hdr.pack(pd.SAMPLE, pd.MISC_KERNEL if kpath else pd.MISC_USER,
                             8 + len(body)) + body

    def record(self, pid, tid, time, cpu, cookie, stack):
        """@stack: its ips, packed."""
        body = self.tail.pack(cookie, len(stack) // 8) + stack + \
            self.sid.pack(pid, tid, time, cpu, 0, self.clock.id_for(cpu))
        return self.hdr.pack(pd.CALLCHAIN_DEFERRED, pd.MISC_USER, 8 + len(body)) + body

    def mapping(self, pid, tid, time, cpu, start, length, name):
        """A PERF_RECORD_MMAP2 of code"""
        fname = name.encode() + b'\0'
        fname += b'\0' * (-len(fname) % 8)
        body = self.mmap2.pack(pid, tid, start, length, 0, 0, 0, 0, 0, 5, 2) + fname + \
            self.sid.pack(pid, tid, time, cpu, 0, self.clock.id_for(cpu))
        return self.hdr.pack(pd.MMAP2, pd.MISC_USER, 8 + len(body)) + body

    def remaps(self, t0, t1, out):
        """--remap-ms: the server's new code mappings in [@t0, @t1)"""
        step = self.a.remap_ms * 1000000
        if not step:
            return
        for t in range((t0 + step - 1) // step * step, t1, step):
            k = t // step
            cpu = self.rng.randrange(self.a.cpus)
            if k % 4 or not self.a.remap_in_place:
                start, name = PLUGIN_BASE + k * 0x100000, '/opt/bench-scale/plugin-%d.so' % k
            else:
                start, name = SERVER_BASE, '/opt/bench-scale/server-%d' % k
            out[cpu].append((t, cpu, self.mapping(20000, 20000, t, cpu, start, 0x100000, name)))

    def entry(self, attr, pid, tid, time, cpu, rcpu, rtime, base, kernel, period):
        """A sample and its record: (time, cpu, bytes) twice."""
        ck = self.cookie(cpu)
        kpath = self.rng.choice(self.kpaths) if kernel else b''
        stack = self.rng.choice(self.stacks[base])
        return ((time, cpu, self.sample(attr, pid, tid, time, cpu, kpath, ck, period)),
                (rtime, rcpu, self.record(pid, tid, rtime, rcpu, ck, stack)))

    def setup(self):
        w, a = self.w, self.a
        w.kernel_mmap(self.clock, KERNEL_BASE, 0x1000000, KERNEL_BASE, 1)
        for c in range(a.cpus):
            pid = 10000 + c
            w.comm(self.clock, pid, pid, 'worker-%d' % c, 1, cpu=c)
            w.mmap2(self.clock, pid, pid, WORKER_BASE, 0x100000, 0,
                    '/opt/bench-scale/worker', 1, cpu=c)
        w.comm(self.clock, 20000, 20000, 'server', 1)
        w.mmap2(self.clock, 20000, 20000, SERVER_BASE, 0x100000, 0,
                '/opt/bench-scale/server', 1)
        for i in range(1, a.blockers):
            w.fork(self.clock, 20000, 20000, 20000 + i, 20000, 1)

    def block_len(self, first, t, end):
        """How long a blocker going to sleep at @t blocks: its first block
        if it is one of the --long, by --shape; then log-uniform"""
        a = self.a
        if first:
            left = end - t
            if a.shape == 'never':
                return int(a.block_max * NS)
            if a.shape == 'end':
                return max(left - 1000000, 1000000)
            if a.shape == 'random':
                return int(left * self.rng.uniform(0.1, 0.9))
            return int(left * self.rng.uniform(0.9, 0.99))     # many
        lo, hi = math.log(0.001), math.log(max(a.block_max, 0.002))
        return int(math.exp(self.rng.uniform(lo, hi)) * NS)

    def run(self):
        a, w = self.a, self.w
        end = int(a.seconds * NS) + NS
        period = NS // a.hz
        rnd = a.round_ms * 1000000
        # blockers: (wake time, tid, first?) in a heap; each runs 1 ms, then blocks
        heap = [(NS + self.rng.randrange(0, 10000000), 20000 + i, i < a.long)
                for i in range(a.blockers)]
        heapq.heapify(heap)
        later = []      # records and samples of later rounds: (time, cpu, bytes)
        longest = 0
        t0 = NS
        while t0 < end:
            t1 = min(t0 + rnd, end)
            out = [[] for _ in range(a.cpus)]
            keep = []
            for ev in later:
                (out[ev[1]] if ev[0] < t1 else keep).append(ev)
            later = keep
            # the workers' ticks
            for c in range(a.cpus):
                pid = 10000 + c
                t = t0 + (c * 7919) % period
                while t < t1:
                    kernel = self.rng.random() < 0.5
                    s, r = self.entry(self.clock, pid, pid, t, c, c,
                                      t + (20000 if kernel else 5000), WORKER_BASE,
                                      kernel, period)
                    out[c].append(s)
                    (out[c] if r[0] < t1 else later).append(r)
                    t += period
            self.remaps(t0, t1, out)
            # the blockers going to sleep in this round
            while heap and heap[0][0] < t1:
                wake, tid, first = heapq.heappop(heap)
                cpu = self.rng.randrange(a.cpus)
                t = wake + 1000000
                n = self.block_len(first, t, end)
                longest = max(longest, n)
                rcpu = self.rng.randrange(a.cpus)
                s, r = self.entry(self.cs, 20000, tid, t, cpu, rcpu, t + n, SERVER_BASE,
                                  True, 1)
                (out[cpu] if t < t1 else later).append(s)
                (out[rcpu] if r[0] < t1 else later).append(r)
                if t + n < end:
                    heapq.heappush(heap, (t + n, tid, False))
            for c in range(a.cpus):
                for _, _, rec in sorted(out[c], key=lambda e: e[0]):
                    w.put(rec)
                    if rec[0] == pd.SAMPLE:
                        self.samples += 1
                    elif rec[0] == pd.CALLCHAIN_DEFERRED:
                        self.records += 1
            w.finished_round()
            t0 = t1
        # what comes after the recording's end is never written: a blocker
        # still blocked then has no record ("stream ended")
        w.finish()
        return longest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('output')
    ap.add_argument('--cpus', type=int, default=64)
    ap.add_argument('--seconds', type=float, default=10)
    ap.add_argument('--hz', type=int, default=1000)
    ap.add_argument('--blockers', type=int, default=256)
    ap.add_argument('--block-max', type=float, default=5,
                    help='the longest block, seconds (the first blocker\'s)')
    ap.add_argument('--shape', choices=('never', 'end', 'random', 'many'), default='never',
                    help='the --long blockers\' first block: --block-max seconds from '
                    'the start (never: the recording ends first), until the end, a '
                    'random 10-90%% of what is left, 90-99%% of it')
    ap.add_argument('--long', type=int, default=None,
                    help='how many blockers block long first (default: 1; '
                    '16 for random, 64 for many)')
    ap.add_argument('--remap-ms', type=int, default=0,
                    help='map code into the server every so many ms (0: never)')
    ap.add_argument('--remap-in-place', action='store_true',
                    help='every 4th of --remap-ms maps the server\'s binary in place')
    ap.add_argument('--round-ms', type=int, default=100)
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    if a.long is None:
        a.long = {'random': 16, 'many': 64}.get(a.shape, 1)
    g = Gen(a)
    tmp = a.output + '.tmp'
    g.w.start(tmp)
    g.setup()
    longest = g.run()
    os.rename(tmp, a.output)
    print('gen-scale: %s: %d samples, %d records, %d bytes, %d CPUs, longest block %.3f s' %
          (a.output, g.samples, g.records, os.path.getsize(a.output), a.cpus, longest / NS))


if __name__ == '__main__':
    main()
