#!/bin/bash
# Runs every test: host unit tests (ctest), the DKMS packaging test, and the
# integration suite inside a VM for each kernel; then checks that the host's
# packages and kernel files are as they were before.  Prints one summary line
# "N passed, N failed" and exits non-zero if anything failed.
#
#   tests/run-all.sh [--vm-only] KERNEL...
#
# RBLN_DEBUG_KERNEL (make test sets it): the sanitizer kernel's release; the
# suite runs there too, then a storm of RBLN_STORM_SECONDS (default 60).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RBLN_BUILD:-$top/build}
vm_only=0
[ "${1:-}" = --vm-only ] && { vm_only=1; shift; }
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=($("$top/tests/vm/kernel-cache.sh" list))

passed=0 failed=0
declare -a problems=()
# make test takes the "before" snapshot ahead of the build (RBLN_HOST_BEFORE).
before=${RBLN_HOST_BEFORE:-$build/host-before.txt}
if [ -z "${RBLN_HOST_BEFORE:-}" ]; then
	mkdir -p "$build"
	"$top/tests/host-snapshot.sh" > "$before"
fi

# Adds the counts from a GoogleTest log; a log without a verdict counts as one failure.
count_gtest() {
	local log=$1 what=$2 p f
	p=$(awk '/^\[  PASSED  \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")
	f=$(awk '/^\[  FAILED  \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")
	passed=$((passed + p)) failed=$((failed + f))
	[ "$f" = 0 ] || problems+=("$what: $f failed")
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then
		failed=$((failed + 1))
		problems+=("$what: no test ran")
	fi
}

result() {	# name status
	if [ "$2" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); problems+=("$1"); fi
}

if [ "$vm_only" = 0 ]; then
	echo "=== host unit tests"
	log=$build/host-tests.log
	(cd "$build/cmake" && ctest --output-on-failure) 2>&1 | tee "$log"
	p=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\2 \1/p' "$log")
	if [ -n "$p" ]; then
		set -- $p
		passed=$((passed + $1 - $2)) failed=$((failed + $2))
		[ "$2" = 0 ] || problems+=("host unit tests: $2 failed")
	else
		result "host unit tests did not run" 1
	fi

	echo "=== kernel build warnings (W=1) and sparse (C=2)"
	"$top/tests/kernel-lint.sh" "${kernels[@]}"
	result "W=1/sparse-clean kernel build" $?

	echo "=== DKMS build and install"
	"$top/tests/dkms-test.sh" "${kernels[@]}"
	result "DKMS packaging" $?

	echo "=== KUnit suites (the sanitizer kernel)"
	"$top/tests/kunit/run.sh"
	kunit_rc=$?
	# kunit.py's summary: "Testing complete. Ran N tests: passed: P, failed: F, ..."
	summary=$(grep -o 'Ran [0-9]* tests:.*' "$build/kunit/results.txt" 2>/dev/null | tail -1)
	p=$(echo "$summary" | sed -n 's/.*passed: \([0-9]*\).*/\1/p')
	f=$(echo "$summary" | sed -n 's/.*failed: \([0-9]*\).*/\1/p')
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
	[ "${f:-0}" = 0 ] || problems+=("KUnit: $f failed")
	# The run itself (crash, timeout, checker reports) is one more check.
	result "KUnit run (kernel log; see $build/kunit/console.log)" "$kunit_rc"
fi

for k in "${kernels[@]}"; do
	echo "=== VM tests on $k"
	out=$build/vm/$k
	"$top/tests/vm/run-vm.sh" -o "$out" "$k" "$top/tests/vm/suite.sh"
	vm_rc=$?
	if [ -f "$out/job.log" ]; then
		count_gtest "$out/job.log" "VM $k"
	fi
	# The VM itself (suite steps, kernel log) is one more check.
	result "VM $k (suite or kernel log; see $out)" "$vm_rc"
done

# libdevmgr against the drivers of older interfaces, from this repository's
# history, on one kernel (the library's fallbacks do not depend on it).
ok=$(printf '%s\n' "${kernels[@]}" | grep -m1 '^6\.12\.' || true)
if [ -n "$ok" ]; then
	echo "=== libdevmgr against rbln.ko of interfaces 9, 10 and 11 on $ok"
	out=$build/vm/old-drivers
	"$top/tests/old-drivers/build.sh" "$ok" "$build/old-drivers"
	vm_rc=$?
	if [ "$vm_rc" = 77 ]; then
		echo "SKIPPED: old drivers: this checkout has no history to build them from"
	else
		if [ "$vm_rc" = 0 ]; then
			"$top/tests/vm/run-vm.sh" -o "$out" "$ok" \
				env RBLN_OLD_DRIVERS="$build/old-drivers" "$top/tests/old-drivers/suite.sh"
			vm_rc=$?
			[ ! -f "$out/job.log" ] || count_gtest "$out/job.log" "old drivers"
		fi
		result "old drivers (build, suite or kernel log; see $out)" "$vm_rc"
	fi
fi

dk=${RBLN_DEBUG_KERNEL:-}
if [ -n "$dk" ]; then
	# The storm's VM runs beside the suite's: each is one TCG thread, and the
	# machine has two cores.
	echo "=== VM tests and a ${RBLN_STORM_SECONDS:-60} s storm on the sanitizer kernel $dk"
	storm_out=$build/storm
	RBLN_ALLOW_INJECTED_FAILURES=1 RBLN_VM_MEM=3072 "$top/tests/vm/run-vm.sh" -o "$storm_out" "$dk" \
		env STRESS_SECONDS="${RBLN_STORM_SECONDS:-60}" "$top/tests/stress/storm.sh" \
		> "$build/storm.log" 2>&1 &
	storm_pid=$!
	out=$build/vm/$dk
	RBLN_VM_MEM=3072 "$top/tests/vm/run-vm.sh" -o "$out" "$dk" "$top/tests/debug-kernel/suite.sh"
	vm_rc=$?
	[ ! -f "$out/job.log" ] || count_gtest "$out/job.log" "VM $dk"
	result "VM $dk (suite, kmemleak or kernel log; see $out)" "$vm_rc"

	wait "$storm_pid"
	storm_rc=$?
	grep -h -e '^storm' -e '^run-vm' -e '^[0-9]*:' "$build/storm.log"
	result "storm on $dk (memory, removal, unload, kmemleak or kernel log; see $storm_out)" "$storm_rc"
fi

echo "=== the host is as before (packages, /lib/modules, /boot, /usr/src, /var/lib/dkms)"
"$top/tests/host-snapshot.sh" > "$build/host-after.txt"
diff "$before" "$build/host-after.txt" | head -n 20
result "host unchanged (see $before and $build/host-after.txt)" "${PIPESTATUS[0]}"

echo
for p in "${problems[@]}"; do echo "FAILED: $p"; done
echo "rbln tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
