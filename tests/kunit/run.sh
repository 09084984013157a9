#!/bin/bash
# Runs the driver's KUnit suites on the sanitizer kernel
# (tests/debug-kernel/build.sh): boots it under qemu with an initramfs that
# loads the in-tree rbln.ko, whose suites run as it loads, unloads it, then
# does the same with rbln_fake_hw.ko (the core's suites against a fake
# backend, with no simulator linked: built here, out of tree against that
# kernel, and checked for it by check-fake-hw.sh), and asks kmemleak for a
# scan.  Checks what the suites and the kernel's checkers
# (KASAN, lockdep, UBSAN, debugobjects, kmemleak) reported.  Exit status 0
# only if every test passed and the kernel log is clean.
#
#   tests/kunit/run.sh [build|run]     (default: both)
#
# Logs go to build/kunit/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
debug=$top/tests/debug-kernel/build.sh
vm_cache=${RBLN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rbln-vm}
out=$top/build/kunit
what=${1:-all}
mkdir -p "$out"

build_kernel() {
	"$debug" kernel >/dev/null && build_fake_hw
}

# rbln_fake_hw.ko: the same sources with RBLN_KUNIT_FAKE_HW=1 (kernel/Kbuild),
# built in a copy of them (times kept, so a second build is incremental).
build_fake_hw() {
	local ver kdir dir=$out/fake-hw
	ver=$("$debug" release)
	kdir=$("$top/tests/vm/kernel-cache.sh" headers "$ver")
	mkdir -p "$dir"
	cp -a "$top/kernel/." "$dir/"
	"$top/tests/vm/kernel-cache.sh" run "$ver" make -C "$kdir" M="$dir" RBLN_KUNIT_FAKE_HW=1 \
		-j"$(nproc)" modules > "$out/fake-hw-build.log" 2>&1 || {
		grep -E 'error|Error' "$out/fake-hw-build.log" | head -20 >&2
		echo "kunit: the fake-backend module did not build; see $out/fake-hw-build.log" >&2
		return 1
	}
	"$here/check-fake-hw.sh" "$dir/rbln_fake_hw.ko"
}

# busybox, the kernel's modules with the KUnit build of rbln.ko among them
# (so modprobe loads what it depends on), and /init.
make_initramfs() {
	local ver=$1 stage
	stage=$(mktemp -d)
	mkdir -p "$stage/bin" "$stage/lib/modules"
	cp /bin/busybox "$stage/bin/busybox"
	cp -r "$vm_cache/kernels/$ver/root/lib/modules/$ver" "$stage/lib/modules/"
	install -D -m 0644 "$("$debug" kunit-ko)" "$stage/lib/modules/$ver/extra/rbln.ko"
	install -D -m 0644 "$out/fake-hw/rbln_fake_hw.ko" "$stage/lib/modules/$ver/extra/rbln_fake_hw.ko"
	depmod -b "$stage" "$ver"
	cp "$here/init" "$stage/init"
	(cd "$stage" && find . | cpio -o -H newc --quiet) > "$out/initramfs.cpio"
	rm -rf "$stage"
}

run_kernel() {
	local ver ksrc rc=0
	ver=$("$debug" release)
	{ [ -f "$vm_cache/kernels/$ver/vmlinuz" ] && [ -f "$out/fake-hw/rbln_fake_hw.ko" ]; } || build_kernel
	make_initramfs "$ver"
	echo "kunit: booting $ver (KASAN under TCG: a few minutes)"
	# Single-threaded TCG, and every KASAN report, not just a boot's first:
	# see tests/vm/run-vm.sh.
	# A boot whose lockdep a report before init turned off runs no test
	# (init says so): it is booted again, up to three times.
	# The CPU without ERMS and LA57, as in run-vm.sh (TCG's "rep movsb" is a byte
	# at a time; with 5-level paging KASAN hung the boot in its first interrupts).
	local boot
	for boot in 1 2 3; do
		timeout --foreground "${RBLN_KUNIT_TIMEOUT:-1200}" \
			qemu-system-x86_64 -machine q35 -cpu max,erms=off,la57=off -accel tcg,thread=single \
			-smp 2 -m 2048 -nodefaults -nographic -no-reboot -serial stdio \
			-kernel "$vm_cache/kernels/$ver/vmlinuz" -initrd "$out/initramfs.cpio" \
			-append "console=ttyS0 printk.time=1 panic=-1 oops=panic kmemleak=on kasan_multi_shot" \
			</dev/null 2>&1 | tr -d '\r' > "$out/console.log" || true
		grep -q '^rbln-kunit: lockdep off after boot' "$out/console.log" || break
		mv "$out/console.log" "$out/console.boot$boot.log"
		echo "kunit: lockdep was off after boot $boot (a report before init: $out/console.boot$boot.log); booting again" >&2
	done

	# The kernel source the build came from has the KTAP parser.  It reads
	# each module's run from its load on (the boot printed an empty plan of
	# its own); each is a KTAP run of its own, so each is parsed alone, and
	# results.txt has both summaries (run-all.sh adds them up).
	ksrc=$(readlink -f "$vm_cache/kernels/$ver/headers/usr/src/linux-headers-$ver/source")
	sed -n '/^rbln-kunit: loading rbln\.ko/,/^rbln-kunit: loading rbln_fake_hw\.ko/p' \
		"$out/console.log" > "$out/ktap.log"
	sed -n '/^rbln-kunit: loading rbln_fake_hw\.ko/,$p' "$out/console.log" > "$out/ktap-fake-hw.log"
	: > "$out/results.txt"
	local ktap
	for ktap in ktap ktap-fake-hw; do
		python3 "$ksrc/tools/testing/kunit/kunit.py" parse "$out/$ktap.log" >> "$out/results.txt" 2>&1 || rc=1
	done
	cat "$out/results.txt"
	grep -q "rbln-kunit: done" "$out/console.log" || {
		echo "kunit: the kernel did not reach the end of the run (crash or timeout)" >&2
		rc=1
	}
	"$here/check-log.sh" "$out/console.log" || rc=1
	[ "$rc" = 0 ] && echo "kunit: all suites passed, kernel log clean" ||
		echo "kunit: FAILED; console log: $out/console.log" >&2
	return "$rc"
}

case $what in
build) build_kernel ;;
run) run_kernel ;;
all) build_kernel && run_kernel ;;
*) echo "usage: run.sh [build|run]" >&2; exit 2 ;;
esac
