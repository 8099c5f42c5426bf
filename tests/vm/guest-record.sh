#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# guest-record.sh [OUTDIR [SET]]
#
# Runs IN the guest (tests/vm/run-vm.sh, as root, chrooted into the host's
# root): records the workloads of build/vm/bin with build/perf and
# --call-graph=deferred / fp,defer, which the 7.2 kernel honours natively.
# perf writes to /run (a tmpfs: written straight to virtiofs perf.data
# fails with EFAULT); each file is then copied into OUTDIR (default
# build/vm/rec; the host empties it before the boot), with the perf logs,
# the guest's /proc/kallsyms, guest-info.txt and
#   MANIFEST  one line per recording, tab-separated: file name, the perf
#             command line, the workload command line (paths as in the
#             guest: the checkout is /mnt/clone there)
#   COUNTS    file name, samples, CALLCHAIN_DEFERRED records, seconds
# Each recording must hold CALLCHAIN_DEFERRED records (perf report --stats
# in the guest); the status is 0 when all do, 1 otherwise.  The check set
# ends with perf top --call-graph=deferred live (top_check_set): --stdio
# runs, the TUI in tmux and an ASan run, in OUT/top/ and listed in
# OUT/TOPS, each beside a recording of the same workload
# (tests/vm/check-top.py compares them).  SET: check (default), bench
# (make bench's), top (only the perf top runs), threads (only the perf
# record --threads directories).
#
# bash, for its builtins: starting a process costs 1-2 s in the guest
# (TCG on a shared 2-core host), so the script starts few.
set -u

