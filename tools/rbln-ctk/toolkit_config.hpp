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
// Booleans are YAML's (true, True, yes, on, ...: what yaml-cpp decodes).
// Only the shim's create and run need the settings to be right; for every
// other command (delete, kill, state, ...) a bad file must not block the
// container's lifecycle, so load_lenient() keeps what it can read and says
// what it skipped.
#pragma once

#include <string>
#include <vector>

namespace rbln::ctk {

inline constexpr const char *kToolkitConfigPath = "/etc/rbln-container-toolkit/config.yaml";

struct ToolkitConfig {
	std::string path;		// where it was read from
	bool found = false;
	std::string runtime;		// empty: the default search
	bool accept_env_unprivileged = false;

	std::vector<std::string> skipped;	// load_lenient(): what was not understood

	static ToolkitConfig load();	// throws rbln::Error (invalid_argument)
	static ToolkitConfig load_lenient();
};

} // namespace rbln::ctk
