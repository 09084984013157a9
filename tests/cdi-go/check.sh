#!/bin/bash
# Feeds our specs to Debian's Go CDI library (0.5.2, a real and independent
# parser and validator): every spec rbln-ctk generates must be accepted, and
# the examples here must be judged the same way by it and by
# `rbln-ctk cdi validate`.  The Go program is built offline from
# /usr/share/gocode (GOPATH mode, no module proxy).
#   check.sh BUILD_DIR CDI_SAMPLES RBLN_CTK LIBRBLN_DEVMGR RBLN_SMI
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1/cdi-go samples=$2 ctk=$3 lib_so=$4 smi=$5
lib=/usr/share/gocode/src/github.com/container-orchestrated-devices/container-device-interface
if ! command -v go >/dev/null || [ ! -d "$lib" ]; then
	echo "cdi-go: needs golang-go and golang-github-container-orchestrated-devices-container-device-interface-dev (make deps)"
	exit 1
fi
mkdir -p "$out"
GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOPROXY=off GOCACHE=$out/cache \
	go build -o "$out/cdi_check" "$here/cdi_check.go"

rm -rf "$out/generated" && "$samples" "$out/generated" "$lib_so" "$smi" "$ctk"
fail=0
"$out/cdi_check" "$out"/generated/* || { echo "cdi-go: FAILED: the Go library rejects a spec we generate"; fail=1; }
for f in "$here"/accepted/*.yaml; do
	"$out/cdi_check" "$f" || { echo "cdi-go: FAILED: $f should be valid"; fail=1; }
	"$ctk" cdi validate --no-host-check "$f" || { echo "cdi-go: FAILED: rbln-ctk rejects $f"; fail=1; }
done
for f in "$here"/rejected/*.yaml; do
	! "$out/cdi_check" "$f" || { echo "cdi-go: FAILED: the Go library accepts $f"; fail=1; }
	! "$ctk" cdi validate --no-host-check "$f" || { echo "cdi-go: FAILED: rbln-ctk accepts $f"; fail=1; }
done
[ $fail = 0 ] && echo "cdi-go: generated specs and $(ls "$here"/accepted/*.yaml "$here"/rejected/*.yaml | wc -l) examples agree with the Go CDI library"
exit $fail
