#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench's perf-level half: our perf 7.2 (build/perf) side by side with
# its peers on the same deferred files, every pair of commands run in turn
# (A, B, A, B, ...) so that the machine's drift hits both alike:
#
#   1. ours / pristine 7.2   perf script, perf report --stdio of build/perf
#                            against build/perf-upstream, on the real corpus
#                            (tests/corpus/real-7.2), the system-wide
#                            recordings of many blocked tasks from the 7.2
#                            guest (BENCH_VM: guest-record.sh's bench set,
#                            5, 10 and 20 s) and the generated deferred files
#   2. deferred / fp         the same two commands of build/perf on a
#                            generated deferred file and on the frame-pointer
#                            recording it was made from (same samples, same
#                            stacks: perf stitch --emulate)
#   3. stitch -o / inject -o build/perf stitch -o against build/perf inject -o
#   4. stitch -F folded /    against 'perf script | stackcollapse-perf',
#      script | collapse     stackcollapse-perf.pl's rules as the suites check
#                            them (tests/perf/helpers/stackcollapse-perf.py;
#                            the Perl script is neither in Debian nor on
#                            npm); the two outputs must be identical
#
# The generated files: /usr/bin/perf record -g of the emulate workload
# (tests/workloads/emulate-workload.c) for each of GEN_MS, made deferred
# by perf stitch --emulate (this host's kernel cannot defer).
#
# Per command: cpu = user + sys seconds of it and of every process it
# started, waited for or not (bench/cputime.py: perf's addr2line helpers),
# and its peak RSS and peak anonymous RSS (sampled from /proc every 10
# ms), medians of RUNS runs or more (short commands) (peak RSS counts the input file, which perf's reader maps whole; the
# anonymous part is the tool's own).  Each row
# ends with the goals of issue 22 it meets ("ok") or misses ("MISS"), and
# the end counts them.
#
# usage: bench/bench-perf.sh       (make bench builds what it needs first)
#   PERF, PERF_UPSTREAM   build/perf, build/perf-upstream
#   SYS_PERF              perf that records (default /usr/bin/perf)
#   BENCH_VM              the guest's recordings (default build/bench/vm;
#                         none there: their rows are left out, said so)
#   GEN_MS                lengths of the generated recordings (default
#                         "1000 3000 10000")
#   RUNS                  runs per median (default 5; more for short
#                         commands, up to MIN_CPU s of each side, default
#                         5, and 25 runs)
#   ONLY                  a regex of the tables to run (1-4; default all)
#   KEEP=1                keep the temporary directory
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
PERF=${PERF:-$top/build/perf}
PERF_UPSTREAM=${PERF_UPSTREAM:-$top/build/perf-upstream}
SYS_PERF=${SYS_PERF:-/usr/bin/perf}
BENCH_VM=${BENCH_VM:-$top/build/bench/vm}
GEN_MS=${GEN_MS:-1000 3000 10000}
RUNS=${RUNS:-5}
MIN_CPU=${MIN_CPU:-5}
ONLY=${ONLY:-[1-4]}
COLLAPSE="/usr/bin/python3 $top/tests/perf/helpers/stackcollapse-perf.py"
CC=${CC:-gcc}

die() { echo "bench-perf: $*" >&2; exit 1; }

[ -x "$PERF" ] || die "$PERF not built (make perf)"
[ -x "$PERF_UPSTREAM" ] || die "$PERF_UPSTREAM not built (make perf-upstream)"
CPUTIME=$here/cputime.py
[ -x "$SYS_PERF" ] || SYS_PERF=$PERF

tmp=$(mktemp -d /tmp/bench-perf.XXXXXX)
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; else echo "# keeping $tmp"; fi
cd "$tmp" || exit 1
# ours and pristine find the programs of the corpus and of the guest's
# recordings (recorded under /mnt/clone) by build id, in a cache of this
# run's own: the corpus's and vm-record.sh's together (no ~/.debug)
mkdir -p "$tmp/buildid"
for d in "$top/tests/corpus/real-7.2/buildid" "$BENCH_VM/buildid"; do
	[ -d "$d/.build-id" ] && cp -R "$d/.build-id" "$tmp/buildid/"
done
printf '[buildid]\n\tdir = %s\n' "$tmp/buildid" > "$tmp/perfconfig"
export PERF_CONFIG=$tmp/perfconfig

goals_met=0
goals_missed=0

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mib() { awk -v k="$1" 'BEGIN { if (k == "-") print "-"; else printf "%.0f", k / 1024 }'; }

# goal NAME VALUE LIMIT [at-least]: "ok NAME" or "MISS NAME", counted
goal() {
	if awk -v v="$2" -v l="$3" -v ge="${4:-}" 'BEGIN { exit !(ge ? v >= l : v <= l) }'; then
		goals_met=$((goals_met + 1))
		printf ' ok:%s' "$1"
	else
		goals_missed=$((goals_missed + 1))
		printf ' MISS:%s' "$1"
	fi
}

