#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# vm-record.sh: what `make vm-record` runs once build/perf and the workloads
# (build/vm/bin) are built: gets the 7.2 kernel (fetch-kernel.sh), makes the
# initramfs (mkinitramfs.sh), boots the VM (run-vm.sh) and records the
# workloads in it (guest-record.sh) into $VM_DIR/rec.  Step timings go to
# $VM_DIR/TIMINGS.  VM_SET=bench records guest-record.sh's bench set
# instead, VM_REC=DIR into DIR.
#
# Exit 77 when the VM cannot boot (no kernel, no QEMU, the kernel dies): the
# reason is in $VM_DIR/skip-reason.  Other failures: 1.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
VM_DIR=${VM_DIR:-$repo/build/vm}
export VM_DIR BUILD="${BUILD:-$repo/build}"
REC=${VM_REC:-$VM_DIR/rec}
VM_SET=${VM_SET:-check}
PERF=$repo/build/perf

mkdir -p "$VM_DIR"
rm -f "$VM_DIR/skip-reason"
skip() {
	echo "vm-record: cannot boot the VM: $*" >&2
	echo "$*" > "$VM_DIR/skip-reason"
	exit 77
}
[ -x "$PERF" ] || { echo "vm-record: no $PERF (make perf)" >&2; exit 1; }

t0=$(date +%s)
step_start=$t0
: > "$VM_DIR/TIMINGS"
step() {
	now=$(date +%s)
	printf '%-12s %4d s\n' "$1" $((now - step_start)) >> "$VM_DIR/TIMINGS"
	step_start=$now
}

"$here/fetch-kernel.sh" > "$VM_DIR/.vmlinuz-path"
rc=$?
case $rc in
0) ;;
77) skip "$(cat "$VM_DIR/skip-reason" 2>/dev/null || echo "no kernel (see the messages above)")" ;;
*) exit 1 ;;
esac
VMLINUZ=$(tail -n 1 "$VM_DIR/.vmlinuz-path")
export VMLINUZ
step fetch-kernel

INITRD=$VM_DIR/initramfs.cpio.gz
export INITRD
if [ ! -f "$INITRD" ] || [ -n "$(find "$here/mkinitramfs.sh" -newer "$INITRD")" ]; then
	"$here/mkinitramfs.sh" "$INITRD"
	rc=$?
	[ $rc -eq 0 ] || { [ $rc -eq 77 ] && skip "no initramfs: busybox-static missing"; exit 1; }
fi
step initramfs

rm -rf "$REC"	# here: removing files over virtiofs is slow in the guest
echo "vm-record: booting $(basename "$(readlink -f "$VMLINUZ")") in QEMU (TCG, ${VM_SMP:-4} vCPUs); recording into $REC" >&2
"$here/run-vm.sh" "$here/guest-record.sh" "$REC" "$VM_SET"
rc=$?
step vm
printf '%-12s %4d s\n' total $(( $(date +%s) - t0 )) >> "$VM_DIR/TIMINGS"
echo "vm-record: timings:" >&2
sed 's/^/vm-record:   /' "$VM_DIR/TIMINGS" >&2
case $rc in
0)	echo "perf: $("$PERF" version)" >> "$REC/guest-info.txt"
	# the guest ran the workloads from /mnt/clone, which the host has
	# not: the host's perf finds them by build id, in REC/buildid
	"$here/../corpus/buildid-cache.sh" "$REC/buildid" "$repo"/build/vm/bin/* > "$REC/buildid.txt" ||
		exit 1
	echo "vm-record: recordings in $REC (MANIFEST, COUNTS)" >&2 ;;
77) exit 77 ;;	# run-vm.sh wrote skip-reason
*) echo "vm-record: the guest's recording failed ($rc); see $VM_DIR/console.log and $REC/logs" >&2
   exit 1 ;;
esac
