#!/bin/bash
# perf record says no ERROR when nothing failed
# SPDX-License-Identifier: GPL-2.0

# A recording that worked must not print ERROR: a perf built without
# libbpf said it could not write the BPF features it has nothing for.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

data_init no_false_error
# not -q, which would hide an error too
if ! perf record -e cpu-clock -o "$data" -- true 2> "$data.rec"; then
	echo "perf record -e cpu-clock [Skipped: cannot record]"
	cat "$data.rec"
	exit 2
fi
if grep ERROR "$data.rec"; then
	echo "perf record printed an ERROR, though it recorded [Failed]"
	exit 1
fi
if ! perf report -i "$data" --stats > /dev/null 2>&1; then
	echo "perf report cannot read the recording [Failed]"
	exit 1
fi
echo "perf record: no ERROR"
exit 0
