#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""plot-scale.py RUNS.tsv OUTDIR: bench-scale.sh's runs as OUTDIR/results.tsv
(medians), OUTDIR/table.md (the README's table of the size and block
series), OUTDIR/shapes.md (that of the shape series, with the goals of
issue 47 each row meets or misses) and the plots: OUTDIR/bench-scale.png,
cpu and peak RSS of ours and pristine perf 7.2, perf script and perf
report --stdio, against the file's size and against the longest block;
OUTDIR/bench-scale-shapes.png, the same and the anonymous RSS by shape
(matplotlib, from Debian's python3-matplotlib).  OUTDIR/held.tsv: ours'
peak of samples held per shape."""

import collections
import os
import re
import statistics
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

GIB = 1 << 30


def load(path):
    runs = collections.defaultdict(list)
    size = {}
    orphans = {}
    for line in open(path):
        fields = line.rstrip('\n').split('\t')
        series, x, nbytes, name, cmd, cpu, rss = fields[:7]
        anon = int(fields[8]) if len(fields) > 8 and fields[8] else 0
        if series != 'shape':
            x = float(x)
        key = (series, x, name, cmd)
        runs[key].append((float(cpu), int(rss), anon))
        size[(series, x)] = int(nbytes)
        # ours' summary: "N deferred samples, M stitched (..), K orphans (reason K), R records"
        m = re.search(r'(\d+) deferred samples, \d+ stitched[^,]*, (\d+) orphans'
                      r'(?: \(([^)]*)\))?, (\d+) records', fields[7] if len(fields) > 7 else '')
        if name == 'ours' and cmd == 'script' and m:
            # gen-scale.py writes a record for every sample but those of the
            # tasks still blocked at the end: they are the orphans to expect
            samples, got, records = int(m.group(1)), int(m.group(2)), int(m.group(4))
            orphans[(series, x)] = '%d (%s; %s)' % (
                got, m.group(3) or 'none',
                'all samples without a record' if got == samples - records
                else 'MISS: %d samples without a record' % (samples - records))
    med = {k: tuple(statistics.median(r[i] for r in v) for i in range(3))
           for k, v in runs.items()}
    return med, size, orphans


def table(med, size, orphans):
    rows = ['| series | longest block / size | file | perf script: ours / pristine cpu (ratio) '
            '| perf report | peak RSS ours / pristine (ratio) | ours\' orphans |',
            '|---|---|---|---|---|---|---|']
    for series, x in sorted(k for k in size if k[0] != 'shape'):
        def cell(cmd):
            o, p = med[(series, x, 'ours', cmd)], med[(series, x, 'pristine', cmd)]
            return o, p, '%.1f / %.1f s (%.2fx)' % (o[0], p[0], o[0] / p[0] if p[0] else 0)
        so, sp, sc = cell('script')
        ro, rp, rc = cell('report')
        rss = '%.0f / %.0f MiB (%.2fx)' % (so[1] / 1024, sp[1] / 1024, so[1] / sp[1])
        label = ('%g GiB' % x) if series == 'size' else ('%g s' % x)
        rows.append('| %s | %s | %.2f GiB | %s | %s | %s | %s |' %
                    (series, label, size[(series, x)] / GIB, sc, rc, rss,
                     orphans.get((series, x), '?')))
    return '\n'.join(rows) + '\n'


SHAPE_ORDER = ('short', 'never', 'end', 'random', 'many')
VARIANT_NAME = {'': 'file', 'z': '-z', 'dir': '--threads', 'dirz': '--threads -z'}


def split_shape(x):
    shape, _, variant = x.partition('-')
    return shape, variant


def shape_keys(size):
    def order(x):
        shape, variant = split_shape(x)
        return (list(VARIANT_NAME).index(variant),
                SHAPE_ORDER.index(shape) if shape in SHAPE_ORDER else 99, shape)
    return sorted((x for s, x in size if s == 'shape'), key=order)


def shapes_table(med, size, orphans, held):
    """The shape series, with issue 47's goals per row: peak RSS within
    10% of the same variant's short file (no long blocks) and at most 1.1x
    pristine's, cpu at most 1.0x pristine's, perf script and report."""
    rows = ['| shape | as | file | perf script cpu: ours / pristine (ratio) | perf report cpu '
            '| peak RSS, script: ours / pristine (ratio) | ours / short\'s | report\'s peak RSS '
            '| anon, script: ours / pristine | ours\' peak held | ours\' orphans | goals |',
            '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for x in shape_keys(size):
        shape, variant = split_shape(x)
        ref = 'short' + ('-' + variant if variant else '')
        missed = []
        cells = {}
        for cmd in ('script', 'report'):
            o, p = med[('shape', x, 'ours', cmd)], med[('shape', x, 'pristine', cmd)]
            cells[cmd] = (o, p)
            if o[0] > p[0]:
                missed.append('%s cpu %.2fx' % (cmd, o[0] / p[0]))
            if o[1] > 1.1 * p[1]:
                missed.append('%s RSS %.2fx pristine' % (cmd, o[1] / p[1]))
            r = med.get(('shape', ref, 'ours', cmd))
            if r and o[1] > 1.1 * r[1]:
                missed.append('%s RSS %.2fx short' % (cmd, o[1] / r[1]))
        (so, sp), (ro, rp) = cells['script'], cells['report']
        r = med.get(('shape', ref, 'ours', 'script'))
        rows.append('| %s | %s | %.0f MiB | %.1f / %.1f s (%.2fx) | %.1f / %.1f s (%.2fx) '
                    '| %.0f / %.0f MiB (%.2fx) | %s | %.0f / %.0f MiB (%.2fx) | %.0f / %.0f MiB '
                    '| %s | %s | %s |' %
                    (shape, VARIANT_NAME[variant], size[('shape', x)] / (1 << 20),
                     so[0], sp[0], so[0] / sp[0], ro[0], rp[0], ro[0] / rp[0],
                     so[1] / 1024, sp[1] / 1024, so[1] / sp[1],
                     '%.2fx' % (so[1] / r[1]) if r else '-',
                     ro[1] / 1024, rp[1] / 1024, ro[1] / rp[1],
                     so[2] / 1024, sp[2] / 1024, held.get(x, '?'), orphans.get(('shape', x), '?'),
                     'ok' if not missed else 'MISS: ' + ', '.join(missed)))
    return '\n'.join(rows) + '\n'


def plot_shapes(med, size, path):
    xs = shape_keys(size)
    fig, axes = plt.subplots(3, 1, figsize=(13, 10), sharex=True)
    pos = range(len(xs))
    width = 0.2
    bars = [('ours', 'script', 'tab:blue'), ('pristine', 'script', 'tab:red'),
            ('ours', 'report', 'tab:cyan'), ('pristine', 'report', 'tab:orange')]
    for i, (name, cmd, color) in enumerate(bars):
        off = [p + (i - 1.5) * width for p in pos]
        axes[0].bar(off, [med[('shape', x, name, cmd)][0] for x in xs], width, color=color,
                    label='%s perf %s' % (name, cmd))
        axes[1].bar(off, [med[('shape', x, name, cmd)][1] / 1024 for x in xs], width,
                    color=color, label='%s perf %s' % (name, cmd))
        axes[2].bar(off, [med[('shape', x, name, cmd)][2] / 1024 for x in xs], width,
                    color=color, label='%s perf %s' % (name, cmd))
    for ax, label in zip(axes, ('cpu (s)', 'peak RSS (MiB)', 'peak anonymous RSS (MiB)')):
        ax.set_ylabel(label)
        ax.grid(True, axis='y', alpha=0.3)
    axes[0].legend(fontsize=8, ncol=4)
    axes[0].set_title('by shape of blocking, as a file, -z, --threads, --threads -z')
    axes[2].set_xticks(list(pos))
    axes[2].set_xticklabels(['%s\n%s' % (split_shape(x)[0], VARIANT_NAME[split_shape(x)[1]])
                             for x in xs], fontsize=7, rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def plot(med, size, path):
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    style = {('ours', 'script'): ('tab:blue', '-'), ('ours', 'report'): ('tab:blue', '--'),
             ('pristine', 'script'): ('tab:red', '-'), ('pristine', 'report'): ('tab:red', '--')}
    for col, (series, xlabel) in enumerate((('size', 'file size (GiB)'),
                                            ('block', 'longest block (s)'))):
        xs = sorted(x for s, x in size if s == series)
        if not xs:
            continue
        for (name, cmd), (color, ls) in style.items():
            xv = [size[(series, x)] / GIB if series == 'size' else x for x in xs]
            axes[0][col].plot(xv, [med[(series, x, name, cmd)][0] for x in xs], color=color,
                              linestyle=ls, marker='o', label='%s perf %s' % (name, cmd))
            axes[1][col].plot(xv, [med[(series, x, name, cmd)][1] / 1024 for x in xs],
                              color=color, linestyle=ls, marker='o',
                              label='%s perf %s' % (name, cmd))
        axes[0][col].set_ylabel('cpu (s)')
        axes[1][col].set_ylabel('peak RSS (MiB)')
        for row in (0, 1):
            axes[row][col].set_xlabel(xlabel)
            axes[row][col].grid(True, alpha=0.3)
            axes[row][col].set_ylim(bottom=0)
        axes[0][col].legend(fontsize=8)
    axes[0][0].set_title('by file size (longest block: half the recording)')
    axes[0][1].set_title('by longest block (the middle size)')
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    med, size, orphans = load(sys.argv[1])
    out = sys.argv[2]
    held = {}
    if os.path.exists(out + '/held.tsv'):
        for line in open(out + '/held.tsv'):
            _, x, n = line.rstrip('\n').split('\t')
            held[x] = n
    with open(out + '/results.tsv', 'w') as f:
        for (series, x, name, cmd), (cpu, rss, anon) in sorted(med.items(), key=str):
            f.write('%s\t%s\t%d\t%s\t%s\t%.2f\t%d\t%d\n' % (series, x, size[(series, x)], name,
                                                           cmd, cpu, rss, anon))
    if any(s != 'shape' for s, _ in size):
        with open(out + '/table.md', 'w') as f:
            f.write(table(med, size, orphans))
        plot(med, size, out + '/bench-scale.png')
    if any(s == 'shape' for s, _ in size):
        with open(out + '/shapes.md', 'w') as f:
            f.write(shapes_table(med, size, orphans, held))
        plot_shapes(med, size, out + '/bench-scale-shapes.png')


if __name__ == '__main__':
    main()
