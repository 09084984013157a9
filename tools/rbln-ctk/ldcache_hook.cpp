// SPDX-License-Identifier: MIT
#include "ldcache_hook.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rbln::ctk {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string container_root_from_state(std::istream &state)
{
	json s, config;
	try {
		s = json::parse(state);
	} catch (const json::parse_error &e) {
		throw std::runtime_error(fmt::format("the OCI state on stdin is not JSON: {} (this command "
						     "is a createContainer hook, run by the container runtime)",
						     e.what()));
	}
	if (!s.is_object() || !s.contains("bundle") || !s["bundle"].is_string())
		throw std::runtime_error("the OCI state on stdin has no bundle");
	const fs::path bundle = s["bundle"].get<std::string>();
	std::ifstream in(bundle / "config.json");
	if (!in)
		throw std::runtime_error(fmt::format("cannot read {}", (bundle / "config.json").string()));
	try {
		config = json::parse(in);
	} catch (const json::parse_error &e) {
		throw std::runtime_error(fmt::format("{}: not JSON: {}", (bundle / "config.json").string(), e.what()));
	}
	const std::string root = config.value("/root/path"_json_pointer, std::string());
	if (root.empty())
		throw std::runtime_error(fmt::format("{} has no root.path", (bundle / "config.json").string()));
	return fs::path(root).is_absolute() ? root : (bundle / root).string();
}

std::vector<std::string> ldconfig_command(const std::string &root, const std::vector<std::string> &folders)
{
	std::error_code ec;
	if (!fs::is_directory(root, ec))
		throw std::runtime_error(fmt::format("container root {} is not a directory", root));
	fs::create_directories(fs::path(root) / "etc", ec);
	std::string ldconfig = ::access("/sbin/ldconfig", X_OK) == 0 ? "/sbin/ldconfig" : "/usr/sbin/ldconfig";
	// The host's ldconfig, chrooted into the container's root by -r; glibc's
	// is static, so it needs nothing from the image.
	std::vector<std::string> cmd = {ldconfig, "-r", root};
	for (const auto &f : folders)
		if (fs::is_directory(fs::path(root) / fs::path(f).relative_path(), ec))
			cmd.push_back(f);
	return cmd;
}

} // namespace rbln::ctk