here=${0%/*}
repo=${here%/tests/vm}
OUT=${1:-$repo/build/vm/rec}
SET=${2:-check}
PERF=$repo/build/perf
BIN=$repo/build/vm/bin
W=$repo/tests/workloads
TMP=/run/vm-rec

t_start=$EPOCHREALTIME
# seconds since t (EPOCHREALTIME values), one decimal
since() {
	local a=${1/./} b=${EPOCHREALTIME/./}
	local d=$(( (b - a) / 100000 ))
	printf '%d.%d' $((d / 10)) $((d % 10))
}
say() { echo "guest-record: [$(since "$t_start")s] $*"; }

[ -x "$PERF" ] || { say "no $PERF"; exit 1; }
for w in threads blocker forker execloop sleepers offcpu server; do
	[ -x "$BIN/$w" ] || { say "no $BIN/$w (make vm-record builds it)"; exit 1; }
done
# perf cannot write its data to virtiofs (EFAULT): /run must be the tmpfs
# that the initramfs mounted
fstype=
while read -r _ mnt type _; do
	[ "$mnt" = /run ] && fstype=$type
done < /proc/mounts
[ "$fstype" = tmpfs ] || { say "/run is not a tmpfs ($fstype)"; exit 1; }

# A recording names the programs it profiled by their paths: made here it
# would name this checkout, which a clone elsewhere has not (tests/corpus/
# commits recordings).  The guest mounts the checkout at /mnt/clone, a
# mount of its own over the host's /mnt, and runs everything from there;
# the workloads are built as if there (-fdebug-prefix-map) and copied into
# a tmpfs over their directory, because the kernel puts a program's build
# id into PERF_RECORD_MMAP2 only when the file is in the page cache, and
# virtiofs without a cache keeps nothing there.  perf on the host finds
# them by build id (vm-record.sh makes the cache).
CLONE=/mnt/clone
if [ "$repo" != "$CLONE" ]; then
	mount -t tmpfs vm-clone /mnt && mkdir "$CLONE" && mount --bind "$repo" "$CLONE" &&
		mount -t tmpfs vm-bin "$CLONE/build/vm/bin" && cp -p "$BIN"/* "$CLONE/build/vm/bin/" ||
		{ say "cannot mount $repo at $CLONE"; exit 1; }
	repo=$CLONE
	here=$repo/tests/vm
	PERF=$repo/build/perf
	BIN=$repo/build/vm/bin
	W=$repo/tests/workloads
fi

mkdir -p "$TMP" "$OUT/logs" || exit 1
cd "$TMP" || exit 1
read -r kver < /proc/sys/kernel/osrelease
read -r paranoid < /proc/sys/kernel/perf_event_paranoid
ncpu=0
while read -r k _; do [ "$k" = processor ] && ncpu=$((ncpu + 1)); done < /proc/cpuinfo
say "kernel $kver, $ncpu CPUs, perf_event_paranoid $paranoid"
{
	echo "kernel: $kver"
	echo "version: $(< /proc/version)"
	echo "cpus: $ncpu"
	echo "cmdline: $(< /proc/cmdline)"
	printf 'date: %(%Y-%m-%d %H:%M:%S UTC)T\n' -1
} > "$OUT/guest-info.txt"
cp /proc/kallsyms "$OUT/kallsyms"
# Every perf session on a task turns the kernel's perf_sched_events static
# key on and, once closed, off again: code patching that multi-threaded
# TCG sometimes gets wrong (an Oops on an int3 left in __schedule, seen in
# 2 of 4 boots running the perf top set).  One counter bound to a task for
# the whole run keeps the key on.
"$PERF" stat -e task-clock -o /dev/null -- sleep 100000 > /dev/null 2>&1 &
keeper=$!
say "setup done"

fail=0
printf '# file\tperf command line\tworkload command line\n' > "$OUT/MANIFEST"
printf '# file\tsamples\tCALLCHAIN_DEFERRED\tseconds (record)\n' > "$OUT/COUNTS"

# the arguments as one shell-quoted line
quote() {
	local out="" a
	for a in "$@"; do
		case $a in
		*[!A-Za-z0-9_./=,:+@%-]*|"") a="'${a//\'/\'\\\'\'}'" ;;
		esac
		out=${out:+$out }$a
	done
	printf '%s' "$out"
}

# record NAME "PERF OPTIONS" WORKLOAD...
# PERF OPTIONS are split by the shell (no quoting inside); "-o -" writes a
# pipe stream, redirected into the file.  REC_PERF: another perf than
# build/perf, whose recordings need not defer (REC_DEFERRED=0).
record() {
	local name=$1 popts=$2 pcmd rc t0 t1 samples=0 deferred=0 k e n rest
	local PERF=${REC_PERF:-$PERF}
	shift 2
	t0=$EPOCHREALTIME
	case " $popts " in
	*" -o - "*)
		# shellcheck disable=SC2086
		"$PERF" record $popts -- "$@" > "$TMP/$name" 2> "$OUT/logs/$name.record.log"
		rc=$?
		pcmd="record $popts -- $(quote "$@") > $name" ;;
	*)
		# shellcheck disable=SC2086
		"$PERF" record $popts -o "$TMP/$name" -- "$@" > "$OUT/logs/$name.workload.log" 2> "$OUT/logs/$name.record.log"
		rc=$?
		pcmd="record $popts -o $name -- $(quote "$@")" ;;
	esac
	t1=$(since "$t0")
	if [ $rc -ne 0 ] || [ ! -s "$TMP/$name" ]; then
		say "FAIL $name: perf record exited $rc"
		cat "$OUT/logs/$name.record.log"
		fail=1
		return
	fi
	"$PERF" report --stats -i "$TMP/$name" > "$OUT/logs/$name.stats" 2>&1
	# the aggregated counts, before the per-event sections
	while read -r k e n rest; do
		[ "$e" = stats: ] && [ "$k" != Aggregated ] && break
		[ "$e" = events: ] || continue
		case $k in
		SAMPLE) samples=$n ;;
		CALLCHAIN_DEFERRED) deferred=$n ;;
		esac
	done < "$OUT/logs/$name.stats"
	cp -r "$TMP/$name" "$OUT/" || fail=1
	printf '%s\t%s\t%s\n' "$name" "$PERF $pcmd" "$(quote "$@")" >> "$OUT/MANIFEST"
	printf '%s\t%s\t%s\t%s\n' "$name" "$samples" "$deferred" "$t1" >> "$OUT/COUNTS"
	if [ "$deferred" -gt 0 ] || { [ "${REC_DEFERRED:-1}" = 0 ] && [ "$samples" -gt 0 ]; }; then
		say "ok   $name: $samples samples, $deferred CALLCHAIN_DEFERRED records (recorded in $t1 s)"
	else
		say "FAIL $name: $samples samples but no CALLCHAIN_DEFERRED records"
		grep -i 'defer' "$OUT/logs/$name.record.log"
		fail=1
	fi
	rm -rf "$TMP/$name"
}

# screens_with_samples FILE: how many of perf top's screens in FILE counted
# samples (a header of "PerfTop:  N irqs/sec" with N > 0)
screens_with_samples() {
	grep -Ec 'PerfTop: +[1-9]' "$1" 2> /dev/null
}

# top_rss PID FILE WORKLOAD-PID SECONDS SCREENS: while timeout PID runs
# perf top, its resident memory every 2 s in FILE ("seconds KiB" lines);
# perf top gets SIGINT (through timeout) SECONDS after its first screen
# with samples in SCREENS, or a screen interval after the workload ended,
# whichever comes first: perf top takes 10-25 s to start in TCG, and the
# seconds before it shows the workload are not the ones measured.  The
# status of timeout
top_rss() {
	local tpid=$1 file=$2 wpid=$3 secs=$4 screens=$5 t0=$EPOCHREALTIME
	local first='' ended='' stop='' ppid k v
	: > "$file"
	while kill -0 "$tpid" 2> /dev/null; do
		read -r -t 2 -u 7
		if [ -z "$first" ] && [ "$(screens_with_samples "$screens")" -gt 0 ]; then
			first=$SECONDS
			say "top  ${screens##*/}: first screen with samples after $(since "$t0")s"
		fi
		[ -z "$ended" ] && ! kill -0 "$wpid" 2> /dev/null && ended=$SECONDS
		if [ -z "$stop" ] && { { [ -n "$first" ] && [ $((SECONDS - first)) -ge "$secs" ]; } ||
				{ [ -n "$ended" ] && [ $((SECONDS - ended)) -ge 4 ]; }; }; then
			stop=$SECONDS
			kill -INT "$tpid"
		fi
		ppid=
		read -r ppid _ 2> /dev/null < "/proc/$tpid/task/$tpid/children"
		[ -n "$ppid" ] || continue
		while read -r k v _; do
			[ "$k" = VmRSS: ] && echo "$(since "$t0") $v" >> "$file"
		done 2> /dev/null < "/proc/$ppid/status"
	done
	wait "$tpid"
}

