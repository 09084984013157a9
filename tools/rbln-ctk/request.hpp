// SPDX-License-Identifier: MIT
// Which NPUs a container asks for: through RBLN_VISIBLE_DEVICES in its
// environment, or through CDI annotations (resolved against the spec on disk).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <rbln/enumerate.hpp>

namespace rbln::ctk {

// RBLN_VISIBLE_DEVICES of a container: "void" or empty: no request at all
// (nullopt); anything else ("all", "none", indices, uuids) parsed by
// libdevmgr with its messages.  Throws rbln::Error naming the bad value.
std::optional<std::vector<NpuInfo>> npus_from_env(const std::vector<NpuInfo> &host,
						  const std::string &value);

// The rebellions.ai/npu names in CDI annotation values ("cdi.k8s.io/<key>":
// "rebellions.ai/npu=0,vendor.com/x=y"); other kinds are left to others.
std::vector<std::string> rbln_names_in_cdi_annotations(const std::vector<std::string> &values);

// @a then those of @b not in it, by index.
std::vector<NpuInfo> merge_npus(std::vector<NpuInfo> a, const std::vector<NpuInfo> &b);

} // namespace rbln::ctk
