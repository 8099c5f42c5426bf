#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf-test-compare.sh: upstream perf 7.2's own 'perf test' (its C tests
# and tools/perf/tests/shell) on our perf and on pristine perf 7.2, side
# by side: no test that passes on pristine may fail or be skipped on ours.
#
#   ours      build/perf, with the shell tests of the tree it is built from
#             (build/linux-7.2-tree: pristine's, the series' fixes, ours)
#   pristine  build/perf-upstream, with those of pristine 7.2.13
#             (build/linux-7.2.orig)
#
# Each side runs in a copy of its tools/perf (hard links: the shell tests
# write into their working directory), with its perf first in PATH (the
# shell tests call 'perf'), its scripts (PERF_EXEC_PATH) and a perf
# configuration of its own (PERF_CONFIG: no ~/.perfconfig, a build-id
# cache of its own instead of ~/.debug).  The two run one after the other:
# on this 2-core machine several tests time their workloads.
#
# Results are keyed by test name: ours adds tests, which shifts the
# numbers.  A test that is Ok on pristine and not on ours is run again on
# both, alone, to set flakes apart; it fails the comparison only when it
# passes on pristine and not on ours again.  SKIPPED below are skipped on
# both alike, each with its reason.  Prints both sides' counts and every
# difference, and writes the per-test results to OUT (default
# build/perf-test) as ours.txt, pristine.txt and compare.txt.
#
# usage: tests/upstream/perf-test-compare.sh
#   Environment: PERF, UPSTREAM_PERF and their object directories
#   PERF_OBJ, UPSTREAM_OBJ (build/perf-obj, build/perf-upstream-obj; the
#   BPF builds: make check-upstream-tests-bpf), OUT; TESTS: the tests to
#   run, by name ("|" between them; default all); JOBS=sequential runs
#   each side's tests one after another (perf test -S) instead of in
#   parallel.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
PERF=${PERF:-$top/build/perf}
UPSTREAM_PERF=${UPSTREAM_PERF:-$top/build/perf-upstream}
PERF_OBJ=${PERF_OBJ:-$top/build/perf-obj}
UPSTREAM_OBJ=${UPSTREAM_OBJ:-$top/build/perf-upstream-obj}
OUT=${OUT:-$top/build/perf-test}
OURS_TREE=$top/build/linux-7.2-tree/tools/perf
PRISTINE_TREE=$top/build/linux-7.2.orig/tools/perf

# Skipped on both sides alike (perf test -s, by name): what this machine
# cannot run, and the sweeps that take minutes and test nothing of the
# series (every PMU event, metric or libpfm4 event of the host's CPU).
SKIPPED=(
	'perf all metricgroups test|sweep: every metric group of the CPU, minutes'
	'perf all metrics test|sweep: every metric of the CPU, minutes'
	'perf all libpfm4 events test|sweep: every libpfm4 event, minutes'
	'perf all PMU test|sweep: every PMU event of the CPU, minutes'
)
# Skipped on pristine only: it never ends there ('perf test' waits for it);
# ours has the fix (patches/perf-7.2, "perf test workload noploop: Take
# fractions of a second") and runs it
HANGS_ON_PRISTINE=(
	'perf pipe recording and injection test|perf test -w noploop 0.1: atoi() makes it alarm(0), which never fires'
)

die() { echo "perf-test-compare: $*" >&2; exit 1; }
[ -x "$PERF" ] || die "no $PERF (make perf)"
"$UPSTREAM_PERF" version 2> /dev/null | grep -q '^perf version 7\.2\.' ||
	die "no pristine perf 7.2 at $UPSTREAM_PERF (make perf-upstream)"
[ -d "$OURS_TREE/tests/shell" ] || die "no $OURS_TREE (make perf)"
[ -d "$PRISTINE_TREE/tests/shell" ] || die "no $PRISTINE_TREE (make perf-upstream)"

rm -rf "$OUT"
mkdir -p "$OUT" || die "cannot create $OUT"

