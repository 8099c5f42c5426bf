#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Recordings the Linux 7.2 kernel made (tests/corpus/real-7.2/, recorded in
# QEMU by make vm-record; its README gives the workloads and command lines)
# against the order-free oracle in every reading mode (oracle-check.sh):
# the kernel's own records decide each sample's user stack, and perf
# script, perf script -i - for pipes, the Python dict, perf report ordered
# and --stats, perf stitch -o, --stats=json and -F folded must all say the
# same, sample for sample; the user frames resolve as the record's own.  No VM needed: every machine checks real kernel
# output on every run.
#
# The corpus must keep showing what the models never made: late samples
# (records earlier in time), records earlier in the file than their
# samples, records after their task's EXIT, exec orphans, waits of
# seconds and a late sample long after its record (oracle.py features).
#
# usage: tests/perf/test-real-corpus.sh [DIR]   (default tests/corpus/real-7.2)
#   Environment (tests/perf/lib.sh): PERF, KEEP; ORACLE_PY (oracle-check.sh).

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
use_corpus_buildids
require_perf
require_upstream_perf
corpus=$(abs_path "${1:-$top/tests/corpus/real-7.2}")
ORACLE_PY=${ORACLE_PY:-/usr/bin/python3}

n=0
: > features.all
for f in "$corpus"/*.data; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f" .data)
	PERF=$PERF OUT=$tmp/$name "$here/helpers/oracle-check.sh" "$f" "$name" > "$name.oracle" 2>&1
	relay_results "$name.oracle"
	# a recording of context switches: perf sched timehist on it
	if "$PERF" evlist -i "$f" 2> /dev/null | grep -q '^sched:sched_switch$'; then
		PERF=$PERF UPSTREAM_PERF=$UP_PERF OUT=$tmp/$name.timehist \
			"$here/helpers/timehist-check.sh" "$f" "$name" \
			> "$name.timehist.txt" 2>&1
		relay_results "$name.timehist.txt"
		timehist=$((${timehist:-0} + 1))
	fi
	"$ORACLE_PY" "$here/helpers/oracle.py" features "$f" > "$name.features" 2>&1 ||
		bad "$name: oracle.py features"
	echo "     $name: $(tr '\n' ' ' < "$name.features")"
	cat "$name.features" >> features.all
done
check "the corpus holds real recordings ($n)" gt "$n" 0

# perf data convert --to-json: a sample whose record never came shows the
# pseudo-frame perf script shows ("[user stack lost: REASON]"), not its
# cookie as a frame; as many as perf script's summary counts orphans
for f in "$corpus"/*.data; do
	name=$(basename "$f" .data)
	"$PERF" script -i "$f" > /dev/null 2> "$name.script.err"
	orph=$(summary_count "$name.script.err" orphans)
	"$PERF" data convert --to-json "$name.json" -i "$f" > /dev/null 2>&1
	lost=$("$ORACLE_PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
frames = [fr for s in d["samples"] for fr in s["callchain"]]
print(sum(fr.get("symbol", "").startswith("[user stack lost: ") for fr in frames),
      sum(fr.get("dso") == "[deferred]" and not fr.get("symbol", "").startswith("[user stack lost: ")
          for fr in frames))' "$name.json")
	check "$name: --to-json: a lost user stack per orphan ($orph), as perf script shows it" \
		eq "$lost" "${orph:-x} 0"
done

# feature NAME: the sum of NAME over the corpus (max for max_wait_ns)
feature() {
	awk -v k="$1" '$1 == k { if (k ~ /^max_/) { if ($2 > s) s = $2 } else s += $2 }
		END { printf "%.0f\n", s }' features.all
}
check "corpus: late samples, their record earlier in time ($(feature late_samples))" \
	gt "$(feature late_samples)" 0
check "corpus: records earlier in the file than their samples ($(feature records_earlier_in_file))" \
	gt "$(feature records_earlier_in_file)" 0
check "corpus: records after their task's EXIT ($(feature records_after_exit))" \
	gt "$(feature records_after_exit)" 0
check "corpus: exec samples, a record of the new program ($(feature exec))" \
	gt "$(feature exec)" 0
check "corpus: a record more than 2 s after its sample ($(feature max_wait_ns) ns)" \
	gt "$(feature max_wait_ns)" 2000000000
check "corpus: a late sample more than 100 ms after its record ($(feature max_late_ns) ns)" \
	gt "$(feature max_late_ns)" 100000000
# The user part of a stitched sample was taken when its record was
# written: it resolves against the maps of then, as perf script prints the
# record itself (--show-deferred-events), though the sample leaves in its
# place in time.  An execve() sampled after its COMM but before the new
# program's MMAP2s is stitched to the new program's stack (_start in
# ld.so): in the maps of the sample's time, [unknown].  The records print
# their frames, also those of a dummy tracking event (a tracepoint's).
F=comm,tid,time,ip,sym,symoff,dso
for f in "$corpus"/*.data; do
	name=$(basename "$f" .data)
	"$PERF" script -F $F -i "$f" > "$name.merged" 2> /dev/null
	"$PERF" script -F $F -i "$f" --no-merge-callchains --show-deferred-events \
		> "$name.unmerged" 2> /dev/null
	"$ORACLE_PY" "$here/helpers/record-maps-check.py" "$name.merged" "$name.unmerged" \
		> "$name.maps" 2>&1
	rc=$?
	check "$name: user parts in their record's maps ($(tail -1 "$name.maps"))" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || head -9 "$name.maps" | sed 's/^/     /'
done

# Nothing waits long on a file (util/deferred-index.c): the pipe
# recording (threads blocked up to 1.9 s) made a file by perf inject, read
# both ways: the same output; the file is indexed once its samples hold
# a sixteenth of the memory cap (at most 1 MiB) behind them, and then its
# samples take their records read ahead where the pipe's wait for them,
# and the events after them with them
peak() { sed -nE 's/.*deferred callchains: peak ([0-9]+) samples.*/\1/p' "$1"; }
"$PERF" inject -i - -o pipe-as-file.data < "$corpus/blocker-pipe.data" 2> inject.err
"$PERF" script -v -i pipe-as-file.data > as-file.script 2> as-file.err
"$PERF" script -v -i - < "$corpus/blocker-pipe.data" > as-pipe.script 2> as-pipe.err
check "blocker-pipe as a file: perf script as from the pipe" same as-file.script as-pipe.script
"$PERF" script -v -i pipe-as-file.data --stitch-max-mem 256K > as-file-256k.script \
	2> as-file-256k.err
