#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offcpu-bpf.sh: perf's BPF --off-cpu (pristine 7.2 built with BPF
# skeletons, build/perf-upstream-bpf) beside the deferred one (build/perf)
# in the Linux 7.2 guest, the same `perf record --off-cpu` command line,
# on tests/workloads/offcpu.c and server.c (guest-record.sh's offcpu-bpf
# set), then the comparison (offcpu-bpf.py): time off CPU by function
# against each workload's own clock, the server's throughput recorded
# and not, file size per second, the user stack depth each keeps, and
# what each shows of a thread blocked past the end of an attached
# recording.  Into OUT (default build/vm/offcpu-bpf): rec/ (the
# recordings), the scripts and folded stacks read from them, table.md,
# offcpu-bpf.png.  Exit status 77 when the VM cannot boot.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
OUT=${OUT:-$repo/build/vm/offcpu-bpf}
PERF=${PERF:-$repo/build/perf}
BPF_PERF=${BPF_PERF:-$repo/build/perf-upstream-bpf}

die() { echo "offcpu-bpf: $*" >&2; exit 1; }
[ -x "$BPF_PERF" ] || die "no $BPF_PERF (make perf-upstream-bpf)"
[ -x "$PERF" ] || die "no $PERF (make perf)"
mkdir -p "$OUT" || die "cannot create $OUT"

VM_SET=offcpu-bpf VM_REC=$OUT/rec VM_DIR=$repo/build/vm "$here/vm-record.sh"
rc=$?
[ $rc -eq 0 ] || exit $rc

# the workloads, run from /mnt/clone in the guest, by build id
printf '[buildid]\n\tdir = %s\n' "$OUT/rec/buildid" > "$OUT/perfconfig"
export PERF_CONFIG=$OUT/perfconfig
for w in offcpu server attach; do
	# as perf shows it, and the addresses as written with the mappings
	"$BPF_PERF" script --no-inline -F tid,period,event,ip,sym,dso -i "$OUT/rec/$w-bpf.data" \
		> "$OUT/$w-bpf.script" 2> "$OUT/$w-bpf.script.err" ||
		die "perf script of $w-bpf.data failed: $(tail -3 "$OUT/$w-bpf.script.err")"
	"$BPF_PERF" script --no-inline --show-mmap-events -F tid,period,event,ip \
		-i "$OUT/rec/$w-bpf.data" > "$OUT/$w-bpf.raw" 2>> "$OUT/$w-bpf.script.err" ||
		die "perf script of $w-bpf.data failed: $(tail -3 "$OUT/$w-bpf.script.err")"
	"$PERF" script --no-inline -F tid,event,ip,sym,dso -i "$OUT/rec/$w-deferred.data" \
		> "$OUT/$w-deferred.script" 2> "$OUT/$w-deferred.script.err" ||
		die "perf script of $w-deferred.data failed: $(tail -3 "$OUT/$w-deferred.script.err")"
	"$PERF" stitch -f -F folded --count=off-cpu -i "$OUT/rec/$w-deferred.data" \
		-o "$OUT/$w-deferred.folded" 2> "$OUT/$w-deferred.folded.err" ||
		die "perf stitch of $w-deferred.data failed: $(tail -3 "$OUT/$w-deferred.folded.err")"
done
/usr/bin/python3 "$here/offcpu-bpf.py" "$OUT"
