#!/bin/bash
# Fetch Debian's stock kernels into a cache outside the repository: the image
# for the VM (extracted package, depmod, and an initramfs that mounts the
# host's root over virtio-9p) and the headers to build modules against.  Both
# come with apt-get download and dpkg-deb -x, never installed on the host.
# Everything is keyed by the kernel's ABI name and reused when present.
#
#   kernel-cache.sh list            ABI names of the kernels to test: the newest of each series
#                                   in kernels.txt (6.1 and 6.12 from the host's apt, 7.x from
#                                   Debian's trixie-backports, else sid), with image and headers
#                                   (exit 1, naming each series without a kernel, after the rest)
#   kernel-cache.sh coverage VER... the series of kernels.txt none of VER... belongs to (exit 1 if any)
#   kernel-cache.sh prepare VER     fetch + extract + initramfs; prints the cache dir
#   kernel-cache.sh headers VER     fetch + extract the headers; prints the directory to
#                                   build against (make -C DIR M=...)
#   kernel-cache.sh run VER CMD...  run CMD where modules for VER are built: on the host,
#                                   or for a kernel of a newer Debian in a chroot of that
#                                   release (build-root.sh)
#
# RBLN_KERNELS_TXT overrides the series file (default kernels.txt beside this script).
# RBLN_KERNELS overrides the list ("6.1.0-57-amd64 6.12.117+deb12-amd64").
# RBLN_CACHE overrides the cache root (default ~/.cache/rbln-vm).
set -euo pipefail

cache_root=${RBLN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rbln-vm}
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "kernel-cache: $*" >&2; exit 1; }

# apt-get or apt-cache for an origin: "host" (the host's own apt) or a Debian suite.
apt_for() {
	local origin=$1
	shift
	if [ "$origin" = host ]; then "$@"; else "$here/debian-apt.sh" "$origin" "$@"; fi
}

# Newest ABI name matching a pattern that has both an image and a headers
# package, among package names on stdin.
newest_abi() {
	local pattern=$1 names
	names=$(cat)
	comm -12 \
		<(echo "$names" | sed -n "s/^linux-image-\($pattern\)$/\1/p" | sort) \
		<(echo "$names" | sed -n "s/^linux-headers-\($pattern\)$/\1/p" | sort) |
		sort -V | tail -n 1
}

# The kernel series to test: "series origins pattern" lines.
series() { grep -v '^#' "${RBLN_KERNELS_TXT:-$here/kernels.txt}" | awk 'NF == 3'; }

