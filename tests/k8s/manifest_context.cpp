// SPDX-License-Identifier: MIT
#include "manifest_context.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>


namespace rbln::test {

namespace {

std::string top_dir()
{
	const char *top = std::getenv("RBLN_TOP");
	return top ? top : ".";
}

// A shell word: the paths here are the tests' own, quoted all the same.
std::string shell_word(const std::string &s)
{
	std::string out = "'";
	for (char c : s)
		out += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return out + "'";
}

} // namespace

ManifestContext manifest_context(const std::string &file, const std::string &container)
{
	const std::string path = fmt::format("{}/deploy/{}", top_dir(), file);
	for (const auto &doc : YAML::LoadAllFromFile(path)) {
		if (!doc["kind"] || doc["kind"].as<std::string>() != "DaemonSet")
			continue;
		const auto pod = doc["spec"]["template"]["spec"];
		for (const auto &c : pod["containers"]) {
			if (c["name"].as<std::string>() != container)
				continue;
			ManifestContext ctx;
			ctx.file = file;
			ctx.container = container;
			ctx.host_network = pod["hostNetwork"] && pod["hostNetwork"].as<bool>();
			const auto pod_sc = pod["securityContext"];
			const auto sc = c["securityContext"];
			auto number = [&](const char *key) -> std::optional<unsigned> {
				if (sc && sc[key])
					return sc[key].as<unsigned>();
				if (pod_sc && pod_sc[key])
					return pod_sc[key].as<unsigned>();
				return std::nullopt;
			};
			ctx.run_as_user = number("runAsUser");
			ctx.run_as_group = number("runAsGroup");
			if (sc) {
				ctx.privileged = sc["privileged"] && sc["privileged"].as<bool>();
				ctx.no_new_privs = sc["allowPrivilegeEscalation"] &&
						   !sc["allowPrivilegeEscalation"].as<bool>();
				ctx.read_only_root = sc["readOnlyRootFilesystem"] && sc["readOnlyRootFilesystem"].as<bool>();
				if (const auto caps = sc["capabilities"]) {
					for (const auto &d : caps["drop"])
						ctx.drop_all = ctx.drop_all || d.as<std::string>() == "ALL";
					for (const auto &a : caps["add"])
						ctx.add.push_back(a.as<std::string>());
				}
			}
			for (const auto &m : c["volumeMounts"])
				ctx.mounts[m["mountPath"].as<std::string>()] = m["readOnly"] && m["readOnly"].as<bool>();
			return ctx;
		}
	}
	throw std::runtime_error(fmt::format("{} has no DaemonSet container '{}'", path, container));
}

std::vector<std::string> under_context(const ManifestContext &ctx, const std::vector<std::string> &argv,
				       const std::map<std::string, std::string> &paths)
{
	if (ctx.privileged)
		return argv;
	if (!ctx.add.empty())
		throw std::runtime_error(fmt::format("{}: capabilities.add is not run by the tests yet", ctx.file));
	std::string script = "set -e; ";
	for (const auto &[mount, read_only] : ctx.mounts) {
		auto here = paths.contains(mount) ? paths.at(mount) : mount;
		if (read_only && std::filesystem::exists(here))
			script += fmt::format("mount --bind {0} {0}; mount -o remount,bind,ro {0}; ", shell_word(here));
	}
	script += "exec /usr/bin/setpriv";
	if (ctx.no_new_privs)
		script += " --no-new-privs";
	if (ctx.run_as_group)
		script += fmt::format(" --regid={}", *ctx.run_as_group);
	if (ctx.run_as_user)
		script += fmt::format(" --reuid={} --clear-groups", *ctx.run_as_user);
	// Root keeps what its bounding set allows across exec: emptied, it has nothing.
	if (ctx.drop_all)
		script += " --inh-caps=-all --ambient-caps=-all --bounding-set=-all";
	script += " -- \"$@\"";
	std::vector<std::string> out = {"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
					script, "sh"};
	out.insert(out.end(), argv.begin(), argv.end());
	return out;
}

std::string shell_command(const std::vector<std::string> &argv)
{
	std::string out;
	for (const auto &a : argv)
		out += (out.empty() ? "" : " ") + shell_word(a);
	return out;
}

} // namespace rbln::test
