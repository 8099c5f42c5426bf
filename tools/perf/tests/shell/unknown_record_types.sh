#!/bin/bash
# perf reads past records of types it does not know, counted
# SPDX-License-Identifier: GPL-2.0

# Newer kernels and newer perf add record types.  A perf.data with a
# record this perf does not know, of a kernel type (it carries the
# sample_id fields of a kernel record) or past the user types, must read
# as without it: every sample shown, the exit status 0, and the records
# skipped counted once, with the first one's type and offset.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init unknown_types
record_or_skip -e cpu-clock -c 100000 -- sleep 0.1
perf script -i "$data" > "$data.want" 2> /dev/null ||
	{ echo "perf script of the recording failed [Failed]"; exit 1; }

err=0
# 63: the last kernel type before the user types (64 on), like a COMM
# record; 200: past every user type, a bare header and 8 bytes
for spec in "63 like:3" "200 16"; do
	read -r type body <<< "$spec"
	offset=$(python3 "$shelldir/lib/perf_data_insert.py" \
			"$data" "$data.$type" "$type" "$body") ||
		{ echo "cannot write the file [Failed]"; exit 1; }
	perf script -i "$data.$type" > "$data.out" 2> "$data.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "type $type at $offset: exit status $rc [Failed]"
		err=1
	elif ! cmp -s "$data.out" "$data.want"; then
		echo "type $type at $offset: not every sample of the recording shown [Failed]"
		err=1
	elif ! grep -q "skipped them (first: type $type at file offset $offset)" \
			"$data.err"; then
		echo "type $type at $offset: not counted with its type and offset [Failed]"
		err=1
	else
		echo "type $type at $offset: skipped, counted"
		continue
	fi
	cat "$data.err"
done
exit $err
