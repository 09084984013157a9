#!/bin/bash
# Fail (and print the lines) when a kernel log holds a warning, bug, oops,
# sanitizer or leak report.  Taint from loading an out-of-tree, unsigned
# module is expected and not reported, nor are the checkers' start-up banners.
#
# RBLN_ALLOW_INJECTED_FAILURES=1 (the storm, which fails allocations on
# purpose): the page allocator's "page allocation failure" / "vmalloc error"
# reports, with their stack dumps, are expected too, and kmemleak scanning a
# whole object when its own bookkeeping allocation was the one failed.
set -u
log=${1:?usage: check-dmesg.sh DMESG_FILE}
pattern='WARNING:|BUG:|Oops|general protection fault|Kernel panic|KASAN|UBSAN|kmemleak|refcount_t:|Call Trace:|list_add corruption|list_del corruption|rbln.*leak|possible circular locking|INFO: task .* blocked|hung_task|stack-protector|double free|use-after-free'
banners='ommand line:|kmemleak: Kernel memory leak detector initialized|RCU callback double-/use-after-free debug is enabled'

# Drops each allocation-failure report: from its first line to the end of its stack dump.
drop_injected() {
	if [ "${RBLN_ALLOW_INJECTED_FAILURES:-0}" = 1 ]; then
		awk '/page allocation failure:|vmalloc error:/ { skip = 1 }
		     !skip && !/kmemleak: Cannot allocate a scan area, scanning the full object/ { print }
		     skip && /<\/TASK>/ { skip = 0 }'
	else
		cat
	fi
}

# Reports from the kernel's own boot, before init ran (so before rbln.ko or
# any test could exist), are not failures of this project: the sanitizer
# kernel under TCG once reported a wild access in an interrupt taken during
# cpu_detect (which also turns lockdep off for that boot).  They are printed,
# not hidden.
boot=$(grep -n -m1 'Run /init as init process\|Run /sbin/init as init process' "$log" | cut -d: -f1)
early=$([ -z "$boot" ] || head -n "$boot" "$log" | grep -E -n "$pattern" | grep -E -v "$banners" | head -5)
if [ -n "$early" ]; then
	echo "check-dmesg: note: reports from the kernel's boot, before init (not counted):" >&2
	echo "$early" >&2
fi
if drop_injected < "$log" | tail -n +"${boot:-1}" | grep -E -n "$pattern" | grep -E -v "$banners"; then
	exit 1
fi
exit 0
