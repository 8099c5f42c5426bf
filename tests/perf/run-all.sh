#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every tests/perf/test-*.sh against the patched perf and fail if any
# of them fails. Each suite prints its own checks and "N passed, M failed";
# each suite's wall time is printed after it, and all of them at the end,
# so that what CI's time budget goes to is on every log.
#
# The suites that only read files (FILE_SUITES: no live workload is timed
# or counted, no GUI waits for a screen) run SUITE_JOBS at a time (default:
# the number of CPUs), each in its own directory and perf home as always,
# its output printed whole when it ends; then the others, one at a time,
# as they go, on an otherwise idle machine: they record workloads, and a
# busy CPU would change what they see.
#
# usage: tests/perf/run-all.sh      Environment: SUITE_JOBS, and what each
#                                   suite reads (tests/perf/lib.sh)
set -u
here=$(cd "$(dirname "$0")" && pwd)

# longest first, so that the last to start is a short one
FILE_SUITES=(test-upstream-files test-cross-tool test-real-corpus test-scenarios
	     test-script-report test-bad-input test-ctf test-python test-build-configs
	     test-stitch-untimed test-shapes test-perfparser)
jobs=${SUITE_JOBS:-$(nproc)}
logs=$(mktemp -d /tmp/run-all.XXXXXX) || exit 2
trap 'rm -rf "$logs"' EXIT
failed=()
times=()

# run_suite NAME: its output in logs/NAME.log, its exit status and wall
# time in logs/NAME.status
run_suite() {
	local name=$1 start=$SECONDS rc=0

	bash "$here/$name.sh" > "$logs/$name.log" 2>&1 || rc=$?
	echo "$rc $((SECONDS - start))" > "$logs/$name.status"
}

# count_suite NAME STATUS SECONDS
count_suite() {
	[ "$2" -eq 0 ] || failed+=("$1")
	times+=("$(printf '%5d s  %s' "$3" "$1")")
	echo "=== $1: $3 s"
}

# report_suite NAME: what run_suite kept
report_suite() {
	local name=$1 rc secs

	read -r rc secs < "$logs/$name.status"
	echo "=== $name"
	cat "$logs/$name.log"
	count_suite "$name" "$rc" "$secs"
}

declare -A suite_of
running=0
for name in "${FILE_SUITES[@]}"; do
	[ -f "$here/$name.sh" ] || { echo "run-all: no $here/$name.sh" >&2; exit 2; }
	if [ "$running" -ge "$jobs" ]; then
		wait -n -p pid
		report_suite "${suite_of[$pid]}"
		running=$((running - 1))
	fi
	run_suite "$name" &
	suite_of[$!]=$name
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n -p pid
	report_suite "${suite_of[$pid]}"
	running=$((running - 1))
done

for t in "$here"/test-*.sh; do
	name=$(basename "$t" .sh)
	[[ " ${FILE_SUITES[*]} " == *" $name "* ]] && continue
	echo "=== $name"
	start=$SECONDS rc=0
	bash "$t" || rc=$?
	count_suite "$name" "$rc" $((SECONDS - start))
done
echo "perf tests: wall time per suite (${FILE_SUITES[*]}: $jobs at a time)"
printf '%s\n' "${times[@]}" | sort -rn
if [ ${#failed[@]} -ne 0 ]; then
	echo "perf tests failed: ${failed[*]}" >&2
	exit 1
fi
echo "perf tests: all suites passed"
