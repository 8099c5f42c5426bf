#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Deferred-callchain scenarios as small perf.data files, with their oracle.

    scenarios.py gen --workload BIN [--recorded-as PATH] --out DIR [NAME...]
    scenarios.py list

--recorded-as: the path the records name for BIN, with inode 0, instead of
BIN's own: the same files in every clone (make check's fuzz seeds name
/mnt/clone, as the 7.2 guest's recordings do).

For each scenario NAME, `gen` writes into DIR:

    NAME.raw.data        what a 6.19 kernel + perf record would write:
                         samples ending in PERF_CONTEXT_USER_DEFERRED, cookie,
                         PERF_RECORD_CALLCHAIN_DEFERRED records, defer bits set
    NAME.raw-be.data     the same, written as a big-endian host would
    NAME.raw-no22.data   the raw file without its type-22 records (shows what
                         perf 6.1 does with the deferred marker alone)
    NAME.oracle.data     the same events already stitched: plain
                         PERF_CONTEXT_KERNEL k.. PERF_CONTEXT_USER u.. chains
                         (orphans: kernel part only), no type-22 records, defer
                         bits cleared: what perf 6.1 reads
    NAME.oracle-be.data  the oracle, big-endian
    NAME.json            expected per-sample outcomes, records and counts
    NAME.script          expected `perf script -F comm,tid,time,event,ip,sym`
                         of the raw file by our perf (7.2), in perfout.py's
                         canonical form: the oracle's samples, with a
                         `[user stack lost: REASON]` frame after the kernel
                         frames of each orphan; user addresses as recorded
    NAME.script-61       the same as perf 6.1 prints it (reading perf stitch
                         -o's output): user addresses as offsets in the file
    NAME.oracle.script   expected canonical perf 6.1 script of the oracle
    NAME.oracle-72.script  expected canonical perf 7.2 script of the oracle
    NAME.no22.script     expected canonical perf 6.1 script of NAME.raw-no22.data
    NAME.report          expected canonical perf 6.1 `perf report --children
                         --sort sym` of the oracle
    NAME.report-72       the same for perf 7.2 (upstream's, and ours of the
                         raw file): other level letters, see expected_report()
    NAME.dump            blocks `perf report -D` must contain (type-22 records)
    NAME.dump-be         the same for the big-endian raw file
    NAME.deferred        expected `perf script --show-deferred-events` type-22
                         records, in perfout.py deferred's canonical form
and DIR/kallsyms, the fake kernel symbol table to pass as --kallsyms.

Times are in microseconds after T0 (100 s) in the scenario code.  Expected
outcomes follow Documentation/stitching.md; the window W is irrelevant here
(every scenario spans less than 1 s, except long_syscall, which is about it),
so whatever the engine decides mid-stream, `finish` re-derives the same
reasons.  Each raw file holds at least one valid type-22 record, so perf 6.1
fails on every one of them.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

T0 = 100 * 10**9
BOGUS = 0xfffffffffffffe98      # garbage seen in real fp chains (>= PERF_CONTEXT_MAX)

# ------------------------------------------------------------ symbols
# The fake kernel: one page per function from KBASE (not the host's
# _text, so symbols accidentally taken from /proc/kallsyms cannot match).
KBASE = 0xffffffff90000000
KSYMS = ['entry_SYSCALL_64', 'do_syscall_64', 'syscall_exit_to_user_mode',
         'exit_to_user_mode_prepare', '__x64_sys_getppid', 'ksys_read',
         'vfs_read', 'pipe_read', 'schedule', '__x64_sys_exit_group',
         'do_group_exit', 'do_exit', '__x64_sys_execve', 'do_execveat_common',
         'bprm_execve', 'load_elf_binary', 'begin_new_exec',
         'asm_sysvec_apic_timer_interrupt', 'sysvec_apic_timer_interrupt',
         'hrtimer_interrupt', 'ret_from_fork', 'kthread', 'worker_thread',
         'process_one_work']
KLEN = 0x1000 * (len(KSYMS) + 2)

K_SYSCALL = ['__x64_sys_getppid', 'do_syscall_64', 'entry_SYSCALL_64']
K_READ = ['schedule', 'pipe_read', 'vfs_read', 'ksys_read', 'do_syscall_64',
          'entry_SYSCALL_64']
K_IRQ = ['hrtimer_interrupt', 'sysvec_apic_timer_interrupt',
         'asm_sysvec_apic_timer_interrupt']
K_RETURN = ['exit_to_user_mode_prepare', 'syscall_exit_to_user_mode',
            'do_syscall_64', 'entry_SYSCALL_64']
K_EXIT = ['do_exit', 'do_group_exit', '__x64_sys_exit_group', 'do_syscall_64',
          'entry_SYSCALL_64']
K_EXEC = ['begin_new_exec', 'load_elf_binary', 'bprm_execve',
          'do_execveat_common', '__x64_sys_execve', 'do_syscall_64',
          'entry_SYSCALL_64']
K_KTHREAD = ['process_one_work', 'worker_thread', 'kthread', 'ret_from_fork']

U_LEAF = ['leaf', 'middle', 'outer', 'main']
U_MIDDLE = ['middle', 'outer', 'main']
U_WORKER = ['worker_leaf', 'worker_loop', 'thread_main']
U_REBORN = ['reborn', 'main']


def kaddr(name):
    return KBASE + 0x1000 * (1 + KSYMS.index(name))


def kallsyms_text():
    lines = ['%016x T _text' % KBASE]
    lines += ['%016x T %s' % (kaddr(n), n) for n in KSYMS]
    lines.append('%016x T _etext' % (KBASE + KLEN - 0x1000))
    return '\n'.join(lines) + '\n'


class Binary:
    """The workload: symbols from nm, the executable segment from the ELF
    program headers (for the MMAP2 record)."""

    def __init__(self, path, recorded_as=None):
        self.path = os.path.abspath(path)
        self.syms = {}
        out = subprocess.run(['nm', '-S', '--defined-only', self.path],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in 'Tt':
                self.syms[f[3]] = (int(f[0], 16), int(f[1], 16))
        for n in U_LEAF + U_WORKER + U_REBORN:
            assert n in self.syms, '%s: no symbol %s' % (path, n)
        self.seg = self._exec_segment()
        st = os.stat(self.path)
        self.ino = st.st_ino
        # what the records name: the file's own path, or recorded_as
        self.recorded = recorded_as or self.path
        if recorded_as:
            self.ino = 0

    def _exec_segment(self):
        import struct
        b = open(self.path, 'rb').read()
        assert b[:4] == b'\x7fELF' and b[4] == 2, 'need a 64-bit ELF'
        phoff, = struct.unpack_from('<Q', b, 32)
        phentsize, phnum = struct.unpack_from('<HH', b, 54)
        for i in range(phnum):
            (typ, flags, off, vaddr, _pa, filesz,
             memsz) = struct.unpack_from('<IIQQQQQ', b, phoff + i * phentsize)
            if typ == 1 and flags & 1:          # PT_LOAD, PF_X
                start = vaddr & ~0xfff
                end = (vaddr + memsz + 0xfff) & ~0xfff
                return start, end - start, off & ~0xfff
        raise SystemExit('%s: no executable PT_LOAD' % self.path)

    def ip(self, frame):
        """A user frame: a function name (an address inside it, as a return
        address would be) or a raw integer."""
        if isinstance(frame, int):
            return frame
        addr, size = self.syms[frame]
        return addr + size // 2

    def printed(self, ip, recorded=False):
        """perf 6.1's script prints a user frame as an offset in the mapped
        file; perf 7.2's (recorded=True) prints the address as recorded"""
        start, length, pgoff = self.seg
        if recorded:
            return ip
        return ip - start + pgoff if start <= ip < start + length else ip

    def sym(self, ip):
        for n, (a, s) in self.syms.items():
            if a <= ip < a + s:
                return n
        return '[unknown]'


# ------------------------------------------------------------ scenario model
class Task:
    def __init__(self, pid, tid, comm):
        self.pid, self.tid, self.comm = pid, tid, comm
        self.exited = None      # the time of its PERF_RECORD_EXIT


class Cookie:
    """A cookie: CPU and per-CPU sequence number (1, 3, 5 ...).  The kernel's
    counter is taken as CNT_BASE + seq, as after some uptime, so that the
    little- and big-endian values differ.  The value depends on the byte
    order of the recording host."""
    CNT_BASE = 0x1000

    def __init__(self, cpu, seq):
        self.cpu, self.cnt = cpu, self.CNT_BASE + seq

    def value(self, be):
        return pd.cookie(self.cpu, self.cnt, be)


def cval(c, be):
    return c.value(be) if isinstance(c, Cookie) else c


class Render:
    def __init__(self, oracle=False, be=False, drop22=False):
        self.oracle, self.be, self.drop22 = oracle, be, drop22


class Scenario:
    def __init__(self, name, doc, binary):
        self.name, self.doc, self.bin = name, doc, binary
        self.events = []        # (name, config, defer_output)
        self.ops = []           # (key, fn(writer, render)) in file order
        self.samples = []
        self.records = []
        self.lost_records = 0
        self.task_events = []   # exit, exec, lost: what the stitcher is told
        self.rounds = []        # seq of each FINISHED_ROUND: perf's horizon in file order
        self.main = Task(1000, 1000, 'workload')
        self.worker = Task(1000, 1001, 'workload')
        self.worker2 = Task(1000, 1002, 'workload')
        self.kworker = Task(77, 77, 'kworker/1:2')

    @staticmethod
    def t(us):
        return T0 + us * 1000

    def event(self, name, config, defer_output=False, sample_type=None):
        self.events.append((name, config, defer_output, sample_type or SAMPLE_TYPE))

    def has(self, event, bit):
        """Does event `event` record sample_type bit `bit`?"""
        return bool(self.events[event][3] & bit) if self.events else True

    def op(self, fn, key=None):
        self.ops.append((key, fn))

    # -------- tracking records (written with the first event's sample_id)
    def setup(self, kworker=False, threads=(1001, 1002)):
        if not self.events:
            self.event('cpu-clock', pd.SW_CPU_CLOCK, defer_output=True)
        seg = self.bin.seg
        m = self.main
        self.op(lambda w, r: w.kernel_mmap(w.attrs[0], KBASE, KLEN, KBASE, self.t(1)))
        self.op(lambda w, r: w.fork(w.attrs[0], m.pid, 1, m.tid, 1, self.t(2)))
        comm = m.comm       # not m.comm in the lambda: an exec changes it
        self.op(lambda w, r: w.comm(w.attrs[0], m.pid, m.tid, comm, self.t(3), exec_=True))
        self.op(lambda w, r: w.mmap2(w.attrs[0], m.pid, m.tid, seg[0], seg[1], seg[2],
                                     self.bin.recorded, self.t(4), ino=self.bin.ino))
        for i, tid in enumerate(threads):
            self.op(lambda w, r, tid=tid, i=i:
                    w.fork(w.attrs[0], m.pid, m.pid, tid, m.tid, self.t(5 + i)))
        if kworker:
            k = self.kworker
            self.op(lambda w, r: w.comm(w.attrs[0], k.pid, k.tid, k.comm, self.t(9)))

    def fork(self, task, us, comm, cpu=0):
        """A new process (pid == tid) that execs the workload binary."""
        self.op(lambda w, r: w.fork(w.attrs[0], task.pid, 1, task.tid, 1, self.t(us), cpu))
        self.exec(task, us + 1, comm, cpu)

    def exec(self, task, us, comm, cpu=0):
        self.task_events.append(dict(kind='exec', pid=task.pid, tid=task.tid, cpu=cpu,
                                     time=self.t(us), seq=len(self.ops)))
        task.comm = comm
        seg = self.bin.seg
        self.op(lambda w, r: w.comm(w.attrs[0], task.pid, task.tid, comm, self.t(us), cpu,
                                    exec_=True))
        self.op(lambda w, r: w.mmap2(w.attrs[0], task.pid, task.tid, seg[0], seg[1], seg[2],
                                     self.bin.recorded, self.t(us) + 500, cpu, ino=self.bin.ino))

    def exit(self, task, us, cpu=0):
        task.exited = us
        self.task_events.append(dict(kind='exit', pid=task.pid, tid=task.tid, cpu=cpu,
                                     time=self.t(us), seq=len(self.ops)))
        self.op(lambda w, r: w.exit(w.attrs[0], task.pid, task.tid, self.t(us), cpu))

    def lost(self, us, cpu=0, count=1):
        self.lost_records += 1
        self.task_events.append(dict(kind='lost', cpu=cpu, time=self.t(us), seq=len(self.ops)))
        self.op(lambda w, r: w.lost(w.attrs[0], count, self.t(us), cpu))

    def round(self):
        self.rounds.append(len(self.ops))
        self.op(lambda w, r: w.finished_round())

    # -------- samples and deferred records
    def sample(self, task, us, cpu, kernel, user, cookie=None, expect='stitched',
               event=0, period=None, raw_chain=None):
        """kernel: kernel function names (None: taken in user mode).
        user: the user frames the sample should end up with (stitched), or
        its true user stack (orphans: only user[0], the ip of a user-mode
        sample, matters).  cookie None: not deferred (the chain is written
        as it is, plain).  expect: stitched, plain, malformed, or
        orphan:REASON with REASON as perf prints it.  A malformed sample
        (the marker not second to last, or cookie 0) is reported, counted
        and kept by perf as an orphan of reason "malformed": its kernel
        part, then the pseudo-frame; the oracle has its kernel part."""
        b = self.bin
        period = 1000 if period is None else period
        kips = [kaddr(n) + 0x24 for n in kernel or []]
        uips = [b.ip(f) for f in user]
        ip = kips[0] if kips else uips[0]
        kpart = [pd.CONTEXT_KERNEL] + kips if kips else []
        outcome, _, reason = expect.partition(':')
        if outcome == 'malformed':
            reason = 'malformed'
        if outcome == 'stitched':
            oracle = kpart + [pd.CONTEXT_USER] + uips
        elif outcome == 'plain':
            oracle = kpart + ([pd.CONTEXT_USER] + uips if uips else [])
        else:                                   # orphan, malformed
            oracle = kpart

        def chain(r):
            if r.oracle:
                return oracle
            if raw_chain is not None:
                return raw_chain
            if cookie is None:
                return oracle
            return kpart + [pd.CONTEXT_USER_DEFERRED, cval(cookie, r.be)]
        misc = pd.MISC_KERNEL if kips else pd.MISC_USER
        s = dict(time=self.t(us), pid=task.pid, tid=task.tid, comm=task.comm,
                 cpu=cpu if self.has(event, pd.S_CPU) else None,
                 event=self.events[event][0] if self.events else 'cpu-clock',
                 ip=ip, ip_sym=kernel[0] if kips else b.sym(ip),
                 ip_kind='k' if kips else '.',
                 kernel=[[x, n] for x, n in zip(kips, kernel or [])],
                 user=[[x, b.sym(x)] for x in uips] if outcome in ('stitched', 'plain') else [],
                 cookie=cval(cookie, False), outcome=outcome, reason=reason or None,
                 deferred=cookie is not None or raw_chain is not None,
                 cookie_obj=cookie, seq=len(self.ops),
                 period=period)
        self.samples.append(s)
        key = ('sample', len(self.samples) - 1)

        def emit(w, r):
            w.sample(w.attrs[event], task.pid, task.tid, self.t(us), cpu, ip,
                     chain(r), period, misc)
        self.op(emit, key)
        return s

    def record(self, task, us, cpu, cookie, frames, event=0, nr=None, size=None,
               cut=None, malformed=None):
        """A PERF_RECORD_CALLCHAIN_DEFERRED written through event `event`
        (the one with defer_output).  nr/size override to malform it; cut
        writes only its first `cut` bytes (the data section, and the file's
        records, end inside it)."""
        ips = [self.bin.ip(f) for f in frames]
        # cpu None: the event has no PERF_SAMPLE_CPU, perf reads (u32)-1
        rec = dict(time=self.t(us), cpu=cpu if self.has(event, pd.S_CPU) else None,
                   pid=task.pid, tid=task.tid,
                   cookie=cval(cookie, False), cookie_be=cval(cookie, True),
                   nr=len(ips) if nr is None else nr, ips=ips, malformed=malformed,
                   event=self.events[event][0], seq=len(self.ops),
                   # perf forgets a task at its exit: a record after it
                   # is of a new thread, without a comm (":TID")
                   comm=task.comm if task.exited is None or us < task.exited
                   else ':%d' % task.tid)
        self.records.append(rec)
        key = ('record', len(self.records) - 1)

        def emit(w, r):
            if not (r.oracle or r.drop22):
                info = w.callchain_deferred(w.attrs[event], task.pid, task.tid, self.t(us),
                                            cpu, cval(cookie, r.be), ips, nr, size)
                if cut is not None:
                    w.raw(w.recs.pop()[0][:cut], info)
        self.op(emit, key)
        return rec

    # -------- output
    def render(self, path, r):
        w = pd.Writer(byteswap=r.be, hostname='scenario-' + self.name)
        for i, (name, config, defer_output, sample_type) in enumerate(self.events):
            flags = {pd.A_DISABLED, pd.A_DEFER_CALLCHAIN}
            if i == 0:      # the tracking event, as perf record sets it up
                flags |= {pd.A_MMAP, pd.A_COMM, pd.A_TASK, pd.A_MMAP2, pd.A_COMM_EXEC}
            if defer_output:
                flags.add(pd.A_DEFER_OUTPUT)
            w.add_attr(name, config, sample_type, 1000, flags)
        keys = {}
        for key, fn in self.ops:
            n = len(w.recs)
            fn(w, r)
            if key and len(w.recs) > n:
                keys[len(w.recs) - 1] = key
        infos = w.write(path, clear_defer=r.oracle)
        for idx, key in keys.items():
            what = self.samples if key[0] == 'sample' else self.records
            what[key[1]]['offset'] = infos[idx]['offset']
            what[key[1]]['size'] = infos[idx]['size']

    def expected_script(self, mode, recorded=False):
        """Canonical perf script output (see perfout.py) of the raw file as
        a stitching perf shows it (mode 'stitched'), of the oracle as perf
        6.1 shows it ('oracle'), or of the raw file without its type-22
        records as perf 6.1 shows it ('no22': a chain holding the deferred
        marker is dropped whole, kernel part included).  recorded: user
        addresses as perf 7.2 prints them, as recorded (Binary.printed)."""
        out = []
        for s in sorted(self.samples, key=lambda s: s['time']):
            out.append('%s %d %d.%06d %s' % (s['comm'], s['tid'], s['time'] // 10**9,
                                           s['time'] % 10**9 // 1000, s['event']))
            if mode != 'no22' or not s['deferred']:
                out += ['  %x %s' % (x, n) for x, n in s['kernel']]
                out += ['  %x %s' % (self.bin.printed(x, recorded), n) for x, n in s['user']]
            if s['outcome'] in ('orphan', 'malformed') and mode == 'stitched':
                out.append('  [user stack lost: %s]' % s['reason'])
            out.append('')
        return '\n'.join(out) + '\n' if out else ''

    def expected_report(self, v72=False):
        """perf report --children --sort sym, per event: children and self
        percentages of every symbol (only the oracle's real frames; a
        pseudo-frame for lost stacks is ignored by perfout.py).

        The level letter: perf 6.1 gives a symbol of the kernel map [k].
        perf 7.2 (v72; upstream's and ours alike) keeps one entry per
        symbol, with the letter of the first sample that made it: a
        sample's own symbol ([k] for a kernel ip) is added before the
        symbols of its callchain, and fill_callchain_info() of 7.2 gives
        every callchain symbol of a host sample [.] (it compares the
        sample's thread's maps, never the kernel's, with the kernel maps).
        perf report adds the samples in time order (file order on a tie)."""
        out = []
        for name, _, _, _ in self.events:
            ss = [s for s in self.samples if s['event'] == name]
            if not ss:
                continue
            total = sum(s['period'] for s in ss)
            out.append('%s samples=%d period=%d' % (name, len(ss), total))
            child, self_ = {}, {}
            level72 = {}
            for s in sorted(ss, key=lambda s: (s['time'], s['seq'])):
                level72.setdefault(s['ip_sym'], s['ip_kind'])
                for _, n in s['kernel']:
                    level72.setdefault(n, '.')
            for s in ss:
                syms = {(s['ip_kind'], s['ip_sym'])}
                syms |= {('k', n) for _, n in s['kernel']}
                # perf report shows an address it cannot resolve as 16
                # hex digits (perfout.py leaves its level letter out)
                syms |= {('?', '%016x' % x) if x == 0 else ('.', n) for x, n in s['user']}
                for k in syms:
                    child[k] = child.get(k, 0) + s['period']
                k = (s['ip_kind'], s['ip_sym'])
                self_[k] = self_.get(k, 0) + s['period']
            rows = []
            for k, c in child.items():
                level = level72.get(k[1], k[0]) if v72 and k[0] != '?' else k[0]
                rows.append('%s %.2f%% %.2f%% [%s] %s' % (name, 100.0 * c / total,
                                                        100.0 * self_.get(k, 0) / total,
                                                        level, k[1]))
            out += sorted(rows)
        return '\n'.join(out) + '\n'

    def expected_dump(self, be):
        """perf report -D of the raw file: the lines perf 7.2 prints for
        each type-22 record, upstream's dump_deferred_callchain(): the
        record's cpu, time, offset [size], its misc, pid/tid and cookie
        (%#x: 0 as "0"), then its ips as an "FP chain".  Upstream prints
        the ips only when the event the record came through samples
        callchains (evsel__has_callchain()): not for a dummy event's
        records (dummy_no_cpu, dummy_long_trailer), whose ips are checked
        in perf script --show-deferred-events instead (expected_deferred).
        perf 6.1 (our series) printed "cookie: C nr: N" and the ips for
        every record."""
        blocks = []
        for rec in self.records:
            head = '%#x [%#x]: PERF_RECORD_CALLCHAIN_DEFERRED' % (rec['offset'], rec['size'])
            if rec['malformed'] in ('nr', 'size'):       # refused by our perf
                # (cookie 0 is refused when stitching; -D still shows it)
                blocks.append(head + ': malformed, skipped')
                continue
            if rec['malformed'] == 'eof':               # never read whole
                continue
            c = rec['cookie_be' if be else 'cookie']
            cpu = 0xffffffff if rec['cpu'] is None else rec['cpu']     # %u of (u32)-1
            lines = ['%d %d %s(IP, %#x): %d/%d: %s' % (cpu, rec['time'], head, pd.MISC_USER,
                                                      rec['pid'], rec['tid'],
                                                      '%#x' % c if c else '0')]   # C's %#x
            if self.has([e[0] for e in self.events].index(rec['event']), pd.S_CALLCHAIN):
                lines.append('... FP chain: nr:%d' % rec['nr'])
                lines += ['..... %2d: %016x' % (i, x) for i, x in enumerate(rec['ips'])]
            blocks.append('\n'.join(lines))
        return '\n\n'.join(blocks) + '\n'

    def expected_deferred(self):
        """perf script --show-deferred-events of the raw file (perf 7.2,
        builtin-script.c's "DEFERRED CALLCHAIN [cookie: %llx]" and the
        record's user frames), in perfout.py deferred's canonical form:
        every record read whole and kept (not malformed: no cookie 0), in
        time order (file order on a tie), with the comm its task had.
        The frames are upstream's reading of the raw ips
        (thread__resolve_callchain()): each ip resolved, 0 as [unknown];
        a value >= PERF_CONTEXT_MAX in a user chain drops the whole chain
        (bogus_ip).  Its stitched samples use the sanitised trace (the
        prefix before the value) instead."""
        out = []
        for rec in sorted(self.records, key=lambda r: (r['time'], r['seq'])):
            if rec['malformed']:
                continue
            out.append('%s %d %d.%06d cookie %x' % (rec['comm'], rec['tid'],
                                                     rec['time'] // 10**9,
                                                     rec['time'] % 10**9 // 1000,
                                                     rec['cookie']))
            if all(x < pd.CONTEXT_MAX for x in rec['ips']):
                out += ['  %x %s' % (x, self.bin.sym(x)) for x in rec['ips']]
            out.append('')
        return '\n'.join(out) + '\n' if out else ''

    def self_check(self):
        """The expectations written in a scenario agree with its records:
        a stitched sample shows the sanitised trace of the record of its
        tid and cookie, an unwind-failed one an empty trace."""
        for s in self.samples:
            c = s.pop('cookie_obj')
            recs = [r for r in self.records if not r['malformed'] and r['tid'] == s['tid']
                    and isinstance(c, Cookie) and r['cookie'] == c.value(False)]
            if s['outcome'] == 'stitched' and s['deferred']:
                want = [x for x, _ in s['user']]
                assert recs and all(pd.sanitize(r['ips']) == want for r in recs), s
                # a frame name resolves; only a 0 return address has none
                assert all(n != '[unknown]' or x == 0 for x, n in s['user']), s
            if s['reason'] == 'unwind failed':
                assert recs and all(pd.sanitize(r['ips']) == [] for r in recs), s

    def summary(self):
        return dict(
            name=self.name, doc=self.doc,
            samples=self.samples, records=self.records, task_events=self.task_events,
            rounds=self.rounds,
            counts=dict(SAMPLE=len(self.samples),
                        CALLCHAIN_DEFERRED=sum(1 for r in self.records
                                               if r['malformed'] != 'eof'),
                        malformed_records=sum(1 for r in self.records if r['malformed']
                                              in ('nr', 'size', 'cookie0')),
                        malformed_samples=sum(1 for s in self.samples
                                              if s['outcome'] == 'malformed'),
                        LOST=self.lost_records,
                        stitched=sum(1 for s in self.samples if s['outcome'] == 'stitched'),
                        orphans=sum(1 for s in self.samples
                                    if s['outcome'] in ('orphan', 'malformed'))))


SAMPLE_TYPE = (pd.S_IDENTIFIER | pd.S_IP | pd.S_TID | pd.S_TIME | pd.S_CPU |
               pd.S_PERIOD | pd.S_CALLCHAIN)

# ------------------------------------------------------------ scenarios
SCENARIOS = []


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


@scenario
def cross_cpu(s):
    """The record is written on the CPU the task returned on (3), not the
    CPU of the sample (0, which the cookie names).  With a kernel-thread
    sample and a non-deferred user chain: both pass through unchanged."""
    s.setup(kworker=True)
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1), period=3000)
    s.sample(s.kworker, 110, 1, K_KTHREAD, [], expect='plain')
    s.sample(s.worker, 120, 1, K_IRQ, U_WORKER, expect='plain', period=2000)
    s.record(s.main, 140, 3, Cookie(0, 1), U_LEAF)


@scenario
def record_first(s):
    """The record (CPU 1's buffer) is read one round before the sample
    (CPU 0's buffer): earlier in the file, later in time."""
    s.setup()
    s.round()
    s.record(s.main, 140, 1, Cookie(0, 1), U_LEAF)
    s.round()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.sample(s.worker, 150, 1, K_SYSCALL, U_WORKER, Cookie(1, 1))
    s.round()
    s.record(s.worker, 160, 1, Cookie(1, 1), U_WORKER)
    s.round()


@scenario
def one_cookie_two_events(s):
    """Several samples of two events in one kernel entry share one cookie
    and one record (written through the tracking event only)."""
    s.event('cpu-clock', pd.SW_CPU_CLOCK, defer_output=True)
    s.event('task-clock', pd.SW_TASK_CLOCK)
    s.setup()
    c = Cookie(0, 1)
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, c, event=0)
    s.sample(s.main, 105, 0, K_SYSCALL, U_LEAF, c, event=1, period=3000)
    s.sample(s.main, 110, 0, K_READ, U_LEAF, c, event=0)
    s.record(s.main, 120, 0, c, U_LEAF)
    s.sample(s.worker, 200, 1, K_SYSCALL, U_WORKER, Cookie(1, 1), event=1, period=1000)
    s.record(s.worker, 210, 1, Cookie(1, 1), U_WORKER)


@scenario
def late_sample(s):
    """An NMI late on the return path, after the unwind ran: the sample
    carries the entry's cookie but comes after its record."""
    s.setup()
    c = Cookie(0, 1)
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, c)
    s.record(s.main, 140, 0, c, U_LEAF)
    s.sample(s.main, 143, 0, K_RETURN, U_LEAF, c)


