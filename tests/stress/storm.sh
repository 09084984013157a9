#!/bin/bash
# The storm, inside a VM on the sanitizer kernel (make stress, make test):
# sets the node up, runs rbln_storm for STRESS_SECONDS (default 300), which
# fails on a client or memory left behind, too little work done or a broken
# request accepted, then checks what must hold after it: every device can be
# removed, the module unloads, and kmemleak suspects nothing.  STORM_ARGS:
# more rbln_storm options.  KASAN, lockdep, UBSAN and debugobjects reports
# are caught from the kernel log by run-vm.sh.
set -u
export RBLN_KO_PARAMS="sim_devices=atom,rebel100 sim_memory_mib=64"
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/../vm/setup-node.sh"
here=$(cd "$(dirname "$0")" && pwd)

echo "storm: setting up the node ($RBLN_KO_PARAMS)"
setup_node || { echo "storm: FAILED: node setup"; exit 1; }
# Hung engines time out quickly, so the storm sees many resets.
echo 200 > /sys/module/rbln/parameters/job_timeout_ms

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
"$here/../debug-kernel/kmemleak-check.sh" || rc=1
[ "$rc" = 0 ] && echo "storm: devices removed, module unloaded, no leaks suspected"
exit "$rc"
