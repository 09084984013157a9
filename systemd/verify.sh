#!/bin/bash
# systemd-analyze verify of our units, with this build's rbln-ctk in place of
# /usr/bin/rbln-ctk (verify checks that ExecStart can run).
#   verify.sh RBLN_CTK
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in "$here"/*.service; do
	sed "s|/usr/bin/rbln-ctk|$1|" "$unit" > "$tmp/$(basename "$unit")"
	systemd-analyze verify "$tmp/$(basename "$unit")"
	echo "verify: $(basename "$unit") ok"
done
