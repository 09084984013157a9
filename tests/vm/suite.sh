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
for t in "$build"/cmake/tests/integration/rbln_integration_tests \
	 "$build"/cmake/tests/integration/rbln_profiler_tests "$build"/cmake/tests/abi/rbln_abi_tests \
	 "$build"/cmake/tests/k8s/rbln_k8s_tests; do
	case " ${RBLN_SUITE_ONLY:-$(basename "$t")} " in
	*" $(basename "$t") "*) ;;
	*) continue ;;
	esac
	echo "suite: running $(basename "$t")"
	"$t" --gtest_color=no || fail=1
done

# A fence outlives its job, its file and its device when a sync_file holds it:
# the module must stay loaded meanwhile (the core calls the fence's ops until
# it is freed), and unload once it is let go.
echo "suite: a job's sync_file held past its device file keeps rbln.ko loaded"
settle="$(dirname "$0")/rmmod-rbln.sh --settle"
if ! $settle 0; then
	echo "suite: FAILED: rbln.ko still in use after the tests: $(cat /sys/module/rbln/refcnt)"
	fail=1
else
	coproc HOLDER { "$build/cmake/tests/integration/rbln_fence_holder"; }
	holder_pid=$HOLDER_PID
	# Bash drops the coproc's variables once it reaps it: keep the pipes.
	exec {to_holder}>&"${HOLDER[1]}" {from_holder}<&"${HOLDER[0]}"
	read -r -t 60 ready <&"$from_holder"
	if [ "${ready:-}" != holding ]; then
		echo "suite: FAILED: the fence holder did not start"
		fail=1
	elif ! $settle 1; then
		# Its job's fence, held by the sync_file alone, is the one pin left.
		echo "suite: FAILED: rbln.ko has $(cat /sys/module/rbln/refcnt) pins with a sync_file held, not 1"
		fail=1
	elif rmmod rbln 2>/dev/null; then
		echo "suite: FAILED: rbln.ko unloaded while a sync_file held one of its fences"
		fail=1
	fi
	(echo go >&"$to_holder") 2>/dev/null
	cat <&"$from_holder"
	exec {to_holder}>&- {from_holder}<&-
	wait "$holder_pid" || { echo "suite: FAILED: the fence holder"; fail=1; }
fi

echo "suite: unloading rbln.ko"
"$(dirname "$0")/rmmod-rbln.sh" || { echo "suite: rmmod rbln failed"; fail=1; }
udevadm settle --timeout=60
leftover=$(ls /dev/rbln* 2>/dev/null)
[ -z "$leftover" ] || { echo "suite: links left after unload: $leftover"; fail=1; }
exit $fail
