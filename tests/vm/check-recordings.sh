#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-recordings.sh DIR: what `make vm-check` checks of the recordings
# `make vm-record` made on Linux 7.2 (DIR = build/vm/rec, listed in
# DIR/MANIFEST): every reading mode of build/perf against the order-free
# oracle, sample for sample (tests/perf/helpers/oracle-check.sh), and a table of
# what each recording holds (tests/perf/helpers/oracle.py features), also written
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
# perf (ours, pristine) finds the workloads, recorded under /mnt/clone in
# the guest, by build id in the cache vm-record.sh made; and reads no
# user's ~/.perfconfig nor ~/.debug
[ -d "$dir/buildid/.build-id" ] || { echo "check-recordings: no $dir/buildid (vm-record.sh makes it)" >&2; exit 1; }
printf '[buildid]\n\tdir = %s\n' "$dir/buildid" > "$out/perfconfig"
export PERF_CONFIG=$out/perfconfig
pass=0 fail=0 n=0
table=$out/table
printf '%-26s %7s %7s %7s %8s %6s %6s %6s %6s %6s %5s %5s %8s  %s\n' recording samples \
	records deferred stitched norec exec unwfail late early aftex xcpu 'wait(s)' modes > "$table"
recordings=$(grep -v '^#' "$dir/MANIFEST" | cut -f1)
# the oracle checks, most of the time this takes, CHECK_JOBS at a time
# (default: the number of CPUs; each reads its recording only); the loop
# below reports them in MANIFEST's order
check_jobs=${CHECK_JOBS:-$(nproc)}
for f in $recordings; do
	name=${f%.data}
	[ -f "$dir/$f" ] || [ -f "$dir/$f/data" ] || continue
	while [ "$(jobs -rp | wc -l)" -ge "$check_jobs" ]; do
		wait -n
	done
	PERF=$PERF ORACLE_PY=$PY OUT=$out/$name "$repo/tests/perf/helpers/oracle-check.sh" "$dir/$f" "$name" \
		> "$out/$name.oracle" 2>&1 &
