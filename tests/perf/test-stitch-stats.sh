#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf stitch --stats[=json]: the stitch engine's counters for a deferred
# recording must be the ones 'perf script' prints in its summary line
# ("deferred callchains: ..." on stderr) for the same file.
#
# usage: tests/perf/test-stitch-stats.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, SYS_PERF (the recording; $PERF if
#   missing), PYTHON, KEEP.  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
sys_perf_runs || SYS_PERF=$PERF
GEN="$PY $here/helpers/inject-deferred.py"

# orphan FILE "REASON NAME": the count of that reason in the summary line, 0 if absent
orphan() { sed -nE "s/.*deferred callchains:.*(\(|, )$2 ([0-9]+)[,)].*/\2/p" "$1" | head -1 | grep . || echo 0; }
# text FILE LABEL: the first number after "LABEL:" in --stats output
text() { sed -nE "s/^ *$2:? +([0-9]+).*/\1/p" "$1" | head -1; }

# ------------------------------------------------------------ recording
if ! "$SYS_PERF" record -q -g -o fp.data -- ls -R /usr/share/doc > /dev/null 2> record.log; then
	cat record.log
	abort "perf record ($SYS_PERF)"
fi
if ! $GEN --defer --drop-every 7 --dup-every 5 fp.data d.data > gen.log 2>&1; then
	cat gen.log
	abort "inject-deferred.py --defer --drop-every 7 --dup-every 5"
fi

"$PERF" script -i d.data > /dev/null 2> script.err
check "perf script: summary line" has script.err 'deferred callchains: '
sed -n 's/^/     /; /deferred callchains/p' script.err

# ------------------------------------------------------------ text
"$PERF" stitch --stats -i d.data > stats.txt 2> stats.err
check "--stats: exit 0" eq "$?" 0
sed 's/^/     /' stats.txt

ds=$(summary_count script.err 'deferred samples')
st=$(summary_count script.err stitched)
orph=$(summary_count script.err orphans)
rec=$(summary_count script.err records)
dup=$(summary_count script.err 'duplicate records')
check "file has deferred samples" gt "${ds:-0}" 0
check "some orphans (--drop-every 7)" gt "${orph:-0}" 0
check "some duplicates (--dup-every 5)" gt "${dup:-0}" 0
check "text: deferred samples = script" eq "$(text stats.txt 'deferred samples')" "$ds"
check "text: stitched = script" eq "$(text stats.txt stitched)" "$st"
check "text: orphans = script" eq "$(text stats.txt orphans)" "$orph"
check "text: records = script" eq "$(text stats.txt records)" "$rec"
check "text: duplicate records = script" eq "$(text stats.txt 'duplicate records')" "$dup"
for reason in "record lost" "task exited" "stream ended" "memory cap" "exec" "unwind failed"; do
	check "text: orphans, $reason = script" eq "$(text stats.txt "$reason")" "$(orphan script.err "$reason")"
done
pct=$(sed -nE 's/.* stitched \(([0-9.]+%)\).*/\1/p' script.err)
check "text: stitched % = script ($pct)" has stats.txt "^stitched: +$st \\($pct\\)"
check "text: latency line" has stats.txt '^latency \(ns\): +min -?[0-9]+, median -?[0-9]+, p99 -?[0-9]+, max -?[0-9]+'

# ------------------------------------------------------------ json
"$PERF" stitch --stats=json -i d.data > stats.json 2> json.err
check "--stats=json: exit 0" eq "$?" 0
sed 's/^/     /' stats.json
check "--stats=json: parses" $PY -c 'import json,sys; json.load(sys.stdin)' < stats.json
check "--stats=json: one line" eq "$(wc -l < stats.json)" 1
check "json: deferred_samples = script" eq "$(js stats.json "d['deferred_samples']")" "$ds"
check "json: stitched = script" eq "$(js stats.json "d['stitched']")" "$st"
# every sample, not only the deferred ones: perf report --stats's SAMPLE
"$PERF" report --stats -i d.data > d.rstats 2> /dev/null
check "json: samples = every sample read ($(stat d.rstats SAMPLE))" \
	eq "$(js stats.json "d['samples']")" "$(stat d.rstats SAMPLE)"
