#!/bin/bash
# Fail (and print the lines) when a kernel log holds a warning, bug, oops,
# sanitizer or leak report.  Taint from loading an out-of-tree, unsigned
# module is expected and not reported.
set -u
log=${1:?usage: check-dmesg.sh DMESG_FILE}
pattern='WARNING:|BUG:|Oops|general protection fault|Kernel panic|KASAN|UBSAN|kmemleak|refcount_t:|Call Trace:|list_add corruption|list_del corruption|rbln.*leak|possible circular locking|INFO: task .* blocked|hung_task|stack-protector|double free|use-after-free'
# The kernel's command line names the panic switches (hung_task_panic=1).
if grep -E -n "$pattern" "$log" | grep -v 'ommand line:'; then
	exit 1
fi
exit 0
