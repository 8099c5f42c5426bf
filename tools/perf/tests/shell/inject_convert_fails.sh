#!/bin/bash
# perf inject fails, leaving no output, when it cannot convert
# SPDX-License-Identifier: GPL-2.0

# --convert-callchain takes DWARF call graphs only.  On a frame-pointer
# recording perf inject must say so, exit with an error and leave no
# output file behind: a 0-byte or partial perf.data reads as a recording
# with nothing (or less) in it.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

data_init inject_fails
record_or_skip -e cpu-clock -c 1000000 --call-graph fp -- perf test -w noploop 1

err=0
perf inject --convert-callchain -i "$data" -o "$data.out" 2> "$data.err"
rc=$?
cat "$data.err"
if [ $rc -eq 0 ]; then
	echo "perf inject --convert-callchain of a frame-pointer recording exited 0 [Failed]"
	err=1
fi
if ! grep -q 'requires DWARF call graph' "$data.err"; then
	echo "perf inject did not say why it cannot convert [Failed]"
	err=1
fi
if [ -e "$data.out" ]; then
	echo "perf inject left an output file of $(stat -c %s "$data.out") bytes behind [Failed]"
	err=1
fi
exit $err
