#!/bin/bash
# DKMS packaging test: dkms add/build/install rbln for each kernel, against the
# kernel's cached headers and in the userland it was made for (kernel-cache.sh),
# then check that the module landed built for that kernel, with our version,
# signed with the key DKMS made, and that dkms status says installed.
#
# Everything goes to a private tree under build/dkms (--dkmstree, --sourcetree,
# --installtree, no depmod); DKMS's framework.conf, which would put its signing
# key in /var/lib/dkms, is replaced by a private one inside a mount namespace
# of the test's own.  The host's /usr/src, /lib/modules and /var/lib/dkms are
# not touched.  Needs root (mount namespaces; the chroot of newer kernels).
#
#   tests/dkms-test.sh KERNEL...
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RBLN_BUILD:-$top/build}
version=$(cat "$top/kernel/VERSION")

die() { echo "dkms-test: $*" >&2; exit 1; }

# One kernel, in its userland and in a private mount namespace (the loop at
# the end runs it so): dkms-test.sh --one VER KDIR TREE
one() {
	local k=$1 kdir=$2 tree=$3 ko vermagic
	[ -f /etc/dkms/framework.conf ] || die "dkms is not installed here (make deps)"
	# The install tree stands in for /lib/modules, where the kernel is "installed".
	mkdir -p "$tree/framework.conf.d" "$tree/dkms" "$tree/modules/$k"
	cat > "$tree/framework.conf" <<-EOF
		sign_file="$kdir/scripts/sign-file"
		mok_signing_key="$tree/mok.key"
		mok_certificate="$tree/mok.pub"
	EOF
	mount --bind "$tree/framework.conf" /etc/dkms/framework.conf
	mount --bind "$tree/framework.conf.d" /etc/dkms/framework.conf.d

	local dkms=(dkms --dkmstree "$tree/dkms" --sourcetree "$tree/src" --installtree "$tree/modules")
	"${dkms[@]}" add "rbln/$version"
	"${dkms[@]}" build "rbln/$version" -k "$k" --kernelsourcedir "$kdir"
	"${dkms[@]}" install "rbln/$version" -k "$k" --kernelsourcedir "$kdir" --no-depmod

	ko=$(find "$tree/modules/$k/updates/dkms" -name 'rbln.ko*' 2>/dev/null | head -n 1)
	[ -n "$ko" ] || die "no rbln.ko under $tree/modules/$k/updates/dkms"
	vermagic=$(modinfo -F vermagic "$ko")
	[ "${vermagic%% *}" = "$k" ] || die "$ko built for '$vermagic', not $k"
	[ "$(modinfo -F version "$ko")" = "$version" ] || die "$ko has version $(modinfo -F version "$ko"), not $version"
	[ -n "$(modinfo -F signer "$ko")" ] || die "$ko is not signed"
	"${dkms[@]}" status "rbln/$version" -k "$k" | grep -q installed ||
		die "dkms status does not say installed for $k"
	echo "dkms-test: $k: $ko ok (signed by '$(modinfo -F signer "$ko")')"
}

if [ "${1:-}" = --one ]; then
	shift
	one "$@"
	exit
fi

[ "$(id -u)" = 0 ] || { echo "dkms-test: needs root (mount namespaces, chroot)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: dkms-test.sh KERNEL..." >&2; exit 2; }
for k in "$@"; do
	tree=$build/dkms/$k
	rm -rf "$tree"
	mkdir -p "$tree"
	DESTDIR=$tree/dest "$top/dkms/install-source.sh" >/dev/null
	mkdir -p "$tree/src"
	mv "$tree/dest/usr/src/rbln-$version" "$tree/src/"
	kdir=$("$top/tests/vm/kernel-cache.sh" headers "$k")
	# The namespace is made here, outside a chroot, whose / is no mount point.
	unshare --mount --propagation private \
		"$top/tests/vm/kernel-cache.sh" run "$k" "$top/tests/dkms-test.sh" --one "$k" "$kdir" "$tree"
done