# setup SIDE PERF TREE OBJ: OUT/SIDE/perf, a copy of TREE where the side
# runs, and OUT/SIDE/bin/perf with the JVMTI agent the side's build made
# in OBJ beside it, where test_java_symbol.sh looks first (else it looks
# in the side's install prefix, which pristine, not installed, has not)
setup() {
	local side=$1 perf=$2 tree=$3 obj=$4 d=$OUT/$1

	mkdir -p "$d/bin" "$d/buildid" || die "cannot create $d"
	cp -al "$tree" "$d/perf" 2> /dev/null || cp -a "$tree" "$d/perf" || die "cannot copy $tree"
	ln -s "$perf" "$d/bin/perf"
	[ -e "$obj/libperf-jvmti.so" ] && ln -s "$obj/libperf-jvmti.so" "$d/bin/"
	printf '[buildid]\n\tdir = %s\n' "$d/buildid" > "$d/perfconfig"
}

# side_env SIDE CMD...: CMD in SIDE's environment, in its copy of tools/perf
side_env() {
	local d=$OUT/$1

	shift
	(cd "$d/perf" && PATH=$d/bin:$PATH PERF_EXEC_PATH=$d/perf PERF_CONFIG=$d/perfconfig "$@")
}

# skip_list SIDE: the numbers of SKIPPED's tests in SIDE's 'perf test list'
skip_list() {
	local entry nums=

	side_env "$1" perf test list > "$OUT/$1.list" 2>&1
	local entries=("${SKIPPED[@]}")

	[ "$1" = pristine ] && entries+=("${HANGS_ON_PRISTINE[@]}")
	for entry in "${entries[@]}"; do
		nums="$nums $(awk -v n="${entry%%|*}" -F ': ' '$2 == n { sub(/^ +/, "", $1); print $1 }' \
			"$OUT/$1.list")"
	done
	echo $nums | tr ' ' ','
}

# results FILE: "name<TAB>result" of each top-level test of a perf test
# output (Ok, FAILED!, Skip); a suite of subtests is Ok when one passes
# and none fails, FAILED! when one fails, else Skip
results() {
	awk '
		match($0, /^ *[0-9]+(\.[0-9]+)?: /) {
			id = substr($0, RSTART, RLENGTH); sub(/^ +/, "", id); sub(/: $/, "", id)
			rest = substr($0, RSTART + RLENGTH)
			top = id; sub(/\..*/, "", top)
			res = ""
			if (match(rest, / *: (Ok|FAILED!|Skip)( \(.*\))? *$/)) {
				res = substr(rest, RSTART, RLENGTH); sub(/^ *: /, "", res); sub(/ .*/, "", res)
				rest = substr(rest, 1, RSTART - 1)
			} else
				sub(/ *:$/, "", rest)
			if (id == top) {
				if (!(top in name)) order[++n] = top
				name[top] = rest
				if (res != "") r[top] = res
			} else if (res == "FAILED!" || sub_r[top] == "FAILED!")
				sub_r[top] = "FAILED!"
			else if (res == "Ok" || sub_r[top] == "Ok")
				sub_r[top] = "Ok"
			else if (res != "")
				sub_r[top] = res
		}
		END { for (i = 1; i <= n; i++) { k = order[i]
			v = (k in r) ? r[k] : ((k in sub_r) ? sub_r[k] : "")
			if (v != "") print name[k] "\t" v } }' "$1"
}

run_side() {
	local side=$1 skip=$2 t0=$SECONDS rc
	local seq=()

	[ "${JOBS:-}" = sequential ] && seq=(-S)
	local names=()
	[ -n "${TESTS:-}" ] && IFS='|' read -r -a names <<< "$TESTS"
	side_env "$side" timeout 1800 perf test "${seq[@]}" ${skip:+-s "$skip"} "${names[@]}" \
		> "$OUT/$side.log" 2>&1
	rc=$?
	echo "perf-test-compare: $side: perf test took $((SECONDS - t0)) s (status $rc)"
	results "$OUT/$side.log" > "$OUT/$side.txt"
}

setup ours "$PERF" "$OURS_TREE" "$PERF_OBJ"
setup pristine "$UPSTREAM_PERF" "$PRISTINE_TREE" "$UPSTREAM_OBJ"
for entry in "${SKIPPED[@]}"; do
	echo "perf-test-compare: skipped on both: ${entry%%|*} (${entry#*|})"
