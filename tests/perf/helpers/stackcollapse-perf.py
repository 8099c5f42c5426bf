#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Collapse 'perf script' output into folded stacks, the way
stackcollapse-perf.pl does.

An independent Python re-implementation of the conventions of Brendan
Gregg's stackcollapse-perf.pl (FlameGraph, CDDL), written from its
documented behaviour to check 'perf stitch -F folded' against it: the Perl
script is not packaged for Debian nor on npm, so it is not available here.

    perf script | stackcollapse-perf.py [--kernel] [--pid] [--tid]
                                        [--event-filter EVENT] [--separator]
                                        [--count-samples]

What it re-implements (the script's options --inline, --context, --jit,
--all and --addrs are left out):

  - a sample is a header line, its stack lines (leaf first) and an empty
    line; lines starting with '#' are comments;
  - a header line starts with the comm: perf script prints it so for the
    samples of events with callchains, and right-aligns the comm in 16
    columns ("%16s", a comm has at most 15 characters) on the single line
    it prints for a sample without one.  That line is no header: it is
    taken for a stack line (it ends in "(dso)" when perf script prints the
    ip) or warned about ("Unrecognized line"), and as no sample is open
    after the previous sample's empty line, nothing of it is kept, nor is
    its event seen for the default event filter.  A sample with a
    callchain of no frames (its header and the empty line) is kept as the
    root frame alone.  A header that no empty line follows (perf script
    could not resolve a callchain) stays open: the next header replaces
    it, but the stack lines of a filtered sample right after it are taken
    for its own, with its period (the script's $m_period, set only for the
    samples it keeps);
  - header: "comm [pid/]tid ...", the comm being the shortest text before a
    blank, a number (pid/tid or tid) and a blank; the root frame is the comm
    ("comm-PID" with --pid, "comm-PID/TID" with --tid, PID "?" when perf
    script printed no pid), with spaces made '_';
  - period and event: the script's test of a header line is
    /:\s*(\d+)*\s+(\S+):\s*$/ ("... time:  PERIOD EVENT:" at its end); when
    it matches, $1 is the period and $2 the event, and only the samples of
    the first such event are kept (or of --event-filter); the others are
    skipped, and a line on stderr says so once.  A line it does not match
    (a tracepoint's, whose fields follow the event name) is never filtered
    out.  The period is the weight of the sample's stack; without one
    (no match, no digits, or "0": Perl's `not $period`) the weight is 1;
  - a filtered sample's stack lines and its end are ignored (`next if not
    $pname`);
  - stack line: "addr func (module)"; a trailing "+0x..." offset is
    stripped, a func starting with '(' is skipped, "a->b" is split into
    frames with "_[i]" (inlined) on all but the first; func "[unknown]"
    becomes "[<module file name>]", or "[unknown]" when the module is
    "[unknown]" too;
  - tidying: ';' becomes ':', everything from the first '(' that does not
    open "(anonymous namespace)" is dropped unless the name looks like a Go
    method (".(...)." in it), quotes are removed, and in the "java" process
    a leading 'L' of a name with a '/' goes;
  - --kernel: "_[k]" after a frame whose module starts with '[' or ends in
    "vmlinux" and does not contain "unknown" (not on "_[i]" frames);
  - output: "stack count" lines sorted by stack, byte-wise, the count being
    the sum of the weights.

Not the script's: --count-samples weighs every sample 1, the reference for
'perf stitch -F folded --count=samples'.

Deliberate differences, where the Perl script guesses from text what perf
knows (perf stitch follows perf's knowledge):

  - the modules perf prints in brackets for user-space mappings ([vdso],
    [vsyscall], [vectors], [uprobes], [heap], [stack], [anon...] and
    perf's "[deferred]" of the "[user stack lost: ...]" frames) are not
    kernel modules: no "_[k]";
  - --separator (not in the script): a "-" frame between the user part and
    the kernel part, as flamegraph.pl draws mixed stacks; the kernel part
    is the leaf-side run of frames up to the last one of a kernel module
    (frames of module "[unknown]" count with the side they sit in).
"""

import argparse
import os
import re
import sys

HEADER = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+', re.ASCII)
PERIOD_EVENT = re.compile(r':\s*(\d+)*\s+(\S+):\s*$', re.ASCII)
FRAME = re.compile(r'^\s*(\w+)\s*(.+) \((\S*)\)', re.ASCII)
OFFSET = re.compile(r'\+0x[\da-f]+$', re.ASCII)
GO_METHOD = re.compile(r'\.\(.*\)\.')
ARGS = re.compile(r'\((?!anonymous namespace\)).*')

USER_PSEUDO_MAPS = {'[vdso]', '[vsyscall]', '[vectors]', '[uprobes]', '[heap]',
                    '[stack]', '[deferred]'}


def kernel_module(mod):
    """The script's test for a kernel frame, without perf's user-space
    pseudo-maps."""
    if mod in USER_PSEUDO_MAPS or mod.startswith('[anon'):
        return False
    return (mod.startswith('[') or mod.endswith('vmlinux')) and 'unknown' not in mod


def perl_split(pattern, s):
    """Perl's split: trailing empty fields are dropped."""
    fields = re.split(pattern, s)
    while fields and fields[-1] == '':
        fields.pop()
    return fields


def tidy(func, pname):
    func = func.replace(';', ':')
    if not GO_METHOD.search(func):
        func = ARGS.sub('', func, count=1)
    func = func.replace('"', '').replace("'", '')
    if pname == 'java' and '/' in func and func.startswith('L'):
        func = func[1:]
    return func


class Collapser:
    def __init__(self, args):
        self.args = args
        self.event_filter = args.event_filter or ''
        self.defaulted = False
        self.warned = False
        self.collapsed = {}
        self.stack = []         # leaf first: (frames of one line, side)
        self.pname = None
        self.period = 1

    def end_of_stack(self):
        if not self.pname:
            return
        frames = []
        sides = []
        for fr, side in self.stack:
            frames.append(fr)
            sides.append(side)
        if self.args.separator:
            frames = self.separate(frames, sides)
        # frames are leaf first, each a list in the order the script
        # unshifts them; the root is the comm
        out = [self.pname]
        for fr in reversed(frames):
            out.extend(fr)
        key = ';'.join(out)
        self.collapsed[key] = self.collapsed.get(key, 0) + self.period
        self.stack = []
        self.pname = None

    @staticmethod
    def separate(frames, sides):
        last_k = -1
        for i, side in enumerate(sides):
            if side == 'u':
                break
            if side == 'k':
                last_k = i
        if last_k < 0 or last_k == len(frames) - 1:
            return frames
        return frames[:last_k + 1] + [['-']] + frames[last_k + 1:]

    def header(self, line, m):
        comm, pid, tid = m.group(1), m.group(2), m.group(3)
        if not tid:
            tid, pid = pid, '?'
        weight = 1
        e = PERIOD_EVENT.search(line)
        if e:
            period, event = e.group(1), e.group(2)
            if period and int(period) and not self.args.count_samples:
                weight = int(period)
            if self.event_filter == '':
                self.event_filter = event
                self.defaulted = True
            elif event != self.event_filter:
                if self.defaulted and not self.warned:
                    print('Filtering for events of type: %s' % event, file=sys.stderr)
                    self.warned = True
                return
        # a filtered sample leaves the period (and the comm) of an open one
        self.period = weight
        if self.args.tid:
            pname = '%s-%s/%s' % (comm, pid, tid)
        elif self.args.pid:
            pname = '%s-%s' % (comm, pid)
        else:
            pname = comm
        self.pname = pname.replace(' ', '_')

    def frame(self, m):
        if not self.pname:
            return
        pc, rawfunc, mod = m.group(1), m.group(2), m.group(3)
        rawfunc = OFFSET.sub('', rawfunc)
        if rawfunc.startswith('('):
            return
        inline = []
        for func in perl_split(r'->', rawfunc):
            if func == '[unknown]':
                func = '[%s]' % (os.path.basename(mod) if mod != '[unknown]' else 'unknown')
            func = tidy(func, self.pname)
            if inline:
                func += '_[i]'
            elif self.args.kernel and kernel_module(mod):
                func += '_[k]'
            inline.append(func)
        if kernel_module(mod):
            side = 'k'
        elif mod in ('[unknown]', 'inlined'):
            side = '?'
        else:
            side = 'u'
        self.stack.append((inline, side))

    def feed(self, line):
        if line.startswith('#'):
            return
        line = line.rstrip('\n')
        if line == '':
            self.end_of_stack()
            return
        m = HEADER.match(line)
        if m:
            self.header(line, m)
            return
        m = FRAME.match(line)
        if m:
            self.frame(m)
            return
        print('Unrecognized line: %s' % line, file=sys.stderr)

    def output(self, fp):
        # Perl's sort { $a cmp $b }: by code point, which for the UTF-8 text
        # read below is byte order
        for key in sorted(self.collapsed):
            fp.write('%s %d\n' % (key, self.collapsed[key]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pid', action='store_true', help='include PID with process names')
    ap.add_argument('--tid', action='store_true', help='include TID and PID with process names')
    ap.add_argument('--kernel', action='store_true', help='annotate kernel functions with _[k]')
    ap.add_argument('--event-filter', default='', help='event name filter')
    ap.add_argument('--count-samples', action='store_true',
                    help='(not the script\'s) weigh each sample 1')
    ap.add_argument('--separator', action='store_true',
                    help="a '-' frame between the user and the kernel part (not in the script)")
    ap.add_argument('infile', nargs='*')
    args = ap.parse_args()

    c = Collapser(args)
    files = args.infile or ['-']
    for name in files:
        fp = (sys.stdin.buffer if name == '-' else open(name, 'rb'))
        for raw in fp:
            c.feed(raw.decode('utf-8', 'surrogateescape'))
    out = open(sys.stdout.fileno(), 'w', encoding='utf-8', errors='surrogateescape',
               closefd=False)
    c.output(out)
    out.flush()


if __name__ == '__main__':
    main()
