// SPDX-License-Identifier: MIT
// Edits to an OCI runtime config (a bundle's config.json) that give a
// container NPUs: device nodes, device-cgroup allow rules, environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <rbln/enumerate.hpp>

namespace rbln::ctk {

using json = nlohmann::json;

// The value of @name in process.env, if set.
std::optional<std::string> oci_env(const json &config, const std::string &name);
// Sets (or replaces) @name in process.env.
void oci_set_env(json &config, const std::string &name, const std::string &value);
// Values of the cdi.k8s.io/ annotations.
std::vector<std::string> oci_cdi_annotations(const json &config);
// CAP_SYS_ADMIN in the bounding set: what the NVIDIA toolkit calls privileged.
bool oci_privileged(const json &config);

// Gives the container @npus: each NPU's node at its host path and as
// /dev/rblnN, "rw" in the device cgroup.  Reads the nodes' device numbers
// first and throws rbln::Error before changing anything if one is missing.
void oci_give_npus(json &config, const std::vector<NpuInfo> &npus);

// RBLN_VISIBLE_DEVICES inside: the host numbers of every NPU the container
// got (through CDI or the variable), or "none"; always in the words
// libdevmgr reads (docs/rbln-smi.md, "RBLN_VISIBLE_DEVICES").
void oci_set_visible_devices(json &config, const std::vector<NpuInfo> &npus);

// Applies a CDI device's containerEdits (deviceNodes, env, mounts, hooks) as
// a CDI consumer does; @where names the device for messages.  Throws
// rbln::Error before changing anything if a host node is missing or an edit
// is not supported (intelRdt, additionalGids, netDevices).
void oci_apply_cdi_edits(json &config, const json &edits, const std::string &where);

} // namespace rbln::ctk
