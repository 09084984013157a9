#!/bin/bash
# The integration suite, run inside the test VM by tests/run-all.sh: sets the
# VM up as an NPU host (setup-node.sh), then runs the GoogleTest binaries
# against the real rbln.ko and checks that it unloads cleanly.
#   RBLN_SUITE_ONLY   names of the test binaries to run (default: all), e.g.
#                     "rbln_k8s_tests"; GTEST_FILTER narrows further.
set -u
export RBLN_KO_PARAMS="sim_devices=atom,rebel100 sim_memory_mib=64"
export RBLN_SMI="${RBLN_BUILD:-$RBLN_TOP/build}/cmake/tools/rbln-smi/rbln-smi"
# shellcheck source=tests/vm/setup-node.sh
. "$(dirname "$0")/setup-node.sh"

echo "suite: setting up the node ($RBLN_KO_PARAMS)"
setup_node || { echo "suite: FAILED: node setup"; exit 1; }

fail=0
for t in "$build"/cmake/tests/integration/rbln_integration_tests "$build"/cmake/tests/abi/rbln_abi_tests \
	 "$build"/cmake/tests/k8s/rbln_k8s_tests; do
	case " ${RBLN_SUITE_ONLY:-$(basename "$t")} " in
	*" $(basename "$t") "*) ;;
	*) continue ;;
	esac
	echo "suite: running $(basename "$t")"
	"$t" --gtest_color=no || fail=1
done

echo "suite: unloading rbln.ko"
rmmod rbln || { echo "suite: rmmod rbln failed"; fail=1; }
udevadm settle --timeout=60
leftover=$(ls /dev/rbln* 2>/dev/null)
[ -z "$leftover" ] || { echo "suite: links left after unload: $leftover"; fail=1; }
exit $fail
