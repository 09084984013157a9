// SPDX-License-Identifier: MIT
#include "runtime_config.hpp"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

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

std::string toml_text(const toml::table &t)
{
	std::ostringstream out;
	out << t << "\n";
	return out.str();
}

toml::array toml_strings(std::initializer_list<std::string> items)
{
	toml::array a;
	for (const auto &i : items)
		a.push_back(i);
	return a;
}

// @from's keys into @to, tables merged key by key, any other value replaced.
void merge_into(toml::table &to, const toml::table &from)
{
	for (const auto &[key, value] : from) {
		auto *sub = to.get_as<toml::table>(key);
		if (sub && value.is_table())
			merge_into(*sub, *value.as_table());
		else
			to.insert_or_assign(key, value);
	}
}

// The drop-in for containerd's CRI plugin in the layout of config @version:
// 2 (containerd 1.x: io.containerd.grpc.v1.cri) or 3 (containerd 2.x:
// io.containerd.cri.v1.runtime).  containerd replaces a plugin's whole
// section with an imported file's, so the drop-in carries config.toml's
// section of that plugin (@config) with rbln's keys added, and the runc
// runtime when config.toml has none: 1.6 without it refuses to load the CRI
// plugin ("no corresponding runtime configured ... runc").
toml::table containerd_dropin(const RuntimeOptions &o, int64_t version, const toml::table &config)
{
	const std::string plugin = version >= 3 ? "io.containerd.cri.v1.runtime" : "io.containerd.grpc.v1.cri";
	toml::table cri;
	if (const auto *mine = config["plugins"][plugin].as_table())
		cri = *mine;
	// The CRI plugin passes a pod's annotations to the runtime only where
	// allowed (containerd >= 1.5 for containers', 1.4 for pods'): the CDI
	// annotation of the device plugin must reach rbln-container-runtime.
	toml::table runtime{{"runtime_type", "io.containerd.runc.v2"},
			    {"pod_annotations", toml_strings({"cdi.k8s.io/*"})},
			    {"container_annotations", toml_strings({"cdi.k8s.io/*"})},
			    {"options", toml::table{{"BinaryName", o.shim_path}}}};
	toml::table containerd{{"runtimes", toml::table{{"rbln", runtime}}}};
	if (o.set_as_default)
		containerd.insert("default_runtime_name", "rbln");
	merge_into(cri, toml::table{{"enable_cdi", true},
				    {"cdi_spec_dirs", toml_strings({"/etc/cdi", "/var/run/cdi"})},
				    {"containerd", containerd}});
	auto *runtimes = cri["containerd"]["runtimes"].as_table();
	if (!runtimes->contains("runc"))
		runtimes->insert("runc", toml::table{{"runtime_type", "io.containerd.runc.v2"}});
	return toml::table{{"version", version}, {"plugins", toml::table{{plugin, cri}}}};
}

std::vector<FileChange> containerd(const RuntimeOptions &o)
{
	// The drop-in directory beside config.toml, named as containerd will
	// read it: by / for the default file (under --root it becomes /), else
	// by the given file's absolute directory.
	const fs::path config_path = o.config.empty() ? fs::path(o.root) / "etc/containerd/config.toml"
						      : fs::absolute(o.config);
	const std::string dropin_dir = o.config.empty() ? "/etc/containerd/conf.d"
							: (config_path.parent_path() / "conf.d").string();
	const std::string glob = dropin_dir + "/*.toml";
	FileChange main = change(config_path.string(), "");
	toml::table config;
	try {
		config = toml::parse(main.before, main.path);
	} catch (const toml::parse_error &e) {
		refuse(fmt::format("{}:{}:{}: not valid TOML ({}); fix it first, nothing was changed", main.path,
				   e.source().begin.line, e.source().begin.column, e.description()));
	}
	// No file: version 2, which containerd 1.7 reads and 2.x migrates.
	int64_t version = config["version"].value_or(int64_t(main.exists && config.contains("plugins") ? 1 : 2));
	if (version != 2 && version != 3)
		refuse(fmt::format("{} is containerd config version {}; rbln-ctk writes versions 2 and 3 "
				   "(containerd config migrate converts it)", main.path, version));

	// config.toml must import the drop-in directory.
	if (!config.contains("imports"))
		config.insert("imports", toml::array{});
	toml::array *imports = config["imports"].as_array();
	if (!imports)
		refuse(fmt::format("{}: imports is not a list; nothing was changed", main.path));
	bool imported = false;
	for (const auto &i : *imports)
		imported = imported || i.value_or(std::string()) == glob;
	if (!imported)
		imports->push_back(glob);
	if (!main.exists)
		config.insert("version", version);
	// toml++ writes the whole file: comments are not kept (the backup has them).
	if (!imported || !main.exists)
		main.after = "# Rewritten by rbln-ctk runtime configure, which added the imports entry; comments\n"
			     "# are not kept (the file before is config.toml.rbln-backup).\n" + toml_text(config);
	else
		main.after = main.before;

	const std::string dropin = o.config.empty() ? o.root + "etc/containerd/conf.d/99-rbln.toml"
						    : dropin_dir + "/99-rbln.toml";
	std::vector<FileChange> out = {change(dropin,
					      header() +
						      fmt::format("# It carries config.toml's {} section as well (containerd replaces "
								  "a plugin's\n# whole section with an imported file's): run "
								  "rbln-ctk runtime configure again after editing it.\n",
								  version >= 3 ? "io.containerd.cri.v1.runtime"
									       : "io.containerd.grpc.v1.cri") +
						      toml_text(containerd_dropin(o, version, config)))};
	if (main.after != main.before)
		out.push_back(main);
	return out;
}

std::vector<FileChange> crio(const RuntimeOptions &o)
{
	return {change(o.root + "etc/crio/crio.conf.d/99-rbln.conf", header() + fmt::format(R"(
[crio.runtime]{}

[crio.runtime.runtimes.rbln]
runtime_path = "{}"
runtime_type = "oci"
)", o.set_as_default ? "\ndefault_runtime = \"rbln\"" : "", o.shim_path))};
}

std::vector<FileChange> podman(const RuntimeOptions &o)
{
	toml::table engine{{"cdi_spec_dirs", toml_strings({"/etc/cdi", "/var/run/cdi"})},
			   {"runtimes", toml::table{{"rbln", toml_strings({o.shim_path})}}}};
	if (o.set_as_default)
		engine.insert("runtime", "rbln");
	return {change(o.root + "etc/containers/containers.conf.d/99-rbln.conf",
		       header() + toml_text(toml::table{{"engine", engine}}))};
}

std::vector<FileChange> docker(const RuntimeOptions &o)
{
	FileChange c = change(o.config.empty() ? o.root + "etc/docker/daemon.json" : o.config, "");
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
	if (o.set_as_default)
		config["default-runtime"] = "rbln";
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
	if (!o.config.empty() && o.runtime != "containerd" && o.runtime != "docker")
		refuse(fmt::format("--config {}: only containerd's config.toml and docker's daemon.json can be "
				   "given; {} is configured through its drop-in directory (use --root)",
				   o.config, o.runtime));
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
