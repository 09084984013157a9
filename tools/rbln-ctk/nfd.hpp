// SPDX-License-Identifier: MIT
// rbln-ctk nfd: a Node Feature Discovery feature file, from which NFD makes
// the node's rebellions.ai/npu.* labels.
#pragma once

#include <string>
#include <vector>

#include <rbln/enumerate.hpp>

namespace rbln::ctk {

inline constexpr const char *kNfdFeaturePath = "/etc/kubernetes/node-feature-discovery/features.d/rbln";

// The file's "name=value" lines: present, count, product, driver-version,
// chiplet-count.  Without NPUs only present=false and count=0, so that stale
// labels go.  Mixed products: the names joined by '.', and the smallest
// chiplet count (what every NPU of the node has).
std::string nfd_features(const std::vector<NpuInfo> &npus, const std::string &driver_version);

// The subcommand; @args are the words after "nfd".  Returns the exit code.
int nfd_command(const std::vector<std::string> &args);

} // namespace rbln::ctk