@scenario
def duplicates(s):
    """Two events with defer_output: each gets its own, identical copy of
    the record.  The samples are stitched once, the copy is dropped."""
    s.event('cpu-clock', pd.SW_CPU_CLOCK, defer_output=True)
    s.event('task-clock', pd.SW_TASK_CLOCK, defer_output=True)
    s.setup()
    c = Cookie(0, 1)
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, c, event=0)
    s.sample(s.main, 101, 0, K_SYSCALL, U_LEAF, c, event=1)
    s.record(s.main, 140, 0, c, U_LEAF, event=0)
    s.record(s.main, 140, 0, c, U_LEAF, event=1)
    c2 = Cookie(1, 1)
    s.sample(s.worker, 200, 1, K_READ, U_WORKER, c2, event=0)
    s.record(s.worker, 240, 2, c2, U_WORKER, event=1)
    s.record(s.worker, 240, 2, c2, U_WORKER, event=0)


@scenario
def lost(s):
    """Records that never come.  1000: its record went missing in a lost
    chunk (PERF_RECORD_LOST after the sample) -> record lost.  1002: no
    lost notice, but a later kernel entry of the same tid completed ->
    record lost.  1001: a lost notice between its sample and its record
    does not stop it from being stitched."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1), expect='orphan:record lost',
             period=2000)
    s.sample(s.worker, 120, 1, K_SYSCALL, U_WORKER, Cookie(1, 1), period=3000)
    s.lost(150, cpu=0)
    s.record(s.worker, 160, 1, Cookie(1, 1), U_WORKER)
    s.sample(s.main, 200, 0, K_SYSCALL, U_MIDDLE, Cookie(0, 3))
    s.record(s.main, 210, 0, Cookie(0, 3), U_MIDDLE)
    s.sample(s.worker2, 300, 1, K_SYSCALL, U_WORKER, Cookie(1, 3),
             expect='orphan:record lost', period=500)
    s.sample(s.worker2, 400, 1, K_READ, U_WORKER, Cookie(1, 5), period=2500)
    s.record(s.worker2, 410, 1, Cookie(1, 5), U_WORKER)


@scenario
def task_exit(s):
    """1001 exits before returning to user space: no record -> task exited.
    1002 is sampled in exit_group; the unwind runs at exit, before the mm
    goes away, and its record (seen by a CPU-wide event) precedes the
    EXIT: stitched."""
    s.setup()
    s.sample(s.worker, 100, 1, K_SYSCALL, U_WORKER, Cookie(1, 1), expect='orphan:task exited')
    s.exit(s.worker, 150, 1)
    s.sample(s.worker2, 200, 0, K_EXIT, U_WORKER, Cookie(0, 1))
    s.record(s.worker2, 230, 0, Cookie(0, 1), U_WORKER)
    s.exit(s.worker2, 240, 0)
    s.sample(s.main, 300, 0, K_SYSCALL, U_LEAF, Cookie(0, 3))
    s.record(s.main, 310, 0, Cookie(0, 3), U_LEAF)


@scenario
def record_after_exit(s):
    """Seen on 7.2 system-wide: 1001 is sampled in exit_group and its
    record, written for the CPU-wide event, comes 12us after its
    PERF_RECORD_EXIT: stitched.  1002 exits with a sample pending and no
    record (what a per-task event gets): task exited."""
    s.setup()
    s.sample(s.worker, 100, 1, K_EXIT, U_WORKER, Cookie(1, 1))
    s.exit(s.worker, 150, 1)
    s.record(s.worker, 162, 1, Cookie(1, 1), U_WORKER)
    s.sample(s.worker2, 200, 0, K_EXIT, U_WORKER, Cookie(0, 1), expect='orphan:task exited')
    s.exit(s.worker2, 240, 0)
    s.sample(s.main, 300, 0, K_SYSCALL, U_LEAF, Cookie(0, 3))
    s.record(s.main, 310, 0, Cookie(0, 3), U_LEAF)


@scenario
def late_sample_long_round(s):
    """File order with a long round: 1000's record (CPU 0, 140us) is read
    in a round where CPU 1's buffer covers 3 s of 1001's kernel entries,
    and its late sample (CPU 2, 143us, taken after the unwind ran) comes a
    round later, 60 records after it.  perf's rounds allow that however
    long the round (nothing after a round is older than what came before
    the previous one); a window of 1 s alone would have dropped the record
    before the sample came."""
    s.setup()
    s.round()
    c = Cookie(0, 1)
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, c)
    s.record(s.main, 140, 0, c, U_LEAF)
    for i in range(30):
        ci = Cookie(1, 2 * i + 1)
        s.sample(s.worker, 200 + 100000 * i, 1, K_SYSCALL, U_WORKER, ci)
        s.record(s.worker, 210 + 100000 * i, 1, ci, U_WORKER)
    s.round()
    s.sample(s.main, 143, 2, K_RETURN, U_LEAF, c)
    s.round()


@scenario
def stream_end(s):
    """Recording stops while 1000 is blocked in read(): its record was never
    written -> stream ended.  1001 is complete."""
    s.setup()
    s.sample(s.worker, 100, 1, K_SYSCALL, U_WORKER, Cookie(1, 1))
    s.record(s.worker, 110, 1, Cookie(1, 1), U_WORKER)
    s.sample(s.main, 200, 0, K_READ, U_LEAF, Cookie(0, 1), expect='orphan:stream ended')
    s.sample(s.main, 300, 0, K_READ, U_LEAF, Cookie(0, 1), expect='orphan:stream ended')


@scenario
def bogus_ip(s):
    """Deferred traces with junk: a value in the context-marker range
    (perf 6.1 would drop the whole chain) ends the trace; a trace that
    starts with junk is empty -> unwind failed."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, ['leaf', 'middle'], Cookie(0, 1))
    s.record(s.main, 110, 0, Cookie(0, 1), ['leaf', 'middle', BOGUS, 'outer', 'main'])
    s.sample(s.main, 200, 0, K_SYSCALL, ['leaf', 0], Cookie(0, 3))
    s.record(s.main, 210, 0, Cookie(0, 3), ['leaf', 0, BOGUS, 'outer'])
    s.sample(s.main, 300, 0, K_SYSCALL, U_LEAF, Cookie(0, 5), expect='orphan:unwind failed')
    s.record(s.main, 310, 0, Cookie(0, 5), [BOGUS, 'leaf', 'middle'])


