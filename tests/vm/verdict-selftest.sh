#!/bin/bash
# The VM verdict's own test, on a real boot: a kernel report printed after the
# guest took its log snapshot (as a delayed work item oopsing after the last
# rmmod would) must still fail the run, through the serial console.  Exit 0
# iff run-vm.sh failed that run for that reason and said so in verdict.txt.
#   tests/vm/verdict-selftest.sh KERNEL
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ver=${1:?usage: verdict-selftest.sh KERNEL}
out=${RBLN_BUILD:-$top/build}/vm/verdict-selftest
report="BUG: late report from the verdict self-test"

# The job leaves a process behind that waits for the snapshot, then reports
# (its output away from the job's, which guest-init waits to end).
job="(while [ ! -s /run/vm/dmesg.txt ]; do sleep 0.1; done; echo '<2>$report' > /dev/kmsg) </dev/null >/dev/null 2>&1 &"
if "$here/run-vm.sh" -o "$out" "$ver" bash -c "$job" >/dev/null 2>&1; then
	echo "verdict-selftest: FAILED: a run with a late kernel report passed (see $out)"
	exit 1
fi
if grep -q "$report" "$out/dmesg.txt" 2>/dev/null; then
	echo "verdict-selftest: FAILED: the report reached the snapshot, so the serial check was not what failed the run"
	exit 1
fi
if ! grep -q "^\[ *[0-9.]*\] $report" "$out/serial.log"; then
	echo "verdict-selftest: FAILED: the run failed, but not on the late report (see $out/serial.log)"
	exit 1
fi
# The summary of tests/run-all.sh shows a failure's why from verdict.txt.
if ! grep -q "^[0-9]*:\[ *[0-9.]*\] $report" "$out/verdict.txt" 2>/dev/null; then
	echo "verdict-selftest: FAILED: the run's verdict.txt does not name the report (see $out/verdict.txt)"
	exit 1
fi
echo "verdict-selftest: a report after the snapshot fails the run, and its verdict.txt names it"
