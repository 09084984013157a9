#!/bin/bash
# The PCI backend's suite, inside the PCI VM (tests/vm/run-vm.sh with
# RBLN_VM_PCI=1: an IOMMU, two edu boards, QMP hotplug): sets the VM up as an
# NPU host with one simulated ATOM beside the boards, runs rbln_pci_tests
# (root: they unbind, remove and unplug; the round trips drop to an
# unprivileged rbln member themselves), then checks that rbln.ko lets the
# boards go and unloads cleanly (and, on the sanitizer kernel, that kmemleak
# suspects nothing).  GTEST_FILTER narrows.
set -u
[ "${RBLN_VM_PCI:-0}" = 1 ] || { echo "pci-suite: not a PCI VM (run it through run-vm.sh with RBLN_VM_PCI=1)"; exit 2; }
export RBLN_KO_PARAMS="sim_memory_mib=64"
export RBLN_SMI="${RBLN_BUILD:-$RBLN_TOP/build}/cmake/tools/rbln-smi/rbln-smi"
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/setup-node.sh"

echo "pci-suite: setting up the node ($RBLN_KO_PARAMS, a simulated ATOM as NPU 0)"
setup_node || { echo "pci-suite: FAILED: node setup"; exit 1; }
echo "0 atom 64" > /sys/bus/rbln_sim/new_device || { echo "pci-suite: FAILED: the simulated ATOM"; exit 1; }
udevadm settle --timeout=60
lspci -nn -k -d 1234:11e8

fail=0
echo "pci-suite: running rbln_pci_tests"
# shellcheck disable=SC2154 # build is setup-node.sh's
"$build/cmake/tests/integration/rbln_pci_tests" --gtest_color=no || fail=1

echo "pci-suite: unloading rbln.ko"
"$(dirname "$0")/rmmod-rbln.sh" || { echo "pci-suite: rmmod rbln failed"; fail=1; }
udevadm settle --timeout=60
leftover=$(ls /dev/rbln* 2>/dev/null)
[ -z "$leftover" ] || { echo "pci-suite: links left after unload: $leftover"; fail=1; }
# Both boards are still in the machine (a test that unplugged one plugged it back), unbound.
for port in $RBLN_VM_PCI_PORTS; do
	fn=
	for d in "/sys/bus/pci/devices/${port#*=}"/0000:??:??.?; do
		[ -e "$d/vendor" ] && fn=$d
	done
	if [ -z "$fn" ]; then
		echo "pci-suite: FAILED: no board in ${port#*=} (${port%%=*}) at the end"
		fail=1
	elif [ -e "$fn/driver" ]; then
		echo "pci-suite: FAILED: $fn still bound to $(basename "$(readlink "$fn/driver")") after rmmod"
		fail=1
	fi
done
# On the sanitizer kernel: nothing of the boards' bindings, jobs or removals leaked.
if [ -e /sys/kernel/debug/kmemleak ]; then
	"$(dirname "$0")/../debug-kernel/kmemleak-check.sh" || fail=1
fi
exit $fail
