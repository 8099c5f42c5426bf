#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Test-only workload of record_shell_mix (tests/perf/lib.sh):
#   shell-mix.sh LOOPS RUNS
# dd, a shell loop of LOOPS iterations and RUNS times 'ls -lR
# /usr/share/doc', in parallel: user and kernel time, children that exec
# and exit.
loops=$1 runs=$2
dd if=/dev/zero of=/dev/null bs=64k count=20000 2>/dev/null &
i=0
while [ $i -lt "$loops" ]; do i=$((i + 1)); done &
n=0
while [ $n -lt "$runs" ]; do
	ls -lR /usr/share/doc > /dev/null 2>&1
	n=$((n + 1))
done
wait
