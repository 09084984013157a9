#!/bin/bash
# The kernel-log verdict (tests/vm/check-dmesg.sh) on logs made to fail it:
# every case that must fail does, and a clean log passes.  Each case prints
# "ok" or "FAIL"; the status is 0 iff every case came out as it must.
set -u
check=$(cd "$(dirname "$0")/../vm" && pwd)/check-dmesg.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck source=tests/unit/verdict-cases.sh
. "$(dirname "$0")/verdict-cases.sh"

boot='[    1.000000] Run /init as init process
[    2.000000] rbln-vm: boot 6.12.0-test'
end='[   90.000000] rbln-vm: end rc=0 lockdep=on'
stack='[   10.100000] CPU: 1 UID: 0 PID: 321 Comm: rbln_storm Not tainted
[   10.100001] Call Trace:
[   10.100002]  <TASK>
[   10.100003]  dump_stack_lvl+0x5d/0x80
[   10.100004]  warn_alloc+0x164/0x190
[   10.100005]  </TASK>'

expect() {	# pass|fail, name, [--serial]; the log on stdin
	local want=$1 name=$2
	shift 2
	cat > "$dir/log"
	judge "$want" "$name" "$check" "$@" "$dir/log"
}

expect pass "a clean log" < <(printf '%s\n%s\n' "$boot" "$end")
judge fail "a missing log" "$check" "$dir/absent"
expect fail "an empty log" < /dev/null
expect fail "a log cut short (no end marker)" < <(printf '%s\n' "$boot")
expect fail "a log without the boot marker" < <(printf '%s\n' "$end")
expect fail "lockdep off at the end" < <(printf '%s\n[   90.000000] rbln-vm: end rc=0 lockdep=off\n' "$boot")
expect fail "rbln's work on a deprecated workqueue (7.x)" < <(printf '%s\n[   53.657223] workqueue: work func rbln_sim_engine_work [rbln] enqueued on deprecated workqueue. Use system_{percpu|dfl}_wq instead.\n%s\n' "$boot" "$end")
expect pass "another module's work on a deprecated workqueue" < <(printf '%s\n[   53.657223] workqueue: work func other_work [other] enqueued on deprecated workqueue. Use system_{percpu|dfl}_wq instead.\n%s\n' "$boot" "$end")
expect fail "a WARN" < <(printf '%s\n[   50.000000] WARNING: CPU: 0 PID: 1 at rbln_job.c:10\n%s\n' "$boot" "$end")
expect pass "a report from the kernel's boot, before init" < <(printf '[    0.500000] BUG: KASAN: wild-memory-access in cpu_detect\n%s\n%s\n' "$boot" "$end")

# The serial console: job output is not read, kernel lines are, and no markers are needed.
expect fail "a late report on the serial console" --serial < <(printf '%s\n[ RUN      ] Suite.UseAfterFreeIsRefused\n[   95.000000] BUG: unable to handle page fault\n' "$boot")
expect pass "job output on the serial console" --serial < <(printf '%s\n[ RUN      ] Suite.WARNING: in a test name\nsuite: KASAN is on\n' "$boot")

# Injected allocation failures (the storm).
export RBLN_ALLOW_INJECTED_FAILURES=1
expect pass "an injected allocation failure's report" < <(printf '%s\n[   10.000000] rbln_storm: page allocation failure: order:0, mode:0xcc0\n%s\n%s\n' \
	"$boot" "$stack" "$end")
expect fail "an allocation failure of a task the storm does not inject into" < <(printf '%s\n[   10.000000] kworker/0:1: page allocation failure: order:0, mode:0xcc0\n%s\n%s\n' \
	"$boot" "$stack" "$end")
expect fail "a KASAN report inside an allocation-failure report" < <(printf '%s\n[   10.000000] rbln_storm: page allocation failure: order:0\n[   10.050000] BUG: KASAN: slab-use-after-free in rbln_bo_free\n%s\n%s\n' \
	"$boot" "$stack" "$end")
