#!/bin/bash
# Sourced inside the VM: make it an NPU host as the package would (group,
# udev rules, udevd running) and load rbln.ko from the build tree.
#   RBLN_KO_PARAMS  module parameters (default: one ATOM and one Rebel100)
top=${RBLN_TOP:?run through tests/vm/run-vm.sh}
build=${RBLN_BUILD:-$top/build}
export RBLN_KO=$build/kernel/$RBLN_VM_KVER/rbln.ko
export RBLN_KO_PARAMS=${RBLN_KO_PARAMS:-sim_devices=atom,rebel100}

setup_node() {
	systemd-sysusers "$top/udev/rbln.sysusers" >/dev/null || return 1
	getent group rbln >/dev/null || { echo "setup-node: group rbln was not created"; return 1; }
	install -D -m 0644 "$top/udev/70-rbln.rules" /etc/udev/rules.d/70-rbln.rules
	install -D -m 0644 "$top/udev/72-rbln-late.rules" /etc/udev/rules.d/72-rbln-late.rules
	"$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)" --daemon || return 1
	# Loopback (the VM has no NIC): the exporter and Prometheus talk over it.
	ip link set lo up || return 1
	# What rbln.ko links against: the DRM core, the GPU scheduler, and the buddy
	# allocator where it is not in vmlinux (drm_buddy.ko on 6.1).
	modprobe -a drm drm_buddy gpu-sched || return 1
	# shellcheck disable=SC2086 # parameters are words
	insmod "$RBLN_KO" $RBLN_KO_PARAMS || { echo "setup-node: insmod $RBLN_KO failed"; return 1; }
	udevadm settle --timeout=60
}
