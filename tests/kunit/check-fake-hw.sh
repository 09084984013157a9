#!/bin/bash
# Fails unless KO (rbln_fake_hw.ko) is the core and the fake backend with no
# real backend linked: it must define the core's and the fake's symbols and
# none of the simulator's (rbln_sim_*) or the PCI backend's (rbln_pci_*).
# Run on the in-tree rbln.ko it fails, which is how it was checked.
#
#   tests/kunit/check-fake-hw.sh KO
set -u
ko=${1:?usage: check-fake-hw.sh KO}
syms=$(nm "$ko") || { echo "check-fake-hw: cannot read the symbols of $ko" >&2; exit 1; }
rc=0
for want in rbln_device_create rbln_hw_job_done rbln_fake_hw_create; do
	grep -q " [Tt] $want\$" <<< "$syms" || {
		echo "check-fake-hw: $ko does not define $want: not the fake-backend build" >&2
		rc=1
	}
done
backend=$(grep -E ' (rbln_sim|rbln_pci)_' <<< "$syms")
if [ -n "$backend" ]; then
	echo "check-fake-hw: $ko links a backend ($(wc -l <<< "$backend") symbols), e.g.:" >&2
	head -5 <<< "$backend" >&2
	rc=1
fi
[ "$rc" = 0 ] && echo "check-fake-hw: $(basename "$ko") has the core and the fake backend, no rbln_sim_* or rbln_pci_* symbol"
exit "$rc"
