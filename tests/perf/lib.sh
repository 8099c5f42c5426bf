# SPDX-License-Identifier: GPL-2.0
#
# Shared by the tests/perf/test-*.sh suites: their preamble (paths, the
# programs under test, the temporary directory), the check counters and
# assertions, and the frame-pointer recordings several suites start from.
# A suite reads
#
#	. "$(dirname "$0")/lib.sh"
#	suite_init
#	require_perf
#	... its checks ...
#	finish
#
# and prints one line per check ("ok   - ..." or "FAIL - ..."; "SKIP - ..."
# for a check that cannot run here), "K skipped" when K > 0, and last
# "N passed, M failed"; its exit status is non-zero when a check failed.
#
# Environment, the same for every suite (a suite's usage comment says which
# it uses, and what for):
#   PERF=...      the patched perf under test (default: build/perf)
#   SYS_PERF=...  the system perf, Debian's unpatched 6.1, an older client
#                 (default: /usr/bin/perf).  It records the workloads and
#                 shows whether older perf reads, or fails on, a file; some
#                 suites use $PERF instead when it is missing
#   PYTHON=...    python3 for the helper scripts (default: python3;
#                 test-scenarios.sh: /usr/bin/python3)
#   CC=...        C compiler for the workloads and the shim (default: cc)
#   KEEP=1        keep the temporary directory (its path is printed)
#   VERBOSE=1     longer diffs when a "same" comparison fails
# Relative PERF and SYS_PERF paths are taken from the directory the suite
# is started in: the suites run in their temporary directory.

# here: tests/perf; top: the repository; tmp: the temporary directory,
# set by suite_init
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
start_dir=$PWD
tmp=

pass=0
fail=0
skip=0
ok()  { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }
skipped() { skip=$((skip + 1)); echo "SKIP - $*"; }
# check DESCRIPTION COMMAND...: passes when COMMAND succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

# results: the closing lines of a suite
results() {
	[ "$skip" -eq 0 ] || echo "$skip skipped"
	echo "$pass passed, $fail failed"
}
# finish: print the results and exit, non-zero when a check failed
finish() {
	results
	[ "$fail" -eq 0 ] && exit 0
	exit 1
}
# abort DESCRIPTION: a failed check the rest of the suite depends on
abort() {
	bad "$@"
	finish
}

# ------------------------------------------------------------ assertions
# has FILE REGEX: a line of FILE matches the extended regex
has() { grep -Eq -- "$2" "$1"; }
hasnt() { ! grep -Eq -- "$2" "$1"; }
# count FILE REGEX: lines of FILE matching the extended regex
count() { grep -Ec -- "$2" "$1"; }
eq() { [ "$1" = "$2" ] || { echo "     expected '$2', got '$1'"; return 1; }; }
# gt A B: the number A is greater than B (a non-number fails)
gt() {
	[ "$1" -gt "$2" ] 2>/dev/null || { echo "     expected more than $2, got '$1'"; return 1; }
}
# same FILE1 FILE2: identical files, else the start of their diff
same() {
	local lines=12

	cmp -s "$1" "$2" && return 0
	[ -n "${VERBOSE:-}" ] && lines=60
	echo "     $1 and $2 differ:"
	diff -u "$1" "$2" | head -n "$lines" | sed 's/^/     /'
	return 1
}
# no_output DESCRIPTION FILE: neither FILE nor a temporary file next to it
# (a failed perf stitch leaves no output behind)
no_output() {
	if [ -e "$2" ] || ls "$2".tmp-* > /dev/null 2>&1; then
		bad "$1: no output left behind"
	else
		ok "$1: no output left behind"
	fi
}
# relay_checks PREFIX FILE: the "check NAME ok" / "check NAME <why not>"
# lines a checker script wrote to FILE, one ok or FAIL each; a FILE without
# any is the checker's own failure (FILE is shown)
relay_checks() {
	local prefix=$1 file=$2 line

	while read -r line; do
		case "$line" in
		"check "*" ok") ok "$prefix: ${line#check }";;
		"check "*) bad "$prefix: ${line#check }";;
		esac
	done < "$file"
	grep -q '^check ' "$file" || { bad "$prefix: the checker failed"; cat "$file"; }
}

