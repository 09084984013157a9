#!/bin/bash
# Boot one of Debian's stock kernels under qemu (TCG) on the host's root file
# system and run a command inside; exit with the command's status.  The serial
# log, the command's output and the kernel log are saved in the output dir,
# and the kernel log is checked for WARN/BUG/Oops/KASAN/leak reports.
#
#   run-vm.sh [-o OUTDIR] [-i] VER COMMAND...
#     VER      kernel ABI name (see kernel-cache.sh list)
#     -o DIR   where to keep logs (default build/vm/VER)
#     -i       interactive: the command gets the terminal (make shell)
#
# RBLN_VM_MEM (MiB, default 2048), RBLN_VM_CPUS (default 2), RBLN_VM_TIMEOUT
# (seconds, default 1800), RBLN_VM_QEMU_ARGS (more qemu arguments, split at
# spaces, e.g. a second NUMA node), RBLN_VM_PCI=1 (the PCI machine below).
#
# The PCI machine: an Intel IOMMU (VT-d, interrupt remapping on) that the guest
# kernel turns on (intel_iommu=on, strict: an unmap takes effect at once), so
# every DMA is translated, and two of QEMU's `edu` devices (1234:11e8), edu0
# and edu1, each in its own hotpluggable pcie-root-port (rp0 at 00:10.0, rp1
# at 00:11.0).  QEMU's monitor (QMP) listens on a host socket that
# tests/vm/qmp-hotplug.py serves: the guest asks it to unplug or replug a
# device through files in the results share (/run/vm/hotplug, see there).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
outdir= interactive=0
while getopts "o:i" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	i) interactive=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: run-vm.sh [-o OUTDIR] [-i] VER COMMAND..." >&2; exit 2; }
ver=$1; shift
outdir=${outdir:-$top/build/vm/$ver}

# Emptied first: a run that stops before its VM leaves no earlier run's logs.
rm -rf "$outdir"
mkdir -p "$outdir"
kdir=$("$here/kernel-cache.sh" prepare "$ver")
command -v qemu-system-x86_64 >/dev/null || { echo "run-vm: qemu-system-x86_64 missing (make deps)" >&2; exit 2; }

{
	printf 'RBLN_VM_KERNEL_DIR=%q\n' "$kdir"
	printf 'RBLN_VM_KVER=%q\n' "$ver"
	printf 'RBLN_VM_CWD=%q\n' "$PWD"
	printf 'RBLN_VM_INTERACTIVE=%q\n' "$interactive"
	printf 'RBLN_TOP=%q\n' "$top"
	printf 'RBLN_VM_OUT=%q\n' "$(cd "$outdir" && pwd)"	# the host's path of /run/vm
	printf 'export RBLN_VM_KVER RBLN_TOP RBLN_VM_OUT\n'
} > "$outdir/env"
{
	echo "#!/bin/bash"
	printf '%q ' "$@"
	echo
} > "$outdir/job.sh"

# The first oops, hung task or soft lockup ends the VM (panic=-1 with
# -no-reboot powers it off), so a crash fails the run in seconds with the
# report in serial.log instead of hanging until RBLN_VM_TIMEOUT.
panic_switches="panic=-1 oops=panic softlockup_panic=1 hung_task_panic=1"
panic_switches+=" sysctl.kernel.hung_task_timeout_secs=${RBLN_VM_HUNG_TASK_SECS:-120}"
panic_switches+=" sysctl.kernel.panic_on_rcu_stall=1"
# KASAN reports only its first bug per boot unless told otherwise: a report
# from the boot itself (one under TCG, before init) would hide every later one.
case $ver in *-rbln-debug) panic_switches+=" kasan_multi_shot" ;; esac

# The IOMMU comes before the devices it translates for (QEMU wants it first).
# kernel-irqchip=split is what interrupt remapping needs under KVM; TCG has no
# in-kernel irqchip and takes the option as it is.
machine=q35 pci_args=() pci_cmdline= qmp_dir=
if [ "${RBLN_VM_PCI:-0}" = 1 ]; then
	qmp_dir=$(mktemp -d /tmp/rbln-qmp.XXXXXX)	# short: a socket path has 108 bytes
	mkdir -p "$outdir/hotplug"
	machine+=,kernel-irqchip=split
	pci_args=(-device intel-iommu,intremap=on
		-device pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=1,addr=10.0
		-device edu,id=edu0,bus=rp0
		-device pcie-root-port,id=rp1,bus=pcie.0,chassis=2,slot=2,addr=11.0
		-device edu,id=edu1,bus=rp1
		-qmp "unix:$qmp_dir/qmp.sock,server=on,wait=off")
	# no_timer_check: with interrupts remapped, the early check that the
	# IO-APIC timer ticks failed a TCG boot beside another VM ("timer doesn't
	# work through Interrupt-remapped IO-APIC", a panic) on a loaded host.
	pci_cmdline=" intel_iommu=on iommu.strict=1 no_timer_check"
	printf 'RBLN_VM_PCI=1\nRBLN_VM_PCI_PORTS=%q\nexport RBLN_VM_PCI RBLN_VM_PCI_PORTS\n' \
		"edu0=0000:00:10.0 edu1=0000:00:11.0" >> "$outdir/env"
