#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-record.sh DIR PERF WORKLOAD SECONDS
#
# Runs IN the guest of 'make demo DEMO_KERNEL=vm' (tests/vm/run-vm.sh boots
# Debian's Linux 7.2, which defers user callchains, and runs this host
# script as root chrooted into the host's root): records WORKLOAD for
# SECONDS with 'PERF record --call-graph=deferred', natively.  perf writes
# to /run (a tmpfs: perf.data written straight to virtiofs fails with
# EFAULT) and the file is then copied to DIR/perf.data; then the same with
# 'PERF record --off-cpu' into DIR/offcpu.data.  Also written to DIR:
# record.log and offcpu-record.log (perf record's output), kallsyms (the guest's
# /proc/kallsyms: the kernel is booted with nokaslr, so its frames are named
# on the host with perf report/script --kallsyms=DIR/kallsyms) and
# osrelease.  DIR and WORKLOAD are on the host's disk (not /run: the
# guest's own); perf.data names WORKLOAD by that path, as on the host.
#
# Exit status: perf record's, or 1 when something else failed.
#
# bash, for its builtins: a process start costs 1-2 s in the guest (TCG).
set -u

# say MESSAGE: on the console, after the guest's uptime
say() {
	local up
	read -r up _ < /proc/uptime
	echo "guest-record: [${up}s] $*"
}

dir=${1:?usage: guest-record.sh DIR PERF WORKLOAD SECONDS} perf=${2:?} workload=${3:?}
seconds=${4:?}
run=/run/demo
say "started"

fstype=
while read -r _ mnt type _; do
	[ "$mnt" = /run ] && fstype=$type
done < /proc/mounts
[ "$fstype" = tmpfs ] || { say "/run is not a tmpfs ($fstype)"; exit 1; }
mkdir -p "$run" || exit 1
read -r kver < /proc/sys/kernel/osrelease
echo "$kver" > "$dir/osrelease" || exit 1
cp /proc/kallsyms "$dir/kallsyms" || exit 1

# record NAME LOG OPTIONS...: perf record OPTIONS of the workload into
# $run/NAME, copied to DIR/NAME; perf record's output in DIR/LOG
record() {
	local name=$1 log=$2 rc
	shift 2
	say "$perf record $* -o $run/$name -- $workload $seconds"
	"$perf" record "$@" -o "$run/$name" -- "$workload" "$seconds" > "$dir/$log" 2>&1
	rc=$?
	say "perf record exited $rc"
	if [ -s "$run/$name" ]; then
		cp "$run/$name" "$dir/$name" || return 1
		say "copied $name out"
	fi
	return $rc
}

say "Linux $kver"
record perf.data record.log --call-graph=deferred -N || exit
# off CPU: perf record --off-cpu (no BPF here: sched_switch with deferred
# callchains and switch events)
record offcpu.data offcpu-record.log --off-cpu -N