# start_workload NAME WORKLOAD...: in the background, its output in
# OUT/top/NAME.workload.log, its pid in $pid once it has exec'd (or 5 s)
# and half a second more to start its threads
start_workload() {
	local name=$1 n
	shift
	"$@" > "$OUT/top/$name.workload.log" 2>&1 &
	pid=$!
	for n in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(readlink "/proc/$pid/exe")" != "$(readlink /proc/$$/exe)" ] && break
		read -r -t 0.5 -u 7
	done
	read -r -t 0.5 -u 7
}

# top_live NAME PERF SECONDS "TOP OPTIONS" WORKLOAD...: perf top --stdio
# (PERF: build/perf or build/perf-asan) on the workload's process and its
# children, stopped by SIGINT as a user stops it SECONDS after its first
# screen with samples or once the workload has ended (top_rss; at most 3
# x SECONDS in all); its screens in OUT/top/NAME.top, its stderr in
# OUT/top/NAME.err, a line in OUT/TOPS (name, perf top command line,
# workload command line, perf top's exit status: 0 when it stopped at the
# signal), its resident memory every 2 s in OUT/top/NAME.rss.  perf top
# attaches once the workload has exec'd, half a second later; a workload
# still running when perf top stops is killed.  Its stdin is a FIFO open
# for reading and writing (fd 7), silent and never at its end (at the end
# of its input --stdio's key loop spins); the environment sizes its
# screens.
top_live() {
	local name=$1 perf=$2 secs=$3 topts=$4 pid rc t0=$SECONDS
	shift 4
	start_workload "$name" "$@"
	# shellcheck disable=SC2086
	COLUMNS=300 LINES=400 timeout --preserve-status -s INT $((3 * secs)) \
		"$perf" top --stdio $topts -p "$pid" <&7 \
		> "$OUT/top/$name.top" 2> "$OUT/top/$name.err" &
	top_rss "$!" "$OUT/top/$name.rss" "$pid" "$secs" "$OUT/top/$name.top"
	rc=$?
	kill "$pid" 2> /dev/null
	wait "$pid"
	printf '%s\t%s\t%s\t%s\n' "$name" "$perf top --stdio $topts -p PID" "$(quote "$@")" "$rc" \
		>> "$OUT/TOPS"
	say "top  $name: perf top exited $rc after $((SECONDS - t0))s," \
		"$(screens_with_samples "$OUT/top/$name.top") screens with samples"
}