# pair -- CMD_A... -- CMD_B...: RUNS runs of each in turn; sets a_cpu a_rss
# a_anon b_cpu b_rss b_anon (anon "-" for a command given as 'sh -c')
pair() {
	local i runs
	local -a acmd=() bcmd=()

	shift
	while [ "$1" != "--" ]; do acmd+=("$1"); shift; done
	shift
	bcmd=("$@")
	: > a.runs
	: > b.runs
	runs=$RUNS
	for ((i = 0; i < runs; i++)); do
		"$CPUTIME" -o time.out "${acmd[@]}" > /dev/null 2> cmd.err ||
			{ cat cmd.err >&2; die "failed: ${acmd[*]}"; }
		awk '{ print $1 + $2, $3, $4 }' time.out >> a.runs
		"$CPUTIME" -o time.out "${bcmd[@]}" > /dev/null 2> cmd.err ||
			{ cat cmd.err >&2; die "failed: ${bcmd[*]}"; }
		awk '{ print $1 + $2, $3, $4 }' time.out >> b.runs
		# short commands: more runs, up to MIN_CPU s of each side, so that
		# a ratio of commands of 0.3 s is not a ratio of clock ticks
		[ "$i" -eq 0 ] && runs=$(awk -v a="$(tail -1 a.runs | cut -d' ' -f1)" \
			-v r="$RUNS" -v m="$MIN_CPU" \
			'BEGIN { n = a > 0 ? int(m / a) + 1 : 25; if (n > 25) n = 25; print (n > r ? n : r) }')
	done
	a_cpu=$(cut -d' ' -f1 a.runs | median)
	a_rss=$(cut -d' ' -f2 a.runs | median)
	b_cpu=$(cut -d' ' -f1 b.runs | median)
	b_rss=$(cut -d' ' -f2 b.runs | median)
	a_anon=-
	b_anon=-
	[ "${acmd[0]}" = sh ] || a_anon=$(cut -d' ' -f3 a.runs | median)
	[ "${bcmd[0]}" = sh ] || b_anon=$(cut -d' ' -f3 b.runs | median)
}

# columns LABEL: the measured pair as a row's figures
columns() {
	local anon_ratio=-

	[ "$a_anon" = - ] || [ "$b_anon" = - ] || anon_ratio=$(ratio "$a_anon" "$b_anon")x
	printf '%-26s %6s %6s %6sx | %5s %5s %5sx | %5s %5s %6s |' "$1" \
		"$a_cpu" "$b_cpu" "$(ratio "$a_cpu" "$b_cpu")" \
		"$(mib "$a_rss")" "$(mib "$b_rss")" "$(ratio "$a_rss" "$b_rss")" \
		"$(mib "$a_anon")" "$(mib "$b_anon")" "$anon_ratio"
}
header() {
	printf '%-22s %6s %7s %7s | %-26s %6s %6s %7s | %5s %5s %6s | %5s %5s %6s | goals\n' \
		file MiB samples waiting command "cpu $1" "$2" ratio "RSS" "$2" ratio anon "$2" ratio
}

# describe FILE: "name MiB samples peak-waiting" of a deferred file
describe() {
	local f=$1 mb samples waiting
	mb=$(awk -v s="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", s / 1048576 }')
	samples=$("$PERF" report --stats -i "$f" 2> /dev/null |
		sed -nE 's/^ *SAMPLE events: *([0-9]+).*/\1/p' | head -1)
	waiting=$("$PERF" stitch --stats -i "$f" 2> /dev/null |
		sed -nE 's/^peak pending: *([0-9]+) samples.*/\1/p')
	printf '%-22s %6s %7s %7s' "$(basename "$f")" "$mb" "${samples:-?}" "${waiting:-0}"
}

