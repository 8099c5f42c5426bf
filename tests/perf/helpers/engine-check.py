#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Feed a scenario to libunwind-cookie's stitch engine, compare outcomes.

    engine-check.py LIB.so SCENARIO.json [time|file]

Cross-checks the expectations scenarios.py wrote (read from
Documentation/stitching.md) against the engine itself, through ctypes:
every sample, record, exit, exec and lost notice of the scenario is fed in
time order (what perf does behind ordered_events) or in file order (raw
perf.data order, with the horizon perf passes: 0, then at each
FINISHED_ROUND the newest time fed before the previous round), then
finish().  Prints one line per sample that came out
otherwise than expected; exit status 1 if any did.  When a perf check of
test-scenarios.sh fails but this one passes, the bug is in perf's use of
the engine, not in the engine.

Not fed: records the session already refuses (malformed nr or size, cut at
the end of the file) and samples whose chain is malformed (the marker
without a cookie; cookie 0): perf must report those itself.
"""

import ctypes as C
import json
import sys

u32, u64, size_t, vp = C.c_uint32, C.c_uint64, C.c_size_t, C.c_void_p


class Sample(C.Structure):
    _fields_ = [('sz', size_t), ('pid', u32), ('tid', u32), ('cpu', u32), ('time', u64),
                ('kernel', C.POINTER(u64)), ('nr_kernel', size_t), ('cookie', u64),
                ('payload', vp), ('payload_bytes', size_t)]


class Record(C.Structure):
    _fields_ = [('sz', size_t), ('pid', u32), ('tid', u32), ('cpu', u32), ('time', u64),
                ('cookie', u64),
                ('ips', C.POINTER(u64)), ('nr', size_t)]


class Stitched(C.Structure):
    _fields_ = [('status', C.c_int), ('reason', C.c_int), ('pid', u32), ('tid', u32),
                ('cpu', u32), ('time', u64), ('cookie', u64),
                ('kernel', C.POINTER(u64)), ('nr_kernel', size_t),
                ('user', C.POINTER(u64)), ('nr_user', size_t),
                ('record_cpu', u32), ('record_time', u64), ('late', C.c_bool),
                ('payload', vp)]


DELIVER = C.CFUNCTYPE(None, vp, C.POINTER(Stitched))


class Opts(C.Structure):
    _fields_ = [('sz', size_t), ('deliver', DELIVER), ('ctx', vp), ('order', C.c_int),
                ('window', u64), ('max_pending_bytes', size_t), ('layout', C.c_int)]


NOT_DEFERRED, STITCHED, ORPHAN = 0, 1, 2
CPU_UNKNOWN = 0xffffffff    # UNWIND_STITCHER_CPU_UNKNOWN
ORDER_INPUT = 1


def arr(xs):
    return (u64 * max(len(xs), 1))(*xs)


def cpu_of(x):
    """perf reads (u32)-1 for the CPU of an event without PERF_SAMPLE_CPU"""
    return CPU_UNKNOWN if x['cpu'] is None else x['cpu']


def run(lib, d, order):
    got = {}

    def deliver(_ctx, sp):
        s = sp.contents
        i = s.payload - 1
        if s.status == STITCHED:
            got[i] = ('stitched', None, [s.user[k] for k in range(s.nr_user)])
        elif s.status == NOT_DEFERRED:
            got[i] = ('plain', None, None)
        else:
            got[i] = ('orphan', lib.unwind_orphan_reason__name(s.reason).decode(), None)
    cb = DELIVER(deliver)
    opts = Opts(C.sizeof(Opts), cb, None, ORDER_INPUT, 0, 0, 0)
    st = lib.unwind_stitcher__new(C.byref(opts))
    assert st, 'unwind_stitcher__new failed'

    items = []
    for i, s in enumerate(d['samples']):
        if s['outcome'] != 'malformed':
            items.append((s['time'], s['seq'], 'sample', i, s))
    for r in d['records']:
        if r['malformed'] not in ('nr', 'size', 'eof'):
            items.append((r['time'], r['seq'], 'record', 0, r))
    for e in d['task_events']:
        items.append((e['time'], e['seq'], e['kind'], 0, e))
    if order == 'file':
        items += [(0, seq, 'round', 0, None) for seq in d.get('rounds', [])]
    items.sort(key=lambda x: (x[0], x[1]) if order == 'time' else x[1])
    keep = []
    clock = round_clock = 0
    if order == 'file':         # before the second round anything may come
        assert lib.unwind_stitcher__horizon(st, u64(0)) == 0
    for t, _seq, kind, i, x in items:
        if kind == 'round':
            err = lib.unwind_stitcher__horizon(st, u64(round_clock))
            assert err == 0, 'horizon: %d' % err
            round_clock = clock
            continue
        clock = max(clock, t)
        if kind == 'sample':
            k = arr([ip for ip, _ in x['kernel']])
            keep.append(k)
            smp = Sample(C.sizeof(Sample), x['pid'], x['tid'], cpu_of(x), x['time'], k,
                         len(x['kernel']), x['cookie'] or 0, i + 1, 0)
            err = lib.unwind_stitcher__add_sample(st, C.byref(smp))
        elif kind == 'record':
            ips = arr(x['ips'])
            keep.append(ips)
            rec = Record(C.sizeof(Record), x['pid'], x['tid'], cpu_of(x), x['time'],
                         x['cookie'], ips, len(x['ips']))
            err = lib.unwind_stitcher__add_record(st, C.byref(rec))
            if x['malformed'] == 'cookie0':
                assert err == -22, 'cookie 0 record accepted'
                continue
        elif kind == 'exit':
            err = lib.unwind_stitcher__task_exit(st, x['pid'], x['tid'], u64(x['time']))
        elif kind == 'exec':
            err = lib.unwind_stitcher__task_exec(st, x['pid'], x['tid'], u64(x['time']))
        else:
            err = lib.unwind_stitcher__lost(st, x['cpu'], u64(x['time']))
        assert err == 0, '%s %r: %d' % (kind, x, err)
    assert lib.unwind_stitcher__finish(st) == 0
    lib.unwind_stitcher__delete(st)
    return got


def main():
    lib = C.CDLL(sys.argv[1])
    lib.unwind_stitcher__new.restype = vp
    lib.unwind_stitcher__new.argtypes = [C.POINTER(Opts)]
    for f in ('add_sample', 'add_record', 'task_exit', 'task_exec', 'lost', 'horizon',
              'finish', 'delete'):
        getattr(lib, 'unwind_stitcher__' + f).argtypes = None
    lib.unwind_stitcher__add_sample.argtypes = [vp, C.POINTER(Sample)]
    lib.unwind_stitcher__add_record.argtypes = [vp, C.POINTER(Record)]
    lib.unwind_stitcher__task_exit.argtypes = [vp, u32, u32, u64]
    lib.unwind_stitcher__task_exec.argtypes = [vp, u32, u32, u64]
    lib.unwind_stitcher__lost.argtypes = [vp, u32, u64]
    lib.unwind_stitcher__horizon.argtypes = [vp, u64]
    lib.unwind_stitcher__finish.argtypes = [vp]
    lib.unwind_stitcher__delete.argtypes = [vp]
    lib.unwind_orphan_reason__name.restype = C.c_char_p
    d = json.load(open(sys.argv[2]))
    order = sys.argv[3] if len(sys.argv) > 3 else 'time'
    got = run(lib, d, order)
    bad = 0
    for i, s in enumerate(d['samples']):
        if s['outcome'] == 'malformed':
            continue
        want = (s['outcome'], s['reason'],
                [ip for ip, _ in s['user']] if s['outcome'] == 'stitched' else None)
        if got.get(i) != want:
            bad += 1
            print('sample %d (tid %d, time %d): expected %s %s, engine: %s' % (
                i, s['tid'], s['time'], want[0], want[1] or '',
                ' '.join(str(x) for x in got[i][:2]) if i in got else 'not delivered'))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
