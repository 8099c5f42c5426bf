#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pipecopy.py IN OUT: a copy of the file-mode perf.data IN as `perf record
-o -` writes it, to be read from a pipe (perf script -i - < OUT): the pipe
header, a PERF_RECORD_HEADER_ATTR per attr with its ids, then IN's
records.  A pipe cannot be read twice, so no index is made there: the
tests hold a file's reading to its pipe reading, where every sample waits
for its record in the stream.  IN's features are left out (perf record
writes them as records at the pipe's end; perf script needs none here).
"""

import os
import struct
import sys

from zcopy import PerfFile, HEADER_COMPRESSED

HEADER_ATTR = 64
PIPE_HEADER = struct.pack('<8sQ', b'PERFILE2', 16)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: pipecopy.py IN OUT')
    src, dst = sys.argv[1:]
    pf = PerfFile(src)
    if HEADER_COMPRESSED in pf.feats:
        sys.exit('%s: compressed: not written as a pipe here' % src)
    with open(dst + '.tmp', 'wb') as out:
        out.write(PIPE_HEADER)
        for off in range(pf.attrs_off, pf.attrs_off + pf.attrs_size, pf.attr_size):
            attr = pf.buf[off:off + pf.attr_size - 16]
            ids_off, ids_size = struct.unpack_from('<QQ', pf.buf, off + pf.attr_size - 16)
            body = attr + pf.buf[ids_off:ids_off + ids_size]
            out.write(struct.pack('<IHH', HEADER_ATTR, 0, 8 + len(body)) + body)
        nrec = 0
        for _, rec in pf.records():
            out.write(rec)
            nrec += 1
    os.rename(dst + '.tmp', dst)
    print('pipecopy: %s: %d records' % (dst, nrec))


if __name__ == '__main__':
    main()
