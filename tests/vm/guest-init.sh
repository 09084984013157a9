#!/bin/bash
# PID 1 of the test VM.  The root file system is the host's own, read-only over
# virtio-9p; everything written goes to tmpfs, to overlays on /etc, /tmp and
# /var/tmp, or to the results share mounted at /run/vm.  Runs /run/vm/job.sh, then
# records its exit status and the kernel log there and powers off.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TERM=${TERM:-vt100}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run

mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

mkdir -p /run/vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 vmout /run/vm
# shellcheck source=/dev/null
. /run/vm/env

# Writable directories that leave the host's untouched but keep its files
# visible: an overlay with its upper layer in tmpfs.
overlay() {
	local dir=$1 upper=/dev/shm/overlay$1
	mkdir -p "$upper/upper" "$upper/work"
	mount -t overlay overlay -o "lowerdir=$dir,upperdir=$upper/upper,workdir=$upper/work" "$dir"
}

# This kernel's modules, from the cache, where modprobe looks for them.  A
# host without /usr/lib/modules (a container's root) gets one in an overlay of
# /usr/lib, with overlayfs loaded by path (where it is a module) since modprobe
# has no modules to look in yet.
modules=$RBLN_VM_KERNEL_DIR/root/lib/modules
if [ ! -d /usr/lib/modules ]; then
	grep -qw overlay /proc/filesystems ||
		insmod "$(find "$modules/$(uname -r)/kernel/fs/overlayfs" -name 'overlay.ko*' | head -n 1)"
	overlay /usr/lib
	mkdir /usr/lib/modules
fi
mount --bind "$modules" /usr/lib/modules

# Writable /etc (groups, udev rules), /tmp and /var/tmp: the checkout under
# test may live there.
modprobe overlay
for dir in /etc /tmp /var/tmp; do
	overlay "$dir"
done
hostname rbln-vm

exec </dev/console >/dev/console 2>&1
# The run's first and last lines in the kernel log itself: check-dmesg.sh
# gives no verdict on a log without both (never written, or cut short).
# Warning level, so the serial console shows them too.
echo "<4>rbln-vm: boot $(uname -r)" > /dev/kmsg

# Records the result and the kernel log in /run/vm, and powers off.
finish() {
	dmesg > /run/vm/dmesg.txt
	echo "$1" > /run/vm/rc
	sync
	# A moment for late reports (delayed work after the last rmmod, RCU
	# callbacks): they reach only the serial console now, which run-vm.sh scans
	# as well as the snapshot.  The 9p root is still there, and so is sleep.
	sleep 2
	umount /run/vm
	echo o > /proc/sysrq-trigger
	# Wait for the power-off with builtins only: the 9p root (and /bin/sleep) may be
	# gone already, and init must not exit meanwhile (that panics the kernel).
	while :; do read -r -t 10 _ </dev/console; done 2>/dev/null
}

# A debug kernel whose lockdep is off already (a report from its own boot,
# before init: printed, not counted) cannot give this run lockdep's verdict:
# no job, and run-vm.sh boots again.
if [ -r /proc/lockdep_stats ] && ! grep -q -E 'debug_locks:[[:space:]]+1$' /proc/lockdep_stats; then
	echo "<4>rbln-vm: lockdep is off after the boot: no job on this boot" > /dev/kmsg
	finish reboot
fi
echo "rbln-vm: $(uname -r) up in $(cut -d' ' -f1 /proc/uptime)s"
cd "${RBLN_VM_CWD:-/}"
if [ "${RBLN_VM_INTERACTIVE:-0}" = 1 ]; then
	# The console becomes the job's controlling terminal (job control, ^C).
	setsid -c -w bash /run/vm/job.sh
	rc=$?
else
	bash /run/vm/job.sh 2>&1 | tee /run/vm/job.log
	rc=${PIPESTATUS[0]}
fi

# A debug kernel's lockdep must still be on at the end: a report turns it
# off for good, and its checks would silently stop (check-dmesg.sh fails
# lockdep=off).
lockdep=absent
if [ -r /proc/lockdep_stats ]; then
	case $(grep -m1 'debug_locks:' /proc/lockdep_stats) in
	*[[:space:]]1) lockdep=on ;;
	*) lockdep=off ;;
	esac
fi
echo "<4>rbln-vm: end rc=$rc lockdep=$lockdep" > /dev/kmsg
finish "$rc"
