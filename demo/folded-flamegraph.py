#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""folded-flamegraph.py --template HTML [--context TEXT] FOLDED OUT

make demo's off-CPU flame graph: folded stacks ("comm;outermost;...;leaf
WEIGHT", as perf stitch -F folded --kernel-suffix writes them) drawn with
d3-flame-graph's template, the one perf's flamegraph.py fills: the same
JSON tree (n: name, l: "kernel" for the frames ending in "_[k]", "root" for
the pseudo-frames in brackets, "" for user code; v: the weight of the
stacks that end there; c: children), the same blue-green colours.  The
widths are the stacks' weights, here nanoseconds off CPU
(--count=off-cpu), where flamegraph.py counts samples.  Writes OUT only
when complete.
"""
import argparse
import json
import os
import sys
import tempfile


def tree(folded):
    root = {'n': 'all', 'l': 'root', 'v': 0, 'c': []}
    index = {id(root): {}}
    for line in folded:
        stack, _, weight = line.rstrip('\n').rpartition(' ')
        if not stack:
            continue
        node = root
        for frame in stack.split(';'):
            libtype = ''
            if frame.endswith('_[k]'):
                frame, libtype = frame[:-4], 'kernel'
            elif frame.startswith('[') and frame.endswith(']'):
                libtype = 'root'	# "[off-cpu: S]", "[user stack lost: ...]"
            children = index[id(node)]
            child = children.get(frame)
            if child is None:
                child = {'n': frame, 'l': libtype, 'v': 0, 'c': []}
                node['c'].append(child)
                children[frame] = child
                index[id(child)] = {}
            node = child
        node['v'] += int(weight)
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--template', required=True)
    ap.add_argument('--context', default='')
    ap.add_argument('folded')
    ap.add_argument('out')
    args = ap.parse_args()
    with open(args.folded) as f:
        stacks = tree(f)
    with open(args.template) as f:
        html = f.read()
    if '/** @flamegraph_json **/' not in html:
        sys.exit('%s: not a d3-flame-graph template (no @flamegraph_json)' % args.template)
    options = {'colorscheme': 'blue-green', 'context': args.context}
    html = html.replace('/** @options_json **/', json.dumps(options))
    html = html.replace('/** @flamegraph_json **/', json.dumps(stacks))
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.out)))
    with os.fdopen(fd, 'w') as f:
        f.write(html)
    os.rename(tmp, args.out)


if __name__ == '__main__':
    main()
