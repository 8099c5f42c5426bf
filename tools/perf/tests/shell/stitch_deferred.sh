#!/bin/sh
# perf stitch convert and export of deferred user callchains
# SPDX-License-Identifier: GPL-2.0

# A recording with deferred user callchains, converted by perf stitch to
# standard callchains and exported as folded stacks: the conversion keeps
# every sample and drops every PERF_RECORD_CALLCHAIN_DEFERRED, the export
# counts every sample once, and --stats reconciles.

set -e

data=$(mktemp /tmp/__perf_test.stitch.XXXXX)
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

count() { # records of type $2 in file $1
	perf report -D -i "$1" 2> /dev/null | grep -c "^[0-9].* PERF_RECORD_$2" || true
}

perf stitch -q -i "$data" -o "$data.std"
samples_in=$(count "$data" SAMPLE)
samples_out=$(count "$data.std" SAMPLE)
if [ "$samples_in" -eq 0 ] || [ "$samples_in" -ne "$samples_out" ]; then
	echo "perf stitch: $samples_in samples in, $samples_out out [Failed]"
	exit 1
fi
if [ "$(count "$data.std" CALLCHAIN_DEFERRED)" -ne 0 ]; then
	echo "perf stitch: CALLCHAIN_DEFERRED records left in the output [Failed]"
	exit 1
fi
if perf script -i "$data.std" -F ip,sym 2> /dev/null | grep -q '\[user stack deferred'; then
	echo "perf stitch: a sample of the output still defers its user stack [Failed]"
	exit 1
fi

# every cpu-clock sample counted once in the folded stacks
perf stitch -q -i "$data" -F folded --count samples --event cpu-clock -o "$data.folded"
folded=$(awk '{ n += $NF } END { print n + 0 }' "$data.folded")
clock=$(perf script -i "$data.std" -F event 2> /dev/null | grep -c 'cpu-clock' || true)
if [ "$folded" -ne "$clock" ]; then
	echo "perf stitch -F folded: $folded samples for $clock cpu-clock samples [Failed]"
	exit 1
fi

# --stats: every deferred sample stitched or an orphan with a reason
perf stitch -i "$data" --stats=json > "$data.json"
for key in deferred_samples stitched orphans_total; do
	eval "$key=\$(sed -n 's/.*\"$key\": \\([0-9]*\\).*/\\1/p' \"\$data.json\")"
done
# shellcheck disable=SC2154 # set by the eval above
if [ -z "$deferred_samples" ] || [ $((stitched + orphans_total)) -ne "$deferred_samples" ]; then
	echo "perf stitch --stats: $(cat "$data.json") does not reconcile [Failed]"
	exit 1
fi
echo "perf stitch convert/export: $samples_in samples, $folded folded [Success]"
exit 0
