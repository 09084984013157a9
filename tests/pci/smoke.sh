#!/bin/bash
# Inside a VM with -device edu (tests/vm/run-vm.sh): the PCI backend binds,
# /dev/rblnN appears, a round trip is byte-exact, the device's interrupt count
# grows, unbind/rebind works.  Exit 0 iff all of that held.
# Also rbln-smi's view, a forced DMAR fault, unbind with a job in flight.
# A developer's check, not a make test stage (the PCI suite is test_pci.cpp);
# it needs edu behind an IOMMU (RBLN_VM_PCI=1), and edu_smoke built first:
#   gcc -O2 -Wall -Wextra -I/usr/include/libdrm -Ikernel/include/uapi \
#       tests/pci/edu_smoke.c -o build/pci/edu_smoke
set -uo pipefail
top=${RBLN_TOP:?run through tests/vm/run-vm.sh}
# shellcheck source=../vm/setup-node.sh
. "$top/tests/vm/setup-node.sh"
RBLN_KO_PARAMS=${RBLN_KO_PARAMS:-sim_devices=atom}
build=${RBLN_BUILD:-$top/build}
smoke=${RBLN_EDU_SMOKE:-$build/pci/edu_smoke}
fail() { echo "pci-smoke: FAIL: $*"; exit 1; }
setup_node || fail "setup_node"
edu=$(for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x11e8 ] && basename "$d"; done | head -n 1)
[ -n "$edu" ] || fail "no edu device in this VM"
[ "$(basename "$(readlink "/sys/bus/pci/devices/$edu/driver")")" = rbln ] || fail "$edu is not bound to rbln"
idx=$(cat "/sys/bus/pci/devices/$edu/index")
echo "pci-smoke: $edu is rbln$idx: $(cat "/sys/bus/pci/devices/$edu/name")"
ls -l /dev/rbln* /dev/rbln/by-path/ 2>&1
[ -e "/dev/rbln$idx" ] || fail "/dev/rbln$idx missing"
irqs() { awk '/rbln/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n }' /proc/interrupts | head -n 1; }
before=$(irqs)
"$smoke" "/dev/rbln$idx" "${RBLN_SMOKE_ROUNDS:-3}" || fail "round trip"
after=$(irqs)
echo "pci-smoke: interrupts $before -> $after"
[ "${after:-0}" -gt "${before:-0}" ] || fail "the interrupt count did not grow"
grep rbln /proc/interrupts
smi=${RBLN_SMI:-$build/cmake/tools/rbln-smi/rbln-smi}
if [ -x "$smi" ]; then
	"$smi" -q || fail "rbln-smi -q"
	"$smi" -j -i "$idx" || fail "rbln-smi -j"
	"$smi" --json-format vendor -i "$idx" || fail "rbln-smi vendor JSON"
	"$smi" --query npu,name,pci.bus_id,pci.link_speed,pci.link_width || fail "rbln-smi --query"
fi
# The forced DMAR fault: the one job fails, the next round trip works.
dbg=/sys/kernel/debug/rbln/rbln$idx
echo "rbln-test: expect DMAR fault: begin" > /dev/kmsg
echo 1 > "$dbg/fault_next_transfer" || fail "fault_next_transfer"
if "$smoke" "/dev/rbln$idx" 1; then fail "the job with the faulting transfer succeeded"; fi
sleep 1
echo "rbln-test: expect DMAR fault: end" > /dev/kmsg
dmesg | grep -E "DMAR: \[DMA Read" | tail -n 2
"$smoke" "/dev/rbln$idx" 1 || fail "round trip after the fault"
echo "pci-smoke: transfers $(cat "$dbg/transfers"), timeouts $(cat "$dbg/transfer_timeouts")"
# Unbind with a job in flight: the job ends in error, rebind works.
"$smoke" "/dev/rbln$idx" 50 > /tmp/inflight.log 2>&1 &
victim=$!
sleep 2
echo "$edu" > /sys/bus/pci/drivers/rbln/unbind || fail "unbind"
wait $victim && fail "the round trips outlived the unbind"
tail -n 2 /tmp/inflight.log
udevadm settle --timeout=30
[ ! -e "/dev/rbln$idx" ] || fail "/dev/rbln$idx outlived unbind"
echo "$edu" > /sys/bus/pci/drivers/rbln/bind || fail "bind"
udevadm settle --timeout=30
idx=$(cat "/sys/bus/pci/devices/$edu/index")
"$smoke" "/dev/rbln$idx" 2 || fail "round trip after rebind"
echo "pci-smoke: PASS"
