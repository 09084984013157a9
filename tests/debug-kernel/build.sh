#!/bin/bash
# The sanitizer kernel: Debian's linux-source-6.12 built with KASAN, lockdep,
# debugobjects, kmemleak, UBSAN and allocation-failure injection
# (rbln-debug.config), with rbln linked into the tree (drivers/gpu/drm/rbln ->
# kernel/) as a module that carries the KUnit suites.  One build serves the
# KUnit run (tests/kunit/run.sh) and the VM suite and storm (run-vm.sh), which
# load the out-of-tree module as on Debian's kernels.
#
#   build.sh kernel     build (incremental; the kernel proper is rebuilt only
#                       when the config or kernel/Kconfig changes) and install
#                       it into the VM kernel cache; prints the release name
#   build.sh release    the release name (uname -r) of the build (after a first one)
#   build.sh kunit-ko   path of the in-tree rbln.ko with the KUnit suites
#
# Source and build live in RBLN_DEBUG_KERNEL_CACHE (default
# ~/.cache/rbln-debug-kernel), keyed by the source package's version; the
# installed image goes where kernel-cache.sh keeps Debian's (RBLN_CACHE).
# The first build takes about 20 minutes on 2 cores; the log is
# build/debug-kernel/build.log.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
pkg=linux-source-6.12
cache=${RBLN_DEBUG_KERNEL_CACHE:-$HOME/.cache/rbln-debug-kernel}
vm_cache=${RBLN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rbln-vm}
log_dir=$top/build/debug-kernel

die() { echo "debug-kernel: $*" >&2; exit 1; }

version=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || die "$pkg is not installed (make deps)"
key=$(echo "$version" | tr '~:' '__')
src=$cache/src-$key
build=$cache/build-$key
kmake=(make -C "$src" O="$build" ARCH=x86_64 -j"$(nproc)")

# A pristine tree per source version, plus the two lines that link rbln in.
prepare_tree() {
	if [ ! -f "$src/.rbln-ready" ]; then
		echo "debug-kernel: unpacking $pkg $version into $src" >&2
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

# .config from the fragment; every line of it must have survived olddefconfig
# (a misspelt or unsatisfiable option would otherwise vanish silently).
configure() {
	local want line
	want=$(cat "$here/rbln-debug.config" "$top/kernel/Kconfig" | sha256sum | cut -d' ' -f1)
	[ "$(cat "$build/.rbln-config" 2>/dev/null)" != "$want" ] || return 0
	mkdir -p "$build"
	grep '^CONFIG_' "$here/rbln-debug.config" > "$build/.config"
	"${kmake[@]}" olddefconfig >> "$log_dir/build.log" 2>&1 || die "olddefconfig failed; see $log_dir/build.log"
	while read -r line; do
		case $line in
		*=n) ! grep -q "^${line%=n}=" "$build/.config" || die "not applied: $line" ;;
		*) grep -qx "$line" "$build/.config" || die "not applied: $line (see $build/.config)" ;;
		esac
	done < <(grep '^CONFIG_' "$here/rbln-debug.config")
	echo "$want" > "$build/.rbln-config"
}

release() {
	cat "$build/include/config/kernel.release" 2>/dev/null ||
		die "no sanitizer kernel built yet in $build (run: build.sh kernel)"
}

# The image and its modules where run-vm.sh finds Debian's, under the same
# layout (kernel-cache.sh prepare/headers then work unchanged): the headers
# are the build tree itself.  The in-tree rbln.ko (with the KUnit suites) is
# left out: the VM loads the out-of-tree one.
install_for_vm() {
	local ver dir
	ver=$(release)
	dir=$vm_cache/kernels/$ver
	# Installed again after a build that changed the image or the config (a
	# config change may change only modules).
	if [ -f "$dir/.rbln-installed" ] && [ "$dir/.rbln-installed" -nt "$build/arch/x86/boot/bzImage" ] &&
		[ "$dir/.rbln-installed" -nt "$build/.config" ]; then
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir/root" "$dir/headers/usr/src"
	"${kmake[@]}" INSTALL_MOD_PATH="$dir/root" modules_install >> "$log_dir/build.log" 2>&1 ||
		die "modules_install failed; see $log_dir/build.log"
	rm -rf "$dir/root/lib/modules/$ver/kernel/drivers/gpu/drm/rbln"
	rm -f "$dir/root/lib/modules/$ver/build" "$dir/root/lib/modules/$ver/source"
	depmod -b "$dir/root" "$ver"
	cp "$build/arch/x86/boot/bzImage" "$dir/vmlinuz"
	ln -sfn "$build" "$dir/headers/usr/src/linux-headers-$ver"
	touch "$dir/headers/.rbln-ready"
	echo host > "$dir/origin"
	touch "$dir/.rbln-installed"
}

build_kernel() {
	local start=$SECONDS
	mkdir -p "$cache" "$log_dir"
	: > "$log_dir/build.log"
	prepare_tree
	configure
	[ -f "$build/arch/x86/boot/bzImage" ] ||
		echo "debug-kernel: first build of the sanitizer kernel in $build (about 20 minutes on 2 cores)" >&2
	"${kmake[@]}" bzImage modules >> "$log_dir/build.log" 2>&1 || {
		grep -E 'error|Error' "$log_dir/build.log" | head -20 >&2
		die "build failed; see $log_dir/build.log"
	}
	install_for_vm
	echo "debug-kernel: $(release) ready in $((SECONDS - start)) s" >&2
	release
}

case "${1:-}" in
kernel) build_kernel ;;
release) release ;;
kunit-ko) echo "$build/drivers/gpu/drm/rbln/rbln.ko" ;;
*) echo "usage: build.sh kernel|release|kunit-ko" >&2; exit 2 ;;
esac
