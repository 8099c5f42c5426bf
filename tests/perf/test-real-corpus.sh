#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Recordings the Linux 7.2 kernel made (tests/corpus/real-7.2/, recorded in
# QEMU by make vm-record; its README gives the workloads and command lines)
# against the order-free oracle in every reading mode (oracle-check.sh):
# the kernel's own records decide each sample's user stack, and perf
# script, perf script -i - for pipes, the Python dict, perf report ordered
# and --stats, perf stitch -o, --stats=json and -F folded must all say the
# same, sample for sample.  No VM needed: every machine checks real kernel
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
require_perf
corpus=$(abs_path "${1:-$top/tests/corpus/real-7.2}")
ORACLE_PY=${ORACLE_PY:-/usr/bin/python3}

n=0
: > features.all
for f in "$corpus"/*.data; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f" .data)
	PERF=$PERF OUT=$tmp/$name "$here/oracle-check.sh" "$f" "$name" > "$name.oracle" 2>&1
	relay_results "$name.oracle"
	"$ORACLE_PY" "$here/oracle.py" features "$f" > "$name.features" 2>&1 ||
		bad "$name: oracle.py features"
	echo "     $name: $(tr '\n' ' ' < "$name.features")"
	cat "$name.features" >> features.all
done
check "the corpus holds real recordings ($n)" gt "$n" 0

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
finish
