#!/bin/bash
# Guest side of the PCI VM's hotplug channel: asks the host (tests/vm/qmp-hotplug.py)
# to unplug or replug a device and waits for its answer.
#   pci-hotplug.sh del|add ID     ID: edu0 or edu1 (RBLN_VM_PCI_PORTS)
# Exit 0 when QEMU did it (for del: QEMU reported DEVICE_DELETED), else 1
# with the host's reason.
set -u
verb=${1:?usage: pci-hotplug.sh del|add ID} dev=${2:?usage: pci-hotplug.sh del|add ID}
dir=/run/vm/hotplug
[ -d "$dir" ] || { echo "pci-hotplug: $dir missing: not a PCI VM (RBLN_VM_PCI=1)" >&2; exit 2; }
name=$verb-$dev-$$-$RANDOM
echo "$verb $dev" > "$dir/.$name"
mv "$dir/.$name" "$dir/$name.req"
for _ in $(seq 900); do	# 90 s: the host's device_del waits up to 60
	if [ -f "$dir/$name.done" ]; then
		answer=$(cat "$dir/$name.done")
		rm -f "$dir/$name.done"
		[ "$answer" = ok ] && exit 0
		echo "pci-hotplug: $verb $dev: $answer" >&2
		exit 1
	fi
	sleep 0.1
done
echo "pci-hotplug: $verb $dev: no answer from the host in 90 s (is qmp-hotplug.py running? see qmp.log)" >&2
exit 1
