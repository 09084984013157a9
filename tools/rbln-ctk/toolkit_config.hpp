// SPDX-License-Identifier: MIT
// The container toolkit's settings, /etc/rbln-container-toolkit/config.yaml
// (RBLN_CTK_CONFIG overrides the path):
//
//   runtime: runc                  # OCI runtime the shim hands over to: a name
//                                  # in PATH or a path (default: runc, else crun)
//   accept-env-unprivileged: false # may containers without CAP_SYS_ADMIN get
//                                  # NPUs from RBLN_VISIBLE_DEVICES?
//
// A missing file means the defaults; a bad one is an error naming the key.
#pragma once

#include <string>

namespace rbln::ctk {

inline constexpr const char *kToolkitConfigPath = "/etc/rbln-container-toolkit/config.yaml";

struct ToolkitConfig {
	std::string path;		// where it was read from
	bool found = false;
	std::string runtime;		// empty: the default search
	bool accept_env_unprivileged = false;

	static ToolkitConfig load();	// throws rbln::Error (invalid_argument)
};

} // namespace rbln::ctk
