#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# run-vm.sh CMD [ARG...]
#
# Boots the kernel in QEMU (TCG: KVM fails on these machines) with the host's
# root shared read-write over virtiofs, runs CMD (a host path) as root in the
# guest, chrooted into that share, and powers off.  The guest's console is
# shown and saved to $VM_DIR/console.log.  ARGs may not contain spaces or
# commas (they travel on the kernel command line).
#
# Exit status: CMD's own; 77 when the VM cannot boot (QEMU, virtiofsd or the
# kernel missing or failing, boot timeout; the reason is printed and written
# to $VM_DIR/skip-reason); 124 when CMD ran past VM_TIMEOUT and QEMU was
# killed; 1 when the guest died without reporting CMD's status.
#
# Variables: VM_DIR (build/vm), VMLINUZ ($VM_DIR/kernel/vmlinuz), INITRD
# ($VM_DIR/initramfs.cpio.gz), VM_SMP (4), VM_MEM (4G), VM_TIMEOUT (seconds
# for each boot, 900), VM_BOOT_TIMEOUT (seconds until CMD starts, 90; a boot
# takes 10-40 s), VM_BOOT_TRIES (boots when the kernel dies or hangs before
# CMD starts, or dies of the TCG int3 fault while it runs, 3),
# QEMU (qemu-system-x86_64), VIRTIOFSD (/usr/lib/qemu/virtiofsd),
# VM_APPEND (more kernel parameters), VM_QUIET=1 (console to the log only).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
VM_DIR=${VM_DIR:-$repo/build/vm}
VMLINUZ=${VMLINUZ:-$VM_DIR/kernel/vmlinuz}
INITRD=${INITRD:-$VM_DIR/initramfs.cpio.gz}
VM_SMP=${VM_SMP:-4}
VM_MEM=${VM_MEM:-4G}
VM_TIMEOUT=${VM_TIMEOUT:-900}
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-90}
VM_BOOT_TRIES=${VM_BOOT_TRIES:-3}
QEMU=${QEMU:-qemu-system-x86_64}
VIRTIOFSD=${VIRTIOFSD:-/usr/lib/qemu/virtiofsd}
VM_APPEND=${VM_APPEND:-}
VM_VIRTIOFS_CACHE=${VM_VIRTIOFS_CACHE:-none}
TAG=hostroot

[ $# -ge 1 ] || { echo "usage: run-vm.sh CMD [ARG...]" >&2; exit 2; }
cmd=$1; shift
args=""
for a in "$@"; do
	case $a in *[\ ,]*) echo "run-vm: argument '$a' has a space or comma" >&2; exit 2 ;; esac
	args=${args:+$args,}$a
done

mkdir -p "$VM_DIR"
log=$VM_DIR/console.log
rm -f "$VM_DIR/skip-reason"

