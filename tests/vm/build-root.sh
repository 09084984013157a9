#!/bin/bash
# A Debian userland of a newer release, for kernels whose kbuild tools and
# compiler come from it (7.x from trixie-backports needs trixie's glibc and
# gcc-14): a debootstrap chroot in the cache, made once per release and reused.
# Commands run in it inside a private mount namespace in which the kernel cache,
# the repository and the current directory have the same paths as outside, so
# no path needs translating and nothing is mounted on the host.  Needs root.
#
#   build-root.sh path SUITE              the chroot's directory (SUITE: trixie-backports, sid, ...)
#   build-root.sh satisfy SUITE DEPENDS   make the chroot if needed and install what a Debian
#                                         dependency list names ("gcc-14, pahole (>= 1.22)")
#   build-root.sh run SUITE COMMAND...    run COMMAND inside, in the current directory
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache_root=${RBLN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rbln-vm}
die() { echo "build-root: $*" >&2; exit 1; }

# The release the chroot is made of: a backports suite's base release.
release_of() { echo "${1%-backports}"; }
path_of() { echo "$cache_root/chroot/$(release_of "$1")"; }

# Directories visible inside at their own paths: the kernel cache (headers),
# the repository, the build tree and the current directory.
binds() {
	local d s inside seen=()
	for d in "$cache_root/kernels" "$top" "${RBLN_BUILD:-}" "$PWD"; do
		if [ -z "$d" ] || [ ! -d "$d" ]; then continue; fi
		d=$(realpath "$d")
		inside=0
		for s in / "${seen[@]}"; do
			case "$d/" in "$s" | "$s"/*) inside=1 ;; esac
		done
		[ $inside = 1 ] || seen+=("$d")
	done
	printf '%s\n' "${seen[@]}"
}

run_in() {
	local root=$1
	shift
	[ "$(id -u)" = 0 ] || die "running in the $(basename "$root") chroot needs root"
	binds | unshare --mount --propagation private -- /bin/bash -c '
		set -e
		root=$1; shift
		mount -t proc proc "$root/proc"
		while read -r d; do
			mkdir -p "$root$d"
			mount --bind "$d" "$root$d"
		done
		exec chroot "$root" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			/bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$(pwd -P)" "$@"
	' build-root "$root" "$@"
}

install_in() {	# root apt-get-command args...
	local root=$1
	shift
	run_in "$root" env DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends "$@" >&2
}

# debootstrap and package lists; the packages come with satisfy.
create() {
	local suite=$1 release root mirror
	release=$(release_of "$suite")
	root=$(path_of "$suite")
	[ ! -f "$root/.rbln-ready" ] || return 0
	[ "$(id -u)" = 0 ] || die "making the $release chroot needs root"
	command -v debootstrap >/dev/null || die "debootstrap missing (make deps)"
	mirror=$("$here/debian-apt.sh" --mirror)
	echo "build-root: debootstrap $release into $root" >&2
	rm -rf "$root" "$root.tmp"
	debootstrap --variant=minbase --components=main "$release" "$root.tmp" "$mirror" >&2 ||
		die "debootstrap $release failed (log: $root.tmp/debootstrap/debootstrap.log)"
	{
		echo "deb $mirror $release main"
		[ "$suite" = "$release" ] || echo "deb $mirror $suite main"
	} > "$root.tmp/etc/apt/sources.list"
	printf 'Acquire::Check-Valid-Until "false";\nAcquire::Languages "none";\n' \
		> "$root.tmp/etc/apt/apt.conf.d/50rbln"
	run_in "$root.tmp" apt-get -q update >&2
	touch "$root.tmp/.rbln-ready"
	mv "$root.tmp" "$root"
}

# What every module build and test here uses besides the kernel's own needs.
tools="make, sparse, dkms, kmod, openssl"

satisfy() {
	local suite=$1 depends="$tools, $2" root
	root=$(path_of "$suite")
	(
		flock 9
		create "$suite"
		! grep -qxF "$depends" "$root/.rbln-satisfied" 2>/dev/null || exit 0
		# The lists may be older than the kernel: refresh them once if apt cannot satisfy.
		install_in "$root" satisfy "$depends" ||
			{ run_in "$root" apt-get -q update >&2 && install_in "$root" satisfy "$depends"; } ||
			die "cannot install '$depends' in the $(release_of "$suite") chroot"
		run_in "$root" apt-get clean
		echo "$depends" >> "$root/.rbln-satisfied"
	) 9>"$cache_root/chroot/$(release_of "$suite").lock"
}

mkdir -p "$cache_root/chroot"
case "${1:-}" in
path) [ -n "${2:-}" ] || die "usage: build-root.sh path SUITE"; path_of "$2" ;;
satisfy) [ $# = 3 ] || die "usage: build-root.sh satisfy SUITE DEPENDS"; satisfy "$2" "$3" ;;
run)
	[ $# -ge 3 ] || die "usage: build-root.sh run SUITE COMMAND..."
	root=$(path_of "$2")
	[ -f "$root/.rbln-ready" ] || die "no $(release_of "$2") chroot yet (kernel-cache.sh headers makes it)"
	shift 2
	run_in "$root" "$@"
	;;
*) die "usage: build-root.sh path|satisfy|run SUITE ..." ;;
esac
