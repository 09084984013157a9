#!/bin/bash
# Fail (and print the lines) when a kernel log holds a warning, bug, oops,
# sanitizer or leak report, rbln's work queued on a workqueue the kernel
# deprecates (7.x names it), or is not the whole log of a run.  Taint from
# loading an out-of-tree, unsigned module is expected and not reported, nor
# are the checkers' start-up banners.
#
#   check-dmesg.sh LOG            the guest's snapshot (dmesg.txt): it must hold
#                                 the boot marker and the end marker that
#                                 tests/vm/guest-init.sh writes, and the end
#                                 marker must not say lockdep went off
#   check-dmesg.sh --serial LOG   the serial console (serial.log): only the
#                                 kernel's own lines are read (they carry printk
#                                 times; the job's output does not), so a report
#                                 printed after the snapshot is still seen
#
# RBLN_ALLOW_INJECTED_FAILURES=1 (the storm, which fails allocations on
# purpose): the page allocator's "page allocation failure" / "vmalloc error"
# report of a task named in RBLN_INJECTED_COMM (default rbln_storm, the only
# tasks the injection is filtered to) is expected, up to the end of its stack
# dump; and so is kmemleak scanning a whole object when its own bookkeeping
# allocation was the one failed.
#
# In the PCI VM (tests/vm/run-vm.sh, RBLN_VM_PCI=1) the IOMMU's DMA faults
# ("DMAR: [DMA Read ...", "DMAR: DRHD: handling fault") and interrupt storms
# ("irq N: nobody cared", "Disabling IRQ #N") fail a run too, except a DMA
# fault a test forces on purpose on one device: it declares the span and the
# device with the kernel log lines "rbln-test: expect DMAR fault: begin
# 0000:01:00.0" (the PCI function's full name) and "rbln-test: expect DMAR
# fault: end" (written to /dev/kmsg), and only that device's DMA fault lines
# inside it are expected ("Request device [01:00.0]" up to 6.x,
# "[0000:01:00.0]" on 7.x), with the "DRHD: handling fault" lines between
# them, which name no device (the IOMMU prints one before each batch of
# faults; a fault of another device still shows its own line, which fails).
# A span that names no device expects nothing.  Any other report there still
# fails.
set -u
serial=0
[ "${1:-}" = --serial ] && { serial=1; shift; }
log=${1:?usage: check-dmesg.sh [--serial] LOG}
headers='WARNING:|BUG:|Oops|work func [^ ]+ \[rbln\] enqueued on deprecated workqueue|general protection fault|Kernel panic|KASAN|UBSAN|kmemleak|refcount_t:|list_add corruption|list_del corruption|rbln.*leak|possible circular locking|INFO: task .* blocked|hung_task|stack-protector|double free|use-after-free|page allocation failure:|vmalloc error:'
dma_faults='DMAR: \[DMA (Read|Write)|DMAR: DRHD: handling fault'
headers+="|$dma_faults|DMAR: \\[INTR-REMAP|irq [0-9]+: nobody cared|Disabling IRQ #"
expect_begin='rbln-test: expect DMAR fault: begin'
expect_end='rbln-test: expect DMAR fault: end'
pattern="$headers|Call Trace:"
banners='ommand line:|kmemleak: Kernel memory leak detector initialized|RCU callback double-/use-after-free debug is enabled'
boot_marker='rbln-vm: boot '
end_marker='rbln-vm: end rc='

fail() { echo "check-dmesg: $log: $*" >&2; exit 1; }
[ -f "$log" ] || fail "missing: no kernel log, so no verdict"
[ -s "$log" ] || fail "empty: no kernel log, so no verdict"

# The kernel's lines: all of a snapshot, those with a printk time in a serial log.
kernel_lines() {
	if [ "$serial" = 1 ]; then
		grep -a -E '^\[ *[0-9]+\.[0-9]+\] ' "$log"
	else
		cat "$log"
	fi
}

# Drops each injected allocation failure's own report: its header line and
# what follows up to the end of its stack dump (</TASK>), at most 80 lines.
# Any other report's header inside that span ends the skip and is kept.
drop_injected() {
	if [ "${RBLN_ALLOW_INJECTED_FAILURES:-0}" = 1 ]; then
		# The regular expressions go through the environment: awk -v would
		# read their backslashes as string escapes.
		headers=$headers awk -v comm="${RBLN_INJECTED_COMM:-rbln_storm}" '
			BEGIN { headers = ENVIRON["headers"] }
			function injected_header(line) {
				return line ~ ("(^|] )" comm ": (page allocation failure:|vmalloc error:)")
			}
			skip && ($0 ~ headers) && !injected_header($0) { skip = 0 }
			skip { if (/<\/TASK>/ || ++n >= 80) skip = 0; next }
			injected_header($0) { skip = 1; n = 0; next }
			/kmemleak: Cannot allocate a scan area, scanning the full object/ { next }
			{ print }'
	else
		cat
	fi
}

if [ "$serial" = 0 ]; then
	grep -q -a "$boot_marker" "$log" || fail "no boot marker (\"$boot_marker\"): not a whole run's log"
	end=$(grep -a -m1 "$end_marker" "$log") || fail "no end marker (\"$end_marker\"): the log was cut short"
	case $end in
	*lockdep=off*)
		fail "lockdep turned itself off during the run (debug_locks: 0), so its checks did not run to the end" ;;
	esac
fi

# Reports from the kernel's own boot, before init ran (so before rbln.ko or
# any test could exist), are not failures of this project: the sanitizer
# kernel under TCG once reported a wild access in an interrupt taken during
# cpu_detect.  They are printed, not hidden; if one turned lockdep off, the end
# marker says so and the run fails above.
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
kernel_lines > "$lines"
boot=$(grep -a -n -m1 -E "Run /(s?bin/)?init as init process|$boot_marker" "$lines" | cut -d: -f1)
early=$([ -z "$boot" ] || head -n "$boot" "$lines" | grep -a -E -n "$pattern" | grep -E -v "$banners" | head -5)
if [ -n "$early" ]; then
	echo "check-dmesg: note: reports from the kernel's boot, before init (not counted):" >&2
	echo "  ${early//$'\n'/$'\n'  }" >&2	# indented: not a report line of this run's
fi
# Drops the declared device's DMA faults inside a span a test declared (see above).
drop_expected() {
	faults=$dma_faults awk -v begin="$expect_begin" -v end="$expect_end" '
		BEGIN { faults = ENVIRON["faults"] }
		function of_device(line) {
			return index(line, "Request device [" dev "]") || index(line, "Request device [" bus "]")
		}
		index($0, begin) {
			dev = ""
			rest = substr($0, index($0, begin) + length(begin))
			if (match(rest, /^ [0-9a-f][0-9a-f][0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]\.[0-7]/))
				dev = substr(rest, RSTART + 1, RLENGTH - 1)
			bus = substr(dev, 6)	# without the domain, as up to 6.x print it
			expecting = dev != ""
			next
		}
		index($0, end) { expecting = 0; next }
		expecting && /DMAR: DRHD: handling fault/ { next }
		expecting && $0 ~ faults && of_device($0) { next }
		{ print }'
}

if tail -n +"${boot:-1}" "$lines" | drop_injected | drop_expected | grep -a -E -n "$pattern" | grep -E -v "$banners"; then
	exit 1
fi
exit 0
