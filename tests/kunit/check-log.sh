#!/bin/bash
# Fails (and prints the lines) when the KUnit run's console log holds a
# checker report: KASAN, lockdep, UBSAN, debugobjects, WARN/BUG/Oops, or a
# kmemleak suspect; or when a module failed to load or unload.  The same
# patterns as the VM tests (tests/vm/check-dmesg.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
log=${1:?usage: check-log.sh CONSOLE_LOG}
rc=0

# The kernel's lines (printk times; our progress lines have none).
"$here/../vm/check-dmesg.sh" --serial "$log" || rc=1
if ! grep -q -E '^rbln-kunit: lockdep +debug_locks: +1$' "$log"; then
	echo "check-log: lockdep was not on at the end of the run:"
	grep '^rbln-kunit: lockdep' "$log" || echo "check-log: (no lockdep line: the run did not get that far)"
	rc=1
fi

if grep -q '^rbln-kunit: \(modprobe\|rmmod\) rbln[a-z_]* failed' "$log"; then
	grep '^rbln-kunit: .* failed' "$log"
	rc=1
fi
if ! grep -q '^rbln-kunit: kmemleak report:' "$log"; then
	echo "check-log: kmemleak did not run"
	rc=1
elif grep -q 'unreferenced object' "$log"; then
	echo "check-log: kmemleak suspects:"
	sed -n '/^rbln-kunit: kmemleak report:/,/^rbln-kunit: done/p' "$log"
	rc=1
fi
exit "$rc"