# top_tui NAME SECONDS WORKLOAD...: perf top's TUI with deferred
# callchains in a tmux of 200x50 on the workload, which must run until it
# is killed.  Once a pane shows the histogram (perf top takes 10-25 s to
# start in TCG; at most SECONDS) the callchains are expanded ('E') and the
# pane captured as text a second apart, into OUT/top/NAME.tui.1, .2, ...;
# then the workload is killed and the panes that follow go into
# OUT/top/NAME.gone.1, ...: the samples it left waiting must leave.  No
# -z: with it every refresh starts from new, folded entries, and 'E'
# unfolds only the screen it is pressed on.  Each capture costs 1-2 s in
# the guest.  tmux's socket in /run: one on virtiofs does not work
TUI_PANES=10
TUI_GONE_PANES=5
TUI_EXPAND_TRIES=10
# a histogram line of an unfolded entry, as tests/vm/check-top.py's EXPANDED
TUI_EXPANDED=$'\n''-'' +[0-9]+\.[0-9]+%'' +[0-9]+\.[0-9]+%'' '
top_tui() {
	local name=$1 secs=$2 pid i pane tmux=(tmux -S "$TMP/tmux.sock")
	shift 2
	start_workload "$name" "$@"
	TERM=xterm-256color "${tmux[@]}" new-session -d -x 200 -y 50 \
		"$PERF top --call-graph=deferred,callee $TOP_OPTS -p $pid 2> $OUT/top/$name.err"
	for ((i = 0; i < secs; i++)); do
		read -r -t 1 -u 7
		pane=$("${tmux[@]}" capture-pane -p)
		[[ $pane =~ [0-9]+\.[0-9]+%\ +[0-9]+\.[0-9]+%\ + ]] && break
	done
	say "top  $name: histogram drawn after ${i}s, expanding it"
	# 'E' (expand all) is idempotent: sent again until a pane shows an
	# entry unfolded, for a key can be taken by a popup or a refresh
	for ((i = 1; i <= TUI_EXPAND_TRIES; i++)); do
		"${tmux[@]}" send-keys E
		read -r -t 1 -u 7
		pane=$("${tmux[@]}" capture-pane -p)
		[[ $pane =~ $TUI_EXPANDED ]] && break
	done
	if [[ $pane =~ $TUI_EXPANDED ]]; then
		say "top  $name: callchains expanded after $i 'E'"
	else
		say "top  $name: FAIL no pane expanded after $TUI_EXPAND_TRIES 'E', the last:"
		printf '%s\n' "$pane"
	fi
	for ((i = 1; i <= TUI_PANES; i++)); do
		read -r -t 1 -u 7
		"${tmux[@]}" capture-pane -p > "$OUT/top/$name.tui.$i"
	done
	kill "$pid"
	wait "$pid"
	for ((i = 1; i <= TUI_GONE_PANES; i++)); do
		read -r -t 1 -u 7
		"${tmux[@]}" capture-pane -p > "$OUT/top/$name.gone.$i"
	done
	"${tmux[@]}" send-keys q
	read -r -t 1 -u 7
	"${tmux[@]}" kill-server 2> /dev/null
	printf '%s\t%s\t%s\t%s\n' "$name" "$PERF top --call-graph=deferred,callee $TOP_OPTS -p PID (TUI)" \
		"$(quote "$@")" tui >> "$OUT/TOPS"
	say "top  $name: TUI captured ($TUI_PANES panes expanded, $TUI_GONE_PANES once the workload was killed)"
}

