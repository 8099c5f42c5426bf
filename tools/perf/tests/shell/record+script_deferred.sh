#!/bin/sh
# perf record deferred user callchains, stitched by perf script
# SPDX-License-Identifier: GPL-2.0

# --call-graph deferred,emulate writes what a 6.19 kernel with
# defer_callchain records, on any kernel: samples ending in
# PERF_CONTEXT_USER_DEFERRED and a cookie, the user parts in
# PERF_RECORD_CALLCHAIN_DEFERRED records.  perf script must join every
# sample to its record or name it an orphan, and the counts must add up.

set -e

data=$(mktemp /tmp/__perf_test.deferred.XXXXX)
cleanup() {
	rm -f "$data" "$data".*
	trap - EXIT TERM INT
}
trap cleanup EXIT TERM INT

if ! perf record -q -e cpu-clock -c 100000 --call-graph deferred,emulate -o "$data" -- \
		dd if=/dev/zero of=/dev/null bs=4k count=50000 > "$data.rec" 2>&1; then
	echo "perf record --call-graph deferred,emulate [Skipped: cannot record]"
	cat "$data.rec"
	exit 2
fi

# the file holds deferred samples and their records
records=$(perf report -D -i "$data" 2> /dev/null | grep -c 'PERF_RECORD_CALLCHAIN_DEFERRED' || true)
if [ "$records" -eq 0 ]; then
	echo "no PERF_RECORD_CALLCHAIN_DEFERRED in the recording [Failed]"
	exit 1
fi
unstitched=$(perf script -i "$data" --no-merge-callchains -F ip,sym 2> /dev/null |
	grep -c '\[user stack deferred' || true)
if [ "$unstitched" -eq 0 ]; then
	echo "perf script --no-merge-callchains shows no deferred user stack [Failed]"
	exit 1
fi

# stitched: no sample is left waiting, and the summary reconciles
perf script -i "$data" -F comm,ip,sym > "$data.script" 2> "$data.summary"
if grep -q '\[user stack deferred' "$data.script"; then
	echo "perf script left a deferred user stack unstitched [Failed]"
	exit 1
fi
summary=$(grep '^deferred callchains:' "$data.summary" || true)
deferred=$(echo "$summary" | sed -n 's/^deferred callchains: \([0-9]*\) deferred samples, .*/\1/p')
stitched=$(echo "$summary" | sed -n 's/.* samples, \([0-9]*\) stitched .*/\1/p')
orphans=$(echo "$summary" | sed -n 's/.*, \([0-9]*\) orphans.*/\1/p')
if [ -z "$deferred" ] || [ -z "$stitched" ] || [ -z "$orphans" ]; then
	echo "no stitch summary from perf script: '$summary' [Failed]"
	exit 1
fi
if [ "$stitched" -eq 0 ] || [ $((stitched + orphans)) -ne "$deferred" ]; then
	echo "$summary: stitched + orphans != deferred samples [Failed]"
	exit 1
fi
echo "perf record/script deferred callchains: $summary [Success]"
exit 0
