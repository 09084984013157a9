#!/bin/bash
# In the test VM: loads each older rbln.ko (tests/old-drivers/build.sh) in
# turn and runs rbln_old_driver_tests against it, with libdevmgr's ABI check
# skipped (the library is newer than the driver by design here), then once
# without the skip, where the check must refuse the driver by name.
#   RBLN_OLD_DRIVERS   the directory build.sh filled
set -u
export RBLN_KO_PARAMS="sim_devices=atom,rebel100 sim_memory_mib=64"
# shellcheck source=tests/vm/setup-node.sh
. "$RBLN_TOP/tests/vm/setup-node.sh"
old=${RBLN_OLD_DRIVERS:?set RBLN_OLD_DRIVERS}

# The node (group, rules, udevd) is set up with the first driver; later ones only load.
load() {
	if [ -z "${node_up:-}" ]; then
		node_up=1
		setup_node
	else
		# shellcheck disable=SC2086 # parameters are words
		insmod "$RBLN_KO" $RBLN_KO_PARAMS && udevadm settle --timeout=60
	fi
}

fail=0
for dir in $(printf '%s\n' "$old"/if* | sort -V); do
	n=${dir##*/if}
	export RBLN_KO=$dir/rbln.ko
	echo "old-drivers: interface $n"
	if ! load; then
		echo "old-drivers: FAILED: interface $n does not load"
		fail=1
		continue
	fi
	RBLN_SKIP_ABI_CHECK=1 "$build/cmake/tests/integration/rbln_old_driver_tests" --gtest_color=no \
		--gtest_filter='OldDriver.*' || fail=1
	"$build/cmake/tests/integration/rbln_old_driver_tests" --gtest_color=no \
		--gtest_filter='OldDriverAbiCheck.*' || fail=1
	"$RBLN_TOP/tests/vm/rmmod-rbln.sh" || { echo "old-drivers: FAILED: interface $n does not unload"; fail=1; }
done
exit $fail
