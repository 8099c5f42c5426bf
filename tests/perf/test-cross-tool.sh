#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every perf subcommand that reads samples, ours against pristine perf 7.2,
# on real 7.2 recordings of the corpus (tests/corpus/real-7.2): a
# system-wide one (sysw), an off-CPU sched_switch one (offcpu-sched) and
# a pipe stream (blocker-pipe); perf record -z files are read through the
# same session (test-upstream-files.sh, the corpus' threads-z).
#
# For each (recording, command), ours fails the suite when it
#   - is killed by a signal, or runs past the time limit;
#   - fails where pristine 7.2 succeeds (but where both print the same
#     error and pristine then exits 0: ours says it failed);
#   - shows fewer samples than pristine, where the output counts them
#     (perf script -G's line per sample, perf report -n's samples column,
#     perf sched timehist's line per switch, the samples of perf data
#     convert --to-json, perf inject's output read back);
#   - prints a deferred cookie as a frame (cookie-frames.py).
# What each printed is written as a Markdown table, cross-tool.md in the
# suite's directory, printed at the end: Documentation/cross-tool.md is
# one such run.
#
# usage: tests/perf/test-cross-tool.sh    (after make perf, make perf-upstream)
#   Environment (tests/perf/lib.sh): PERF, UPSTREAM_PERF, PYTHON, KEEP, VERBOSE

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
use_corpus_buildids
require_perf
require_upstream_perf
corpus=$top/tests/corpus/real-7.2
LIMIT=300	# seconds a command may take

# The commands, FILE for the recording, OUT for a file it writes; a
# command of one file type only after a ':' (sched: a sched_switch
# recording)
COMMANDS=(
	"report --stdio -i FILE"
	"report --stdio -g none -s dso,sym -i FILE"
	"report --stdio -n -g none -s pid -i FILE"
	"report --stats -i FILE"
	"script -i FILE"
	"script -G -i FILE"
	"script -G -F comm,tid,time,ip,sym,dso -i FILE"
	"script -s HELPERS/callchain-names.py -i FILE"
	"annotate --stdio -i FILE"
	"diff FILE FILE"
	"data convert --to-json OUT -i FILE"
	"inject -i FILE -o OUT"
	"sched timehist -i FILE:sched"
	"sched latency -i FILE:sched"
	"sched map -i FILE:sched"
	"timechart -i FILE -o OUT"
	"trace -i FILE"
	"kwork report -i FILE"
	"kmem -i FILE stat"
	"lock report -i FILE"
	"c2c report --stdio -i FILE"
	"mem report --stdio -i FILE"
)

# samples WHICH OUTPUT: the samples an output shows, or "" where it does
# not count them
samples() {
	local cmd=$1 out=$2
	case $cmd in
	"script -G -i FILE") wc -l < "$out" ;;
	"sched timehist -i FILE") grep -cE '^ *[0-9]+\.[0-9]+ ' "$out" ;;
	"report --stdio -n -g none -s pid -i FILE")
		# children and self columns (callchains), then the samples
		awk '!/^#/ && NF { n += $(NF - 1) } END { print n + 0 }' "$out" ;;
	"data convert --to-json OUT -i FILE")
		[ -s out.json ] && js out.json 'len(d["samples"])' ;;
	"inject -i FILE -o OUT")
		[ -s out.data ] && "$PERF" script -G -i out.data 2> /dev/null | wc -l ;;
	esac
}

# run PERF CMD FILE: runs it in a clean directory state; sets rc, out, err
run() {
	local perf=$1 cmd=$2 file=$3 c
	c=${cmd//FILE/$file}
	c=${c//HELPERS/$here/helpers}
	case $cmd in
	*--to-json*) c=${c//OUT/out.json} ;;
	*) c=${c//OUT/out.data} ;;
	esac
	rm -f out.json out.data out.data.old
	# shellcheck disable=SC2086
	timeout $LIMIT "$perf" $c > run.out 2> run.err < /dev/null
	rc=$?
	[ "$cmd" = "data convert --to-json OUT -i FILE" ] && [ -s out.json ] && cat out.json >> run.out
}

echo "| recording | command | ours | pristine 7.2 |" > cross-tool.md
echo "|---|---|---|---|" >> cross-tool.md
for name in sysw offcpu-sched blocker-pipe; do
	f=$corpus/$name.data
	[ -f "$f" ] || abort "$f: not in the corpus"
	"$PERF" script --show-deferred-events -F time -i "$f" > cookies.txt 2> /dev/null
	sched=no
	"$PERF" evlist -i "$f" 2> /dev/null | grep -q '^sched:sched_switch$' && sched=yes
	for entry in "${COMMANDS[@]}"; do
		cmd=${entry%:sched}
		[ "$cmd" != "$entry" ] && [ $sched = no ] && continue
		run "$UP_PERF" "$cmd" "$f"
		up_rc=$rc up_n=$(samples "$cmd" run.out) up_err=$(grep -m1 . run.err)
		"$PY" "$here/helpers/cookie-frames.py" cookies.txt run.out > cookie.txt
		up_cookies=$(head -1 cookie.txt)
		run "$PERF" "$cmd" "$f"
		n=$(samples "$cmd" run.out)
		"$PY" "$here/helpers/cookie-frames.py" cookies.txt run.out > cookie.txt
		shown=${cmd//FILE/$name.data}
		shown=${shown//HELPERS\//}
		t="$name: perf $shown"
		check "$t: not killed, in time (status $rc)" eval "[ $rc -lt 124 ] || [ $rc -gt 192 ]"
		if [ "$up_rc" -eq 0 ] && [ "$rc" -ne 0 ]; then
			check "$t: fails (status $rc) only where pristine 7.2 prints the same error" \
				eval '[ -n "$up_err" ] && [ "$(grep -m1 . run.err)" = "$up_err" ]'
		fi
		if [ -n "$up_n" ] || [ -n "$n" ]; then
			check "$t: shows every sample pristine 7.2 shows (${n:-?} of ${up_n:-?})" \
				[ "${n:-0}" -ge "${up_n:-0}" ]
		fi
		check "$t: no cookie as a frame ($(head -1 cookie.txt); pristine 7.2: $up_cookies)" \
			[ "$(head -1 cookie.txt)" -eq 0 ]
		[ "$(head -1 cookie.txt)" -eq 0 ] || sed -n '2,4s/^/     /p' cookie.txt
		cell() { echo "status $1${2:+, $2 samples}${3:+, $3 cookie frames}"; }
		[ "$up_cookies" = 0 ] && up_cookies=
		ours_cookies=$(head -1 cookie.txt)
		[ "$ours_cookies" = 0 ] && ours_cookies=
		echo "| $name | \`perf $shown\` | $(cell "$rc" "$n" "$ours_cookies") | $(cell "$up_rc" "$up_n" "$up_cookies") |" >> cross-tool.md
	done
done

cat cross-tool.md
finish