fi
# The CPU is QEMU's "max" without ERMS.  ERMS tells the kernel that "rep
# movsb" is its fastest copy, so copy_from_user of 64 bytes or more, clear_page
# and (on 6.1) memcpy use it; TCG (QEMU 7.2) runs that one byte per
# iteration: 5 ns a byte in the guest against 0.5 for the "rep movsq" the
# kernel uses without it.  With ERMS every struct an ioctl copies in cost more
# than the system call, and every page zeroed 17 us: costs no real CPU with
# ERMS has, which no figure of make bench should carry (its ratios would then
# measure QEMU's string emulation, not the driver).  And without LA57: with
# 5-level paging the sanitizer kernel (KASAN) hung in its first interrupts,
# reporting "wild-memory-access" at direct-map addresses (ff11...), on a fresh
# CI machine every boot; 4-level paging is what its KASAN shadow was laid for.
vm_cpu=max,erms=off,la57=off
# One TCG thread for all vCPUs: with thread=multi a vCPU can run a stale
# translation of code the kernel is live-patching (text_poke_bp's int3), which
# crashed a CI boot with "Oops: int3" before the module was even loaded.  The
# guest still has several CPUs, so the driver's locking is exercised.
qemu=(qemu-system-x86_64 -machine "$machine" -cpu "$vm_cpu" -accel tcg,thread=single
	-m "${RBLN_VM_MEM:-2048}" -smp "${RBLN_VM_CPUS:-2}"
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initramfs.cpio.gz"
	-append "console=ttyS0 loglevel=5 printk.time=1 log_buf_len=8M $panic_switches rbln_init=$here/guest-init.sh$pci_cmdline"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$outdir,mount_tag=vmout,security_model=none"
	-nic none -display none -no-reboot -monitor none -serial stdio "${pci_args[@]}")
read -ra extra <<<"${RBLN_VM_QEMU_ARGS:-}"
qemu+=("${extra[@]}")

# The hotplug server connects to each boot's QEMU in turn; it ends with this script.
server_pid=
if [ -n "$qmp_dir" ]; then
	"$here/qmp-hotplug.py" "$qmp_dir/qmp.sock" "$outdir/hotplug" >"$outdir/qmp.log" 2>&1 &
	server_pid=$!
fi
trap '[ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null; [ -z "$qmp_dir" ] || rm -rf "$qmp_dir"' EXIT

if [ "$interactive" = 1 ]; then
	"${qemu[@]}"
	exit 0
fi

# A boot whose lockdep a report before init turned off runs no job
# (guest-init.sh writes rc "reboot"): it is booted again, up to three times.
for boot in 1 2 3; do
	timeout --foreground "${RBLN_VM_TIMEOUT:-1800}" "${qemu[@]}" </dev/null 2>&1 |
		tr -d '\r' | tee "$outdir/serial.log"
	[ "$(cat "$outdir/rc" 2>/dev/null)" = reboot ] || break
	mv "$outdir/serial.log" "$outdir/serial.boot$boot.log"
	mv "$outdir/dmesg.txt" "$outdir/dmesg.boot$boot.txt"
	rm -f "$outdir/rc"
	echo "run-vm: $ver: lockdep was off after boot $boot (a report before init: $outdir/dmesg.boot$boot.txt); booting again" >&2
done

# The verdict: the job's status, the guest's kernel log snapshot (which must
# be whole: check-dmesg.sh wants its boot and end markers), and the serial
# console's kernel lines, which also hold what was printed after the snapshot
# or by a VM that died.  What it says is kept in verdict.txt too, for the
# summary of tests/run-all.sh.
say() { "$@" 2>&1 | tee -a "$outdir/verdict.txt" >&2; return "${PIPESTATUS[0]}"; }
rc=0
if [ -f "$outdir/rc" ]; then
	rc=$(cat "$outdir/rc")
elif [ -f "$outdir/serial.boot3.log" ]; then
	say echo "run-vm: $ver: lockdep was off after each of three boots: no verdict"
	rc=1
else
	say echo "run-vm: $ver: the VM stopped without a result (crash or timeout); see $outdir/serial.log"
	rc=1
fi
if ! say "$here/check-dmesg.sh" "$outdir/dmesg.txt"; then
	say echo "run-vm: $ver: kernel log snapshot has problems (above); full log: $outdir/dmesg.txt"
	[ "$rc" = 0 ] && rc=1
fi
if ! say "$here/check-dmesg.sh" --serial "$outdir/serial.log"; then
	say echo "run-vm: $ver: serial console has kernel reports (above); full log: $outdir/serial.log"
	[ "$rc" = 0 ] && rc=1
fi
exit "$rc"