# top_system NAME PERF SECONDS "TOP OPTIONS" WORKLOAD...: perf top
# --stdio -a; once it has drawn its first screen (at most SECONDS) the
# workload runs, and a screen interval after it ends perf top gets
# SIGINT; the rest as top_live
top_system() {
	local name=$1 perf=$2 secs=$3 topts=$4 pid rc t0=$SECONDS i
	shift 4
	# shellcheck disable=SC2086
	COLUMNS=300 LINES=400 timeout --preserve-status -s INT $((3 * secs)) \
		"$perf" top --stdio $topts -a <&7 > "$OUT/top/$name.top" 2> "$OUT/top/$name.err" &
	pid=$!
	for ((i = 0; i < secs; i++)); do
		grep -q 'PerfTop:' "$OUT/top/$name.top" && break
		read -r -t 1 -u 7
	done
	say "top  $name: first screen after $((SECONDS - t0))s, the workload starts"
	"$@" > "$OUT/top/$name.workload.log" 2>&1
	read -r -t 4 -u 7
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	printf '%s\t%s\t%s\t%s\n' "$name" "$perf top --stdio $topts -a" "$(quote "$@")" "$rc" \
		>> "$OUT/TOPS"
	say "top  $name: perf top exited $rc after $((SECONDS - t0))s"
}

# perf top --call-graph=deferred, live, on the workloads of the check set;
# tests/vm/check-top.sh compares each with perf report of the recording
# named after it (perf record of the same workload with the same
# options), and the ASan run with no report at all
top_check_set() {
	# perf top takes 10-25 s to start in the guest (TCG): /proc/kallsyms,
	# the threads of the system, the symbols; a SIGINT before it has
	# started kills it.  SECONDS count from its first screen with samples,
	# the threads run until killed (top_live)
	# -z: each screen the samples of its own interval, as perf report's
	# percentages (without it perf top decays every entry on its own); the
	# workloads niced and a modest rate so that perf top keeps up in TCG
	local s=45 t=600 o="-F 250 -d 3 -z --proc-map-timeout 10000"

	mkdir -p "$OUT/top"
	mkfifo "$TMP/top.stdin" && exec 7<> "$TMP/top.stdin" || { fail=1; return; }
	printf '# name\tperf top command line\tworkload command line\texit status\n' > "$OUT/TOPS"
	top_live top-threads "$PERF" $s "--call-graph=deferred,callee $o -E 400" \
		nice -n 19 "$BIN/threads" 2 $t
	record top-threads.data "--call-graph=deferred -F 250" "$BIN/threads" 2 8
	top_live top-fp-threads "$PERF" $s "--call-graph=fp,callee $o -E 400" \
		nice -n 19 "$BIN/threads" 2 $t
	top_live top-fpdefer-blocker "$PERF" $s "--call-graph=fp,defer,callee $o -E 400" \
		nice -n 19 "$BIN/blocker" 11
	record top-fpdefer-blocker.data "--call-graph=fp,defer -F 250" "$BIN/blocker" 2
	# killed once its panes are captured
	TOP_OPTS="-F 250 -d 3 --proc-map-timeout 10000" \
		top_tui top-tui 60 nice -n 19 "$BIN/threads" 2 600
	# fork/exit and exec churn under ASan and UBSan: every report is an error
	if [ -x "$repo/build/perf-asan" ]; then
		ASAN_OPTIONS=abort_on_error=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1 \
			top_system top-asan-churn "$repo/build/perf-asan" 60 \
			"--call-graph=deferred $o" sh "$W/mix.sh" "$BIN" 20
	else
		say "no $repo/build/perf-asan: no ASan run of perf top"
	fi
	exec 7<&-
	rm -f "$TMP/top.stdin"
}

