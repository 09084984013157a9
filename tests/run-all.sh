#!/bin/bash
# Runs every test: host unit tests (ctest), the DKMS packaging test, and the
# integration suite inside a VM for each kernel, the PCI backend's suite in a
# PCI VM (QEMU's edu boards behind an IOMMU) for each kernel; then checks that the host's
# packages and kernel files are as they were before.  Prints one summary line
# "rbln tests: N passed, N failed, N skipped", every failure and skip named
# above it, and exits non-zero if anything failed.  A stage that cannot run
# (no history for the old drivers, no 6.12 kernel, no sanitizer kernel) is a
# skip; a test binary that ran nothing, or a kernel series of
# tests/vm/kernels.txt without a kernel, is a failure.
#
#   tests/run-all.sh [--vm-only] KERNEL...
#
# RBLN_DEBUG_KERNEL (make test sets it): the sanitizer kernel's release; the
# suite runs there too, then a storm of RBLN_STORM_SECONDS (default 60).
# RBLN_KERNELS_CHOSEN=1 (make, when KERNELS or RBLN_KERNELS was given): the
# kernels were picked by hand, so a series left out is a skip, not a failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RBLN_BUILD:-$top/build}
vm_only=0
[ "${1:-}" = --vm-only ] && { vm_only=1; shift; }
kernels=("$@")

