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

# Work, not idle devices: the seed's Rebel100 pattern profiled in the
# background while rbln-smi shows its process, memory and utilisation; its
# traces land in /run/vm, which is the host's $RBLN_VM_OUT.
smi=$build/cmake/tools/rbln-smi/rbln-smi
traces=/run/vm/traces
rm -rf "$traces" && mkdir -p "$traces"
echo
echo "\$ cd $traces; RBLN_PROFILER=1 rbln-example-rebel100 --npu 1 --repeat 30 --pause-ms 40 &"
(cd "$traces" && RBLN_PROFILER=1 exec "$build/cmake/tools/examples/rbln-example-rebel100" \
	--npu 1 --repeat 30 --pause-ms 40 > "$traces/example.log" 2>&1) &
example=$!
sleep 2
echo
echo "\$ rbln-smi        # while it runs"
"$smi"
echo
echo "\$ rbln-smi pmon -i 1 --count 2"
"$smi" pmon -i 1 --count 2
wait "$example" || echo "demo: the example failed: $(cat "$traces/example.log")"
cat "$traces/example.log"
whole=$(ls "$traces" | grep -E '^rbln_[0-9]{8}_[0-9]{6}\.pb$' | head -n1)
echo
echo "demo: the traces, on the host (open them at https://ui.perfetto.dev, Open trace file):"
ls "$traces" | grep '\.pb$' | sed "s|^|  ${RBLN_VM_OUT:-/run/vm}/traces/|"
if [ -n "$whole" ]; then
	echo
	echo "\$ rbln-smi trace summary $whole"
	(cd "$traces" && "$smi" trace summary "$whole")
fi

if [ "${1:-}" = --shell ]; then
	echo
	echo "rbln-vm: a shell on the NPU host; the repository is at $RBLN_TOP (read-only)."
	echo "rbln-vm: rbln-smi is $build/cmake/tools/rbln-smi/rbln-smi; try also:"
	echo "rbln-vm:   echo '2 rebel100' > /sys/bus/rbln_sim/new_device.  exit to power off."
	cd "$RBLN_TOP" && bash -i
fi
exit 0