record_check_set() {
	# 16 threads: system calls and compute, both callchain spellings
	record threads-deferred.data "--call-graph=deferred --sample-cpu -N -F 1000" \
		"$BIN/threads" 16 2
	record threads-2ev-fpdefer.data "--call-graph=fp,defer -e cpu-clock -e task-clock --sample-cpu -N -F 500" \
		"$BIN/threads" 16 1.5
	# threads blocked in the kernel for seconds; a context-switch sample each
	# time one blocks, taken in the kernel, its user stack deferred to the return
	record blocker-cs.data "--call-graph=deferred --sample-cpu -N -e cpu-clock/freq=1000/ -e context-switches/period=1/" \
		"$BIN/blocker" 1
	# fork/exit churn, fixed period
	record forker-c.data "--call-graph=deferred --sample-cpu -N -e cpu-clock -c 500000" \
		"$BIN/forker" 2 4
	# execve (about 0.4 s of guest CPU each under TCG): a self-exec'ing chain
	# that also runs /bin/true in a child each time
	record execloop.data "--call-graph=fp,defer --sample-cpu -N -F 1000" \
		"$BIN/execloop" 6
	# system-wide on every CPU, the mix running
	record sysw.data "-a --call-graph=deferred -N -F 400" \
		sh "$W/mix.sh" "$BIN" 2
	# compressed (PERF_RECORD_COMPRESSED); no --sample-cpu: the sample type
	# upstream perf's fp,defer uses (IP|TID|TIME|CALLCHAIN|PERIOD)
	record threads-z.data "-z --call-graph=deferred -N -F 1000" \
		"$BIN/threads" 8 1.5
	# off-CPU analysis, where deferral matters most: every context switch of
	# the system with its stack (perf sched timehist -g reads it)
	record offcpu-sched.data "-a -e sched:sched_switch --call-graph=fp,defer -N" \
		"$BIN/blocker" 0.5
	# off-CPU time by function against the workload's own clock: perf record
	# --off-cpu without BPF (sched_switch with deferred callchains and switch
	# events) per task, task-clock beside it (--count=wall), and plain
	# sched_switch system-wide (perf sched timehist reads it too); its I/O
	# on virtiofs
	record_offcpu_task
	record offcpu-sysw.data "-a -e sched:sched_switch --call-graph=deferred -N" \
		"$BIN/offcpu" 1 "$repo/build/vm"
	# one event defers by its own term, the other samples without callchains
	record perevent.data "-e cpu-clock/call-graph=deferred/ -e task-clock --sample-cpu -N -F 500" \
		"$BIN/threads" 8 1
	# per task, a tracepoint beside cpu-clock, both deferring: the
	# tracepoint's raw data and format on top of the callchains
	record tp-task.data "--call-graph=deferred -e raw_syscalls:sys_enter -e cpu-clock --sample-cpu -N -F 500" \
		"$BIN/threads" 4 1
	# pipe output saved to a file
	record blocker-pipe.data "-o - --call-graph=fp,defer --sample-cpu -N -F 1000" \
		"$BIN/blocker" 0.75
	record_threads_dir
	top_check_set
}