passed=0 failed=0 skipped=0
declare -a problems=() skips=()
if [ ${#kernels[@]} -eq 0 ]; then
	listed=$("$top/tests/vm/kernel-cache.sh" list)
	list_rc=$?
	read -r -a kernels <<< "$(echo $listed)"
	if [ "$list_rc" != 0 ]; then
		failed=$((failed + 1))
		problems+=("the kernel list (tests/vm/kernel-cache.sh list, above)")
	fi
fi
# Every series of kernels.txt is tested, unless the kernels were chosen by hand.
while read -r series pattern; do
	[ -n "$series" ] || continue
	if [ "${RBLN_KERNELS_CHOSEN:-0}" = 1 ]; then
		skipped=$((skipped + 1))
		skips+=("kernel series $series: not among the kernels chosen (${kernels[*]:-none})")
	else
		failed=$((failed + 1))
		problems+=("kernel series $series ($pattern): no kernel to test; tests/vm/kernel-cache.sh list says why")
	fi
done < <("$top/tests/vm/kernel-cache.sh" coverage "${kernels[@]}")
# make test takes the "before" snapshot ahead of the build (RBLN_HOST_BEFORE).
before=${RBLN_HOST_BEFORE:-$build/host-before.txt}
if [ -z "${RBLN_HOST_BEFORE:-}" ]; then
	mkdir -p "$build"
	"$top/tests/host-snapshot.sh" > "$before"
fi

# Adds the counts from a GoogleTest log, its skipped tests by name; a log
# without a verdict counts as one failure.
count_gtest() {
	local log=$1 what=$2 p f s name
	p=$(awk '/^\[  PASSED  \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")
	f=$(awk '/^\[  FAILED  \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")
	s=$(awk '/^\[  SKIPPED \] [0-9]+ test/ { n += $4 } END { print n + 0 }' "$log")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" = 0 ] || problems+=("$what: $f failed")
	# The summary's list: "[  SKIPPED ] Suite.Name", without the "(N ms)" of the run.
	while read -r name; do
		skips+=("$what: $name")
	done < <(sed -n 's/^\[  SKIPPED \] \([^ ]*\.[^ ]*\)$/\1/p' "$log")
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then
		failed=$((failed + 1))
		problems+=("$what: no test ran")
	fi
}

skip() {	# why
	skipped=$((skipped + 1))
	skips+=("$1")
}

# A failure's name, with the first lines of its log that say why when a log
# is given: the summary is the end of the output, the part a CI page shows.
result() {	# name status [log...]
	local why=
	if [ "$2" = 0 ]; then passed=$((passed + 1)); return; fi
	failed=$((failed + 1))
	# The storm's and GoogleTest's verdicts (each test once), run-vm's, and
	# check-dmesg's report lines ("N:[ t] ..."), each line once.
	[ $# -lt 3 ] || why=$(grep -a -h -E 'FAILED|^run-vm: |^check-dmesg: |^[0-9]+:\[' "${@:3}" 2>/dev/null |
		grep -a -v -E 'listed below|FAILED TESTS?$|^check-dmesg: note:' | sed -E 's/ \([0-9]+ ms\)$//' | awk '!seen[$0]++' |
		head -n 6 | sed 's/^/    why: /')
	problems+=("$1${why:+$'\n'$why}")
}

# Two lanes, on a two-core machine (each VM is one TCG thread; the host's
# tests, lint, DKMS and KUnit mostly one process at a time).  From the start,
# this background lane runs the PCI backend's suite (tests/vm/pci-suite.sh:
# QEMU's edu boards behind an IOMMU) in a PCI VM per kernel, then on the
# first 6.12 kernel a short storm (RBLN_PCI_STORM_SECONDS, default 30) with
# both boards among its NPUs (Debian's kernel has the IOMMU the sanitizer
# kernel lacks), then the suites of the kernels after the first half.  The
# foreground has the host's stages, the first half's suites and the VMs
# after them.  The background's results are counted after the PCI topology VM.
mkdir -p "$build/vm"
half=$(( ${#kernels[@]} / 2 ))
front=("${kernels[@]:0:half}") back=("${kernels[@]:half}")
background_lane() {
	local k
	for k in "${kernels[@]}"; do
		RBLN_VM_PCI=1 "$top/tests/vm/run-vm.sh" -o "$build/vm/pci-$k" "$k" "$top/tests/vm/pci-suite.sh" \
			> "$build/vm/pci-$k.log" 2>&1
		echo $? > "$build/vm/pci-$k.rc"
	done
	k=$(printf '%s\n' "${kernels[@]}" | grep -m1 '^6\.12\.')
	if [ -n "$k" ]; then
		local start=$SECONDS
		RBLN_VM_PCI=1 "$top/tests/vm/run-vm.sh" -o "$build/vm/pci-storm" "$k" env \
			STRESS_SECONDS="${RBLN_PCI_STORM_SECONDS:-30}" STORM_ARGS=--no-fail-allocations \
			"$top/tests/stress/storm.sh" > "$build/vm/pci-storm.log" 2>&1
		echo $? > "$build/vm/pci-storm.rc"
		echo "$k $((SECONDS - start))" > "$build/vm/pci-storm.took"
	fi
	for k in "${back[@]}"; do
		"$top/tests/vm/run-vm.sh" -o "$build/vm/$k" "$k" "$top/tests/vm/suite.sh" > "$build/vm/$k.log" 2>&1
		echo $? > "$build/vm/$k.rc"
	done
}
rm -f "$build"/vm/pci-*.rc "$build"/vm/pci-*.log "$build/vm/pci-storm.took"
for k in "${back[@]}"; do rm -f "$build/vm/$k.rc"; done
lane_start=$SECONDS
background_lane &
lane_pid=$!

if [ "$vm_only" = 0 ]; then
	echo "=== host unit tests"
	log=$build/host-tests.log
	(cd "$build/cmake" && ctest --output-on-failure) 2>&1 | tee "$log"
	p=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\2 \1/p' "$log")
	# ctest counts a skipped test as passed; its list names them: "  3 - name (Skipped)".
	ctest_skips=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$log")
	if [ -n "$p" ]; then
		set -- $p
		s=$(echo -n "$ctest_skips" | grep -c .)
		passed=$((passed + $1 - $2 - s)) failed=$((failed + $2))
		[ "$2" = 0 ] || problems+=("host unit tests: $2 failed")
		while read -r name; do
			[ -z "$name" ] || skip "host unit test $name"
		done <<< "$ctest_skips"
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
	# kunit.py's summary: "Testing complete. Ran N tests: passed: P, failed: F,
	# skipped: S, crashed: C, errors: E" (the counts that are 0 left out),
	# one per module (rbln.ko's suites, rbln_fake_hw.ko's): added up.
	summary=$(grep -o 'Ran [0-9]* tests:.*' "$build/kunit/results.txt" 2>/dev/null)
	kunit_count() {
		echo "$summary" | sed -n "s/.*$1: \([0-9]*\).*/\1/p" | awk '{ n += $1 } END { if (NR) print n }'
	}
	p=$(kunit_count passed) s=$(kunit_count skipped)
	f=0
	for what in failed crashed errors; do
		n=$(kunit_count "$what")
		f=$((f + ${n:-0}))
	done
	passed=$((passed + ${p:-0})) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
	[ "$f" = 0 ] || problems+=("KUnit: $f failed or crashed")
	[ "${s:-0}" = 0 ] || skips+=("KUnit: $s skipped (see $build/kunit/results.txt)")
	if [ "${p:-0}" = 0 ] && [ "$f" = 0 ]; then
		failed=$((failed + 1))
		problems+=("KUnit: no test ran")
	fi
	# The run itself (crash, timeout, checker reports) is one more check.
	result "KUnit run (kernel log; see $build/kunit/console.log)" "$kunit_rc"
fi

# A kernel's suite: its tests, and the VM itself (suite steps, kernel log) as one more check.
# A VM run's tests (its job.log, if it got that far) and verdict, its
# verdict.txt and job.log saying why it failed.
vm_result() {	# out name what-may-fail vm_rc
	[ ! -f "$1/job.log" ] || count_gtest "$1/job.log" "$2"
	result "$2 ($3; see $1)" "$4" "$1/verdict.txt" "$1/job.log"
}

count_suite() {	# kernel vm_rc
	vm_result "$build/vm/$1" "VM $1" "suite or kernel log" "$2"
}

for k in "${front[@]}"; do
	echo "=== VM tests on $k"
	"$top/tests/vm/run-vm.sh" -o "$build/vm/$k" "$k" "$top/tests/vm/suite.sh"
	count_suite "$k" $?
done

# The verdict itself: a report printed after the guest's log snapshot must
# still fail a run (one boot of the first kernel).
if [ ${#kernels[@]} -gt 0 ]; then
	echo "=== the VM verdict sees a late kernel report (${kernels[0]})"
	"$top/tests/vm/verdict-selftest.sh" "${kernels[0]}"
	result "VM verdict self-test (see $build/vm/verdict-selftest)" $?
fi

# libdevmgr against the drivers of older interfaces, from this repository's
# history, on one kernel (the library's fallbacks do not depend on it).
ok=$(printf '%s\n' "${kernels[@]}" | grep -m1 '^6\.12\.' || true)
if [ -n "$ok" ]; then
	echo "=== libdevmgr against rbln.ko of every older interface (9 to 15, those below this tree's) on $ok"
	out=$build/vm/old-drivers
	rm -f "$out/verdict.txt" "$out/job.log"	# a failed build runs no VM: no earlier run's
	"$top/tests/old-drivers/build.sh" "$ok" "$build/old-drivers"
	vm_rc=$?
	if [ "$vm_rc" = 77 ]; then
		skip "libdevmgr against older drivers: this checkout has no history to build them from"
	else
		if [ "$vm_rc" = 0 ]; then
			"$top/tests/vm/run-vm.sh" -o "$out" "$ok" \
				env RBLN_OLD_DRIVERS="$build/old-drivers" "$top/tests/old-drivers/suite.sh"
			vm_rc=$?
		fi
		vm_result "$out" "old drivers" "build, suite or kernel log" "$vm_rc"
	fi

	# The device plugin's NUMA topology needs NPUs on a node other than 0
	# (the suite's one-node VMs skip that test): a VM with two.
	echo "=== the device plugin's NUMA topology in a VM with two NUMA nodes on $ok"
	out=$build/vm/numa
	RBLN_VM_QEMU_ARGS="-object memory-backend-ram,id=m0,size=1G -numa node,nodeid=0,cpus=0,memdev=m0 \
-object memory-backend-ram,id=m1,size=1G -numa node,nodeid=1,cpus=1,memdev=m1" \
		"$top/tests/vm/run-vm.sh" -o "$out" "$ok" env RBLN_SUITE_ONLY=rbln_k8s_tests \
		GTEST_FILTER='DevicePlugin.TopologyFollowsTheNpusNodes' "$top/tests/vm/suite.sh"
	vm_result "$out" "NUMA VM" "suite or kernel log" $?

	# rbln-smi topo -m's PCI relations over a real kernel's sysfs: root
	# ports, switches, expander host bridges on two NUMA nodes.
	echo "=== PCI path relations in a VM with root ports, switches and two NUMA nodes on $ok"
	out=$build/vm/pci-topology
	"$top/tests/vm/pci-topology.sh" "$out" "$ok"
	vm_result "$out" "PCI topology VM" "suite or kernel log" $?
else
	skip "libdevmgr against older drivers: no 6.12 kernel among ${kernels[*]:-none}"
fi

echo "=== the background lane: PCI VMs, the storm with PCI NPUs, VM tests on ${back[*]:-no kernel}"
wait "$lane_pid"
echo "the background lane took $((SECONDS - lane_start)) s"
for k in "${kernels[@]}"; do
	out=$build/vm/pci-$k
	grep -h -e '^pci-suite' -e '^run-vm' -e '^\[  FAILED  \]' "$build/vm/pci-$k.log" 2>/dev/null
	[ ! -f "$out/job.log" ] || count_gtest "$out/job.log" "PCI VM $k"
	result "PCI VM $k (suite or kernel log; see $out and $build/vm/pci-$k.log)" \
		"$(cat "$build/vm/pci-$k.rc" 2>/dev/null || echo 1)" "$build/vm/pci-$k.log"
done
if read -r k took 2>/dev/null < "$build/vm/pci-storm.took"; then
	grep -h -e '^storm' -e '^run-vm' "$build/vm/pci-storm.log"
	echo "the storm with PCI NPUs took $took s"
	result "storm with PCI NPUs on $k (work, memory, removal, unload or kernel log; see $build/vm/pci-storm)" \
		"$(cat "$build/vm/pci-storm.rc" 2>/dev/null || echo 1)" "$build/vm/pci-storm.log"
else
	skip "the storm with PCI NPUs: no 6.12 kernel among ${kernels[*]:-none}"
fi
for k in "${back[@]}"; do
	echo "=== VM tests on $k (in the background lane; its console: $build/vm/$k.log)"
	vm_rc=$(cat "$build/vm/$k.rc" 2>/dev/null || echo 1)
	# Failed: the end of its console too, as the foreground's shows it whole.
	if [ "$vm_rc" = 0 ]; then
		grep -h -e '^run-vm' -e '^\[  FAILED  \]' -e '^\[  PASSED  \]' "$build/vm/$k.log" 2>/dev/null
	else
		tail -n 60 "$build/vm/$k.log" 2>/dev/null
	fi
	count_suite "$k" "$vm_rc"
done

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
	vm_result "$out" "VM $dk" "suite, kmemleak or kernel log" $?

	wait "$storm_pid"
	storm_rc=$?
	grep -h -e '^storm' -e '^run-vm' -e '^[0-9]*:' "$build/storm.log"
	result "storm on $dk (memory, removal, unload, kmemleak or kernel log; see $storm_out)" "$storm_rc" \
		"$build/storm.log"
else
	skip "VM tests on the sanitizer kernel: RBLN_DEBUG_KERNEL is not set (make test sets it)"
	skip "the storm on the sanitizer kernel: RBLN_DEBUG_KERNEL is not set (make test sets it)"
fi

echo "=== the host is as before (packages, /lib/modules, /boot, /usr/src, /var/lib/dkms)"
"$top/tests/host-snapshot.sh" > "$build/host-after.txt"
diff "$before" "$build/host-after.txt" | head -n 20
result "host unchanged (see $before and $build/host-after.txt)" "${PIPESTATUS[0]}"

echo
for p in "${skips[@]}"; do echo "SKIPPED: $p"; done
for p in "${problems[@]}"; do echo "FAILED: $p"; done
echo "rbln tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