expect fail "a WARN after an allocation-failure report without </TASK>" < <(printf '%s\n[   10.000000] rbln_storm: page allocation failure: order:0\n[   10.100001] Call Trace:\n%s\n' \
	"$boot" "$(for i in $(seq 100); do echo "[   11.0] frame$i+0x1/0x2"; done)
[   12.000000] WARNING: CPU: 1 PID: 9 at rbln_sched.c:1
$end")
expect fail "a stack dump after the injected report's end" < <(printf '%s\n[   10.000000] rbln_storm: page allocation failure: order:0\n%s\n[   12.000000] Call Trace:\n%s\n' \
	"$boot" "$stack" "$end")
unset RBLN_ALLOW_INJECTED_FAILURES
expect fail "an allocation failure where none is injected" < <(printf '%s\n[   10.000000] rbln_storm: page allocation failure: order:0\n%s\n%s\n' \
	"$boot" "$stack" "$end")

# The PCI VM: IOMMU faults and interrupt storms, and the one fault a test declares.
fault6_12='[   40.000000] DMAR: DRHD: handling fault status reg 2
[   40.000001] DMAR: [DMA Write NO_PASID] Request device [01:00.0] fault addr 0xffe00000 [fault reason 0x05] PTE Write access is not set'
fault6_1='[   40.000000] DMAR: DRHD: handling fault status reg 3
[   40.000001] DMAR: [DMA Read] Request device [02:00.0] PASID ffffffff fault addr fff00000 [fault reason 0x06] PTE Read access is not set'
begin='[   39.000000] rbln-test: expect DMAR fault: begin 0000:01:00.0'
begin2='[   39.000000] rbln-test: expect DMAR fault: begin 0000:02:00.0'
fault7='[   40.000000] DMAR: DRHD: handling fault status reg 2
[   40.000001] DMAR: [DMA Read NO_PASID] Request device [0000:01:00.0] fault addr 0x0 [fault reason 0x06] PTE Read access is not set'
over='[   41.000000] rbln-test: expect DMAR fault: end'
expect fail "a DMA fault (6.12's words)" < <(printf '%s\n%s\n%s\n' "$boot" "$fault6_12" "$end")
expect fail "a DMA fault (6.1's words)" < <(printf '%s\n%s\n%s\n' "$boot" "$fault6_1" "$end")
expect fail "a DMA fault on the serial console" --serial < <(printf '%s\n%s\n' "$boot" "$fault6_12")
expect fail "an interrupt-remapping fault" < <(printf '%s\n[   40.0] DMAR: [INTR-REMAP] Request device [01:00.0] fault index 0x3 [fault reason 0x25] Blocked a compatibility format interrupt request\n%s\n' "$boot" "$end")
expect fail "an interrupt storm" < <(printf '%s\n[   40.0] irq 11: nobody cared (try booting with the "irqpoll" option)\n[   40.1] Disabling IRQ #11\n%s\n' "$boot" "$end")
expect fail "a disabled interrupt alone" < <(printf '%s\n[   40.1] Disabling IRQ #24\n%s\n' "$boot" "$end")
expect pass "a DMA fault a test declared" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$begin" "$fault6_12" "$over" "$end")
expect pass "a declared DMA fault on the serial console" --serial < <(printf '%s\n%s\n%s\n%s\n' "$boot" "$begin2" "$fault6_1" "$over")
expect pass "a declared DMA fault (7.x's words, with the domain)" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$begin" "$fault7" "$over" "$end")
expect fail "another device's DMA fault inside the declared span" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$begin" "$fault6_1" "$over" "$end")
expect fail "another device's DMA fault (7.x's words) inside the span" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$begin2" "$fault7" "$over" "$end")
expect fail "a DMA fault inside a span that names no device" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "${begin% 0000:01:00.0}" "$fault6_12" "$over" "$end")
expect fail "a DMA fault after the declared span" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$begin" "$over" "$fault6_12" "$end")
expect fail "a DMA fault before the declared span" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$fault6_12" "$begin" "$over" "$end")
expect fail "a WARN inside the declared span" < <(printf '%s\n%s\n%s\n[   40.5] WARNING: CPU: 0 PID: 1 at rbln_pci.c:10\n%s\n%s\n' "$boot" "$begin" "$fault6_12" "$over" "$end")
expect fail "an interrupt storm inside the declared span" < <(printf '%s\n%s\n[   40.1] Disabling IRQ #24\n%s\n%s\n' "$boot" "$begin" "$over" "$end")
RBLN_ALLOW_INJECTED_FAILURES=1 expect fail "a DMA fault with injected failures allowed" < <(printf '%s\n%s\n%s\n' "$boot" "$fault6_12" "$end")
RBLN_ALLOW_INJECTED_FAILURES=1 expect pass "a declared DMA fault with injected failures allowed" < <(printf '%s\n%s\n%s\n%s\n%s\n' "$boot" "$begin" "$fault6_12" "$over" "$end")

judged check-dmesg
