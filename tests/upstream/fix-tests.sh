#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fix-tests.sh: each mail of the series that fixes what pristine perf 7.2
# does carries a perf test that shows it (patches/perf-7.2/fix-tests):
# the test must fail with pristine's perf first in PATH and pass with
# ours.  Each runs as perf test runs a shell test, from the shell tests
# of the tree build/perf is built from (its lib/ beside it), in a
# directory of its own; a test that hangs on pristine (the bug it shows
# may be a hang) is stopped after TIMEOUT seconds and counts as failing
# there.  Also checked: the test travels with its fix, a file of its
# mail's line in patches/perf-7.2/series or an upstream test the mail's
# hook extends.  The table lists every hook mail: those without a test
# say why ('no test:', 'feature:', 'to do:'), counted by kind.
#
# usage: tests/upstream/fix-tests.sh
#   Environment: PERF, UPSTREAM_PERF (build/perf, build/perf-upstream),
#   OUT (build/fix-tests), TIMEOUT (120), SHELL_TESTS (the shell tests:
#   build/linux-7.2-tree/tools/perf/tests/shell); ONLY=MAIL: that mail's
#   test only, when it has one (make series-check runs each so, with the
#   perf built just before the mail as UPSTREAM_PERF and the one built
#   with it as PERF, named BEFORE and AFTER), without the checks of the
#   whole table
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
PERF=${PERF:-$top/build/perf}
UPSTREAM_PERF=${UPSTREAM_PERF:-$top/build/perf-upstream}
OUT=${OUT:-$top/build/fix-tests}
TIMEOUT=${TIMEOUT:-120}
table=$top/patches/perf-7.2/fix-tests
series=$top/patches/perf-7.2/series
hooks=$top/patches/perf-7.2
shell=${SHELL_TESTS:-$top/build/linux-7.2-tree/tools/perf/tests/shell}
# what the two perfs are, in what the check says: BEFORE and AFTER
before=${BEFORE:-pristine} after=${AFTER:-ours}

for f in "$PERF" "$UPSTREAM_PERF"; do
	[ -x "$f" ] || { echo "fix-tests: no $f" >&2; exit 2; }
done
[ -d "$shell" ] || { echo "fix-tests: no $shell (make -f Makefile.perf-patch)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT/bin/pristine" "$OUT/bin/ours"
ln -s "$UPSTREAM_PERF" "$OUT/bin/pristine/perf"
ln -s "$PERF" "$OUT/bin/ours/perf"

# run SIDE SCRIPT: its exit status, its output in OUT/SIDE.NAME.log
run() {
	local side=$1 script=$2 name dir

	name=$(basename "$script" .sh)
	dir=$OUT/$side.$name
	mkdir -p "$dir"
	(cd "$dir" && PATH=$OUT/bin/$side:$PATH timeout -k 10 "$TIMEOUT" bash "$script") \
		> "$OUT/$side.$name.log" 2>&1
}

fail=0 proved=0 no_test=0 feature=0 todo=0
while IFS=$'\t' read -r mail test; do
	case $mail in ''|'#'*) continue ;; esac
	[ -z "${ONLY:-}" ] || [ "$mail" = "$ONLY" ] || continue
	# the mails without a test of their own, by kind
	case $test in
	'no test: '*) no_test=$((no_test + 1)); continue ;;
	'feature: '*) feature=$((feature + 1)); continue ;;
	'to do: '*) todo=$((todo + 1)); echo "fix-tests: $mail: $test"; continue ;;
	esac
	script=$(grep -lxF "# $test" "$shell"/*.sh 2> /dev/null | head -n 1)
	if [ -z "$script" ]; then
		echo "fix-tests: FAIL: $mail: no shell test '$test' in $shell"
		fail=1
		continue
	fi
	file=tests/shell/$(basename "$script")
	# a new test of ours on the mail's line, or upstream's test that
	# the mail's hook extends
	if ! awk -v m="$mail" -v f="$file" '$1 == m { for (i = 2; i <= NF; i++) if ($i == f) ok = 1 } END { exit !ok }' "$series" &&
	   ! grep -qs "^diff --git a/tools/perf/$file " "$hooks"/[0-9][0-9][0-9][0-9]-"$mail"; then
		echo "fix-tests: FAIL: $mail: its test $file is neither in its line of patches/perf-7.2/series nor changed by its hook"
		fail=1
	fi
	run pristine "$script"
	up=$?
	run ours "$script"
	ours=$?
	case $up in
	0) up_said="passes" ;;
	2) up_said="is skipped" ;;
	124|137) up_said="hangs (stopped after ${TIMEOUT} s)" ;;
	*) up_said="fails" ;;
	esac
	if [ "$ours" -eq 0 ] && [ "$up" -ne 0 ] && [ "$up" -ne 2 ]; then
		echo "fix-tests: ok: '$test': $up_said on $before, passes on $after ($mail)"
		proved=$((proved + 1))
	else
		echo "fix-tests: FAIL: '$test': $up_said on $before (status $up), status $ours on $after ($mail; logs: $OUT)"
		sed 's/^/    ours: /' "$OUT/ours.$(basename "$script" .sh).log" | tail -n 20
		fail=1
	fi
done < "$table"

[ -z "${ONLY:-}" ] || exit $fail
# every hook mail (a change to upstream's files) is in the table, once
without=$(awk -F '\t' '!/^#/ && NF { print $1 }' "$table" | sort |
	comm -13 - <(awk '!/^#/ && $1 ~ /\.patch$/ { print $1 }' "$series" | sort))
if [ -n "$without" ]; then
	echo "fix-tests: FAIL: hook mails not in patches/perf-7.2/fix-tests:" "${without//$'\n'/ }"
	fail=1
fi
twice=$(awk -F '\t' '!/^#/ && NF { print $1 }' "$table" | sort | uniq -d)
if [ -n "$twice" ]; then
	echo "fix-tests: FAIL: in patches/perf-7.2/fix-tests twice:" "${twice//$'\n'/ }"
	fail=1
fi
echo "fix-tests: $proved mails' tests fail on pristine perf 7.2 and pass on ours;" \
	"$no_test change nothing a test of perf's suite can see, $feature add features," \
	"$todo fixes have no test yet"
exit $fail
