#!/bin/bash
# Part of make bench, inside the VM: register + free of a logical device of
# 1, 8 and 32 NPUs on a host of 32 NPUs, as system calls (strace, the
# difference between 20 registrations and none) and as a ratio to the null
# ioctl.  Prints a table and writes /run/vm/bench-register.json.
set -u
bench=$1
for ((id = 1; id < 32; id++)); do
	[ -e "/sys/bus/rbln_sim/devices/rbln_sim$id" ] ||
		echo "$id atom 16" > /sys/bus/rbln_sim/new_device
done
udevadm settle --timeout=120
calls() {
	strace -f -c -o /tmp/strace-reg.txt "$bench" "$1" "$2" > /dev/null || return 1
	awk '/ total$/ { print $4 }' /tmp/strace-reg.txt
}
rows=()
printf '\nregister + free on a host of 32 NPUs\n%8s %16s %16s %20s\n' npus syscalls "syscalls/npu" "x null ioctl"
for n in 1 8 32; do
	base=$(calls "$n" 0) && more=$(calls "$n" 20) || { echo "bench-register: $n NPUs failed"; exit 1; }
	per=$(((more - base) / 20))
	times=$("$bench" "$n" 200 time) || { echo "bench-register: timing $n NPUs failed"; exit 1; }
	reg_ns=${times% *} null_ns=${times#* }
	printf '%8d %16d %16.1f %20.1f\n' "$n" "$per" "$(echo "$per / $n" | bc -l)" \
		"$(echo "$reg_ns / $null_ns" | bc -l)"
	rows+=("{\"npus\": $n, \"syscalls\": $per, \"register_ns\": $reg_ns, \"null_ioctl_ns\": $null_ns}")
done
(IFS=,; echo "{\"schema_version\": 1, \"host_npus\": 32, \"register_free\": [${rows[*]}]}") > /run/vm/bench-register.json
# Back to the one NPU the next bench starts from.
for ((id = 1; id < 32; id++)); do echo "$id" > /sys/bus/rbln_sim/del_device; done
udevadm settle --timeout=120
