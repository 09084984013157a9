#!/bin/bash
# The storm, inside a VM on the sanitizer kernel (make stress, make test):
# sets the node up, runs rbln_storm for STRESS_SECONDS (default 300), which
# fails on a client or memory left behind, too little work done or a broken
# request accepted, then checks what must hold after it: every device can be
# removed, the module unloads, and kmemleak suspects nothing.  STORM_ARGS:
# more rbln_storm options.  KASAN, lockdep, UBSAN and debugobjects reports
# are caught from the kernel log by run-vm.sh.
# In a PCI VM (run-vm.sh with RBLN_VM_PCI=1: QEMU's edu boards behind an
# IOMMU, on a stock kernel) both boards must be NPUs before the storm, whose
# workers then use them too (small jobs, rbln_storm's DeviceLimits); the
# allocation-failure injection and kmemleak are the sanitizer kernel's.
set -u
export RBLN_KO_PARAMS="sim_devices=atom,rebel100 sim_memory_mib=64"
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/../vm/setup-node.sh"
here=$(cd "$(dirname "$0")" && pwd)

echo "storm: setting up the node ($RBLN_KO_PARAMS)"
setup_node || { echo "storm: FAILED: node setup"; exit 1; }
# Hung engines time out quickly, so the storm sees many resets (a PCI NPU's
# jobs keep the longer timeout its backend asks for).
echo 200 > /sys/module/rbln/parameters/job_timeout_ms
if [ "${RBLN_VM_PCI:-0}" = 1 ]; then
	boards=0
	for port in $RBLN_VM_PCI_PORTS; do
		for fn in "/sys/bus/pci/devices/${port#*=}"/0000:??:??.?; do
			[ -e "$fn/driver" ] && [ "$(basename "$(readlink "$fn/driver")")" = rbln ] && boards=$((boards + 1))
		done
	done
	want=$(wc -w <<< "$RBLN_VM_PCI_PORTS")
	[ "$boards" = "$want" ] || { echo "storm: FAILED: $boards of the $want edu boards are rbln NPUs"; exit 1; }
	echo "storm: with $boards PCI NPUs (edu) beside the simulated ones"
fi

rc=0
# shellcheck disable=SC2086,SC2154 # STORM_ARGS are words; build is setup-node.sh's
"$build/cmake/tests/stress/rbln_storm" --seconds "${STRESS_SECONDS:-300}" --json /run/vm/storm.json \
	${STORM_ARGS:-} || rc=1

for dev in /sys/bus/rbln_sim/devices/rbln_sim*; do
	[ -e "$dev" ] || continue
	id=${dev##*rbln_sim}
	echo "$id" > /sys/bus/rbln_sim/del_device || { echo "storm: FAILED: device $id cannot be removed"; rc=1; }
done
udevadm settle --timeout=60
"$here/../vm/rmmod-rbln.sh" || { echo "storm: FAILED: rmmod rbln"; rc=1; }
leaks="no leaks suspected"
if [ "${RBLN_VM_PCI:-0}" != 1 ] || [ -e /sys/kernel/debug/kmemleak ]; then
	"$here/../debug-kernel/kmemleak-check.sh" || rc=1
else
	leaks="no kmemleak in this kernel"
fi
[ "$rc" = 0 ] && echo "storm: devices removed, module unloaded, $leaks"
exit "$rc"
