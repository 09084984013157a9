#!/bin/bash
# Inside a VM with -device edu (tests/vm/run-vm.sh): the PCI backend binds,
# /dev/rblnN appears, a round trip is byte-exact, the device's interrupt count
# grows, unbind/rebind works.  Exit 0 iff all of that held.
set -uo pipefail
top=${RBLN_TOP:?run through tests/vm/run-vm.sh}
# shellcheck source=../vm/setup-node.sh
. "$top/tests/vm/setup-node.sh"
RBLN_KO_PARAMS=${RBLN_KO_PARAMS:-sim_devices=atom}
smoke=${RBLN_EDU_SMOKE:-$top/build/pci/edu_smoke}
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
echo "$edu" > /sys/bus/pci/drivers/rbln/unbind || fail "unbind"
[ ! -e "/dev/rbln$idx" ] || { udevadm settle; [ ! -e "/dev/rbln$idx" ] || fail "/dev/rbln$idx outlived unbind"; }
echo "$edu" > /sys/bus/pci/drivers/rbln/bind || fail "bind"
udevadm settle --timeout=30
idx=$(cat "/sys/bus/pci/devices/$edu/index")
"$smoke" "/dev/rbln$idx" 1 || fail "round trip after rebind"
echo "pci-smoke: PASS"
