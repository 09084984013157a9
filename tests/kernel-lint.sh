#!/bin/bash
# The module must build without a single warning with W=1 and be clean under
# sparse (C=2) against every kernel's headers, and its core objects must
# reference no simulator symbol (check-hw-boundary.sh --objects).  Builds in a
# scratch copy, with the kernel's cached headers, in the userland it was made
# for (kernel-cache.sh).
#   tests/kernel-lint.sh KERNEL...
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RBLN_BUILD:-$top/build}
[ $# -gt 0 ] || { echo "kernel-lint: no kernel to build against: nothing would be checked" >&2; exit 1; }
rc=0
for k in "$@"; do
	dir=$build/lint/$k
	rm -rf "$dir" && mkdir -p "$dir" && cp -r "$top/kernel/." "$dir/"
	log=$dir/build.log
	kdir=$("$top/tests/vm/kernel-cache.sh" headers "$k") &&
		"$top/tests/vm/kernel-cache.sh" run "$k" make -C "$kdir" M="$dir" W=1 C=2 modules >"$log" 2>&1
	status=$?
	# Debian's headers have no vmlinux for BTF; that note is not about our code.
	findings=$(grep -E 'warning|error|: note:' "$log" | grep -v 'Skipping BTF generation')
	if [ $status -ne 0 ] || [ -n "$findings" ]; then
		echo "kernel-lint: $k: W=1 C=2 build is not clean:"
		echo "$findings"
		rc=1
	else
		echo "kernel-lint: $k: W=1 C=2 clean"
	fi
	"$top/tests/unit/check-hw-boundary.sh" --objects "$dir" || rc=1
done
exit $rc
