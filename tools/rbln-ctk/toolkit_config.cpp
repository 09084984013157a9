// SPDX-License-Identifier: MIT
#include "toolkit_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <rbln/devmgr.hpp>

namespace rbln::ctk {

ToolkitConfig ToolkitConfig::load()
{
	ToolkitConfig c;
	const char *env = std::getenv("RBLN_CTK_CONFIG");
	c.path = env && *env ? env : kToolkitConfigPath;
	if (!std::filesystem::exists(c.path))
		return c;
	c.found = true;
	auto bad = [&](const std::string &what) {
		throw Error(Errc::invalid_argument, EINVAL, fmt::format("{}: {}", c.path, what));
	};
	YAML::Node root;
	try {
		root = YAML::LoadFile(c.path);
	} catch (const YAML::Exception &e) {
		bad(fmt::format("line {}: not valid YAML: {}", e.mark.line + 1, e.msg));
	}
	if (root.IsNull())
		return c;
	if (!root.IsMap())
		bad("expected a mapping of settings (runtime, accept-env-unprivileged)");
	for (const auto &kv : root) {
		const std::string key = kv.first.as<std::string>();
		const YAML::Node &v = kv.second;
		if (key == "runtime") {
			if (!v.IsScalar() || v.Scalar().empty())
				bad("runtime: expected a runtime name or path, e.g. runc");
			c.runtime = v.Scalar();
		} else if (key == "accept-env-unprivileged") {
			const std::string s = v.IsScalar() ? v.Scalar() : "";
			if (s != "true" && s != "false")
				bad(fmt::format("accept-env-unprivileged: '{}' is not true or false", s));
			c.accept_env_unprivileged = s == "true";
		} else {
			bad(fmt::format("unknown setting '{}' (valid: runtime, accept-env-unprivileged)", key));
		}
	}
	return c;
}

} // namespace rbln::ctk
