#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fuzz-perf: tests/perf/helpers/fuzz-perf.py on build/perf-asan (ASan, UBSan)
# with seeds made here: the writer-made scenarios (tests/perf/helpers/scenarios.py,
# file format), pipe streams of some of them in upstream's layouts
# (tests/perf/helpers/upstream.py: compressed, newer records and features), and an
# emulated deferred recording of tests/workloads/emulate-workload.c, the
# real 7.2 recordings of tests/corpus/real-7.2 (tracepoints, system-wide,
# sample CPUs, -z, a pipe; its perf record --threads directories are not
# mutated: the mutator takes a file) and the damaged copies of them
# tests/perf/helpers/fuzz-regressions.py makes.  Then the kept findings of
# earlier runs, tests/perf/fuzz-corpus/*.data, and those damaged copies are
# run as they are (fuzz-perf.py --replay), so that a fixed reader stays
# fixed.
#
# usage: tests/perf/helpers/fuzz-perf.sh [COUNT [SEED]]      (default 1000, 1)
#   Environment: PERF_ASAN (default build/perf-asan), PERF (build/perf, for
#   the emulation), FUZZ_OUT (default build/fuzz-perf: the findings, kept
#   across runs), FUZZ_SEEDS (default FUZZ_OUT/seeds: made once, kept),
#   FUZZ_SMOKE (set: only the seeds every machine makes alike),
#   FUZZ_JOBS (mutants run at a time, default: the number of CPUs),
#   FUZZ_COMMANDS (the commands of fuzz-perf.py --commands, default all),
#   PYTHON, CC, SYS_PERF (records the workload).
# Exit status: 1 when a mutant crashed, hung or made a sanitizer report.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
count=${1:-1000}
seed=${2:-1}
PERF_ASAN=${PERF_ASAN:-$top/build/perf-asan}
PERF=${PERF:-$top/build/perf}
SYS_PERF=${SYS_PERF:-/usr/bin/perf}
PY=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
out=${FUZZ_OUT:-$top/build/fuzz-perf}
seeds=${FUZZ_SEEDS:-$out/seeds}

[ -x "$PERF_ASAN" ] || { echo "fuzz-perf: no $PERF_ASAN (make -f Makefile.perf-patch perf-asan)" >&2; exit 2; }
mkdir -p "$seeds" "$out/.perf/buildid" || exit 2
# perf's configuration and build-id cache of the run's own: nothing in the
# home directory (~/.perfconfig, ~/.debug) decides what a mutant does
printf '[buildid]\n\tdir = %s\n' "$out/.perf/buildid" > "$out/.perf/config"
export PERF_CONFIG=$out/.perf/config
if [ ! -s "$seeds/.done" ]; then
	"$CC" -g -O0 -fno-inline -no-pie -pthread -fno-omit-frame-pointer \
		-o "$seeds/workload" "$top/tests/workloads/workload.c" || exit 2
	# the records name /mnt/clone, not this checkout: the same seeds, and
	# mutants, in every clone, and no kept finding names a checkout
	"$PY" "$here/scenarios.py" gen --workload "$seeds/workload" \
		--recorded-as /mnt/clone/build/fuzz-perf/seeds/workload --out "$seeds" > "$seeds/list" ||
		exit 2
	for n in cross_cpu lost zero_entries duplicates; do
		"$PY" "$here/upstream.py" "$seeds/$n.raw.data" "$seeds/$n.up.pipe" --pipe --compress \
			--newer-records --newer-features --attr-size 144 --push 300 --cap 128 > /dev/null &&
		"$PY" "$here/upstream.py" "$seeds/$n.raw.data" "$seeds/$n.up.data" --compress \
			--newer-records --newer-features --attr-size 144 > /dev/null || exit 2
	done
	"$CC" -g -O1 -fno-omit-frame-pointer -pthread -o "$seeds/emu-workload" \
		"$top/tests/workloads/emulate-workload.c" || exit 2
	if "$SYS_PERF" record -q -g -e cpu-clock -o "$seeds/fp.data" -- "$seeds/emu-workload" 30 \
			> /dev/null 2>&1; then
		"$PERF" stitch --emulate -q --seed 3 --drop 0.2 -i "$seeds/fp.data" \
			-o "$seeds/emu.data" || exit 2
		rm -f "$seeds/fp.data"
	fi
	echo done > "$seeds/.done"
fi
# Real recordings (the 7.2 guest's, committed: the same on every machine)
# and the damaged copies of them that crashed perf 6.1, made afresh here
corpus=$top/tests/corpus/real-7.2
regressions=$out/regressions
rm -rf "$regressions"
"$PY" "$here/fuzz-regressions.py" "$corpus" "$regressions" > /dev/null || exit 2
# The emulated recording is made afresh on each machine, so its mutants are
# too: FUZZ_SMOKE=1 (make check) leaves it out, for the same mutants as here.
emu=$seeds/emu.data
[ -n "${FUZZ_SMOKE:-}" ] && emu=
jobs=${FUZZ_JOBS:-$(nproc)}
# shellcheck disable=SC2046,SC2086
"$PY" "$here/fuzz-perf.py" --perf "$PERF_ASAN" --out "$out" --count "$count" --seed "$seed" \
	--jobs "$jobs" ${FUZZ_COMMANDS:+--commands "$FUZZ_COMMANDS"} \
	$(ls "$seeds"/*.raw.data "$seeds"/*.up.pipe "$seeds"/*.up.data $emu 2> /dev/null) \
	$(find "$corpus" -maxdepth 1 -type f -name '*.data' | LC_ALL=C sort) \
	$(ls "$regressions"/*.data 2> /dev/null)
status=$?
"$PY" "$here/fuzz-perf.py" --perf "$PERF_ASAN" --out "$out" --jobs "$jobs" --replay \
	"$here"/../fuzz-corpus/*.data "$regressions"/*.data || status=1
exit $status
