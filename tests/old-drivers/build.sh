#!/bin/bash
# Builds rbln.ko as it was at the last commit of each older interface, from
# this repository's history, for kernel VER: what libdevmgr of this tree must
# still work with (tests/old-drivers/suite.sh runs it against them).
#   build.sh VER OUTDIR     -> OUTDIR/if<N>/rbln.ko for N = 9 .. 15, those below this tree's
#                              interface (15 is built once this tree has moved past it)
# Exits 77 when this checkout lacks that history (a shallow clone or an export).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ver=${1:?usage: build.sh VER OUTDIR} out=${2:?usage: build.sh VER OUTDIR}

# The last commit at each interface (git log -S'DRM_RBLN_UAPI_VERSION' on the UAPI header).
revisions=(
	"9 30722e0afb849d08c810500b1c03e7a5d2215d1a"	# before syncobjs
	"10 a5ee33a904021da6bb0718cbdd85a33da9d9c193"	# syncobjs, no end report from SUBMIT
	"11 341491f073a3804535a016301dd2490038545b7f"	# end report, no SUBMIT_BATCH
	"12 821c12e2cf281ce065ef69ff805009c39ef3a74f"	# SUBMIT_BATCH, no job limit
	"13 62c683ed74f7e92ced67e6bd7acf8f1c1ca14fff"	# job limit (JOB_MAX_BYTES), no device times
	"14 3c4aacae73219c028cf35cc097cf627f4ece1066"	# device times (SUBMIT_TIMES, JOB_TIMES)
	"15 949b672d73179eafe4cc91d2d00bfcce2ecfc228"	# NPUs on PCI, no times reported by SUBMIT
)
# Only the interfaces older than this tree's: the current one is no old driver.
current=$(sed -n 's/^#define DRM_RBLN_UAPI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$top/kernel/include/uapi/drm/rbln_drm.h")
older=()
for entry in "${revisions[@]}"; do
	[ "${entry%% *}" -lt "$current" ] && older+=("$entry")
done
revisions=("${older[@]}")

for entry in "${revisions[@]}"; do
	read -r n rev <<< "$entry"
	git -C "$top" cat-file -e "$rev^{commit}" 2>/dev/null || {
		echo "old-drivers: commit $rev (interface $n) is not in this checkout's history" >&2
		exit 77
	}
done
kdir=$("$top/tests/vm/kernel-cache.sh" headers "$ver")
for entry in "${revisions[@]}"; do
	read -r n rev <<< "$entry"
	dir=$out/if$n
	[ "$(cat "$dir/.rev" 2>/dev/null)" = "$rev" ] && [ -f "$dir/rbln.ko" ] && continue
	rm -rf "$dir" && mkdir -p "$dir"
	git -C "$top" archive "$rev" kernel | tar -x -C "$dir" --strip-components=1
	got=$(sed -n 's/^#define DRM_RBLN_UAPI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
		"$dir/include/uapi/drm/rbln_drm.h")
	[ "$got" = "$n" ] || { echo "old-drivers: $rev has interface $got, not $n" >&2; exit 1; }
	"$top/tests/vm/kernel-cache.sh" run "$ver" make -C "$kdir" M="$dir" modules > "$dir/build.log" 2>&1 || {
		tail -20 "$dir/build.log" >&2
		echo "old-drivers: interface $n ($rev) does not build for $ver" >&2
		exit 1
	}
	echo "$rev" > "$dir/.rev"
	echo "old-drivers: interface $n built for $ver"
done
