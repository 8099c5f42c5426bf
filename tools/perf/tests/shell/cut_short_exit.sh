#!/bin/bash
# perf report and perf script exit with an error on a recording cut short
# SPDX-License-Identifier: GPL-2.0

# perf shows what a recording cut short holds, but it is not a whole
# recording: a script must be able to tell from the exit status.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

skip_without_python3
data_init cut_exit
record_pipe_or_skip -e cpu-clock -c 1000000 -- perf test -w noploop 1
python3 "$shelldir/lib/perf_pipe_cut.py" "$data" "$data.cut" body > /dev/null || exit 1

err=0
for cmd in "script" "report --stdio"; do
	# shellcheck disable=SC2086
	perf $cmd -i - < "$data" > /dev/null 2>&1 ||
		{ echo "perf $cmd of the whole stream failed [Failed]"; err=1; }
	# shellcheck disable=SC2086
	perf $cmd -i - < "$data.cut" > "$data.out" 2> /dev/null
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "perf $cmd of a stream cut short exited 0 [Failed]"
		err=1
	elif ! grep -q noploop "$data.out"; then
		echo "perf $cmd of a stream cut short showed nothing [Failed]"
		err=1
	else
		echo "perf $cmd of a stream cut short: exit status $rc, what it holds shown"
	fi
done
exit $err
