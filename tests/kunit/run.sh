#!/bin/bash
# Builds a test kernel from Debian's linux-source-6.12 with rbln linked in
# (drivers/gpu/drm/rbln -> kernel/), boots it under qemu, and checks what the
# KUnit suites and the kernel's checkers (KASAN, lockdep, debugobjects,
# kmemleak) reported.  Exit status 0 only if every test passed and the kernel
# log is clean.
#
#   tests/kunit/run.sh [build|run]     (default: both)
#
# The source tree and the build live in RBLN_KUNIT_CACHE (default
# ~/.cache/rbln-kunit), keyed by the source package version, so a second run
# rebuilds only the driver.  Logs go to build/kunit/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
pkg=linux-source-6.12
cache=${RBLN_KUNIT_CACHE:-$HOME/.cache/rbln-kunit}
out=$top/build/kunit
what=${1:-all}

version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) ||
	{ echo "kunit: $pkg is not installed (make deps)" >&2; exit 2; }
key=$(echo "$version" | tr '~:' '__')
src=$cache/src-$key
build=$cache/build-$key
mkdir -p "$cache" "$out"

# A pristine tree per source version, plus the two lines that link rbln in.
prepare_tree() {
	if [ ! -f "$src/.rbln-ready" ]; then
		echo "kunit: unpacking $pkg $version into $src"
		rm -rf "$src" "$src.tmp"
		mkdir -p "$src.tmp"
		tar -xf "/usr/src/$pkg.tar.xz" -C "$src.tmp" --strip-components=1
		printf '\nsource "drivers/gpu/drm/rbln/Kconfig"\n' >> "$src.tmp/drivers/gpu/drm/Kconfig"
		printf '\nobj-$(CONFIG_DRM_RBLN) += rbln/\n' >> "$src.tmp/drivers/gpu/drm/Makefile"
		touch "$src.tmp/.rbln-ready"
		mv "$src.tmp" "$src"
	fi
	# The checkout may move (CI clones anywhere); the link follows it.
	ln -sfn "$top/kernel" "$src/drivers/gpu/drm/rbln"
}

build_kernel() {
	prepare_tree
	echo "kunit: building the test kernel in $build (first build: about 6 minutes on 2 cores)"
	python3 "$src/tools/testing/kunit/kunit.py" build --arch=x86_64 \
		--build_dir="$build" --kunitconfig="$top/kernel/tests/.kunitconfig" \
		--jobs="$(nproc)" > "$out/build.log" 2>&1 || {
		tail -40 "$out/build.log" >&2
		echo "kunit: build failed; full log: $out/build.log" >&2
		exit 1
	}
	echo "kunit: kernel ready: $build/arch/x86/boot/bzImage"
}

# /init runs after the suites: it asks kmemleak for a scan (objects younger
# than 5 s are not reported yet, hence the wait) and powers off.
make_initramfs() {
	local stage
	stage=$(mktemp -d)
	mkdir -p "$stage/bin"
	cp /bin/busybox "$stage/bin/busybox"
	cp "$here/init" "$stage/init"
	(cd "$stage" && find . | cpio -o -H newc --quiet) > "$out/initramfs.cpio"
	rm -rf "$stage"
}

run_kernel() {
	[ -f "$build/arch/x86/boot/bzImage" ] || build_kernel
	make_initramfs
	echo "kunit: booting the test kernel (KASAN under TCG: a few minutes)"
	# Single-threaded TCG: see tests/vm/run-vm.sh.
	timeout --foreground "${RBLN_KUNIT_TIMEOUT:-1200}" \
		qemu-system-x86_64 -machine q35 -cpu max -accel tcg,thread=single \
		-smp 2 -m 2048 -nodefaults -nographic -no-reboot -serial stdio \
		-kernel "$build/arch/x86/boot/bzImage" -initrd "$out/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 oops=panic kunit.enable=1 kmemleak=on" \
		</dev/null 2>&1 | tr -d '\r' > "$out/console.log" || true

	local rc=0
	python3 "$src/tools/testing/kunit/kunit.py" parse "$out/console.log" \
		> "$out/results.txt" 2>&1 || rc=1
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
