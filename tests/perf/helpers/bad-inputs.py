#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The damaged deferred recordings tests/perf/test-bad-input.sh gives every
tool, made from real 7.2 recordings (a file and a pipe stream of
tests/corpus/real-7.2) and a writer-made big-endian file:

    bad-inputs.py FILE.data PIPE.data BIG_ENDIAN.data OUT_DIR

writes OUT_DIR/NAME for each input and prints one line per input:
NAME<TAB>class<TAB>what was done to it, class being
  unreadable  nothing in it can be read
  corrupt     damaged inside the data: the reader stops there
  cut         cut short: readable up to the cut
  skip        one record damaged in a way the reader skips, counted
  swapped     written on a host of the other byte order
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfdata as pd  # noqa: E402

PERF_RECORD_CALLCHAIN_DEFERRED = 22


def middle(offsets):
    return offsets[len(offsets) // 2]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split('\n\n')[1])
    file_path, pipe_path, be_path, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    pf = pd.PerfFile(file_path)
    buf = pf.buf
    mid = middle(pf.offsets)
    pipe = open(pipe_path, 'rb').read()
    pipe_mid = middle(pd.record_offsets(pipe))
    be = open(be_path, 'rb').read()
    inputs = []

    def put(name, cls, what, data):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
        inputs.append((name, cls, what))

    def patched(off, data):
        b = bytearray(buf)
        b[off:off + len(data)] = data
        return bytes(b)

    put('empty.data', 'unreadable', 'an empty file', b'')
    put('header-cut.data', 'unreadable', 'the first 50 bytes (of the 104-byte header)', buf[:50])
    put('bad-magic.data', 'unreadable', "magic 'PERFILE3'", patched(0, b'PERFILE3'))
    put('data-past-end.data', 'unreadable', 'the data offset (header) past the end of the file',
        patched(40, struct.pack('<Q', len(buf) + (1 << 20))))
    put('cut-in-record.data', 'cut', 'cut 5 bytes into the header of the middle record '
        '(%#x)' % mid, buf[:mid + 5])
    put('cut-at-record.data', 'cut', 'cut just before the middle record (%#x): no record '
        'cut, the header still counts the rest' % mid, buf[:mid])
    put('record-size-0.data', 'corrupt', 'the size of the middle record (%#x) set to 0' % mid,
        patched(mid + 6, struct.pack('<H', 0)))
    put('garbage.data', 'corrupt', '4 KiB of 0xa5 from the middle record (%#x) on' % mid,
        patched(mid, b'\xa5' * 4096))
    rec22 = [off for off, rec in zip(pf.offsets, pf.records)
             if struct.unpack_from('<I', rec, 0)[0] == PERF_RECORD_CALLCHAIN_DEFERRED]
    r = middle(rec22)
    put('type22-nr.data', 'skip', 'the nr of a CALLCHAIN_DEFERRED record (%#x) set to 1000' % r,
        patched(r + 16, struct.pack('<Q', 1000)))
    # perf counts a stream's offsets from the end of its 16-byte header
    at = '%#x in the file, %#x to perf' % (pipe_mid, pipe_mid - pd.PIPE_HEADER_SIZE)
    put('pipe-cut-header.pipe', 'cut', 'a pipe stream cut 5 bytes into the header of its '
        'middle record (%s)' % at, pipe[:pipe_mid + 5])
    put('pipe-cut-record.pipe', 'cut', 'a pipe stream cut 20 bytes into its middle record '
        '(%s)' % at, pipe[:pipe_mid + 20])
    put('pipe-header-cut.pipe', 'unreadable', 'the first 10 bytes of a pipe stream', pipe[:10])
    put('big-endian.data', 'swapped', 'a big-endian file (writer-made)', be)
    put('big-endian-cut.data', 'cut', 'the same, cut in half', be[:len(be) // 2])
    for name, cls, what in inputs:
        print('%s\t%s\t%s' % (name, cls, what))


if __name__ == '__main__':
    main()
