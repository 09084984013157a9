#!/bin/bash
# Compares what librbln_devmgr.so exports (nm -D, demangled, with symbol
# versions) with the checked-in list, so that any change to the ABI is
# deliberate.  After a deliberate change: check-exports.sh LIB LIST --update
set -euo pipefail
lib=$1 list=$2
exports() {
	nm -D --defined-only --with-symbol-versions -C "$lib" | cut -d' ' -f3- | LC_ALL=C sort
}
if [ "${3:-}" = --update ]; then
	exports > "$list"
	exit 0
fi
if ! diff -u "$list" <(exports); then
	echo "check-exports: $lib exports differ from $list (- listed, + exported);" \
	     "if deliberate, run: $0 $lib $list --update" >&2
	exit 1
fi
echo "check-exports: $(wc -l < "$list") symbols, as listed"
