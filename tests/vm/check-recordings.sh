#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-recordings.sh DIR: what `make vm-check` checks of the recordings
# `make vm-record` made on Linux 7.2 (DIR = build/vm/rec, listed in
# DIR/MANIFEST): every reading mode of build/perf against the order-free
# oracle, sample for sample (tests/perf/oracle-check.sh), and a table of
# what each recording holds (tests/perf/oracle.py features), also written
# to DIR/CHECK.  Exit status non-zero when a recording is missing or a
# check fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=$(cd "${1:?usage: check-recordings.sh DIR}" && pwd)
PERF=${PERF:-$repo/build/perf}
PY=${ORACLE_PY:-/usr/bin/python3}
out=${CHECK_OUT:-$dir/../check}

[ -f "$dir/MANIFEST" ] || { echo "check-recordings: no $dir/MANIFEST" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
pass=0 fail=0 n=0
table=$out/table
printf '%-26s %7s %7s %7s %8s %6s %6s %6s %6s %6s %5s %5s %8s  %s\n' recording samples \
	records deferred stitched norec exec unwfail late early aftex xcpu 'wait(s)' modes > "$table"
for f in $(grep -v '^#' "$dir/MANIFEST" | cut -f1); do
	n=$((n + 1))
	name=${f%.data}
	if [ ! -f "$dir/$f" ]; then
		echo "FAIL - $name: missing"
		fail=$((fail + 1))
		continue
	fi
	PERF=$PERF ORACLE_PY=$PY OUT=$out/$name "$repo/tests/perf/oracle-check.sh" "$dir/$f" "$name" \
		> "$out/$name.oracle" 2>&1
	cat "$out/$name.oracle"
	ok=$(grep -c '^ok   - ' "$out/$name.oracle")
	bad=$(grep -c '^FAIL - ' "$out/$name.oracle")
	[ $((ok + bad)) -gt 0 ] || bad=1
	pass=$((pass + ok))
	fail=$((fail + bad))
	"$PY" "$repo/tests/perf/oracle.py" features "$dir/$f" > "$out/$name.features" 2>&1 ||
		{ echo "FAIL - $name: oracle.py features"; fail=$((fail + 1)); }
	awk -v name="$name" -v modes="$ok/$((ok + bad))" '
		{ v[$1] = $2 }
		END { printf "%-26s %7d %7d %7d %8d %6d %6d %6d %6d %6d %5d %5d %8.3f  %s\n", name,
			v["samples"], v["records"], v["deferred"], v["stitched"], v["no_record"],
			v["exec"], v["unwind_failed"], v["late_samples"], v["records_earlier_in_file"],
			v["records_after_exit"], v["records_cross_cpu"], v["max_wait_ns"] / 1e9,
			modes }' \
		"$out/$name.features" >> "$table"
done
[ $n -gt 0 ] || { echo "FAIL - no recordings in $dir/MANIFEST"; fail=$((fail + 1)); }
cat <<HDR

What each recording holds (oracle.py features): deferred samples, those
the kernel's records stitch, those without a record (norec), whose record
shows the program an exec started (exec), whose unwind failed (unwfail);
late samples (record earlier in time), records earlier in the file than a
sample of theirs (early), records after their task's EXIT (aftex), records
written on another CPU than their cookie's (xcpu), the longest wait of a
sample for its record, and the reading modes that agree with the oracle
sample for sample.
HDR
cat "$table"
cp "$table" "$dir/CHECK"
echo "check-recordings: $n recordings, $pass checks passed, $fail failed"
[ "$fail" -eq 0 ]
