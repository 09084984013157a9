// SPDX-License-Identifier: MIT
#include "runtime_config.hpp"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <rbln/devmgr.hpp>

#include "cdi.hpp"

namespace rbln::ctk {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string &why)
{
	throw Error(Errc::invalid_argument, EINVAL, why);
}

FileChange change(const std::string &path, const std::string &after)
{
	FileChange c{path, "", after, fs::exists(path)};
	if (c.exists) {
		std::ifstream in(path);
		std::stringstream ss;
		ss << in.rdbuf();
		c.before = ss.str();
	}
	return c;
}

std::string header()
{
	return "# Written by rbln-ctk runtime configure; rbln-ctk rewrites it, edit a later drop-in instead.\n";
}

std::vector<FileChange> containerd(const RuntimeOptions &o)
{
	const std::string dir = o.root + "etc/containerd/conf.d";
	const std::string glob = "/etc/containerd/conf.d/*.toml";
	std::string dropin = header() + fmt::format(R"(version = 2

[plugins."io.containerd.grpc.v1.cri"]
  enable_cdi = true
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.rbln]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.rbln.options]
  BinaryName = "{}"
)", o.shim_path);
	std::vector<FileChange> out = {change(dir + "/99-rbln.toml", dropin)};

	// config.toml must import the drop-in directory.  A top-level key goes
	// before the first table, so it is added at the top; an existing
	// imports list is not rewritten by a tool that does not parse TOML.
	FileChange main = change(o.root + "etc/containerd/config.toml", "");
	static const std::regex imports(R"((^|\n)\s*imports\s*=)");
	if (!main.exists) {
		main.after = header() + fmt::format("version = 2\nimports = [\"{}\"]\n", glob);
	} else if (main.before.find(glob) != std::string::npos) {
		main.after = main.before;
	} else if (std::regex_search(main.before, imports)) {
		refuse(fmt::format("{} has an imports list without \"{}\": add it there, then run this "
				   "again", main.path, glob));
	} else {
		main.after = fmt::format("imports = [\"{}\"]\n", glob) + main.before;
	}
	if (main.after != main.before)
		out.push_back(main);
	return out;
}

std::vector<FileChange> crio(const RuntimeOptions &o)
{
	return {change(o.root + "etc/crio/crio.conf.d/99-rbln.conf", header() + fmt::format(R"(
[crio.runtime.runtimes.rbln]
runtime_path = "{}"
runtime_type = "oci"
)", o.shim_path))};
}

std::vector<FileChange> podman(const RuntimeOptions &o)
{
	return {change(o.root + "etc/containers/containers.conf.d/99-rbln.conf", header() + fmt::format(R"(
[engine]
cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]

[engine.runtimes]
rbln = ["{}"]
)", o.shim_path))};
}

std::vector<FileChange> docker(const RuntimeOptions &o)
{
	FileChange c = change(o.root + "etc/docker/daemon.json", "");
	nlohmann::ordered_json config = nlohmann::ordered_json::object();
	if (c.exists && c.before.find_first_not_of(" \t\r\n") != std::string::npos) {
		try {
			config = nlohmann::ordered_json::parse(c.before);
		} catch (const nlohmann::json::parse_error &e) {
			refuse(fmt::format("{} is not valid JSON ({}); fix it first, nothing was changed",
					   c.path, e.what()));
		}
		if (!config.is_object())
			refuse(fmt::format("{} is not a JSON object; nothing was changed", c.path));
	}
	config["runtimes"]["rbln"] = {{"path", o.shim_path}};
	config["features"]["cdi"] = true;
	c.after = config.dump(4) + "\n";
	return {c};
}

std::vector<std::string> lines(const std::string &text)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);)
		out.push_back(l);
	return out;
}

} // namespace

std::vector<FileChange> plan_runtime_config(const RuntimeOptions &opt)
{
	RuntimeOptions o = opt;
	if (o.root.empty() || o.root.back() != '/')
		o.root += '/';
	std::vector<FileChange> changes;
	if (o.runtime == "containerd")
		changes = containerd(o);
	else if (o.runtime == "crio" || o.runtime == "cri-o")
		changes = crio(o);
	else if (o.runtime == "docker")
		changes = docker(o);
	else if (o.runtime == "podman")
		changes = podman(o);
	else
		refuse(fmt::format("unknown runtime '{}' (valid: containerd, crio, docker, podman)", o.runtime));
	std::erase_if(changes, [](const FileChange &c) { return c.exists && c.before == c.after; });
	return changes;
}

// Line diff by longest common subsequence; config files are small.
std::string diff_text(const FileChange &c)
{
	auto a = lines(c.before), b = lines(c.after);
	std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
	for (size_t i = a.size(); i-- > 0;)
		for (size_t j = b.size(); j-- > 0;)
			lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
	std::string out = fmt::format("--- {}\n+++ {}\n", c.exists ? c.path : "/dev/null", c.path);
	size_t i = 0, j = 0;
	while (i < a.size() || j < b.size()) {
		if (i < a.size() && j < b.size() && a[i] == b[j]) {
			out += " " + a[i++] + "\n";
			j++;
		} else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
			out += "-" + a[i++] + "\n";
		} else {
			out += "+" + b[j++] + "\n";
		}
	}
	return out;
}

void apply_change(const FileChange &c)
{
	if (c.exists) {
		std::error_code ec;
		fs::copy_file(c.path, c.path + ".rbln-backup", fs::copy_options::overwrite_existing, ec);
		if (ec)
			throw Error(Errc::permission, ec.value(),
				    fmt::format("cannot back up {}: {}; nothing was changed", c.path, ec.message()));
	}
	write_file_atomic(c.path, c.after, 0644);
}

} // namespace rbln::ctk
