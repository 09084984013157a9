#!/bin/bash
# make bench's second VM, run by QEMU with -icount shift=0,sleep=off (see
# the Makefile): the profiler's and the tracepoints' cost to the libdevmgr
# chain in guest instructions, the same from run to run.
set -u
export RBLN_KO_PARAMS="sim_devices=rebel100"
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/setup-node.sh"
setup_node || exit 1
"$build/cmake/tests/bench/rbln_bench" --instructions /run/vm/bench-instructions.json