@scenario
def zero_entries(s):
    """0 return addresses are what the kernel's frame-pointer unwinder
    stores (kernel/unwind/user.c): the outermost frame's ends a trace, one
    in mid-chain is followed by real frames, and a trace may even start
    with one.  Every entry is kept, as in an in-place callchain."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, ['leaf', 'middle', 'outer', 'main', 0], Cookie(0, 1))
    s.record(s.main, 110, 0, Cookie(0, 1), ['leaf', 'middle', 'outer', 'main', 0])
    s.sample(s.main, 200, 0, K_SYSCALL, ['leaf', 0, 'middle', 'outer', 'main'], Cookie(0, 3))
    s.record(s.main, 210, 0, Cookie(0, 3), ['leaf', 0, 'middle', 'outer', 'main'])
    s.sample(s.worker, 300, 1, K_SYSCALL, [0, 'leaf'], Cookie(1, 1))
    s.record(s.worker, 310, 1, Cookie(1, 1), [0, 'leaf'])


@scenario
def empty_record(s):
    """The unwind failed: the callback still runs, with nr = 0."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1), expect='orphan:unwind failed')
    s.sample(s.main, 105, 0, K_SYSCALL, U_LEAF, Cookie(0, 1), expect='orphan:unwind failed')
    s.record(s.main, 110, 0, Cookie(0, 1), [])
    s.sample(s.worker, 200, 1, K_SYSCALL, U_WORKER, Cookie(1, 1))
    s.record(s.worker, 210, 1, Cookie(1, 1), U_WORKER)


