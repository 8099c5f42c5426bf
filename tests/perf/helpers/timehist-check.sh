#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# timehist-check.sh DATA NAME: perf sched timehist on a deferred recording
# of sched:sched_switch (perf record -a -e sched:sched_switch --call-graph
# fp,defer), the off-CPU analysis deferral is for.  Time order: a switch
# delivered after a later event gives its task a negative run time
# (printed as 18446744073709.x ms), as pristine perf 7.2's merge does; ours
# must print none.  timehist -g: the switches of the workload
# (WORKLOAD_COMM, default blocker) show their kernel stack and then their
# user stack, the workload's functions after the kernel frames, and no
# fewer of them than pristine 7.2 shows.  Prints "ok   -
# ..." / "FAIL - ..." lines and "N passed, M failed", like oracle-check.sh.
#
#   PERF (default build/perf), UPSTREAM_PERF (default build/perf-upstream,
#   compared with, skipped if missing), WORKLOAD_COMM, WORKLOAD_FUNC (a
#   regular expression of the workload's user functions, default: those of
#   tests/workloads/blocker.c), OUT (directory for the outputs, default a
#   temporary one)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
data=${1:?usage: timehist-check.sh DATA NAME}
name=${2:-$(basename "$data" .data)}
PERF=${PERF:-$top/build/perf}
UPSTREAM_PERF=${UPSTREAM_PERF:-$top/build/perf-upstream}
comm=${WORKLOAD_COMM:-blocker}
func=${WORKLOAD_FUNC:-^(block_in_[a-z]+|sleeper|pipe_reader|futex_waiter|pipe_writer|compute_half|computer|drain|main)$}
out=${OUT:-$(mktemp -d /tmp/timehist-check.XXXXXX)}
mkdir -p "$out"
pass=0 fail=0
result() {	# NAME PROBLEM...: ok when PROBLEM is empty
	local what=$1
	shift
	if [ -z "$*" ]; then
		pass=$((pass + 1)); echo "ok   - $name: $what"
	else
		fail=$((fail + 1)); echo "FAIL - $name: $what"; echo "     $*"
	fi
}
# negative FILE: timehist lines with a run time, wait or delay of 2^64 ns
# and more, a negative number printed unsigned
negative() {
	awk 'NF >= 6 && $1 ~ /^[0-9]+\.[0-9]+$/ {
		for (i = 4; i <= 6; i++) if ($i + 0 >= 1e12) { n++; break } }
		END { print n + 0 }' "$1"
}

"$PERF" sched timehist -i "$data" > "$out/timehist.txt" 2> "$out/timehist.err"
rc=$?
lines=$(grep -cE '^ *[0-9]+\.[0-9]+ ' "$out/timehist.txt")
result "perf sched timehist: status 0, $lines switches" \
	"$([ "$rc" -eq 0 ] && [ "$lines" -gt 0 ] || echo "status $rc, $lines lines: $(head -3 "$out/timehist.err")")"
ours=$(negative "$out/timehist.txt")
up=skipped
if [ -x "$UPSTREAM_PERF" ]; then
	"$UPSTREAM_PERF" sched timehist -i "$data" > "$out/timehist-upstream.txt" 2> /dev/null
	up=$(negative "$out/timehist-upstream.txt")
fi
result "perf sched timehist: no negative run time (pristine 7.2: $up of its lines)" \
	"$([ "$ours" -eq 0 ] || echo "$ours lines with a negative time, e.g. $(awk '$4+0 >= 1e12 || $5+0 >= 1e12 || $6+0 >= 1e12' "$out/timehist.txt" | head -1)")"

# -g: the callchain column, "frame <- frame <- ...", callee first (timehist
# leaves out the scheduler's own frames); the guest's kallsyms beside a
# VM recording names its kernel frames (not needed for what is checked)
ksyms=()
[ -f "$(dirname "$data")/kallsyms" ] && ksyms=(--kallsyms "$(dirname "$data")/kallsyms")
withuser() {	# PERF OUT: "switches, with a user frame, user frame first"
	"$1" sched timehist -g --max-stack 127 "${ksyms[@]}" -i "$data" > "$2" 2> "$2.err"
	local rc=$?
	awk -v comm="$comm" -v func="$func" -v rc="$rc" '
		$1 ~ /^[0-9]+\.[0-9]+$/ && index($3, comm "[") == 1 {
			n++
			chain = $0
			sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", chain)
			k = split(chain, f, / <- /)
			for (i = 1; i <= k; i++) if (f[i] ~ func) break
			if (i > k) next
			if (i == 1) first++; else user++
		}
		END { printf "%d %d %d %d\n", rc, n + 0, user + 0, first + 0 }' "$2"
}
read -r rc n user first < <(withuser "$PERF" "$out/timehist-g.txt")
result "perf sched timehist -g: status 0, switches of $comm ($n)" \
	"$([ "$rc" -eq 0 ] && [ "$n" -gt 0 ] || echo "status $rc, $n switches of $comm: $(head -3 "$out/timehist-g.txt.err")")"
result "perf sched timehist -g: $comm's user frames ($func) after its kernel frames ($user of $n switches)" \
	"$([ "$user" -gt 0 ] && [ "$first" -eq 0 ] || echo "$user with kernel then user frames, $first with a user frame first")"
if [ -x "$UPSTREAM_PERF" ]; then
	read -r _ _ up_user _ < <(withuser "$UPSTREAM_PERF" "$out/timehist-g-upstream.txt")
	result "perf sched timehist -g: at least the user stacks pristine 7.2 shows ($user, pristine 7.2: $up_user)" \
		"$([ "$user" -ge "$up_user" ] || echo "ours $user, pristine 7.2 $up_user")"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
