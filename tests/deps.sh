#!/bin/bash
# Installs the Debian packages the project needs to build, test and run its
# VMs (as root, or through sudo): build tools and libraries only.  The test
# kernels' images and headers are not installed: kernel-cache.sh downloads and
# unpacks them into its cache.  Quick when everything is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(
	build-essential cmake pkg-config git
	libgtest-dev libgmock-dev libdrm-dev libudev-dev libnl-genl-3-dev libfmt-dev nlohmann-json3-dev
	dkms sparse kmod openssl strace python3-jsonschema
	pahole	# the 6.12 headers' dependency (BTF of modules); they are unpacked, not installed
	qemu-system-x86 busybox-static cpio xz-utils zstd debootstrap
	pciutils	# lspci -k in the PCI VM (tests/integration/test_pci.cpp)
	udev systemd
	linux-source-6.12 bc flex bison libelf-dev libssl-dev python3
	libyaml-cpp-dev crun
	libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libcli11-dev
	prometheus-cpp-dev prometheus curl iproute2 python3-yaml
	golang-go golang-github-container-orchestrated-devices-container-device-interface-dev
	libtomlplusplus-dev podman
	libtracefs-dev libtraceevent-dev	# rbln-smi trace record (libtracefs.pc requires libtraceevent, which libtracefs-dev does not pull in)
	containerd docker.io	# tests/k8s/test_containerd.cpp: Debian 12's containerd 1.6 (and runc), dockerd 20.10
)
# kubectl (tests/deploy/check.sh): Debian's kubernetes-client, unless some
# kubectl is installed already (another package's /usr/bin/kubectl conflicts).
command -v kubectl >/dev/null || packages+=(kubernetes-client)

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
	done
}

# The kernels to test come from apt's lists; refresh them when they are empty.
if ! kernels=$("$here/vm/kernel-cache.sh" list 2>/dev/null); then
	$sudo apt-get update -q
	kernels=$("$here/vm/kernel-cache.sh" list)
fi

todo=$(missing "${packages[@]}")
if [ -n "$todo" ]; then
	echo "deps: installing: $(echo $todo)"
	[ -n "${CI:-}" ] || $sudo apt-get update -q
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $todo
fi
echo "deps: ok (kernels: $(echo $kernels))"
