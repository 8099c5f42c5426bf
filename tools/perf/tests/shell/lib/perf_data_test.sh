#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# For the tests that record a perf.data and read it, or a copy they
# change, back: a temporary file, removed on exit with the files named
# after it, and the recording, which skips the test where perf cannot
# record.

# skip_without_python3: the tests that edit a recording do it in python3
skip_without_python3() {
	if ! command -v python3 > /dev/null; then
		echo "no python3 [Skipped]"
		exit 2
	fi
}

# data_init NAME: $data, a temporary file; it and $data.* go on exit
data_init() {
	data=$(mktemp "/tmp/__perf_test.$1.XXXXX")
	trap 'rm -f "$data" "$data".*; trap - EXIT TERM INT' EXIT TERM INT
}

# record_or_skip ARGS: perf record -q -o $data ARGS, or skip the test
record_or_skip() {
	if ! perf record -q -o "$data" "$@" > "$data.rec" 2>&1; then
		echo "perf record $* [Skipped: cannot record]"
		cat "$data.rec"
		exit 2
	fi
}

# record_pipe_or_skip ARGS: perf record -q -o - ARGS into $data, or skip
record_pipe_or_skip() {
	if ! perf record -q -o - "$@" > "$data" 2> "$data.rec"; then
		echo "perf record -o - $* [Skipped: cannot record]"
		cat "$data.rec"
		exit 2
	fi
}
