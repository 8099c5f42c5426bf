#!/bin/bash
# perf names where a pipe stream ends inside a record
# SPDX-License-Identifier: GPL-2.0

# A stream of perf record -o - can stop inside a record (perf record
# killed, a broken connection).  perf script must show the samples
# before the cut and say where the stream ends: the record's offset and
# how far into its header or its body, for a cut in either.

shelldir=$(dirname "$0")
if ! command -v python3 > /dev/null; then
	echo "no python3 [Skipped]"
	exit 2
fi
data=$(mktemp /tmp/__perf_test.pipe_cut.XXXXX)
cleanup() {
	rm -f "$data" "$data".*
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if ! perf record -q -e cpu-clock -c 1000000 -o - -- perf test -w noploop 1 \
		> "$data" 2> "$data.rec"; then
	echo "perf record -o - [Skipped: cannot record]"
	cat "$data.rec"
	exit 2
fi

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