@scenario
def tid_reuse(s):
    """Process 2000 exits with a sample pending; a new process gets pid and
    tid 2000 again and, after a cookie counter wrap, even the same cookie.
    A wrap takes 2^31 kernel entries on one CPU (minutes at the least): 2 s
    here, beyond every window.  The exit separates the two incarnations:
    the old sample -> task exited, the new one is stitched (and shown with
    the new comm)."""
    s.setup(threads=())
    a = Task(2000, 2000, 'workload')
    s.fork(a, 50, 'workload')
    c = Cookie(2, 7)
    s.sample(a, 100, 2, K_SYSCALL, U_LEAF, c, expect='orphan:task exited')
    s.exit(a, 150, 2)
    b = Task(2000, 2000, 'workload')
    s.fork(b, 2000200, 'reuser')
    s.sample(b, 2000300, 2, K_SYSCALL, U_MIDDLE, c)
    s.record(b, 2000350, 2, c, U_MIDDLE)


@scenario
def user_mode(s):
    """Samples taken in user mode: the chain is just the marker and the
    cookie; the record comes right after the interrupt returns.  The second
    one's record never comes (stream ends)."""
    s.setup()
    s.sample(s.main, 100, 0, None, U_LEAF, Cookie(0, 1))
    s.record(s.main, 101, 0, Cookie(0, 1), U_LEAF)
    s.sample(s.worker, 200, 1, None, U_WORKER, Cookie(1, 1))
    s.record(s.worker, 201, 1, Cookie(1, 1), U_WORKER)
    s.sample(s.main, 300, 0, None, U_MIDDLE, Cookie(0, 3), expect='orphan:stream ended')


