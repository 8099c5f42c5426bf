#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every tests/perf/test-*.sh against the patched perf and fail if any
# of them fails. Each suite prints its own checks and "N passed, M failed";
# each suite's wall time is printed after it, and all of them at the end,
# so that what CI's time budget goes to is on every log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
failed=()
times=()
for t in "$here"/test-*.sh; do
	name=$(basename "$t" .sh)
	echo "=== $name"
	start=$SECONDS
	if ! bash "$t"; then
		failed+=("$name")
	fi
	times+=("$(printf '%5d s  %s' $((SECONDS - start)) "$name")")
	echo "=== $name: $((SECONDS - start)) s"
done
echo "perf tests: wall time per suite"
printf '%s\n' "${times[@]}" | sort -rn
if [ ${#failed[@]} -ne 0 ]; then
	echo "perf tests failed: ${failed[*]}" >&2
	exit 1
fi
echo "perf tests: all suites passed"