qpid="" vpid="" tpid="" sock=""
# shellcheck disable=SC2317  # called by the traps
cleanup() {
	for p in $tpid $qpid $vpid; do kill "$p" 2>/dev/null; done
	[ -z "$sock" ] || rm -f "$sock" "$sock.pid"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cannot_boot() {
	echo "run-vm: cannot boot the VM: $*" >&2
	echo "$*" > "$VM_DIR/skip-reason"
	exit 77
}

command -v "$QEMU" >/dev/null 2>&1 || cannot_boot "no $QEMU (apt-get install qemu-system-x86)"
[ -x "$VIRTIOFSD" ] || cannot_boot "no $VIRTIOFSD (apt-get install qemu-system-common)"
[ -f "$VMLINUZ" ] || cannot_boot "no kernel $VMLINUZ (tests/vm/fetch-kernel.sh)"
[ -f "$INITRD" ] || cannot_boot "no initramfs $INITRD (tests/vm/mkinitramfs.sh)"
[ "$(id -u)" -eq 0 ] || cannot_boot "virtiofsd needs root to share / with the guest"
[ -e "$cmd" ] || { echo "run-vm: no $cmd" >&2; exit 2; }

# One boot: starts virtiofsd and QEMU, waits for QEMU to end or a timeout.
# Sets why (boot, run or empty), started (0/1), qrc.
boot_once() {
	# One virtiofsd per boot: it serves one guest and exits with it.  The
	# default namespace sandbox fails here ("pivot_root: Device or
	# resource busy"); sandbox=chroot works.
	sock=$VM_DIR/virtiofsd-$$.sock
	rm -f "$sock"
	"$VIRTIOFSD" --socket-path="$sock" -o source=/ -o cache="$VM_VIRTIOFS_CACHE" -o sandbox=chroot \
		> "$VM_DIR/virtiofsd.log" 2>&1 &
	vpid=$!
	i=0
	while [ ! -S "$sock" ]; do
		kill -0 "$vpid" 2>/dev/null ||
			cannot_boot "virtiofsd exited: $(tail -n 3 "$VM_DIR/virtiofsd.log" | tr '\n' ' ')"
		i=$((i + 1))
		[ $i -le 100 ] || cannot_boot "virtiofsd made no socket in 10 s"
		sleep 0.1
	done

	set -- "$QEMU" -accel tcg,thread=multi -cpu max -smp "$VM_SMP" -m "$VM_MEM" \
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$append" \
		-nographic -no-reboot -nic none \
		-chardev socket,id=vfs,path="$sock" \
		-device vhost-user-fs-pci,queue-size=1024,chardev=vfs,tag=$TAG \
		-object memory-backend-memfd,id=mem,size="$VM_MEM",share=on \
		-numa node,memdev=mem
	echo "run-vm: $*" > "$log"
	start=$(date +%s)
	"$@" < /dev/null >> "$log" 2>&1 &
	qpid=$!
	if [ "${VM_QUIET:-0}" != 1 ]; then
		tail -n +2 -f "$log" &
		tpid=$!
	fi

	started=0 why=""
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 1
		now=$(date +%s)
		if [ $started = 0 ] && grep -q 'VMCMD-START' "$log"; then
			started=1
		fi
		if [ $started = 0 ] && [ $((now - start)) -ge "$VM_BOOT_TIMEOUT" ]; then
			why=boot
			break
		fi
		if [ $((now - start)) -ge "$VM_TIMEOUT" ]; then
			why=run
			break
		fi
	done
	if [ -n "$why" ]; then
		kill "$qpid" 2>/dev/null
		sleep 1
		kill -9 "$qpid" 2>/dev/null
	fi
	wait "$qpid" 2>/dev/null
	qrc=$?
	qpid=""
	# virtiofsd exits with its guest
	i=0
	while kill -0 "$vpid" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
	kill "$vpid" 2>/dev/null
	wait "$vpid" 2>/dev/null
	vpid=""
	rm -f "$sock"
	sleep 0.3	# let tail print the last lines
	[ -z "$tpid" ] || { kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null; tpid=""; }
	elapsed=$(( $(date +%s) - start ))
	echo "run-vm: QEMU ran ${elapsed} s (console: $log)" >&2
}

# nokaslr: the kernel's addresses are the same in every boot, so the
# kallsyms that a later boot saves symbolize an earlier recording
# tsc=reliable: under TCG the clocksource watchdog, starved of CPU, may
# mark the TSC unstable in the middle of a run, and the static key then
# flipped (__sched_clock_stable) killed a CI run's guest with the int3
# fault below, in sched_clock_idle_wakeup_event; QEMU's TSC is the host's,
# the same on every vCPU, so nothing is lost by trusting it
append="console=ttyS0 loglevel=4 panic=-1 nokaslr tsc=reliable vmtag=$TAG vmcmd=$cmd${args:+ vmargs=$args}${VM_APPEND:+ $VM_APPEND}"
# The kernel sometimes dies under multi-threaded TCG with an "Oops: int3"
# in code being patched while another vCPU runs it (QEMU's, not the
# kernel's: text patching at boot, or static keys perf record flips), or
# hangs silently after decompressing itself (seen once in a CI run): boot
# again, up to VM_BOOT_TRIES times, when the command never started, or
# when that int3 killed the guest while it ran (the command runs again
# from the start: it must be one that can, as the recordings are).
try=1
while :; do
	boot_once
	if grep -q 'VMCMD-EXIT' "$log" || [ $try -ge "$VM_BOOT_TRIES" ]; then
		break
	fi
	if [ "$started" = 1 ]; then
		grep -q 'Oops: int3' "$log" || break
		what="died while $cmd ran ($(grep -a -m1 'Oops: int3' "$log" | tr -d '\r'), a multi-threaded TCG fault)"
	elif [ "$why" = boot ]; then
		what="hung while booting (no command after ${VM_BOOT_TIMEOUT} s)"
	elif grep -q 'Kernel panic\|Oops' "$log"; then
		what="died while booting ($(grep -a -m1 'Oops\|Kernel panic' "$log" | tr -d '\r'))"
	else
		break
	fi
	cp "$log" "$log.try$try"
	echo "run-vm: the kernel $what; boot again (saved $log.try$try)" >&2
	try=$((try + 1))
done

case $why in
boot) cannot_boot "the kernel did not start $cmd within VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT} s (see $log)" ;;
run)
	echo "run-vm: $cmd still running after VM_TIMEOUT=${VM_TIMEOUT} s: QEMU killed (see $log)" >&2
	exit 124 ;;
esac

rc=$(sed -n 's/.*VMCMD-EXIT: \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
if ! grep -q 'VMINIT-START' "$log"; then
	reason="QEMU exited ($qrc) before the guest's /init ran"
	grep -q 'Kernel panic' "$log" && reason="the kernel panicked before /init ran"
	cannot_boot "$reason: $(grep -v '^run-vm:' "$log" | tail -n 3 | tr -s '\r\n' '  ')"
fi
if [ "$rc" = 125 ] || { [ -z "$rc" ] && [ "$started" = 0 ]; }; then
	cannot_boot "the guest's /init failed: $(grep '^init:' "$log" | tail -n 1) (see $log)"
fi
if [ -z "$rc" ]; then
	echo "run-vm: the guest died while $cmd ran (no exit status; see $log)" >&2
	grep -q 'Kernel panic' "$log" && grep 'Kernel panic' "$log" | head -n 1 >&2
	exit 1
fi
echo "run-vm: $cmd exited $rc in the guest" >&2
exit "$rc"
