#!/bin/bash
# perf names where a pipe stream ends inside a record
# SPDX-License-Identifier: GPL-2.0

# A stream of perf record -o - can stop inside a record (perf record
# killed, a broken connection).  perf script must show the samples
# before the cut and say where the stream ends: the record's offset and
# how far into its header or its body, for a cut in either.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init pipe_cut
record_pipe_or_skip -e cpu-clock -c 1000000 -- perf test -w noploop 1

err=0
for where in header body; do
	if ! read -r offset kept < <(python3 "$shelldir/lib/perf_pipe_cut.py" \
					"$data" "$data.cut" $where); then
		echo "cannot cut the stream [Failed]"
		exit 1
	fi
	perf script -i - < "$data.cut" > "$data.out" 2> "$data.err"
	samples=$(grep -c noploop "$data.out")
	[ "$where" = header ] && what="a record header" || what="this record"
	if ! grep -q "^$offset.*: the stream ends $kept bytes into $what" "$data.err"; then
		echo "cut $kept bytes into the $where of the record at $offset: not said [Failed]"
		cat "$data.err"
		err=1
	elif [ "$samples" -eq 0 ]; then
		echo "cut in a record's $where: no sample before it shown [Failed]"
		err=1
	else
		echo "cut in the $where of the record at $offset: said," \
		     "$samples samples before it shown"
	fi
done
exit $err
