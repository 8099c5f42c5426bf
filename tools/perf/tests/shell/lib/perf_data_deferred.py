#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Rewrite a frame-pointer perf.data as a kernel deferring its user stacks.

usage: perf_data_deferred.py IN OUT

IN: perf record -e EVENT --call-graph fp of one event, its sample_type
IP, TID, TIME, CALLCHAIN and nothing else.  OUT: the same recording as
Linux 6.19+ writes it with defer_callchain and defer_output set: the
user part of each sample's callchain replaced by
PERF_CONTEXT_USER_DEFERRED and a cookie, a PERF_RECORD_CALLCHAIN_DEFERRED
record of that cookie with the user addresses right after the sample.
Prints the number of records written.  Exits 2 when IN is not such a
recording.
"""
import struct
import sys

HEADER = struct.Struct('<8sQQ QQ QQ QQ')  # magic, size, attr_size, attrs, data, event_types
SAMPLE_TYPE = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 5  # IP, TID, TIME, CALLCHAIN
CONTEXT_USER = (1 << 64) - 512
CONTEXT_USER_DEFERRED = (1 << 64) - 640
RECORD_SAMPLE, RECORD_CALLCHAIN_DEFERRED = 9, 22
DEFER_CALLCHAIN, DEFER_OUTPUT = 1 << 38, 1 << 39


def defer(body):
    """A sample's body with its user part deferred, and that part."""
    ip, pid, tid, time, nr = struct.unpack_from('<QIIQQ', body, 0)
    chain = list(struct.unpack_from(f'<{nr}Q', body, 32))
    if CONTEXT_USER not in chain:
        return body, None
    at = chain.index(CONTEXT_USER)
    user = chain[at + 1:]
    chain = chain[:at] + [CONTEXT_USER_DEFERRED, 0]
    head = struct.pack('<QIIQQ', ip, pid, tid, time, len(chain))
    return head, (chain, user, pid, tid, time, body[32 + 8 * nr:])


def main():
    """Rewrite IN into OUT."""
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, 'rb') as f:
        data = bytearray(f.read())
    (magic, hsize, attr_size, attrs_off, attrs_size, data_off, data_size,
     _, _) = HEADER.unpack_from(data, 0)
    if magic != b'PERFILE2' or attrs_size != attr_size or data_size == 0:
        print(f'{src}: not a finished recording of one event', file=sys.stderr)
        sys.exit(2)
    # perf_event_attr: sample_type at 24, the flag bits at 40
    sample_type, = struct.unpack_from('<Q', data, attrs_off + 24)
    if sample_type != SAMPLE_TYPE:
        print(f'{src}: sample_type {sample_type:#x}, not IP|TID|TIME|CALLCHAIN',
              file=sys.stderr)
        sys.exit(2)
    flags, = struct.unpack_from('<Q', data, attrs_off + 40)
    struct.pack_into('<Q', data, attrs_off + 40, flags | DEFER_CALLCHAIN | DEFER_OUTPUT)

    out, off, end, cookie = bytearray(), data_off, data_off + data_size, 0
    while off < end:
        rtype, misc, size = struct.unpack_from('<IHH', data, off)
        record = data[off:off + size]
        off += size
        if rtype != RECORD_SAMPLE:
            out += record
            continue
        head, deferred = defer(record[8:])
        if deferred is None:
            out += record
            continue
        chain, user, pid, tid, time, rest = deferred
        cookie += 1
        chain[-1] = cookie
        body = head + struct.pack(f'<{len(chain)}Q', *chain) + rest
        out += struct.pack('<IHH', rtype, misc, 8 + len(body)) + body
        # the record: cookie, nr, ips, then the sample_id of TID and TIME
        body = struct.pack(f'<QQ{len(user)}QIIQ', cookie, len(user), *user, pid, tid, time)
        out += struct.pack('<IHH', RECORD_CALLCHAIN_DEFERRED, 2, 8 + len(body)) + body
    if cookie == 0:
        print(f'{src}: no sample with a user callchain', file=sys.stderr)
        sys.exit(2)
    # the feature sections follow the data: one (offset, size) per bit set
    features = int.from_bytes(data[hsize - 32:hsize], 'little')
    moved = len(out) - data_size
    for i in range(bin(features).count('1')):
        pos = end + 16 * i
        sec_off, = struct.unpack_from('<Q', data, pos)
        struct.pack_into('<Q', data, pos, sec_off + moved)
    struct.pack_into('<Q', data, 48, len(out))
    data[data_off:end] = out
    with open(dst, 'wb') as f:
        f.write(data)
    print(cookie)


if __name__ == '__main__':
    main()
