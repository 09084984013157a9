#!/bin/bash
# The hardware-ops boundary is checked, not promised: the core of rbln.ko
# (every .c and .h under kernel/ but the backends in sim/ and pci/, the KUnit
# suites in tests/ and the compile probes in probes/) reaches device memory
# and engines only through rbln_hw.h.  It must not allocate or map backing,
# copy or clear device memory itself, keep fault-injection state, call a
# backend op but through rbln_hw.h's rbln_hw_*() wrappers, or know a
# backend's header, types or functions beyond the entry points rbln_hw.h
# declares.  A backend (the fake one of the KUnit suites too), in turn,
# includes no core header but rbln_hw.h (and rbln_sku.h, rbln_compat.h,
# rbln_test_point.h) and reads no core internals.
#
#   check-hw-boundary.sh [KERNEL_DIR]     the sources
#   check-hw-boundary.sh --objects DIR    a built tree (kernel-lint.sh's): no
#                                         core object references a simulator
#                                         symbol but those entry points (nm)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../kernel" && pwd)
rc=0
fail() { echo "check-hw-boundary: $*" >&2; exit 1; }

# The backend symbols rbln_hw.h declares for the core: the only ones it may use.
entry_points() {
	sed -n 's/^[a-z].*[ *]\(rbln_sim_[a-z_]*\)(.*);$/\1/p' "$1/rbln_hw.h"
}

if [ "${1:-}" = --objects ]; then
	dir=${2:?usage: check-hw-boundary.sh --objects BUILT_KERNEL_DIR}
	[ -d "$dir" ] || fail "$dir: no such directory"
	mapfile -t objects < <(find "$dir" -name '*.o' ! -name '*.mod.o' ! -name 'rbln.o' \
		! -path '*/sim/*' ! -path '*/pci/*' ! -path '*/tests/*' ! -path '*/probes/*')
	[ ${#objects[@]} -gt 0 ] || fail "$dir: no core objects (build it first)"
	allowed=$(entry_points "$dir" | paste -sd'|')
	[ -n "$allowed" ] || fail "$dir/rbln_hw.h declares no backend entry point"
	for o in "${objects[@]}"; do
		hits=$(nm -u "$o" | awk '{ print $NF }' | grep -E '^rbln_sim_' | grep -v -x -E "$allowed")
		if [ -n "$hits" ]; then
			echo "check-hw-boundary: ${o#"$dir"/} references simulator symbols:" $hits
			rc=1
		fi
	done
	[ $rc -eq 0 ] && echo "check-hw-boundary: ${#objects[@]} core objects reference no simulator symbol but $allowed"
	exit $rc
fi

kdir=${1:-$src}
[ -d "$kdir" ] || fail "$kdir: no such directory"
mapfile -t files < <(find "$kdir" \( -path "$kdir/sim" -o -path "$kdir/pci" -o -path "$kdir/tests" -o -path "$kdir/probes" \) -prune \
	-o -type f -name '*.[ch]' -print | sort)
[ ${#files[@]} -gt 0 ] || fail "$kdir: no core source files"
[ -f "$kdir/rbln_hw.h" ] || fail "$kdir: no rbln_hw.h"
allowed=$(entry_points "$kdir" | paste -sd'|')

check() {	# what, extended regex, [regex of matches that are fine]
	local hits
	hits=$(grep -nE -e "$2" "${files[@]}" | { if [ -n "${3:-}" ]; then grep -vE "$3"; else cat; fi; })
	if [ -n "$hits" ]; then
		echo "check-hw-boundary: $1 in core files (belongs to a backend):"
		echo "$hits"
		rc=1
	fi
}
check "backing allocation" \
	'\b(__)?vmalloc|\bvfree\(|vmalloc_to_(page|pfn)|\bvzalloc|\bkvzalloc\(|\balloc_pages|__get_free_pages|\bvmap\('
# A core memset clears its own structures (a sizeof), never a buffer's bytes.
check "CPU copies of device memory" \
	'\b(__builtin_)?(memcpy|memmove|memset)(_(to|from)io)?\(|\bcopy_(user_)?page\(|\bcopy_highpage\(' \
	'\bmemset\([^;]*,[[:space:]]*sizeof'
check "fault-injection state" '\bfail_next_jobs\b|\bchiplet_down\b|[.>]hung\b|\bmemory_error_write\b'
check "a backend's header" '#include[[:space:]]*"(\.\./)*(sim|pci)/'
# The core reaches a backend only through rbln_hw.h's rbln_hw_*() wrappers.
check "a backend op called outside rbln_hw.h's wrappers" \
	'(->|\.)hw->[a-z_]+|\brdev->hw\b' '^[^:]*/rbln_hw\.h:|^[^:]*/rbln_hw\.c:[0-9]+:[[:space:]]*rdev->hw = ops;$'
check "simulator types" '\bstruct[[:space:]]+rbln_sim_[a-z_]*'
check "simulator functions" '\brbln_sim_[a-z_]*[[:space:]]*\(' "${allowed:+\\b($allowed)[[:space:]]*\\(}"
[ $rc -eq 0 ] && echo "check-hw-boundary: ${#files[@]} core files are clean"

# The other side: a backend knows of the core only what rbln_hw.h gives it
# (plus the product table, the compat shims and the test points), never the
# core's device, buffers or jobs.  The KUnit suites' fake backend
# (tests/rbln_fake_hw.[ch]) is held to the same: it tests the core against the
# contract alone.
mapfile -t backend_files < <(find "$kdir/sim" "$kdir/pci" -type f -name '*.[ch]' 2>/dev/null | sort;
	find "$kdir/tests" -type f -name 'rbln_fake_hw.[ch]' 2>/dev/null | sort)
if [ ${#backend_files[@]} -eq 0 ]; then
	echo "check-hw-boundary: $kdir has no backend (sim/ or pci/)"
	exit 1
fi
backend_rc=0
bcheck() {	# what, extended regex, [regex of matches that are fine]
	local hits
	hits=$(grep -nE -e "$2" "${backend_files[@]}" | { if [ -n "${3:-}" ]; then grep -vE "$3"; else cat; fi; })
	if [ -n "$hits" ]; then
		echo "check-hw-boundary: $1 in backend files (the core's own):"
		echo "$hits"
		backend_rc=1
	fi
}
bcheck "a core header" '#include[[:space:]]*"\.\./' \
	'#include[[:space:]]*"\.\./rbln_(hw|sku|compat|test_point)\.h"'
bcheck "core internals" \
	'->(vaddr|bos|bufs_inline)\b|\brdev->(chiplets|nr_chiplets|info|drm|hw|hw_priv|status|parent)\b|\bstruct[[:space:]]+rbln_(bo|job|chiplet|engine|client)\b'
[ $backend_rc -eq 0 ] && echo "check-hw-boundary: ${#backend_files[@]} backend files use only rbln_hw.h"
[ $backend_rc -eq 0 ] || rc=1
exit $rc