@scenario
def exec_(s):
    """Sampled inside execve(): the record is written on the way back to
    user space, in the new program (at its entry point) -> exec for the
    sample taken before the exec point (COMM with the exec flag), stitched
    for the one taken after it in the same kernel entry.  Every sample
    keeps the comm it had when taken."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.record(s.main, 110, 0, Cookie(0, 1), U_LEAF)
    s.sample(s.main, 200, 0, K_EXEC, U_LEAF, Cookie(0, 3), expect='orphan:exec')
    s.exec(s.main, 220, 'wl-reborn')
    s.sample(s.main, 230, 0, K_EXEC[1:], ['_start'], Cookie(0, 3))
    s.record(s.main, 240, 0, Cookie(0, 3), ['_start'])
    s.sample(s.main, 300, 0, K_SYSCALL, U_REBORN, Cookie(0, 5))
    s.record(s.main, 310, 0, Cookie(0, 5), U_REBORN)


@scenario
def long_syscall(s):
    """1000 blocks in read() for 5 s (longer than the default window)
    while 1001 keeps running: a late record is not a lost one."""
    s.setup()
    s.sample(s.main, 100, 0, K_READ, U_LEAF, Cookie(0, 1))
    for i in range(5):
        c = Cookie(1, 2 * i + 1)
        s.sample(s.worker, 1000000 * (i + 1), 1, K_SYSCALL, U_WORKER, c)
        s.record(s.worker, 1000000 * (i + 1) + 10, 1, c, U_WORKER)
        s.round()
    s.record(s.main, 5500000, 0, Cookie(0, 1), U_LEAF)


@scenario
def malformed(s):
    """Broken input, each with a file offset perf must name: a record whose
    nr exceeds its size, one too short for its own fields, one with cookie
    0 (never written by a kernel), a sample whose chain ends with the
    marker but no cookie, one with cookie 0.  Each is reported with its
    offset and counted (deferred-callchains.txt): the records skipped, the
    samples kept with their kernel part and "[user stack lost:
    malformed]", not with a stack that is not theirs; everything else is
    still stitched."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.record(s.main, 110, 0, Cookie(0, 1), U_LEAF)
    s.record(s.worker, 200, 1, Cookie(1, 1), U_WORKER, nr=1000, malformed='nr')
    s.record(s.worker, 210, 1, Cookie(1, 3), U_WORKER, size=24, malformed='size')
    s.record(s.worker2, 300, 1, 0, U_WORKER, malformed='cookie0')
    kips = [kaddr(n) + 0x24 for n in K_SYSCALL]
    s.sample(s.main, 400, 0, K_SYSCALL, [], expect='malformed',
             raw_chain=[pd.CONTEXT_KERNEL] + kips + [pd.CONTEXT_USER_DEFERRED])
    s.sample(s.main, 500, 0, K_SYSCALL, [], expect='malformed',
             raw_chain=[pd.CONTEXT_KERNEL] + kips + [pd.CONTEXT_USER_DEFERRED, 0])


