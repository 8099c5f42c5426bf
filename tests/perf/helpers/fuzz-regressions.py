#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Regression seeds for make fuzz-perf: real 7.2 recordings of
tests/corpus/real-7.2 with one damage each of the kinds that crashed perf
6.1 when a user fuzzed such files (issue 22):

  sample-cpu-huge.data     blocker-cs.data, three samples' CPU field set to
                           33554433 (6.1: SIGSEGV in machine__resolve()
                           indexing env->cpu with it)
  tracepoint-config.data   offcpu-sched.data, the sched_switch attr's config
                           (tracepoint id) matching no event of the tracing
                           data (6.1: SIGSEGV in libtraceevent's
                           print_event_info() with a NULL event)
  tracepoint-raw-size.data tp-task.data, the raw data size of three
                           raw_syscalls:sys_enter samples past their record
  build-id-size.data       threads-2ev-fpdefer.data, a HEADER_BUILD_ID
                           entry claiming a build id of 64 bytes (6.1:
                           "stack smashing detected" copying it into 20)

usage: fuzz-regressions.py CORPUS_DIR OUT_DIR
Writes the files it can make (a recording missing from CORPUS_DIR skips
its file) and prints their paths.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

PERF_RECORD_SAMPLE = 9
PERF_TYPE_TRACEPOINT = 2
S_RAW = 1 << 10
HEADER_BUILD_ID = 2
# struct perf_record_header_build_id: header, pid, build_id[20], size
BUILD_ID_SIZE_OFF = 8 + 4 + 20


def attrs(pf):
    """[(type, config, sample_type)] of the file's attrs."""
    out = []
    for a, _ in pf.attrs:
        typ, _, config, _, st = struct.unpack_from('<IIQQQ', a, 0)
        out.append((typ, config, st))
    return out


def samples(pf):
    """(file offset, record, sample type) of the samples whose attr is known:
    by its PERF_SAMPLE_IDENTIFIER, or the file's only sample type."""
    types = {st for _, _, st in attrs(pf)}
    by_id = {}
    for (a, ids), (_, _, st) in zip(pf.attrs, attrs(pf)):
        for i in range(0, len(ids), 8):
            by_id[struct.unpack_from('<Q', ids, i)[0]] = st
    out = []
    for off, rec in zip(pf.offsets, pf.records):
        if struct.unpack_from('<I', rec, 0)[0] != PERF_RECORD_SAMPLE:
            continue
        if len(types) == 1:
            st = next(iter(types))
        elif all(t & pd.S_IDENTIFIER for t in types) and len(rec) >= 16:
            st = by_id.get(struct.unpack_from('<Q', rec, 8)[0])
        else:
            st = None
        if st is not None:
            out.append((off, rec, st))
    return out


def field_offset(st, stop):
    """Offset in a sample record of the field of bit stop (fixed fields only)."""
    off = 8
    for bit in (pd.S_IDENTIFIER, pd.S_IP, pd.S_TID, pd.S_TIME, pd.S_ADDR, pd.S_ID,
                pd.S_STREAM_ID, pd.S_CPU, pd.S_PERIOD):
        if bit == stop:
            return off
        if st & bit:
            off += 8
    raise ValueError('not a fixed field')


def sample_cpu_huge(pf):
    buf = bytearray(pf.buf)
    hit = [(off, st) for off, _, st in samples(pf) if st & pd.S_CPU][:3]
    for off, st in hit:
        struct.pack_into('<I', buf, off + field_offset(st, pd.S_CPU), 33554433)
    return buf if hit else None


def tracepoint_config(pf):
    buf = bytearray(pf.buf)
    for i, (typ, config, _) in enumerate(attrs(pf)):
        if typ == PERF_TYPE_TRACEPOINT:
            struct.pack_into('<Q', buf, pf.attrs_off + i * pf.attr_size + 8, config + 12345)
            return buf
    return None


def tracepoint_raw_size(pf):
    """The u32 size of PERF_SAMPLE_RAW, past callchain, of tracepoint samples."""
    buf = bytearray(pf.buf)
    n = 0
    for off, rec, st in samples(pf):
        if not st & S_RAW or st & pd.S_READ:
            continue
        _, pos = pd.sample_fields(rec, st)
        if st & pd.S_CALLCHAIN:
            nr = struct.unpack_from('<Q', rec, pos)[0]
            pos += 8 + 8 * nr
        if pos + 4 > len(rec):
            continue
        size = struct.unpack_from('<I', rec, pos)[0]
        if not size:
            continue
        struct.pack_into('<I', buf, off + pos, size + 4096)
        n += 1
        if n == 3:
            return buf
    return buf if n else None


def build_id_size(pf):
    sec = pf.features.get(HEADER_BUILD_ID)
    if not sec or len(sec) <= BUILD_ID_SIZE_OFF:
        return None
    buf = bytearray(pf.buf)
    buf[pf.buf.find(sec) + BUILD_ID_SIZE_OFF] = 64
    return buf


MAKERS = (('sample-cpu-huge.data', 'blocker-cs.data', sample_cpu_huge),
          ('tracepoint-config.data', 'offcpu-sched.data', tracepoint_config),
          ('tracepoint-raw-size.data', 'tp-task.data', tracepoint_raw_size),
          ('build-id-size.data', 'threads-2ev-fpdefer.data', build_id_size))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[2])
    corpus, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    for name, source, make in MAKERS:
        path = os.path.join(corpus, source)
        if not os.path.exists(path):
            continue
        buf = make(pd.PerfFile(path))
        if buf is None:
            sys.exit('fuzz-regressions: %s: nothing to damage for %s' % (path, name))
        with open(os.path.join(out, name), 'wb') as f:
            f.write(buf)
        print(os.path.join(out, name))


if __name__ == '__main__':
    main()
