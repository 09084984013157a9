// SPDX-License-Identifier: MIT
#include "toolkit_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <rbln/devmgr.hpp>

namespace rbln::ctk {

namespace {

ToolkitConfig read_settings(bool strict)
{
	ToolkitConfig c;
	const char *env = std::getenv("RBLN_CTK_CONFIG");
	c.path = env && *env ? env : kToolkitConfigPath;
	if (!std::filesystem::exists(c.path))
		return c;
	c.found = true;
	auto bad = [&](const std::string &what) {
		std::string msg = fmt::format("{}: {}", c.path, what);
		if (strict)
			throw Error(Errc::invalid_argument, EINVAL, msg);
		c.skipped.push_back(msg);
	};
	YAML::Node root;
	try {
		root = YAML::LoadFile(c.path);
	} catch (const YAML::Exception &e) {
		bad(fmt::format("line {}: not valid YAML: {}", e.mark.line + 1, e.msg));
		return c;
	}
	if (root.IsNull())
		return c;
	if (!root.IsMap()) {
		bad("expected a mapping of settings (runtime, accept-env-unprivileged)");
		return c;
	}
	for (const auto &kv : root) {
		const std::string key = kv.first.Scalar();
		const YAML::Node &v = kv.second;
		bool b = false;
		if (key == "runtime") {
			if (v.IsScalar() && !v.Scalar().empty())
				c.runtime = v.Scalar();
			else
				bad("runtime: expected a runtime name or path, e.g. runc");
		} else if (key == "accept-env-unprivileged") {
			if (v.IsScalar() && YAML::convert<bool>::decode(v, b))
				c.accept_env_unprivileged = b;
			else
				bad(fmt::format("accept-env-unprivileged: '{}' is not a YAML boolean (true or false)",
						v.IsScalar() ? v.Scalar() : "(not a scalar)"));
		} else {
			bad(fmt::format("unknown setting '{}' (valid: runtime, accept-env-unprivileged)", key));
		}
	}
	return c;
}

} // namespace

ToolkitConfig ToolkitConfig::load()
{
	return read_settings(true);
}

ToolkitConfig ToolkitConfig::load_lenient()
{
	return read_settings(false);
}

} // namespace rbln::ctk
