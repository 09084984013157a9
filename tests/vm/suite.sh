#!/bin/bash
# The integration suite, run inside the test VM by tests/run-all.sh:
# installs the group and udev rules as the package does, starts the real
# udevd, loads rbln.ko and runs the GoogleTest binaries against it.
set -u
top=${RBLN_TOP:?run me through tests/vm/run-vm.sh}
build=${RBLN_BUILD:-$top/build}
export RBLN_KO=$build/kernel/$RBLN_VM_KVER/rbln.ko
export RBLN_KO_PARAMS="sim_devices=atom,rebel100 sim_memory_mib=64"

step() { echo "suite: $*"; }
die() { echo "suite: FAILED: $*"; exit 1; }

step "group and udev rules, as installed by the package"
systemd-sysusers "$top/udev/rbln.sysusers" || die "systemd-sysusers udev/rbln.sysusers"
getent group rbln >/dev/null || die "group rbln was not created"
install -D -m 0644 "$top/udev/70-rbln.rules" /etc/udev/rules.d/70-rbln.rules
udevd=$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)
"$udevd" --daemon || die "cannot start $udevd"

step "loading rbln.ko ($RBLN_KO_PARAMS)"
modprobe drm || die "modprobe drm"
insmod "$RBLN_KO" $RBLN_KO_PARAMS || die "insmod $RBLN_KO"
udevadm settle --timeout=60

fail=0
for t in "$build"/cmake/tests/integration/rbln_integration_tests; do
	step "running $(basename "$t")"
	"$t" --gtest_color=no || fail=1
done

step "unloading rbln.ko"
rmmod rbln || { echo "suite: rmmod rbln failed"; fail=1; }
udevadm settle --timeout=60
leftover=$(ls /dev/rbln* 2>/dev/null)
[ -z "$leftover" ] || { echo "suite: links left after unload: $leftover"; fail=1; }
exit $fail
