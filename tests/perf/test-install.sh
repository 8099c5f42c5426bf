#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install (Makefile.perf-patch): perf, its scripts and its man pages
# under PREFIX, as a user gets them.  Installs into a temporary PREFIX and
# checks: the installed perf runs and knows perf stitch; 'perf help stitch'
# and 'man perf-stitch' show our page; perf-record, perf-report,
# perf-script and perf-data carry the deferred text; the scripts run from
# the prefix (perf script -s with the installed flamegraph.py); and a
# PREFIX that would replace /usr/bin/perf is refused.
#
# usage: tests/perf/test-install.sh     (after make -f Makefile.perf-patch)
#   Environment (tests/perf/lib.sh): PERF, KEEP.  Needs asciidoc, xmlto and
#   man (make deps).  Output and exit status: see lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
require_perf
for t in asciidoc xmlto man; do
	command -v "$t" > /dev/null || abort "no $t (make deps installs it)"
done

prefix=$tmp/prefix
make -s -C "$top" -f Makefile.perf-patch install PREFIX="$prefix" > install.log 2>&1
rc=$?
check "make install PREFIX=...: status 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -20 install.log | sed 's/^/     /'
p=$prefix/bin/perf
check "the installed perf runs: $("$p" version 2> /dev/null)" eval "'$p' version | grep -q '^perf version 7\\.2\\.'"
check "the installed perf has perf stitch" eval "'$p' stitch -h 2>&1 | grep -q 'perf stitch -F folded'"
check "its exec path is in the prefix" eq "$("$p" --exec-path)" "$prefix/libexec/perf-core"

# the pages: perf help finds them under PREFIX/share/man; man -w names the file
man1=$prefix/share/man/man1
check "man pages installed ($(ls "$man1" 2> /dev/null | wc -l) in share/man/man1)" test -s "$man1/perf-stitch.1"
MANPAGER=cat PAGER=cat MANWIDTH=100 "$p" help stitch > help.out 2> help.err
check "perf help stitch: our page" has help.out 'perf-stitch - '
MANPAGER=cat PAGER=cat MANWIDTH=100 MANPATH=$prefix/share/man man perf-stitch > man.out 2> man.err
check "man perf-stitch: our page" has man.out 'perf-stitch - '
check "man perf-stitch: the export formats" has man.out 'speedscope'
for page in record:'call-graph.*deferred' report:'merge-callchains' \
	    script:'show-deferred-events' data:'to-folded' top:'stitch-window'; do
	cmd=${page%%:*} re=${page#*:}
	MANPAGER=cat PAGER=cat MANWIDTH=200 MANPATH=$prefix/share/man man "perf-$cmd" > "man-$cmd.out" 2> /dev/null
	check "man perf-$cmd: the deferred text ($re)" has "man-$cmd.out" "$re"
done
MANPAGER=cat PAGER=cat MANWIDTH=200 MANPATH=$prefix/share/man man perf-script > man-script.out 2> /dev/null
check "man perf-script: DEFERRED USER CALLCHAINS" has man-script.out 'DEFERRED USER CALLCHAINS'
check "man perf-top: DEFERRED USER CALLCHAINS, with perf top's part" \
	eval "grep -q 'DEFERRED USER CALLCHAINS' man-top.out && tr -s ' \n' '  ' < man-top.out | grep -q 'stitches as it goes'"

# a script from the prefix on a deferred recording of the corpus
data=$top/tests/corpus/real-7.2/forker-c.data
"$p" script -i "$data" -s "$("$p" --exec-path)/scripts/python/stitch-coverage.py" > cov.out 2> cov.err
check "the installed stitch-coverage.py runs on a deferred recording" has cov.out 'forker'

# the system perf stays the system's
make -s -C "$top" -f Makefile.perf-patch install PREFIX=/usr > refuse.log 2>&1
rc=$?
check "PREFIX=/usr: refused (status $rc)" eval "[ $rc -ne 0 ] && grep -q 'refusing to install' refuse.log"
finish
