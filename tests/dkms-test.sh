#!/bin/bash
# DKMS packaging test (root): dkms add/build/install rbln for each kernel
# whose headers are installed, check that the module lands built for that
# kernel, then remove it again.
#
#   tests/dkms-test.sh KERNEL...
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$top/kernel/VERSION")
[ "$(id -u)" = 0 ] || { echo "dkms-test: needs root (dkms installs into /usr/src and /lib/modules)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: dkms-test.sh KERNEL..." >&2; exit 2; }

cleanup() {
	dkms remove "rbln/$version" --all >/dev/null 2>&1 || true
	rm -rf "/usr/src/rbln-$version"
}
trap cleanup EXIT
cleanup

src=$("$top/dkms/install-source.sh")
echo "dkms-test: source tree $src"
dkms add "rbln/$version"
for k in "$@"; do
	dkms build "rbln/$version" -k "$k"
	dkms install "rbln/$version" -k "$k"
	ko=$(find "/lib/modules/$k/updates/dkms" -name 'rbln.ko*' 2>/dev/null | head -n 1)
	[ -n "$ko" ] || { echo "dkms-test: no rbln.ko under /lib/modules/$k/updates/dkms" >&2; exit 1; }
	vermagic=$(modinfo -F vermagic "$ko")
	[ "${vermagic%% *}" = "$k" ] || { echo "dkms-test: $ko built for '$vermagic', not $k" >&2; exit 1; }
	[ "$(modinfo -F version "$ko")" = "$version" ] || { echo "dkms-test: $ko has the wrong version" >&2; exit 1; }
	dkms status "rbln/$version" -k "$k" | grep -q installed ||
		{ echo "dkms-test: dkms status does not say installed for $k" >&2; exit 1; }
	echo "dkms-test: $k: $ko ok"
done
