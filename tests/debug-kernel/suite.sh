#!/bin/bash
# The integration suite on the sanitizer kernel, then a kmemleak scan (KASAN,
# lockdep, UBSAN and debugobjects reports are caught from the kernel log by
# run-vm.sh).  It runs the suites whose subject is the driver; those whose
# subject is a user-space consumer (containers, podman, rbln-smi's output,
# Kubernetes) run on Debian's kernels only: on this kernel under TCG they take
# 13 of its 19 minutes and reach no driver path the others miss.
# RBLN_SUITE_ONLY and GTEST_FILTER override the choice.
here=$(cd "$(dirname "$0")" && pwd)
export RBLN_SUITE_ONLY=${RBLN_SUITE_ONLY:-"rbln_integration_tests rbln_abi_tests"}
export GTEST_FILTER=${GTEST_FILTER:-"-Containers.*:Podman.*:Smi.*"}
rc=0
"$here/../vm/suite.sh" || rc=1
"$here/kmemleak-check.sh" || rc=1
exit "$rc"
