#!/bin/bash
# perf test workload noploop ends after a fraction of a second
# SPDX-License-Identifier: GPL-2.0

# 'perf test -w noploop 0.1' must return after about 0.1 s: the shell
# tests that ask noploop for fractions (pipe_test.sh, stat_all_metrics.sh)
# hang with a noploop that reads its seconds as an integer, 0, and sets
# no alarm.  It must end; how long it took is only printed: perf test
# runs its tests side by side, and a loaded machine is slow to start
# perf.

err=0
for secs in 0.1 0.5; do
	start=$(date +%s%N)
	timeout 20 perf test -w noploop "$secs"
	rc=$?
	elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
	if [ $rc -eq 124 ]; then
		echo "perf test -w noploop $secs: still running after 20 s [Failed]"
		err=1
		break
	elif [ $rc -ne 0 ]; then
		echo "perf test -w noploop $secs: exit status $rc [Failed]"
		err=1
	else
		echo "perf test -w noploop $secs: $elapsed_ms ms"
	fi
done
exit $err
