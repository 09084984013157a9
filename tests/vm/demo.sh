#!/bin/bash
# make run / make shell: an NPU host with one ATOM and one Rebel100.
set -u
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/setup-node.sh"
setup_node || exit 1

echo
echo "\$ ls -l /dev/rbln[0-9]* /dev/rbln/by-uuid; ls -lL /dev/rbln[0-9]*"
ls -l /dev/rbln[0-9]* /dev/rbln/by-uuid
ls -lL /dev/rbln[0-9]*
echo
echo "\$ grep . /sys/bus/rbln_sim/devices/rbln_sim1/{name,status,pci_bus_id,chiplet*/engines}"
grep . /sys/bus/rbln_sim/devices/rbln_sim1/{name,status,pci_bus_id,chiplet*/engines}
echo
echo "\$ rbln-smi"
"$build/cmake/tools/rbln-smi/rbln-smi"
echo
echo "\$ rbln-smi -q -i 1"
"$build/cmake/tools/rbln-smi/rbln-smi" -q -i 1

if [ "${1:-}" = --shell ]; then
	echo
	echo "rbln-vm: a shell on the NPU host; the repository is at $RBLN_TOP (read-only)."
	echo "rbln-vm: rbln-smi is $build/cmake/tools/rbln-smi/rbln-smi; try also:"
	echo "rbln-vm:   echo '2 rebel100' > /sys/bus/rbln_sim/new_device.  exit to power off."
	cd "$RBLN_TOP" && bash -i
fi
exit 0
