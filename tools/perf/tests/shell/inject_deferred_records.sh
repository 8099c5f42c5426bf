#!/bin/bash
# perf inject keeps the CALLCHAIN_DEFERRED records of a recording
# SPDX-License-Identifier: GPL-2.0

# With deferred user callchains (Linux 6.19+) a sample's user stack is a
# PERF_RECORD_CALLCHAIN_DEFERRED record of its own.  perf inject must
# write them as it read them: the samples of its output keep their user
# stacks.  The recording is a frame-pointer one rewritten as such a
# kernel writes it (lib/perf_data_deferred.py), so that the test runs on
# any kernel.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init inject_deferred
record_or_skip -e cpu-clock -c 100000 --call-graph fp -- perf test -w noploop 1
python3 "$shelldir/lib/perf_data_deferred.py" "$data" "$data.deferred" > "$data.nr"
case $? in
0) ;;
2) echo "not a recording to rewrite [Skipped]"; exit 2 ;;
*) echo "cannot write the file [Failed]"; exit 1 ;;
esac

if ! perf inject -i "$data.deferred" -o "$data.out" 2> "$data.err"; then
	echo "perf inject failed [Failed]"
	cat "$data.err"
	exit 1
fi
count() {
	perf report -D -i "$1" 2> /dev/null | grep -c ' PERF_RECORD_CALLCHAIN_DEFERRED'
}
records_in=$(count "$data.deferred")
records_out=$(count "$data.out")
if [ "$records_in" -ne "$(cat "$data.nr")" ] || [ "$records_out" -ne "$records_in" ]; then
	echo "perf inject wrote $records_out of $records_in deferred callchain records [Failed]"
	exit 1
fi
perf script -i "$data.deferred" -F tid,time,ip,sym > "$data.want" 2> /dev/null
perf script -i "$data.out" -F tid,time,ip,sym > "$data.got" 2> /dev/null
if [ ! -s "$data.want" ] || ! cmp -s "$data.want" "$data.got"; then
	echo "the samples perf inject wrote lost user stacks [Failed]"
	exit 1
fi
echo "perf inject kept all $records_out deferred callchain records"
exit 0
