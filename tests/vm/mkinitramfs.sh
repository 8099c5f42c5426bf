#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# mkinitramfs.sh OUT.cpio.gz
#
# A minimal initramfs for the VM: busybox-static as /bin/busybox and an /init
# that mounts the host's root (virtiofs), chroots into it and runs the guest
# command named on the kernel command line, then powers off.
#
# Kernel command line parameters read by /init:
#   vmtag=TAG     virtiofs tag of the host's root (default hostroot)
#   vmcmd=PATH    program to run in the chroot (a host path: the guest sees
#                 the host's root as its own)
#   vmargs=A,B,C  its arguments, separated by commas (no spaces possible)
#
# The command's exit status is printed on the console as a line
#   VMCMD-EXIT: N
# (run-vm.sh parses it); VMINIT-START is printed when /init starts and
# VMCMD-START once the share is mounted, so the host can tell a kernel that
# did not boot from a command that failed.
#
# busybox cpio writes the archive: Debian 12 has no separate cpio installed.
set -eu

out=${1:?usage: mkinitramfs.sh OUT.cpio.gz}
BUSYBOX=${BUSYBOX:-/bin/busybox}

[ -x "$BUSYBOX" ] || { echo "mkinitramfs: no $BUSYBOX (apt-get install busybox-static)" >&2; exit 77; }
if ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
	# file(1) may be missing; ldd says "not a dynamic executable"
	if ldd "$BUSYBOX" >/dev/null 2>&1; then
		echo "mkinitramfs: $BUSYBOX is not statically linked (apt-get install busybox-static)" >&2
		exit 77
	fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-initramfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/mnt"
cp "$BUSYBOX" "$root/bin/busybox"

cat > "$root/init" <<'INIT'
#!/bin/busybox sh
# /init of tests/vm/mkinitramfs.sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs devtmpfs /dev
# the archive has no /dev/console node (made without root): the kernel
# could not open one for us
exec < /dev/console > /dev/console 2>&1
echo "VMINIT-START"
mount -t proc proc /proc
mount -t sysfs sysfs /sys

halt() {
	echo "VMCMD-EXIT: $1"
	sync
	poweroff -f
	sleep 10
}

tag=hostroot cmd= args=
for w in $(cat /proc/cmdline); do
	case $w in
	vmtag=*) tag=${w#vmtag=} ;;
	vmcmd=*) cmd=${w#vmcmd=} ;;
	vmargs=*) args=${w#vmargs=} ;;
	esac
done
if [ -z "$cmd" ]; then
	echo "init: no vmcmd= on the kernel command line"
	halt 125
fi
if ! mount -t virtiofs "$tag" /mnt; then
	echo "init: cannot mount virtiofs tag $tag"
	halt 125
fi
for d in proc sys dev run tmp; do
	[ -d /mnt/$d ] || { echo "init: no /$d on the host's root"; halt 125; }
done
mount -t proc proc /mnt/proc
mount -t sysfs sysfs /mnt/sys
mount -t devtmpfs devtmpfs /mnt/dev
mkdir -p /mnt/dev/pts /mnt/dev/shm
mount -t devpts devpts /mnt/dev/pts
mount -t tmpfs shm /mnt/dev/shm
# perf writes its output here: straight to virtiofs it fails with EFAULT.
# /tmp stays the host's: a checkout there (CI's clone) must be seen whole.
mount -t tmpfs run /mnt/run
mount -t tracefs tracefs /mnt/sys/kernel/tracing 2>/dev/null || true
# anyone may profile anything; kernel addresses visible; and no lowering of
# the sampling rate because TCG makes perf's interrupts look slow
echo -1 > /proc/sys/kernel/perf_event_paranoid
echo 0 > /proc/sys/kernel/kptr_restrict
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

set -- $(echo "$args" | tr ',' ' ')
echo "VMCMD-START: $cmd $*"
chroot /mnt /usr/bin/env -i \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/tmp TERM=dumb LANG=C.UTF-8 \
	"$cmd" "$@" < /dev/console > /dev/console 2>&1
rc=$?
sync
for d in run dev/shm dev/pts dev sys/kernel/tracing sys proc; do
	umount /mnt/$d 2>/dev/null
done
umount /mnt 2>/dev/null
halt $rc
INIT
chmod 755 "$root/init"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: wrote $out ($(wc -c < "$out") bytes)" >&2
