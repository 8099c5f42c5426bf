#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""plot-scale.py RUNS.tsv OUTDIR: bench-scale.sh's runs as OUTDIR/results.tsv
(medians), OUTDIR/table.md (the README's table, with the goals of issue 32)
and OUTDIR/bench-scale.png: cpu and peak RSS of ours and pristine perf 7.2,
perf script and perf report --stdio, against the file's size and against
the longest block (matplotlib, from Debian's python3-matplotlib)."""

import collections
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
        key = (series, float(x), name, cmd)
        runs[key].append((float(cpu), int(rss)))
        size[(series, float(x))] = int(nbytes)
        # ours' summary: "N deferred samples, M stitched (..), K orphans (reason K), R records"
        m = re.search(r'(\d+) deferred samples, \d+ stitched[^,]*, (\d+) orphans'
                      r'(?: \(([^)]*)\))?, (\d+) records', fields[7] if len(fields) > 7 else '')
        if name == 'ours' and cmd == 'script' and m:
            # gen-scale.py writes a record for every sample but those of the
            # tasks still blocked at the end: they are the orphans to expect
            samples, got, records = int(m.group(1)), int(m.group(2)), int(m.group(4))
            orphans[(series, float(x))] = '%d (%s; %s)' % (
                got, m.group(3) or 'none',
                'all samples without a record' if got == samples - records
                else 'MISS: %d samples without a record' % (samples - records))
    med = {k: (statistics.median(c for c, _ in v), statistics.median(r for _, r in v))
           for k, v in runs.items()}
    return med, size, orphans


def table(med, size, orphans):
    rows = ['| series | longest block / size | file | perf script: ours / pristine cpu (ratio) '
            '| perf report | peak RSS ours / pristine (ratio) | ours\' orphans |',
            '|---|---|---|---|---|---|---|']
    for series, x in sorted(size):
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
    with open(out + '/results.tsv', 'w') as f:
        for (series, x, name, cmd), (cpu, rss) in sorted(med.items()):
            f.write('%s\t%g\t%d\t%s\t%s\t%.2f\t%d\n' % (series, x, size[(series, x)], name, cmd,
                                                       cpu, rss))
    with open(out + '/table.md', 'w') as f:
        f.write(table(med, size, orphans))
    plot(med, size, out + '/bench-scale.png')


if __name__ == '__main__':
    main()
