#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every tests/perf/test-*.sh against the patched perf and fail if any
# of them fails. Each suite prints its own checks and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
failed=()
for t in "$here"/test-*.sh; do
	name=$(basename "$t" .sh)
	echo "=== $name"
	if ! bash "$t"; then
		failed+=("$name")
	fi
done
if [ ${#failed[@]} -ne 0 ]; then
	echo "perf tests failed: ${failed[*]}" >&2
	exit 1
fi
echo "perf tests: all suites passed"
