#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf data convert --to-ctf on real 7.2 recordings of the corpus
# (tests/corpus/real-7.2), read back with babeltrace2 (Debian 12's CLI), the
# way LTTng's and Trace Compass' users read CTF:
#   - babeltrace2 reads every sample ours wrote, as many as perf script -G
#     shows;
#   - each sample's perf_callchain is perf script's stitched callchain,
#     frame for frame, and an orphan's perf_user_stack_lost is the reason
#     perf script shows as "[user stack lost: <reason>]" (helpers/ctf-check.py);
#   - the pipe recording converts the same way;
#   - a file perf cannot read leaves no trace behind and fails.
# Pristine 7.2 is run beside: whether babeltrace2 can read what it wrote
# is printed, not checked (it writes samples merged late out of time
# order, which babeltrace2 refuses).
#
# usage: tests/perf/test-ctf.sh    (after make perf, make perf-upstream)
#   Environment (tests/perf/lib.sh): PERF, UPSTREAM_PERF, PYTHON, KEEP, VERBOSE

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
use_corpus_buildids
require_perf
require_upstream_perf
corpus=$top/tests/corpus/real-7.2
BT=$(command -v babeltrace2) || abort "no babeltrace2 (make deps installs Debian's)"
"$PERF" version --build-options | grep -Eq 'babeltrace2-ctf-writer: \[ on' ||
	abort "$PERF is built without babeltrace2's CTF writer (Makefile.perf-patch)"

# convert PERF FILE DIR [OPTIONS]: perf data convert --to-ctf; sets rc
convert() {
	local perf=$1 file=$2 dir=$3
	shift 3
	rm -rf "$dir"
	"$perf" data convert --to-ctf "$dir" "$@" -i "$file" > "$dir.log" 2>&1
	rc=$?
}

for name in sysw offcpu-sched forker-c threads-2ev-fpdefer blocker-pipe; do
	f=$corpus/$name.data
	[ -f "$f" ] || abort "$f: not in the corpus"
	"$PERF" script --ns --no-inline --max-stack=1024 -F tid,time,ip,sym -i "$f" \
		> "$name.script" 2> /dev/null
	shown=$("$PERF" script -G -i "$f" 2> /dev/null | wc -l)

	convert "$PERF" "$f" "$name.ctf"
	check "$name: perf data convert --to-ctf exits 0 (status $rc)" [ $rc -eq 0 ]
	"$BT" --clock-cycles "$name.ctf" > "$name.bt" 2> "$name.bt.err"
	st=$?
	check "$name: babeltrace2 reads it" eval "[ $st -eq 0 ] || { head -3 $name.bt.err; false; }"
	check "$name: babeltrace2 shows every sample perf script shows ($shown)" \
		eq "$(wc -l < "$name.bt")" "$shown"
	"$PY" "$here/helpers/ctf-check.py" "$name.bt" "$name.script" > "$name.check"
	st=$?
	check "$name: each sample's callchain and lost reason as perf script's: $(head -1 "$name.check")" \
		eval "[ $st -eq 0 ] || { sed -n '2,8p' $name.check; false; }"

	convert "$UP_PERF" "$f" "$name.up.ctf"
	up="status $rc"
	if [ $rc -eq 0 ]; then
		if "$BT" "$name.up.ctf" > /dev/null 2> "$name.up.err"; then
			up="$up, babeltrace2 reads it"
		else
			up="$up, babeltrace2 fails: $(grep -m1 -o "Youngest upstream.*timestamp" "$name.up.err" ||
				grep -m1 . "$name.up.err")"
		fi
	fi
	echo "     pristine 7.2 on $name: $up"
done

# the pipe: the stream read from stdin converts as the file does
convert "$PERF" - pipe.ctf < "$corpus/blocker-pipe.data"
check "pipe on stdin: exit 0 (status $rc)" [ $rc -eq 0 ]
"$BT" --clock-cycles pipe.ctf > pipe.bt 2> /dev/null
check "pipe on stdin: the same trace as the file" cmp -s pipe.bt blocker-pipe.bt

# a file perf cannot read: an error, and no trace left as if it succeeded
head -c 200 "$corpus/sysw.data" > cut.data
convert "$PERF" cut.data cut.ctf
check "a file cut in its header: fails (status $rc)" [ $rc -ne 0 ]
check "a file cut in its header: no CTF trace left" eval "[ ! -e cut.ctf/metadata ]"

finish