check "text: samples = json" eq "$(text stats.txt samples)" "$(js stats.json "d['samples']")"
check "json: orphans_total = script" eq "$(js stats.json "d['orphans_total']")" "$orph"
check "json: sum of orphans = orphans_total" eq "$(js stats.json "sum(d['orphans'].values())")" "$orph"
check "json: records = script" eq "$(js stats.json "d['records']")" "$rec"
check "json: duplicates + conflicting = script" \
	eq "$(js stats.json "d['duplicates'] + d['duplicates_conflicting']")" "$dup"
for key in "record lost:record_lost" "task exited:task_exited" "stream ended:stream_ended" \
	   "memory cap:memory_cap" "exec:exec" "unwind failed:unwind_failed"; do
	check "json: orphans.${key#*:} = script" \
		eq "$(js stats.json "d['orphans']['${key#*:}']")" "$(orphan script.err "${key%:*}")"
done
check "json: all keys" eq "$(js stats.json "' '.join(k for k in ('samples', 'deferred_samples', 'records', 'stitched', 'orphans', 'orphans_total', 'duplicates', 'duplicates_conflicting', 'late_samples', 'cross_cpu_records', 'truncated_records', 'empty_records', 'unclaimed_records', 'lost_notices', 'peak_pending_samples', 'peak_pending_bytes', 'latency') if k not in d)")" ""
check "json: latency keys" eq "$(js stats.json "sorted(d['latency'])")" "['count', 'max', 'median', 'min', 'p99']"
check "json = text: late samples" eq "$(js stats.json "d['late_samples']")" "$(text stats.txt 'late samples')"
check "json = text: peak pending samples" eq "$(js stats.json "d['peak_pending_samples']")" \
	"$(sed -nE 's/^peak pending: +([0-9]+) samples.*/\1/p' stats.txt)"

# ------------------------------------------------------------ no deferred samples
"$PERF" stitch --stats=json -i fp.data > fp.json 2> fp.err
check "no deferred samples: exit 0" eq "$?" 0
check "no deferred samples: valid JSON" $PY -c 'import json,sys; json.load(sys.stdin)' < fp.json
check "no deferred samples: zeros" eq "$(js fp.json "d['deferred_samples'] + d['stitched'] + d['records'] + d['orphans_total']")" 0
"$PERF" report --stats -i fp.data > fp.rstats 2> /dev/null
check "no deferred samples: samples = every sample ($(stat fp.rstats SAMPLE))" \
	eq "$(js fp.json "d['samples']")" "$(stat fp.rstats SAMPLE)"
"$PERF" stitch --stats -i fp.data > fp.txt 2>> fp.err
check "no deferred samples, text: exit 0" eq "$?" 0
check "no deferred samples, text: 0 deferred samples" eq "$(text fp.txt 'deferred samples')" 0

# ------------------------------------------------------------ errors
"$PERF" stitch --stats -i missing.data > miss.out 2> miss.err
rc=$?
check "missing file: non-zero exit" [ "$rc" -ne 0 ]
check "missing file: a message" has miss.err 'missing\.data'
check "missing file: nothing on stdout" [ ! -s miss.out ]
"$PERF" stitch --stats=xml -i d.data > /dev/null 2> xml.err
rc=$?
check "--stats=xml: non-zero exit" [ "$rc" -ne 0 ]
check "--stats=xml: a message" has xml.err "unknown format 'xml'"
"$PERF" stitch --stats --emulate -i d.data -o x.data > /dev/null 2> excl.err
rc=$?
check "--stats --emulate: refused" [ "$rc" -ne 0 ]
"$PERF" stitch -F folded --stats -i d.data > /dev/null 2> fmt.err
rc=$?
check "-F with --stats: refused" [ "$rc" -ne 0 ]
check "-F with --stats: exclusive" has fmt.err 'exclusive'

finish
