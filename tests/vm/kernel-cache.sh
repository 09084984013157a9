#!/bin/bash
# Fetch Debian's stock kernel images into a cache outside the repository and
# prepare them for the VM: extracted package, depmod, and an initramfs that
# mounts the host's root over virtio-9p.  Everything is keyed by the kernel's
# ABI name and reused when present.
#
#   kernel-cache.sh list            ABI names of the kernels to test (newest 6.1 and 6.12
#                                   for which Debian has both image and headers)
#   kernel-cache.sh prepare VER     fetch + extract + initramfs; prints the cache dir
#
# RBLN_KERNELS overrides the list ("6.1.0-57-amd64 6.12.117+deb12-amd64").
# RBLN_CACHE overrides the cache root (default ~/.cache/rbln-vm).
set -euo pipefail

cache_root=${RBLN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rbln-vm}
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "kernel-cache: $*" >&2; exit 1; }

# Newest ABI name matching a pattern that has both an image and a headers package.
newest_abi() {
	local pattern=$1
	comm -12 \
		<(apt-cache pkgnames linux-image- | sed -n "s/^linux-image-\($pattern\)$/\1/p" | sort) \
		<(apt-cache pkgnames linux-headers- | sed -n "s/^linux-headers-\($pattern\)$/\1/p" | sort) |
		sort -V | tail -n 1
}

list() {
	if [ -n "${RBLN_KERNELS:-}" ]; then
		echo "$RBLN_KERNELS" | tr ' ' '\n' | sed '/^$/d'
		return
	fi
	local v61 v612
	v61=$(newest_abi '6\.1\.0-[0-9]*-amd64')
	v612=$(newest_abi '6\.12\.[0-9]*+deb12-amd64')
	[ -n "$v61" ] || die "no linux-image-6.1.0-*-amd64 with headers in apt (run apt-get update)"
	[ -n "$v612" ] || die "no linux-image-6.12.*+deb12-amd64 with headers in apt (run apt-get update)"
	printf '%s\n%s\n' "$v61" "$v612"
}

# Modules the initramfs loads, in dependency order, to mount 9p over virtio.
initramfs_modules() {
	local root=$1 ver=$2
	modprobe -a -d "$root" -S "$ver" --show-depends virtio_pci 9pnet_virtio 9p |
		awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++'
}

build_initramfs() {
	local dir=$1 ver=$2 stage mods mod name
	mods=$(initramfs_modules "$dir/root" "$ver") || die "cannot resolve the 9p modules of $ver"
	stage=$(mktemp -d)
	mkdir -p "$stage/bin" "$stage/modules"
	cp /bin/busybox "$stage/bin/busybox"
	: > "$stage/modules.list"
	for mod in $mods; do
		name=$(basename "$mod")
		case "$name" in
		*.ko.xz) xz -dc "$mod" > "$stage/modules/${name%.xz}"; name=${name%.xz} ;;
		*.ko.zst) zstd -qdc "$mod" > "$stage/modules/${name%.zst}"; name=${name%.zst} ;;
		*) cp "$mod" "$stage/modules/$name" ;;
		esac
		echo "$name" >> "$stage/modules.list"
	done
	install -m 0755 "$here/initramfs-init" "$stage/init"
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$dir/initramfs.cpio.gz.tmp"
	mv "$dir/initramfs.cpio.gz.tmp" "$dir/initramfs.cpio.gz"
	rm -rf "$stage"
}

prepare() {
	local ver=$1 dir
	[ -n "$ver" ] || die "prepare needs a kernel ABI name"
	dir=$cache_root/kernels/$ver
	if [ ! -f "$dir/root/boot/vmlinuz-$ver" ]; then
		echo "kernel-cache: fetching linux-image-$ver" >&2
		local tmp
		tmp=$(mktemp -d)
		(cd "$tmp" && apt-get download -q "linux-image-$ver" >&2) ||
			die "apt-get download linux-image-$ver failed"
		rm -rf "$dir/root"
		mkdir -p "$dir"
		dpkg-deb -x "$tmp"/linux-image-*.deb "$dir/root.tmp"
		rm -rf "$tmp"
		mv "$dir/root.tmp" "$dir/root"
	fi
	[ -f "$dir/root/lib/modules/$ver/modules.dep" ] || depmod -b "$dir/root" "$ver"
	# Rebuilt when the init script changes.
	if [ ! -f "$dir/initramfs.cpio.gz" ] || [ "$here/initramfs-init" -nt "$dir/initramfs.cpio.gz" ]; then
		build_initramfs "$dir" "$ver"
	fi
	echo "$dir"
}

case "${1:-}" in
list) list ;;
prepare) prepare "${2:-}" ;;
*) die "usage: kernel-cache.sh list | prepare VER" ;;
esac