# relay_results FILE: the "ok   - ..." / "FAIL - ..." lines of a sub-suite
# (oracle-check.sh) as this suite's checks, with the detail lines of its
# failures; a FILE without any is the sub-suite's own failure (FILE is shown)
relay_results() {
	local file=$1 line

	while IFS= read -r line; do
		case "$line" in
		"ok   - "*) ok "${line#ok   - }";;
		"FAIL - "*) bad "${line#FAIL - }";;
		"     "*) echo "$line";;
		esac
	done < "$file"
	grep -qE '^(ok   -|FAIL -) ' "$file" || { bad "$file: no results"; cat "$file"; }
}

# ------------------------------------------------------------ reading perf output
# stat FILE NAME: the count of "NAME events:" in 'perf report --stats'
# output (its first, aggregated section), 0 when the line is absent
stat() {
	awk -v n="$2" '$1 == n && $2 == "events:" { print $3; f = 1; exit }
		END { if (!f) print 0 }' "$1"
}
# summary_count FILE FIELD: the number before FIELD in the stitch summary
# line ("deferred callchains: ...") perf script wrote to FILE
summary_count() { sed -nE "s/.*deferred callchains:.* ([0-9]+) $2.*/\1/p" "$1" | head -1; }
# js FILE EXPR: the Python expression EXPR on d, the JSON value in FILE
js() {
	"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1" "$2"
}

