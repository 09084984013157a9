#!/bin/bash
# make bench, inside the VM: one Rebel100 with its nominal memory, then the
# benchmark; the JSON lands in the VM's output directory.
set -u
export RBLN_KO_PARAMS="sim_devices=rebel100"  # NPU 0; bench-smi.sh adds more
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/setup-node.sh"
setup_node || exit 1
# Figures with ERMS under TCG carry its byte-wise "rep movsb" (see run-vm.sh): said, not hidden.
if grep -qw erms /proc/cpuinfo; then
	echo "bench: this VM's CPU has ERMS: under TCG its copies run a byte at a time, and the figures carry that"
fi
"$build/cmake/tests/bench/rbln_bench" /run/vm/bench.json || exit 1
"$(dirname "$0")/bench-register.sh" "$build/cmake/tests/bench/rbln_bench_register" || exit 1
"$(dirname "$0")/bench-smi.sh" "$build/cmake/tools/rbln-smi/rbln-smi"
"$(dirname "$0")/bench-exporter.sh" "$build/cmake/tools/rbln-exporter/rbln-exporter"