@scenario
def truncated(s):
    """The file ends inside a type-22 record (perf record killed, disk
    full): perf must name the offset and still show what it read before.
    The cut record's sample then never gets its record (stream ended)."""
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.record(s.main, 110, 0, Cookie(0, 1), U_LEAF)
    s.sample(s.worker, 200, 1, K_SYSCALL, U_WORKER, Cookie(1, 1), expect='orphan:stream ended')
    s.record(s.worker, 210, 1, Cookie(1, 1), U_WORKER, cut=0x20, malformed='eof')


# The defer_output dummy's trailer: shorter than the sampling event's (no
# PERF_SAMPLE_CPU) or longer (the sampling event without it).
DUMMY_SHORT = pd.S_IDENTIFIER | pd.S_TID | pd.S_TIME
DUMMY_LONG = pd.S_IDENTIFIER | pd.S_TID | pd.S_TIME | pd.S_CPU


@scenario
def dummy_no_cpu(s):
    """The records come through a dummy event (defer_output) whose sample_id
    trailer is 8 bytes shorter than the sampling event's: it has no
    PERF_SAMPLE_CPU.  Each record's size is checked against its own
    event's trailer: all are valid and stitched; their CPU is unknown, so
    the cross-CPU count is too."""
    s.event('cpu-clock', pd.SW_CPU_CLOCK)
    s.event('dummy', pd.SW_DUMMY, defer_output=True, sample_type=DUMMY_SHORT)
    s.setup()
    s.round()
    s.record(s.worker, 160, 1, Cookie(1, 1), U_WORKER, event=1)
    s.round()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.sample(s.worker, 150, 1, K_READ, U_WORKER, Cookie(1, 1), period=2000)
    s.sample(s.main, 120, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.record(s.main, 140, 3, Cookie(0, 1), U_LEAF, event=1)
    s.sample(s.main, 143, 0, K_RETURN, U_LEAF, Cookie(0, 1))
    s.round()
    s.sample(s.main, 300, 2, None, U_MIDDLE, Cookie(2, 1), expect='orphan:stream ended')


@scenario
def dummy_long_trailer(s):
    """The other way round: the sampling event has no PERF_SAMPLE_CPU, the
    dummy writing the records has, so their trailer is 8 bytes longer than
    the first event's.  A record whose nr claims one entry more than fits is
    malformed (its trailer must not be read as a user frame); the valid one
    is stitched."""
    s.event('cpu-clock', pd.SW_CPU_CLOCK, sample_type=SAMPLE_TYPE & ~pd.S_CPU)
    s.event('dummy', pd.SW_DUMMY, defer_output=True, sample_type=DUMMY_LONG)
    s.setup()
    s.sample(s.main, 100, 0, K_SYSCALL, U_LEAF, Cookie(0, 1))
    s.record(s.main, 140, 3, Cookie(0, 1), U_LEAF, event=1)
    s.sample(s.worker, 200, 1, K_SYSCALL, U_WORKER, Cookie(1, 1), expect='orphan:stream ended')
    s.record(s.worker, 210, 1, Cookie(1, 1), U_WORKER, event=1, nr=len(U_WORKER) + 1,
             malformed='nr')


# ------------------------------------------------------------ main
def name_of(fn):
    return fn.__name__.rstrip('_')


def generate(binary, out, names):
    with open(os.path.join(out, 'kallsyms'), 'w') as f:
        f.write(kallsyms_text())
    for fn in SCENARIOS:
        name = name_of(fn)
        if names and name not in names:
            continue
        s = Scenario(name, fn.__doc__.strip(), binary)
        fn(s)
        s.self_check()
        base = os.path.join(out, name)
        # render the raw file last: offsets in the JSON are the raw file's
        s.render(base + '.oracle.data', Render(oracle=True))
        s.render(base + '.oracle-be.data', Render(oracle=True, be=True))
        s.render(base + '.raw-no22.data', Render(drop22=True))
        s.render(base + '.raw-be.data', Render(be=True))
        s.render(base + '.raw.data', Render())
        files = {'.script': s.expected_script('stitched', recorded=True),
                 '.script-61': s.expected_script('stitched'),
                 '.oracle.script': s.expected_script('oracle'),
                 '.oracle-72.script': s.expected_script('oracle', recorded=True),
                 '.no22.script': s.expected_script('no22'),
                 '.report': s.expected_report(),
                 '.report-72': s.expected_report(v72=True),
                 '.dump': s.expected_dump(False),
                 '.dump-be': s.expected_dump(True),
                 '.deferred': s.expected_deferred(),
                 '.json': json.dumps(s.summary(), indent=1) + '\n'}
        for ext, text in files.items():
            with open(base + ext, 'w') as f:
                f.write(text)
        print(name)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    g = sub.add_parser('gen')
    g.add_argument('--workload', required=True)
    g.add_argument('--recorded-as')
    g.add_argument('--out', required=True)
    g.add_argument('names', nargs='*')
    sub.add_parser('list')
    a = ap.parse_args()
    if a.cmd == 'list':
        for fn in SCENARIOS:
            print('%-22s %s' % (name_of(fn), fn.__doc__.strip().split('\n')[0]))
        return
    generate(Binary(a.workload, a.recorded_as), a.out, a.names)


if __name__ == '__main__':
    main()