done
wait
for f in $recordings; do
	n=$((n + 1))
	name=${f%.data}
	if [ ! -f "$dir/$f" ] && [ ! -f "$dir/$f/data" ]; then
		echo "FAIL - $name: missing"
		fail=$((fail + 1))
		continue
	fi
	cat "$out/$name.oracle"
	ok=$(grep -c '^ok   - ' "$out/$name.oracle")
	bad=$(grep -c '^FAIL - ' "$out/$name.oracle")
	[ $((ok + bad)) -gt 0 ] || bad=1
	pass=$((pass + ok))
	fail=$((fail + bad))
	# a recording of context switches: perf sched timehist on it
	if "$PERF" evlist -i "$dir/$f" 2> /dev/null | grep -q '^sched:sched_switch$'; then
		# whose switches -g shows: the workload's (MANIFEST's third column)
		workload=$(awk -F '\t' -v f="$f" '$1 == f { split($3, w, " "); print w[1] }' "$dir/MANIFEST")
		case ${workload##*/} in
		offcpu) export WORKLOAD_COMM=offcpu \
			WORKLOAD_FUNC='^(block_[a-z_]+|[a-z]+_thread|pace_[a-z_]+|main)$' ;;
		*) unset WORKLOAD_COMM WORKLOAD_FUNC ;;
		esac
		PERF=$PERF OUT=$out/$name.timehist "$repo/tests/perf/helpers/timehist-check.sh" "$dir/$f" "$name" \
			> "$out/$name.timehist.txt" 2>&1
		cat "$out/$name.timehist.txt"
		pass=$((pass + $(grep -c '^ok   - ' "$out/$name.timehist.txt")))
		fail=$((fail + $(grep -c '^FAIL - ' "$out/$name.timehist.txt")))
	fi
	# the off-CPU workload (tests/workloads/offcpu.c) measured its own
	# time off CPU per function: perf stitch --count=off-cpu within 5%;
	# without switch events, each task's time as the switches and timehist say
	if grep -q '^offcpu ' "$dir/logs/$f.workload.log" 2> /dev/null; then
		"$PERF" stitch -F folded --count=off-cpu -i "$dir/$f" -o "$out/$name.offcpu.folded" \
			> /dev/null 2> "$out/$name.offcpu.err"
		{
			"$PY" "$repo/tests/perf/helpers/offcpu-check.py" workload \
				"$dir/logs/$f.workload.log" "$out/$name.offcpu.folded"
			# a clock event beside: each thread's wall time, on and off CPU
			if "$PERF" evlist -i "$dir/$f" 2> /dev/null | grep -qE '^(task|cpu)-clock'; then
				"$PERF" stitch -F folded --tid --count=wall -i "$dir/$f" \
					-o "$out/$name.wall.folded" > /dev/null 2>&1
				"$PY" "$repo/tests/perf/helpers/offcpu-check.py" wall \
					"$dir/logs/$f.workload.log" "$out/$name.wall.folded"
			fi
			if ! "$PERF" report --stats -i "$dir/$f" 2> /dev/null | grep -qE 'SWITCH(_CPU_WIDE)? events: +[1-9]'; then
				"$PERF" script --ns -F tid,cpu,time,trace -i "$dir/$f" > "$out/$name.switches" 2> /dev/null
				"$PERF" stitch -F folded --tid --count=off-cpu -i "$dir/$f" \
					-o "$out/$name.offcpu-tid.folded" > /dev/null 2>&1
				"$PERF" sched timehist --state -i "$dir/$f" > "$out/$name.offcpu-timehist.txt" 2> /dev/null
				if "$PY" "$repo/tests/perf/helpers/offcpu-check.py" "$out/$name.switches" \
						"$out/$name.offcpu-tid.folded" "$out/$name.offcpu-timehist.txt" > "$out/$name.offcpu-tasks"; then
					echo "check each task's time off CPU = the switches', timehist's waits among them: $(head -1 "$out/$name.offcpu-tasks"); $(tail -1 "$out/$name.offcpu-tasks") ok"
				else
					echo "check each task's time off CPU = the switches' and timehist's: $(tr '\n' ' ' < "$out/$name.offcpu-tasks")"
				fi
			fi
		} > "$out/$name.offcpu.txt" 2>&1
		while read -r line; do
			case $line in
			"check "*" ok") echo "ok   - $name: ${line#check }"; pass=$((pass + 1)) ;;
			"check "*) echo "FAIL - $name: ${line#check }"; fail=$((fail + 1)) ;;
			SKIP*) echo "SKIP - $name: ${line#SKIP }" ;;
			esac
		done < "$out/$name.offcpu.txt"
		grep -q '^check ' "$out/$name.offcpu.txt" ||
			{ echo "FAIL - $name: offcpu-check.py"; cat "$out/$name.offcpu.txt"; fail=$((fail + 1)); }
	fi
	"$PY" "$repo/tests/perf/helpers/oracle.py" features "$dir/$f" > "$out/$name.features" 2>&1 ||
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

# pristine perf 7.2 on the same recordings: every sample it merges comes
# out of ours with the same chain, every user part it drops ours keeps or
# names the reason for (tests/perf/helpers/upstream-compare.py)
UPSTREAM_PERF=${UPSTREAM_PERF:-$repo/build/perf-upstream}
if [ -x "$UPSTREAM_PERF" ]; then
	# shellcheck disable=SC2046
	"$PY" "$repo/tests/perf/helpers/upstream-compare.py" --upstream "$UPSTREAM_PERF" --ours "$PERF" \
		--kallsyms "$dir/kallsyms" $(grep -v '^#' "$dir/MANIFEST" | cut -f1 | sed "s|^|$dir/|") \
		> "$out/upstream.txt" 2>&1
	rc=$?
	grep -v -e '^      ' -e '^    tid ' "$out/upstream.txt"
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "ok   - pristine perf 7.2: every sample it merges has our chain, every user part it drops ours keeps or names"
	else
		fail=$((fail + 1)); echo "FAIL - pristine perf 7.2: upstream-compare.py status $rc (above)"
	fi
else
	echo "SKIP - pristine perf 7.2: no $UPSTREAM_PERF (make perf-upstream)"
fi
# perf top --call-graph=deferred, live in the guest: against perf report
# of the same workload, and under ASan (tests/vm/check-top.py)
if [ -f "$dir/TOPS" ]; then
	PERF=$PERF "$PY" "$here/check-top.py" "$dir" > "$out/top.txt" 2>&1
	cat "$out/top.txt"
	pass=$((pass + $(grep -c '^ok   - ' "$out/top.txt")))
	fail=$((fail + $(grep -c '^FAIL - ' "$out/top.txt")))
	grep -q -e '^ok   - ' -e '^FAIL - ' "$out/top.txt" || fail=$((fail + 1))
else
	echo "FAIL - perf top: no $dir/TOPS (guest-record.sh runs it)"
	fail=$((fail + 1))
fi
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
