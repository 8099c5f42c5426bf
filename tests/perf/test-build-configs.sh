#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf's own build configurations (tools/perf/tests/make), each built from
# the patched tree by make -f Makefile.perf-patch perf-configs into
# build/perf-config/NAME: that they build is make check's first check;
# here each binary stitches.  Every one is what it was asked to be (perf
# version --build-options), and its perf stitch --stats of real 7.2
# recordings counts what build/perf counts: the stitch engine and its
# session join do not depend on what a configuration leaves out.  Without
# libtraceevent, --count=off-cpu (sched_switch's fields) is refused with
# the reason and no output, in perf stitch -F, perf stitch -o and perf
# data convert alike, rather than weighed wrong.
#
# usage: tests/perf/test-build-configs.sh   (after make -f Makefile.perf-patch perf-configs)
#   Environment (tests/perf/lib.sh): PERF, PYTHON, KEEP, VERBOSE.

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
suite_init
use_corpus_buildids
require_perf

configs=$top/build/perf-config
corpus=$top/tests/corpus/real-7.2
# name, what shows it is that configuration (FILE: a file of its build
# directory, and the pattern to find in it)
CONFIGS=("no-libtraceevent|version|libtraceevent: \[ OFF \]"
	 "minimal|version|libelf: \[ OFF \]"
	 "debug-refcnt|util/.session.o.cmd|-DREFCNT_CHECKING=1"
	 "clang-bpf|comment|clang version"
	 "clang-bpf|version|bpf_skeletons: \[ on +\]")
INPUTS=(blocker-cs.data offcpu-sched.data sysw.data)

for f in "${INPUTS[@]}"; do
	"$PERF" stitch --stats=json -i "$corpus/$f" > "want.$f.json" 2> /dev/null ||
		abort "build/perf stitch --stats -i $f"
done
for spec in "${CONFIGS[@]}"; do
	IFS='|' read -r name where what <<< "$spec"
	perf=$configs/$name/perf
	if [ ! -x "$perf" ]; then
		bad "$name: no $perf (make -f Makefile.perf-patch perf-config-$name)"
		continue
	fi
	case $where in
	version) "$perf" version --build-options > "$name.is" 2>&1 ;;
	comment) readelf -p .comment "$perf" > "$name.is" 2>&1 ;;
	*) cp "$configs/$name/$where" "$name.is" ;;
	esac
	check "$name: it is that build ($where: $(echo "$what" | tr -d '\\'))" has "$name.is" "$what"
	[ -e "$name.stitched" ] && continue	# a second line of the same build
	: > "$name.stitched"
	for f in "${INPUTS[@]}"; do
		"$perf" stitch --stats=json -i "$corpus/$f" > "$name.$f.json" 2> "$name.$f.err"
		check "$name: perf stitch --stats -i $f: the counts of build/perf" \
			eval "[ $? -eq 0 ] && same '$name.$f.json' 'want.$f.json'"
	done
done

# without libtraceevent: --count=off-cpu refused, said why, nothing written
perf=$configs/no-libtraceevent/perf
if [ -x "$perf" ]; then
	why='^--count=off-cpu reads sched_switch.s fields, and this perf was built without libtraceevent$'
	in=$corpus/offcpu-sched.data
	for cmd in "stitch -F folded --count=off-cpu -i $in -o OUT" \
		   "stitch --count=off-cpu -i $in -o OUT" \
		   "data convert --to-folded OUT --count=off-cpu -i $in"; do
		rm -f out.x
		# shellcheck disable=SC2086
		"$perf" ${cmd//OUT/out.x} > /dev/null 2> refused.err
		check "no-libtraceevent: perf ${cmd%% -i*}: refused, saying why" \
			eval "[ $? -ne 0 ] && has refused.err \"$why\""
		no_output "no-libtraceevent: perf ${cmd%% -i*}" out.x
	done
fi
finish