# ------------------------------------------------------------ preamble
# abs_path PATH: PATH taken from the directory the suite started in
abs_path() {
	case $1 in
	/* | "") echo "$1" ;;
	*) echo "$start_dir/$1" ;;
	esac
}

# suite_init: set -u, the defaults of the environment above, the
# temporary directory /tmp/<suite>.XXXXXX as the current directory (removed
# on exit unless KEEP=1), and PERF_CONFIG: perf's configuration and
# build-id cache in it
suite_init() {
	local name

	set -u
	PERF=$(abs_path "${PERF:-$top/build/perf}")
	SYS_PERF=$(abs_path "${SYS_PERF:-/usr/bin/perf}")
	PY=${PYTHON:-python3}
	CC=${CC:-cc}

	name=$(basename "$0" .sh)
	tmp=$(mktemp -d "/tmp/$name.XXXXXX") || abort "mktemp -d /tmp/$name.XXXXXX"
	if [ -n "${KEEP:-}" ] && [ "$KEEP" != 0 ]; then
		echo "# keeping $tmp"
	else
		trap 'rm -rf "$tmp"' EXIT
	fi
	cd "$tmp" || exit 1
	# perf reads this configuration only, not the user's ~/.perfconfig,
	# and a build-id cache of the suite's own, not ~/.debug: what an
	# earlier run or another checkout left there decides nothing.  The
	# cache is the ~/.debug of a home directory of the suite's own, which
	# the system perf gets (below): every perf of the suite sees what the
	# others recorded (the [vdso] image perf record keeps, say), as on a
	# user's machine
	mkdir -p "$tmp/.perf/home/.debug" || abort "mkdir $tmp/.perf/home/.debug"
	printf '[buildid]\n\tdir = %s\n' "$tmp/.perf/home/.debug" > "$tmp/.perf/config"
	export PERF_CONFIG=$tmp/.perf/config
	# but not for the system perf, 6.1: it reads a file's header otherwise
	# when PERF_CONFIG is set (a file with perf 7.2's bigger attrs is then
	# read on, where without it 6.1 says "incompatible file format"), and
	# the suites hold it to what its users see: that home directory
	# instead (no ~/.perfconfig; the cache as its ~/.debug)
	if [ -x "$SYS_PERF" ]; then
		printf '#!/bin/sh\nHOME=%s exec env -u PERF_CONFIG %s "$@"\n' \
			"$tmp/.perf/home" "$SYS_PERF" > "$tmp/.perf/sys-perf" &&
			chmod +x "$tmp/.perf/sys-perf" || abort "write $tmp/.perf/sys-perf"
		SYS_PERF=$tmp/.perf/sys-perf
	fi
}

# use_corpus_buildids: the programs the real recordings of
# tests/corpus/real-7.2 profiled, found by build id as perf finds them on
# any machine (that corpus's README: they are recorded under /mnt/clone,
# which no machine has), copied into the suite's build-id cache
use_corpus_buildids() {
	cp -R "$top/tests/corpus/real-7.2/buildid/.build-id" "$tmp/.perf/home/.debug/" ||
		abort "copy the corpus's build-id cache"
}

# require_perf: the patched perf is built
require_perf() {
	[ -x "$PERF" ] || abort "$PERF not built (make -f Makefile.perf-patch)"
}
# require_upstream_perf [python]: UP_PERF, pristine perf 7.2 (UPSTREAM_PERF,
# default build/perf-upstream: make perf-upstream, which make check runs),
# the yardstick the suites compare ours with; with 'python', built with
# Python scripting.  Without it the suite ends, saying why: comparing
# ours with ours would prove nothing.
require_upstream_perf() {
	UP_PERF=$(abs_path "${UPSTREAM_PERF:-$top/build/perf-upstream}")
	"$UP_PERF" version 2> /dev/null | grep -q '^perf version 7\.2\.' ||
		abort "no pristine perf 7.2 at $UP_PERF (make perf-upstream): the reference of this suite"
	if [ "${1:-}" = python ] &&
	   ! "$UP_PERF" version --build-options 2> /dev/null | grep -q 'libpython: \[ on'; then
		abort "pristine perf 7.2 at $UP_PERF has no Python scripting: the reference of this suite"
	fi
}
# sys_perf_runs: SYS_PERF is a perf that runs
sys_perf_runs() { [ -x "$SYS_PERF" ] && "$SYS_PERF" version > /dev/null 2>&1; }
# sys_perf_is_61: SYS_PERF is a perf 6.1, the unpatched older client
sys_perf_is_61() {
	[ -x "$SYS_PERF" ] && "$SYS_PERF" version 2>/dev/null | grep -q '^perf version 6\.1\.'
}

# build_workload SRC OUT [CFLAGS...]: compile SRC with frame pointers and
# debug info (the callchains and symbols the suites compare) into OUT;
# a failure ends the suite
build_workload() {
	local src=$1 out=$2

	shift 2
	if ! $CC -g -fno-omit-frame-pointer "$@" -o "$out" "$src" 2> "$out.cc.log"; then
		cat "$out.cc.log"
		abort "build $(basename "$src") ($CC)"
	fi
}

# ------------------------------------------------------------ recordings
# Both record with SYS_PERF and end the suite when it fails.

# record_fp OUT N: the standard frame-pointer recording of
# tests/workloads/emulate-workload.c, built as ./workload (the suites run it
# again), with N as its argument: callchains on every sample, sys_exit
# among them (deferred like any sample), the CPU (records returning on
# another CPU), context switches, small buffers for many rounds
record_fp() {
	local out=$1 arg=$2
	local args=(-g --sample-cpu --switch-events -e cpu-clock -e raw_syscalls:sys_exit)

	build_workload "$top/tests/workloads/emulate-workload.c" workload -O1 -pthread
	if ! "$SYS_PERF" record -q -m 64 "${args[@]}" -o "$out" -- ./workload "$arg" \
			> "$out.record.log" 2>&1; then
		cat "$out.record.log"
		abort "perf record ${args[*]} ($SYS_PERF)"
	fi
}

# record_shell_mix OUT LOOPS RUNS: a frame-pointer recording of a shell
# mix: dd, a shell loop of LOOPS iterations and RUNS times 'ls -lR
# /usr/share/doc', in parallel.  Two events (their samples share cookies
# once deferred), the CPU in every sample (cross-CPU records), small
# buffers (many rounds), children that exec and exit, user and kernel time
record_shell_mix() {
	local out=$1 loops=$2 runs=$3

	if ! "$SYS_PERF" record -q -m 4 -e cpu-clock,task-clock -F 2000 -g --sample-cpu \
			-o "$out" -- "$here/helpers/shell-mix.sh" "$loops" "$runs" > "$out.record.log" 2>&1; then
		cat "$out.record.log"
		abort "perf record ($SYS_PERF)"
	fi
}
