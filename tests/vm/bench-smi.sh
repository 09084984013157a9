#!/bin/bash
# Part of make bench, inside the VM: rbln-smi's wall time and system calls for
# 1, 8 and 64 simulated NPUs (the cost per device should stay flat).
# Prints a table and writes /run/vm/bench-smi.json.
set -u
smi=$1
rows=()
printf '\n%8s %10s %10s %16s %18s\n' devices "wall ms" syscalls "syscalls/device" "wall ms/device"
for n in 1 8 64; do
	# Devices 0..n-1 with 16 MiB each (the module was loaded with one).
	for ((id = 1; id < n; id++)); do
		[ -e "/sys/bus/rbln_sim/devices/rbln_sim$id" ] ||
			echo "$id atom 16" > /sys/bus/rbln_sim/new_device
	done
	udevadm settle --timeout=120
	"$smi" > /dev/null	# warm caches
	start=$(date +%s%N)
	for _ in 1 2 3 4 5; do "$smi" > /dev/null; done
	wall_us=$((($(date +%s%N) - start) / 5000))
	calls=$(strace -f -c -o /tmp/strace.txt "$smi" > /dev/null; awk '/ total$/ { print $4 }' /tmp/strace.txt)
	printf '%8d %10.1f %10d %16.1f %18.2f\n' "$n" "$(echo "$wall_us / 1000" | bc -l)" "$calls" \
		"$(echo "$calls / $n" | bc -l)" "$(echo "$wall_us / 1000 / $n" | bc -l)"
	rows+=("{\"devices\": $n, \"wall_us\": $wall_us, \"syscalls\": $calls}")
done
(IFS=,; echo "{\"schema_version\": 1, \"rbln_smi\": [${rows[*]}]}") > /run/vm/bench-smi.json
