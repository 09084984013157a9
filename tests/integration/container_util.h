// Helpers the container tests share (crun through the shim, and podman).
#pragma once

#include <string>

#include "rbln_test_util.h"

namespace rbln::test {

// A bare image's root file system in @dir: static busybox as /bin/sh, and
// glibc (libc, libm, the loader); no rbln file, nothing else of the host.
void make_bare_rootfs(const std::string &dir);

// A podman command prefix that keeps everything (storage, run state,
// temporary files, containers.conf) in @dir: the VM's root is read-only, so
// vfs and cgroupfs, and no registry is needed.
std::string isolated_podman(const std::string &dir);

// `rbln-ctk cdi generate` of this build tree into @output, giving containers
// this tree's librbln_devmgr.so.0 and rbln-smi.
CommandResult generate_injected_spec(const std::string &output);

// This build tree's cmake directory (RBLN_BUILD, else RBLN_TOP/build).
std::string cmake_build_dir();

} // namespace rbln::test
