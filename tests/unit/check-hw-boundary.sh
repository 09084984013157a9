#!/bin/bash
# The hardware-ops boundary is checked, not promised: the core of rbln.ko
# (every .c and .h under kernel/ but the backends in sim/, the KUnit suites in
# tests/ and the compile probes in probes/) reaches device memory and engines
# only through rbln_hw.h.  It must not allocate or map backing, copy or clear
# device memory itself, keep fault-injection state, or know a backend's
# header, types or functions beyond the entry points rbln_hw.h declares.
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
		! -path '*/sim/*' ! -path '*/tests/*' ! -path '*/probes/*')
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
mapfile -t files < <(find "$kdir" \( -path "$kdir/sim" -o -path "$kdir/tests" -o -path "$kdir/probes" \) -prune \
	-o -type f -name '*.[ch]' -print | sort)
[ ${#files[@]} -gt 0 ] || fail "$kdir: no core source files"
[ -f "$kdir/rbln_hw.h" ] || fail "$kdir: no rbln_hw.h"
allowed=$(entry_points "$kdir" | paste -sd'|')

check() {	# what, extended regex, [regex of matches that are fine]
	local hits
	hits=$(grep -nE "$2" "${files[@]}" | { if [ -n "${3:-}" ]; then grep -vE "$3"; else cat; fi; })
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
check "simulator types" '\bstruct[[:space:]]+rbln_sim_[a-z_]*'
check "simulator functions" '\brbln_sim_[a-z_]*[[:space:]]*\(' "${allowed:+\\b($allowed)[[:space:]]*\\(}"
[ $rc -eq 0 ] && echo "check-hw-boundary: ${#files[@]} core files are clean"
exit $rc
