#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""relocate.py OLD NEW FILE...: rename the directory OLD to NEW in the
paths that FILE names, in place.

A recording names the programs it profiled by their absolute paths
(PERF_RECORD_MMAP2, HEADER_BUILD_ID, HEADER_CMDLINE), and a program built
with -g names the directory it was compiled in (DW_AT_comp_dir): made in
a checkout, both name the checkout, which a clone elsewhere does not have.
The 7.2 guest records the workloads under /mnt/clone (tests/vm/), built
as if there (-fdebug-prefix-map): this gives older files the same paths.

Every path of OLD is rewritten, that is OLD followed by '/' or by the NUL
that ends the string; nothing else of the file changes but what the
compressed records below need.  NEW must be as
long as OLD in an ELF file (its string tables share tails: a string's
length is part of other strings), and may be shorter elsewhere: the
string that holds it is then rewritten in place and padded with NULs, as
perf pads its strings.  In a perf.data file the records that perf record
-z compressed (PERF_RECORD_COMPRESSED, COMPRESSED2) are decompressed,
renamed alike and compressed again, the data section and the feature
sections after it moved by what that changed (python3-zstandard).

Prints, per FILE, how many paths it rewrote.
"""
import os
import re
import struct
import sys

PERF_MAGIC = b'PERFILE2'


PERF_RECORD_COMPRESSED = 81
PERF_RECORD_COMPRESSED2 = 83


def data_section(buf):
    """(start, end, feature table offset or None) of a perf.data file's
    records: a file's data section, or everything after a pipe header;
    None when buf is not perf.data"""
    if not buf.startswith(PERF_MAGIC) or len(buf) < 16:
        return None
    size, = struct.unpack_from('<Q', buf, 8)
    if size == 16:                          # a pipe stream
        return 16, len(buf), None
    if len(buf) < 104:
        return None
    off, length = struct.unpack_from('<QQ', buf, 40)
    if not length:                          # not terminated: to the end
        return off, len(buf), None
    return off, min(off + length, len(buf)), off + length


def compressed_records(buf):
    """(offset, size, type, payload start, payload) of each compressed
    record of a perf.data file, in order, while its records hold together"""
    sect = data_section(buf)
    if not sect:
        return
    off, end, _ = sect
    while off + 8 <= end:
        typ, _misc, size = struct.unpack_from('<IHH', buf, off)
        if size < 8 or off + size > end:
            return
        if typ == PERF_RECORD_COMPRESSED:
            yield off, size, typ, off + 8, buf[off + 8:off + size]
        elif typ == PERF_RECORD_COMPRESSED2 and size >= 16:
            n, = struct.unpack_from('<Q', buf, off + 8)
            yield off, size, typ, off + 16, buf[off + 16:off + 16 + min(n, size - 16)]
        off += size


def decompress(payload):
    """the records a compressed record holds, or None"""
    import zstandard
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    except zstandard.ZstdError:
        return None


def relocate(buf, old, new):
    """buf with every path of old renamed to new, and how many"""
    elf = buf.startswith(b'\x7fELF')
    if len(new) > len(old) or (elf and len(new) != len(old)):
        raise ValueError('%s is longer than %s%s' %
                         (new.decode(), old.decode(), '' if not elf else
                          ' or of another length (ELF)'))
    path = re.compile(re.escape(old) + rb'(?=[/\x00])')
    if len(new) == len(old):
        return path.subn(new, buf)
    out = bytearray(buf)
    n = 0
    done = 0
    for m in path.finditer(buf):
        if m.start() < done:
            continue
        # the rest of the string, its NUL included
        end = buf.index(b'\0', m.start()) + 1
        rewritten, k = path.subn(new, buf[m.start():end])
        out[m.start():end] = rewritten + b'\0' * (end - m.start() - len(rewritten))
        n += k
        done = end
    return bytes(out), n


def relocate_compressed(buf, old, new):
    """buf with the paths inside its compressed records renamed, and how
    many: each such record compressed again (zstd level 1, perf record's
    default), what follows it moved, the data size and the feature
    section offsets of the header with it"""
    import zstandard
    out = bytearray()
    pos = 0
    delta = 0
    n = 0
    for off, size, typ, start, payload in list(compressed_records(buf)):
        data = decompress(payload)
        if data is None or not re.search(re.escape(old) + rb'(?=[/\x00])', data):
            continue
        data, k = relocate(data, old, new)
        comp = zstandard.ZstdCompressor(level=1).compress(data)
        if typ == PERF_RECORD_COMPRESSED:
            rec = comp
            head = buf[off:off + 8]
            new_size = 8 + len(rec)
        else:
            pad = -(16 + len(comp)) % 8
            rec = struct.pack('<Q', len(comp)) + comp + b'\0' * pad
            head = buf[off:off + 8]
            new_size = 8 + len(rec)
        if new_size > 0xffff:
            raise ValueError('a compressed record at %#x would not fit once renamed' % off)
        out += buf[pos:off] + head[:6] + struct.pack('<H', new_size) + rec
        pos = off + size
        delta += new_size - size
        n += k
    if not n:
        return buf, 0
    out += buf[pos:]
    _start, _end, feat = data_section(buf)
    if feat is not None:
        # the data size, and where each feature section now is
        length, = struct.unpack_from('<Q', out, 48)
        struct.pack_into('<Q', out, 48, length + delta)
        nfeat = bin(int.from_bytes(buf[72:104], 'little')).count('1')
        table = feat + delta
        for i in range(nfeat):
            at = table + 16 * i
            if at + 16 > len(out):
                break
            o, = struct.unpack_from('<Q', out, at)
            # one past the end of the file (a damaged file) stays as it was
            if feat <= o < len(buf):
                struct.pack_into('<Q', out, at, o + delta)
    return bytes(out), n


def main():
    if len(sys.argv) < 4:
        sys.exit('usage: relocate.py OLD NEW FILE...')
    old = sys.argv[1].rstrip('/').encode()
    new = sys.argv[2].rstrip('/').encode()
    if not old.startswith(b'/') or not new.startswith(b'/'):
        sys.exit('relocate.py: OLD and NEW are absolute directories')
    status = 0
    for path in sys.argv[3:]:
        with open(path, 'rb') as f:
            buf = f.read()
        try:
            out, n = relocate(buf, old, new)
            out, k = relocate_compressed(out, old, new)
            n += k
        except ValueError as e:
            print('relocate.py: %s: %s' % (path, e), file=sys.stderr)
            status = 1
            continue
        if n:
            with open(path + '.tmp', 'wb') as f:
                f.write(out)
            os.replace(path + '.tmp', path)
        print('%s: %d paths' % (path, n))
    return status


if __name__ == '__main__':
    sys.exit(main())
