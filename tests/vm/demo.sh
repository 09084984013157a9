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
printf '%-4s %-10s %-18s %-13s %-7s %-7s %s\n' NPU Name Node "PCI BUS ID" Temp Power "Memory(total)"
for d in /sys/bus/rbln_sim/devices/*; do
	printf '%-4s %-10s %-18s %-13s %-7s %-7s %s MiB\n' "$(cat "$d/index")" "$(cat "$d/name")" \
		"$(readlink -f "/dev/rbln$(cat "$d/index")")" "$(cat "$d/pci_bus_id")" \
		"$(($(cat "$d/temperature") / 1000))C" "$(($(cat "$d/power_draw") / 1000000))W" \
		"$(($(cat "$d/memory_total") >> 20))"
done

if [ "${1:-}" = --shell ]; then
	echo
	echo "rbln-vm: a shell on the NPU host; the repository is at $RBLN_TOP (read-only)."
	echo "rbln-vm: try: echo '2 rebel100' > /sys/bus/rbln_sim/new_device.  exit to power off."
	cd "$RBLN_TOP" && bash -i
fi
exit 0