check "blocker-pipe as a file, --stitch-max-mem 256K: perf script as from the pipe" \
	same as-file-256k.script as-pipe.script
check "blocker-pipe as a file, --stitch-max-mem 256K: indexed once 16 KiB was held ($(sed -nE 's/.*records indexed, ([0-9]+) bytes held.*/\1/p' as-file-256k.err))" \
	has as-file-256k.err 'records indexed, 1[67][0-9][0-9][0-9] bytes held'
check "blocker-pipe as a file, --stitch-max-mem 256K: the records read ahead ($(sed -nE 's/.*: ([0-9]+) records read ahead.*/\1/p' as-file-256k.err) of $(summary_count as-file-256k.err 'deferred samples'))" \
	has as-file-256k.err ': [1-9][0-9]* records read ahead'
check "blocker-pipe as a file, --stitch-max-mem 256K: at most a tenth of the pipe's samples wait at once ($(peak as-file-256k.err) against $(peak as-pipe.err))" \
	[ "$(($(peak as-file-256k.err) * 10))" -le "$(peak as-pipe.err)" ]

check "corpus: a recording of context switches for perf sched timehist (${timehist:-0})" \
	gt "${timehist:-0}" 0

# Pristine upstream perf 7.2 (make perf-upstream; make check builds it) on
# the same files: every sample it merges comes out of ours with the same
# chain, and where it drops a user part ours keeps it or names the reason
# (upstream-compare.py's checks); the counts of both are printed.
"$ORACLE_PY" "$here/helpers/upstream-compare.py" --upstream "$UP_PERF" --ours "$PERF" \
	"$corpus"/*.data > upstream.txt 2>&1
rc=$?
grep -v -e '^      ' -e '^    tid ' upstream.txt | sed 's/^/     /'
check "pristine perf 7.2: every sample it merges has our chain, every user part it drops ours keeps or names (status $rc)" \
	eq "$rc" 0
check "pristine perf 7.2: it drops user parts ours keeps, on these recordings ($(grep -c 'ours kept [1-9]' upstream.txt) of $n)" \
	gt "$(grep -c 'ours kept [1-9]' upstream.txt)" 0
# Time order: upstream's merge delivers the samples it held after
# later events; ours keeps every sample in time order.
back() { awk '/^ *[0-9]+\.[0-9]+: *$/ { t = $1 + 0; if (t < last) n++; if (t > last) last = t } END { print n + 0 }'; }
ours_back=0 up_back=0
for f in "$corpus"/*.data; do
	o=$("$PERF" script -F time --ns -i "$f" 2> /dev/null | back)
	u=$("$UP_PERF" script -F time --ns -i "$f" 2> /dev/null | back)
	echo "     $(basename "$f" .data): samples printed after a later one: ours $o, pristine 7.2 $u"
	ours_back=$((ours_back + o)) up_back=$((up_back + u))
done
check "time order: no sample printed after a later one (pristine 7.2: $up_back)" eq "$ours_back" 0
check "time order: pristine 7.2 prints samples after later ones, as it merges ($up_back)" \
	gt "$up_back" 0
finish