list() {
	if [ -n "${RBLN_KERNELS:-}" ]; then
		echo "$RBLN_KERNELS" | tr ' ' '\n' | sed '/^$/d'
		return
	fi
	local name origins pattern origin v missing=0
	declare -A names
	while read -r name origins pattern; do
		v=
		for origin in ${origins//,/ }; do
			[ -n "${names[$origin]+set}" ] || names[$origin]=$(apt_for "$origin" apt-cache pkgnames linux-)
			v=$(echo "${names[$origin]}" | newest_abi "$pattern")
			[ -z "$v" ] || break
		done
		if [ -n "$v" ]; then
			echo "$v"
		else
			# Every series is looked for, so one message names all that are missing.
			echo "kernel-cache: no $name kernel ($pattern) with image and headers in: $origins (host: run apt-get update)" >&2
			missing=1
		fi
	done < <(series)
	[ "$missing" = 0 ] || exit 1
}

# The series of kernels.txt that none of the given kernels belongs to, one
# "SERIES PATTERN" line each; exit 1 if there is one.
coverage() {
	local name origins pattern k found missing=0
	while read -r name origins pattern; do
		found=0
		for k in "$@"; do
			if echo "$k" | grep -qx -- "$pattern"; then found=1; break; fi
		done
		[ "$found" = 1 ] || { echo "$name $pattern"; missing=1; }
	done < <(series)
	[ "$missing" = 0 ]
}

# Where a kernel's packages come from, found once and remembered.
origin_of() {
	local ver=$1 file=$cache_root/kernels/$1/origin o
	if [ ! -f "$file" ]; then
		for o in $(series | awk '{ print $2 }' | tr ',' '\n' | awk '!seen[$0]++'); do
			if apt_for "$o" apt-cache show "linux-image-$ver" >/dev/null 2>&1; then
				mkdir -p "$(dirname "$file")"
				echo "$o" > "$file"
				break
			fi
		done
		[ -f "$file" ] || die "no linux-image-$ver in the apt origins of kernels.txt"
	fi
	cat "$file"
}

# A package and the packages of the same kernel it depends on (7.x splits the
# image into -binary, -modules and -base; headers need -common and kbuild, and
# name an image, which building does not need).
kernel_packages() {
	local origin=$1 pkg=$2
	apt_for "$origin" apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$pkg" | grep '^linux-.*[0-9]' |
		{ if [ "${pkg#linux-image-}" = "$pkg" ]; then grep -v '^linux-image-'; else cat; fi; }
}

# Downloads those packages and extracts them all into DIR (made atomically);
# prints what they depend on outside the kernel's own packages.
fetch_into() {
	local origin=$1 pkg=$2 dir=$3 tmp deb
	echo "kernel-cache: fetching $pkg" >&2
	tmp=$(mktemp -d)
	# shellcheck disable=SC2046 # package names are words
	(cd "$tmp" && apt_for "$origin" apt-get download -q -o APT::Sandbox::User=root $(kernel_packages "$origin" "$pkg") >&2) ||
		die "apt-get download $pkg failed"
	rm -rf "$dir" "$dir.tmp"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$dir.tmp"
	done
	build_depends "$tmp"/*.deb
	rm -rf "$tmp"
	mv "$dir.tmp" "$dir"
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

# Serialises the steps that fill one kernel's cache directory.
locked() {
	local ver=$1
	shift
	mkdir -p "$cache_root/kernels/$ver"
	(
		flock 9
		"$@"	# not in an && list, where set -e would not stop it
	) 9>"$cache_root/kernels/$ver/lock"
}

# The image for the VM: root/ (the packages), vmlinuz (link to the kernel),
# modules.dep and initramfs.  7.x packages are usr-merged: the modules and the
# kernel are under usr/lib/modules, which root/lib then points to.
prepare() {
	local ver=$1 dir=$cache_root/kernels/$1 image
	if [ ! -e "$dir/vmlinuz" ]; then
		[ -d "$dir/root" ] || fetch_into "$(origin_of "$ver")" "linux-image-$ver" "$dir/root" >/dev/null
		[ -e "$dir/root/lib" ] || ln -s usr/lib "$dir/root/lib"
		for image in "boot/vmlinuz-$ver" "lib/modules/$ver/vmlinuz" ""; do
			[ -z "$image" ] || [ ! -f "$dir/root/$image" ] || break
		done
		[ -n "$image" ] || die "no kernel image in the linux-image-$ver packages"
		ln -sfn "root/$image" "$dir/vmlinuz"
	fi
	[ -f "$dir/root/lib/modules/$ver/modules.dep" ] || depmod -b "$dir/root" "$ver"
	# Rebuilt when the init script changes.
	if [ ! -f "$dir/initramfs.cpio.gz" ] || [ "$here/initramfs-init" -nt "$dir/initramfs.cpio.gz" ]; then
		build_initramfs "$dir" "$ver"
	fi
}

# The headers' Makefile names the trees by their installed paths (/usr/src/...);
# point it at the extracted ones.  A kernel of a newer Debian also gets its
# compiler and kbuild's libraries in that release's chroot.
headers() {
	local ver=$1 dir=$cache_root/kernels/$1/headers origin depends
	origin=$(origin_of "$ver")
	if [ ! -f "$dir/.rbln-ready" ]; then
		depends=$(fetch_into "$origin" "linux-headers-$ver" "$dir")
		echo "$depends" > "$dir/.rbln-depends"
		sed -i "s|/usr/src/|$dir/usr/src/|g" "$dir/usr/src/linux-headers-$ver/Makefile"
		touch "$dir/.rbln-ready"
	fi
	[ "$origin" = host ] || "$here/build-root.sh" satisfy "$origin" "$(cat "$dir/.rbln-depends")"
}

# What packages depend on outside the kernel's own packages, as one list.
build_depends() {
	local deb
	for deb in "$@"; do
		dpkg-deb -f "$deb" Depends | tr ',' '\n'
	done | sed 's/^ *//' | grep -v -e '^linux-' -e '^$' | paste -sd, | sed 's/,/, /g'
}

run() {
	local ver=$1 origin
	shift
	origin=$(origin_of "$ver")
	if [ "$origin" = host ]; then
		"$@"
	else
		"$here/build-root.sh" run "$origin" "$@"
	fi
}

case "${1:-}" in
list) list ;;
coverage) shift; coverage "$@" ;;
prepare)
	[ -n "${2:-}" ] || die "prepare needs a kernel ABI name"
	locked "$2" prepare "$2"
	echo "$cache_root/kernels/$2"
	;;
headers)
	[ -n "${2:-}" ] || die "headers needs a kernel ABI name"
	locked "$2" headers "$2"
	echo "$cache_root/kernels/$2/headers/usr/src/linux-headers-$2"
	;;
run)
	[ $# -ge 3 ] || die "usage: kernel-cache.sh run VER COMMAND..."
	ver=$2
	shift 2
	run "$ver" "$@"
	;;
*) die "usage: kernel-cache.sh list | coverage VER... | prepare VER | headers VER | run VER COMMAND..." ;;
esac