# perf record --threads: a directory, one data file per reader thread (per
# CPU by default), a sample and its record often in different files; the
# check set makes the first (the corpus has both)
record_threads_dir() {
	record threads-dir.data "--threads --call-graph=deferred --sample-cpu -N -F 1000" \
		"$BIN/threads" 8 1
}

record_offcpu_task() {
	record offcpu-task.data "--off-cpu --call-graph=deferred -e task-clock -c 100000 --sample-cpu -N" \
		"$BIN/offcpu" 2 "$repo/build/vm"
}

record_threads_set() {
	record_threads_dir
	record blocker-dir.data "--threads=numa -a --call-graph=fp,defer -N -F 500 -e cpu-clock -e context-switches/period=1/" \
		"$BIN/blocker" 0.5
}

# make bench: what upstream's merge walks (every waiting sample for every
# record), the system-wide recording of issue 22 at three lengths: 300
# tasks blocked 1.5-3 s at a time beside two busy ones, a cpu-clock sample
# at 1000 Hz on every CPU and one at every context switch
record_bench_set() {
	local s

	for s in 5 10 20; do
		record "sleepers-$s.data" \
			"-a --call-graph fp,defer -N -e cpu-clock -F 1000 -e context-switches/period=1/" \
			"$BIN/sleepers" "$s" 300
	done
}

# issue 49: perf's BPF --off-cpu (pristine 7.2 built with BPF skeletons,
# build/perf-upstream-bpf) beside the deferred one (build/perf, no BPF),
# the same command line, on the off-CPU workload and on a server's
# threads (server.c: rings of workers blocking briefly and often, 40
# frames deep), each also run alone (the workload's clock and throughput
# unrecorded); then each perf attached for 1.5 s to a server whose
# block_long() thread blocks from inside that recording to past its end.
# tests/vm/offcpu-bpf.sh compares them.
record_offcpu_bpf_set() {
	local side perf pid

	if [ -r /sys/kernel/btf/vmlinux ]; then
		say "BTF: /sys/kernel/btf/vmlinux, $(wc -c < /sys/kernel/btf/vmlinux) bytes"
	else
		say "BTF: none (/sys/kernel/btf/vmlinux missing): BPF --off-cpu cannot load"
	fi
	"$BIN/offcpu" 2 "$repo/build/vm" > "$OUT/logs/offcpu-none.workload.log"
	"$BIN/server" 3 16 40 > "$OUT/logs/server-none.workload.log"
	for side in bpf deferred; do
		perf=$PERF
		[ $side = bpf ] && perf=$repo/build/perf-upstream-bpf
		REC_PERF=$perf REC_DEFERRED=$([ $side = bpf ] && echo 0 || echo 1) \
			record "offcpu-$side.data" "--off-cpu" "$BIN/offcpu" 2 "$repo/build/vm"
		REC_PERF=$perf REC_DEFERRED=$([ $side = bpf ] && echo 0 || echo 1) \
			record "server-$side.data" "--off-cpu" "$BIN/server" 3 16 40
		# until SIGINT; its long thread blocks once the recording's
		# command tells it to, from inside the recording to past its end
		"$BIN/server" 0 16 40 > "$OUT/logs/attach-$side.server.log" &
		pid=$!
		REC_PERF=$perf REC_DEFERRED=$([ $side = bpf ] && echo 0 || echo 1) \
			record "attach-$side.data" "--off-cpu -p $pid" sh -c "kill -USR1 $pid; sleep 1.5"
		kill -INT $pid
		wait $pid
	done
}

case $SET in
check) record_check_set ;;
offcpu-bpf) record_offcpu_bpf_set ;;
bench) record_bench_set ;;
top) top_check_set ;;
threads) record_threads_set ;;
offcpu) record_offcpu_task ;;
*) say "unknown set '$SET' (check, bench, top, threads, offcpu, offcpu-bpf)"; exit 1 ;;
esac

kill "$keeper" 2> /dev/null
if [ $fail -eq 0 ]; then
	say "PASS"
else
	say "FAILED"
fi
exit $fail
