#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# check-recordings.sh DIR: the hook `make vm-check` runs on the recordings
# of `make vm-record` (DIR = build/vm/rec).  For now a minimal check: lists
# each recording of DIR/MANIFEST with its sample and CALLCHAIN_DEFERRED
# record counts (build/perf report --stats) and fails when a file is missing
# or holds no deferred record.  To be replaced by the full oracle.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=${1:?usage: check-recordings.sh DIR}
PERF=${PERF:-$repo/build/perf}

[ -f "$dir/MANIFEST" ] || { echo "check-recordings: no $dir/MANIFEST" >&2; exit 1; }
fail=0 n=0
printf '%-28s %9s %9s %9s\n' file samples deferred bytes
while IFS='	' read -r f _; do
	case $f in '#'*|'') continue ;; esac
	n=$((n + 1))
	if [ ! -f "$dir/$f" ]; then
		echo "check-recordings: FAIL $f: missing" >&2
		fail=1
		continue
	fi
	counts=$("$PERF" report --stats -i "$dir/$f" 2>/dev/null | awk '
		/ stats:$/ && !/^Aggregated/ { exit }
		$1 == "SAMPLE" && $2 == "events:" { s = $3 }
		$1 == "CALLCHAIN_DEFERRED" && $2 == "events:" { d = $3 }
		END { printf "%d %d", s, d }')
	s=${counts% *} d=${counts#* }
	printf '%-28s %9d %9d %9d\n' "$f" "$s" "$d" "$(wc -c < "$dir/$f")"
	[ "$d" -gt 0 ] || { echo "check-recordings: FAIL $f: no CALLCHAIN_DEFERRED records" >&2; fail=1; }
done < "$dir/MANIFEST"
[ $n -gt 0 ] || { echo "check-recordings: no recordings in $dir/MANIFEST" >&2; fail=1; }
[ $fail -eq 0 ] && echo "check-recordings: $n recordings, each with deferred records" || exit 1
