#!/bin/bash
# perf inject converts a perf record --threads directory into a file
# SPDX-License-Identifier: GPL-2.0

# perf record --threads writes a directory, one data file per thread;
# perf inject must merge it into one perf.data that perf reads, with
# every sample, and exit 0 only when it did.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_data_test.sh
. "$shelldir"/lib/perf_data_test.sh

data_init inject_threads
trap 'rm -rf "$data" "$data".*; trap - EXIT TERM INT' EXIT TERM INT
# the directory takes the temporary file's place
rm -f "$data"
record_or_skip --threads -e cpu-clock -c 100000 -- perf test -w noploop 1
if [ ! -d "$data" ]; then
	echo "perf record --threads wrote no directory [Skipped]"
	exit 2
fi

if ! perf inject -i "$data" -o "$data.out" 2> "$data.err"; then
	echo "perf inject of a --threads directory failed [Failed]"
	cat "$data.err"
	exit 1
fi
perf script -i "$data" -F tid,time,ip 2> /dev/null | sort > "$data.want"
if ! perf script -i "$data.out" -F tid,time,ip 2> "$data.err" | sort > "$data.got" ||
   [ ! -s "$data.got" ]; then
	echo "perf script cannot read what perf inject wrote [Failed]"
	cat "$data.err"
	exit 1
fi
if ! cmp -s "$data.want" "$data.got"; then
	echo "perf inject wrote $(wc -l < "$data.got") of the directory's" \
	     "$(wc -l < "$data.want") samples [Failed]"
	exit 1
fi
echo "perf inject of a --threads directory: $(wc -l < "$data.got") samples, all read back"
exit 0
