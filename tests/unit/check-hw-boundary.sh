#!/bin/bash
# The hardware-ops boundary is checked, not promised: the core of rbln.ko
# (kernel/*.c, kernel/*.h; not sim/ or tests/) reaches device memory and
# engines only through struct rbln_hw_ops.  It must not allocate backing
# (vmalloc), copy device memory itself (memcpy), or keep fault-injection
# state (hang, fail_next_jobs, chiplet_down, injected memory errors): those
# belong to the simulator in kernel/sim/.
#   check-hw-boundary.sh [KERNEL_DIR]
set -u
kdir=${1:-$(cd "$(dirname "$0")/../../kernel" && pwd)}
rc=0
check() {	# what, extended regex
	local hits
	hits=$(grep -nE "$2" "$kdir"/*.c "$kdir"/*.h)
	if [ -n "$hits" ]; then
		echo "check-hw-boundary: $1 in core files (belongs in kernel/sim/):"
		echo "$hits"
		rc=1
	fi
}
check "backing allocation" '\b(__)?vmalloc|\bvfree\(|vmalloc_to_(page|pfn)|\bvzalloc'
check "CPU copies of device memory" '\bmemcpy(_(to|from)io)?\(|\bmemmove\('
check "fault-injection state" '\bfail_next_jobs\b|\bchiplet_down\b|[.>]hung\b|\bmemory_error_write\b'
check "simulator internals" 'rbln_sim_(engine|device|set|fail|mem|debugfs)[a-z_]*\('
[ $rc -eq 0 ] && echo "check-hw-boundary: core files are clean"
exit $rc
