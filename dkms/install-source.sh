#!/bin/bash
# Lay out the DKMS source tree /usr/src/rbln-<version> (or under $DESTDIR):
# the kernel sources plus dkms.conf with the version filled in.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$top/kernel/VERSION")
dest=${DESTDIR:-}/usr/src/rbln-$version
rm -rf "$dest"
mkdir -p "$dest"
cp -r "$top/kernel/." "$dest/"
# The KUnit suites and their Kconfig belong to the test kernel only.
rm -rf "$dest/tests" "$dest/Kconfig"
sed "s/@VERSION@/$version/" "$top/dkms/dkms.conf.in" > "$dest/dkms.conf"
echo "$dest"