# The files: the corpus, the guest's bench set, the generated ones
corpus=("$top"/tests/corpus/real-7.2/*.data)
vm=()
for s in 5 10 20; do
	[ -s "$BENCH_VM/sleepers-$s.data" ] && vm+=("$BENCH_VM/sleepers-$s.data")
done
[ ${#vm[@]} -eq 3 ] || echo "# no recordings of the 7.2 guest in $BENCH_VM (make bench records them; the VM could not boot?): their rows are left out"

$CC -O1 -g -fno-omit-frame-pointer -pthread -o workload \
	"$top/tests/workloads/emulate-workload.c" || die "cannot build the workload"
gen=()
for ms in $GEN_MS; do
	"$SYS_PERF" record -q -g --sample-cpu -e cpu-clock -e raw_syscalls:sys_exit \
		-o "gen-$ms.fp.data" -- ./workload "$ms" > /dev/null 2>&1 ||
		die "perf record of the workload ($ms ms) failed"
	"$PERF" stitch -q --emulate -i "gen-$ms.fp.data" -o "gen-$ms.data" ||
		die "perf stitch --emulate ($ms ms) failed"
	gen+=("gen-$ms.data")
done

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -r); medians of $RUNS runs or more (up to ${MIN_CPU} s a side, 25 runs)"
echo "# cpu: user + sys s; RSS: peak RSS MiB (counts the mapped input file); anon: peak"
echo "# anonymous RSS MiB (cputime.py: /proc every 10 ms); waiting: most deferred samples held at once (perf stitch --stats)"

# reader_rows PEER FP CPU_GOAL RSS_GOAL FILE...: perf script and perf report
# --stdio of build/perf on each FILE against PEER on the same file, or,
# with FP=fp, on the frame-pointer recording FILE was made from
reader_rows() {
	local peer=$1 fp=$2 cpu_goal=$3 rss_goal=$4 f d in cmd
	local -a opts

	shift 4
	for f in "$@"; do
		d=$(describe "$f")
		in=$f
		[ "$fp" = fp ] && in=${f%.data}.fp.data
		for cmd in script report; do
			opts=()
			[ $cmd = report ] && opts=(--stdio)
			pair -- "$PERF" $cmd "${opts[@]}" -i "$f" -- "$peer" $cmd "${opts[@]}" -i "$in"
			printf '%s | ' "$d"
			columns "perf $cmd ${opts[*]}"
			goal cpu "$(ratio "$a_cpu" "$b_cpu")" "$cpu_goal"
			goal rss "$(ratio "$a_rss" "$b_rss")" "$rss_goal"
			if [ "$fp" = same ]; then
				case $f in */sleepers-*) goal cpu-blocked "$(ratio "$a_cpu" "$b_cpu")" 0.75 ;; esac
			fi
			echo
		done
	done
}

if [[ 1 =~ $ONLY ]]; then
	echo
	echo "## 1. ours (build/perf) / pristine perf 7.2 (build/perf-upstream)"
	echo "## goals: cpu <= 1.0x, RSS <= 1.1x everywhere; cpu <= 0.75x on the guest's many-blocked-tasks files"
	header ours 7.2
	reader_rows "$PERF_UPSTREAM" same 1.0 1.1 "${corpus[@]}" "${vm[@]}" "${gen[@]}"
fi

if [[ 2 =~ $ONLY ]]; then
	echo
	echo "## 2. build/perf on the deferred file / on the frame-pointer recording it was made from"
	echo "## goals: cpu <= 1.05x, RSS <= 1.2x"
	header deferred fp
	reader_rows "$PERF" fp 1.05 1.2 "${gen[@]}"
fi

if [[ 3 =~ $ONLY ]]; then
	echo
	echo "## 3. build/perf stitch -o / build/perf inject -o, same file"
	echo "## goal: cpu <= 1.0x"
	header stitch inject
	for f in "${vm[@]}" "${gen[@]}"; do
		pair -- "$PERF" stitch -q -f -i "$f" -o stitched.data -- \
			"$PERF" inject -f -i "$f" -o injected.data
		printf '%s | ' "$(describe "$f")"
		columns "stitch -o / inject -o"
		goal cpu "$(ratio "$a_cpu" "$b_cpu")" 1.0
		echo
		rm -f stitched.data injected.data
	done
fi

if [[ 4 =~ $ONLY ]]; then
	echo
	echo "## 4. build/perf stitch -F folded / build/perf script | stackcollapse-perf, same file"
	echo "## goals: at least 50x less cpu (ratio <= 0.02x); identical output (but for pid -1 stacks, misread by the script)"
	header stitch script
	for f in "${vm[@]}" "${gen[@]}"; do
		pair -- "$PERF" stitch -q -f -F folded -i "$f" -o stitched.folded -- \
			sh -c "'$PERF' script -i '$f' 2> /dev/null | $COLLAPSE > collapsed.folded"
		printf '%s | ' "$(describe "$f")"
		columns "-F folded / script+collapse"
		goal 50x "$(ratio "$a_cpu" "$b_cpu")" 0.02
		# as tests/perf/helpers/oracle-check.sh: the stacks of samples of no
		# task (pid -1, system-wide), whose header stackcollapse-perf.pl
		# misreads, left out
		if cmp -s <(grep -v '^:-1' stitched.folded | sort) \
			<(grep -v '^:-1' collapsed.folded | sort); then
			goal identical 0 0
		else
			goal identical 1 0
		fi
		echo
		rm -f stitched.folded collapsed.folded
	done
fi

echo
echo "goals met: $goals_met, missed: $goals_missed"
