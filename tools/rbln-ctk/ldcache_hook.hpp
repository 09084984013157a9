// SPDX-License-Identifier: MIT
// `rbln-ctk hook update-ldcache`: the OCI createContainer hook of our CDI
// spec.  It reads the container's state on stdin (OCI runtime spec), finds
// its root file system through the bundle's config.json, and runs ldconfig
// there so the injected libraries are in the container's loader cache.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace rbln::ctk {

// The container root named by the OCI state in @state.  Throws
// std::runtime_error saying what is missing.
std::string container_root_from_state(std::istream &state);

// The ldconfig command line for @root and the @folders that exist in it;
// creates @root/etc for the cache if the image has none.
std::vector<std::string> ldconfig_command(const std::string &root, const std::vector<std::string> &folders);

} // namespace rbln::ctk