done
for entry in "${HANGS_ON_PRISTINE[@]}"; do
	echo "perf-test-compare: skipped on pristine, it hangs: ${entry%%|*} (${entry#*|})"
done
run_side pristine "$(skip_list pristine)"
run_side ours "$(skip_list ours)"

count() { awk -F '\t' -v r="$2" '$2 == r { n++ } END { print n + 0 }' "$OUT/$1.txt"; }
for side in pristine ours; do
	echo "perf-test-compare: $side: $(count $side Ok) Ok, $(count $side FAILED!) failed," \
		"$(count $side Skip) skipped of $(wc -l < "$OUT/$side.txt") tests"
done

# number SIDE NAME: the test's number in SIDE's list
number() { awk -v n="$2" -F ': ' '$2 == n { sub(/^ +/, "", $1); print $1; exit }' "$OUT/$1.list"; }
# again SIDE NAME: its result when run alone
again() {
	local n

	n=$(number "$1" "$2")
	[ -n "$n" ] || { echo missing; return; }
	side_env "$1" timeout 600 perf test "$n" > "$OUT/$1.again.$n.log" 2>&1
	results "$OUT/$1.again.$n.log" | cut -f2 | head -n 1
}

fail=0
: > "$OUT/compare.txt"
# a test named in TESTS that either side did not run (renamed, or the
# name matched nothing) is not a test that passed
if [ -n "${TESTS:-}" ]; then
	IFS='|' read -r -a names <<< "$TESTS"
	for name in "${names[@]}"; do
		for side in pristine ours; do
			awk -F '\t' -v n="$name" '$1 == n { found = 1 } END { exit !found }' "$OUT/$side.txt" && continue
			echo "perf-test-compare: FAIL: '$name' (TESTS) did not run on $side" | tee -a "$OUT/compare.txt"
			fail=1
		done
	done
fi
while IFS=$'\t' read -r name res; do
	[ "$res" = Ok ] || continue
	mine=$(awk -F '\t' -v n="$name" '$1 == n { print $2; exit }' "$OUT/ours.txt")
	[ "$mine" = Ok ] && continue
	up2=$(again pristine "$name")
	ours2=$(again ours "$name")
	if [ "$ours2" = Ok ] || [ "$up2" != Ok ]; then
		line="flake: '$name': pristine Ok, ours ${mine:-missing}; again alone: pristine $up2, ours $ours2"
	else
		line="FAIL: '$name': pristine Ok, ours ${mine:-missing}; again alone: pristine $up2, ours $ours2"
		fail=1
	fi
	echo "perf-test-compare: $line"
	echo "$line" >> "$OUT/compare.txt"
done < "$OUT/pristine.txt"
# what ours adds or passes where pristine does not
while IFS=$'\t' read -r name res; do
	up=$(awk -F '\t' -v n="$name" '$1 == n { print $2; exit }' "$OUT/pristine.txt")
	if [ -z "$up" ]; then
		echo "perf-test-compare: ours only: '$name': $res" | tee -a "$OUT/compare.txt"
		# a test the series adds must pass where it runs (again alone:
		# a flake there is said, as above)
		if [ "$res" = FAILED! ]; then
			ours2=$(again ours "$name")
			if [ "$ours2" = Ok ]; then
				line="flake: '$name', a test of the series: FAILED!, again alone Ok"
			else
				line="FAIL: '$name', a test of the series, fails on ours; again alone: $ours2"
				fail=1
			fi
			echo "perf-test-compare: $line" | tee -a "$OUT/compare.txt"
		fi
	elif [ "$res" = Ok ] && [ "$up" != Ok ]; then
		echo "perf-test-compare: ours Ok, pristine $up: '$name'" | tee -a "$OUT/compare.txt"
	fi
done < "$OUT/ours.txt"
if [ $fail -eq 0 ]; then
	echo "perf-test-compare: PASS: every test that passes on pristine perf 7.2 passes on ours"
else
	echo "perf-test-compare: FAILED: tests that pass on pristine perf 7.2 fail on ours (above; logs in $OUT)"
fi
exit $fail
