// SPDX-License-Identifier: MIT
// rbln-ctk: the RBLN container toolkit's command line (CDI specs, runtime
// configuration, status).  See docs/rbln-ctk.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <algorithm>
#include <functional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <rbln/devmgr.hpp>
#include <rbln/enumerate.hpp>
#include <rbln/exit_codes.hpp>

#include "cdi.hpp"
#include "injection.hpp"
#include "ldcache_hook.hpp"
#include "nfd.hpp"
#include "runtime_config.hpp"
#include "toolkit_config.hpp"

using namespace rbln;
using namespace rbln::ctk;
namespace fs = std::filesystem;

namespace {

// libdevmgr's table, shared by every tool (rbln/exit_codes.hpp).
constexpr int kOk = int(ExitCode::ok), kFailed = int(ExitCode::error),
	      kUsage = int(ExitCode::bad_argument);

struct GenerateOptions {
	std::string format = "yaml";
	std::string strategy = "both";
	std::string output;
	InjectionOptions inject;
	bool no_inject = false, dry_run = false, refresh = false;
};

std::vector<NpuInfo> npus_or_fail()
{
	if (!driver_loaded())
		throw Error(Errc::driver_not_loaded, ENODEV, "the rbln driver is not loaded (modprobe rbln)");
	auto npus = enumerate_npus();
	if (npus.empty())
		throw Error(Errc::no_device, ENODEV, "no NPUs found: a CDI spec needs at least one device");
	return npus;
}

int cdi_generate(const GenerateOptions &g)
{
	const NameStrategy names = g.strategy == "index" ? NameStrategy::index
				   : g.strategy == "uuid" ? NameStrategy::uuid : NameStrategy::both;
	const std::string output = !g.output.empty() ? g.output
				   : g.format == "json" ? "/var/run/cdi/rbln.json" : kDefaultSpecPath;
	const InjectionOptions &inject = g.inject;
	const bool no_inject = g.no_inject, dry_run = g.dry_run, refresh = g.refresh;

	std::optional<SpecLock> lock;
	if (refresh)
		lock.emplace(output);
	std::vector<NpuInfo> npus;
	try {
		npus = npus_or_fail();
	} catch (const Error &e) {
		if (!refresh || (e.code() != Errc::driver_not_loaded && e.code() != Errc::no_device))
			throw;
		// No NPU left: no spec, rather than one naming NPUs that are gone.
		if (fs::remove(output))
			fmt::print("rbln-ctk: removed {} ({})\n", output, e.what());
		return kOk;
	}
	std::vector<std::string> warnings;
	json common = no_inject ? json::object() : injection_edits(inject, warnings);
	for (const auto &w : warnings)
		fmt::print(stderr, "rbln-ctk: warning: {}\n", w);
	json spec = make_spec(npus, names, common);
	std::string text = g.format == "json" ? spec_to_json(spec) : spec_to_yaml(spec);
	if (dry_run) {
		fmt::print("{}", text);
		return kOk;
	}
	if (refresh && !write_file_if_changed(output, text)) {
		fmt::print("rbln-ctk: {} is up to date\n", output);
		return kOk;
	}
	if (!refresh)
		write_file_atomic(output, text, 0644);
	fmt::print("rbln-ctk: wrote {} ({} devices: {})\n", output, spec["devices"].size(),
		   fmt::join(qualified_device_names(spec), ", "));
	return kOk;
}

int cdi_list()
{
	std::vector<std::string> names;
	for (const auto &f : cdi_spec_files(cdi_spec_dirs())) {
		try {
			json spec = load_spec(f);
			if (spec.value("kind", "") == kCdiKind)
				for (auto &n : qualified_device_names(spec))
					names.push_back(n);
		} catch (const std::exception &e) {
			fmt::print(stderr, "rbln-ctk: warning: skipping {}\n", e.what());
		}
	}
	if (names.empty()) {
		fmt::print(stderr, "rbln-ctk: no {} devices in {} (run: rbln-ctk cdi generate)\n", kCdiKind,
			   fmt::join(cdi_spec_dirs(), " or "));
		return kFailed;
	}
	for (const auto &n : names)
		fmt::print("{}\n", n);
	return kOk;
}

int cdi_validate(const std::string &file, bool host)
{
	const std::string path = file.empty() ? kDefaultSpecPath : file;
	json spec;
	try {
		spec = load_spec(path);
	} catch (const std::exception &e) {
		fmt::print("{}\n", e.what());
		return kFailed;
	}
	auto problems = validate_spec(spec, host);
	for (const auto &p : problems)
		fmt::print("{}: {}\n", path, p);
	if (!problems.empty()) {
		fmt::print(stderr, "rbln-ctk: {}: {} problem(s)\n", path, problems.size());
		return kFailed;
	}
	fmt::print("{}: valid (cdiVersion {}, kind {}, {} devices)\n", path,
		   spec["cdiVersion"].get<std::string>(), spec["kind"].get<std::string>(),
		   spec["devices"].size());
	return kOk;
}

int hook_update_ldcache(const std::vector<std::string> &folders)
{
	auto cmd = ldconfig_command(container_root_from_state(std::cin), folders);
	std::vector<char *> argv;
	for (auto &c : cmd)
		argv.push_back(c.data());
	argv.push_back(nullptr);
	::execv(argv[0], argv.data());
	int err = errno;
	throw std::system_error(err, std::generic_category(), fmt::format("cannot run {}", cmd[0]));
}

int runtime_configure(const RuntimeOptions &o, bool dry_run)
{
	auto changes = plan_runtime_config(o);
	if (changes.empty()) {
		fmt::print("rbln-ctk: {} is already configured; nothing to change\n", o.runtime);
		return kOk;
	}
	for (const auto &c : changes)
		fmt::print("{}", diff_text(c));
	if (dry_run) {
		fmt::print("rbln-ctk: dry run, nothing written\n");
		return kOk;
	}
	for (const auto &c : changes) {
		apply_change(c);
		fmt::print("rbln-ctk: wrote {}{}\n", c.path, c.exists ? fmt::format(" (backup: {}.rbln-backup)", c.path) : "");
	}
	fmt::print("rbln-ctk: restart {} to apply\n", o.runtime);
	return kOk;
}

std::string read_line(const std::string &path)
{
	std::ifstream in(path);
	std::string s;
	std::getline(in, s);
	return s;
}

int info(bool as_json)
{
	json out;	// --json: docs/rbln-ctk-info.schema.json
	out["schema_version"] = 1;
	out["rbln_ctk_version"] = RBLN_CTK_VERSION;
	std::string driver = read_line("/sys/module/rbln/version");
	out["driver_version"] = driver.empty() ? json(nullptr) : json(driver);
	out["uapi_version_built"] = built_uapi_version();

	auto npus = enumerate_npus();
	out["npus"] = json::array();
	std::set<std::string> nodes;
	for (const auto &n : npus) {
		out["npus"].push_back({{"npu", n.index}, {"node", n.node}, {"uuid", n.uuid}, {"name", n.name}});
		nodes.insert(n.node);
	}

	json cfg;
	try {
		auto c = ToolkitConfig::load();
		cfg = {{"path", c.path}, {"found", c.found},
		       {"runtime", c.runtime.empty() ? json(nullptr) : json(c.runtime)},
		       {"accept_env_unprivileged", c.accept_env_unprivileged}};
	} catch (const Error &e) {
		cfg = {{"error", e.what()}};
	}
	out["toolkit_config"] = cfg;

	json spec_state = {{"path", kDefaultSpecPath}, {"exists", fs::exists(kDefaultSpecPath)}};
	if (spec_state["exists"]) {
		try {
			json spec = load_spec(kDefaultSpecPath);
			auto problems = validate_spec(spec, true);
			spec_state["problems"] = problems;
			std::set<std::string> in_spec;
			for (const auto &d : spec.value("devices", json::array()))
				for (const auto &n : d.value("containerEdits", json::object()).value("deviceNodes", json::array()))
					in_spec.insert(n.value("hostPath", n.value("path", "")));
			spec_state["up_to_date"] = in_spec == nodes;
		} catch (const std::exception &e) {
			spec_state["problems"] = {e.what()};
			spec_state["up_to_date"] = false;
		}
	}
	out["cdi_spec"] = spec_state;

	if (as_json) {
		fmt::print("{}\n", out.dump(2));
		return kOk;
	}
	fmt::print("rbln-ctk {}\n", RBLN_CTK_VERSION);
	fmt::print("driver:        {}\n", driver.empty() ? "not loaded" : driver);
	fmt::print("NPUs:          {}\n", npus.empty() ? "none" : "");
	for (const auto &n : npus)
		fmt::print("  NPU {:<3} {:<20} {}  {}\n", n.index, n.node, n.uuid, n.name);
	fmt::print("config:        {} ({})\n", cfg.value("path", kToolkitConfigPath),
		   cfg.contains("error") ? cfg["error"].get<std::string>()
					 : cfg["found"].get<bool>() ? "read" : "absent, defaults");
	if (!spec_state["exists"])
		fmt::print("CDI spec:      {} missing (run: rbln-ctk cdi generate)\n", kDefaultSpecPath);
	else
		fmt::print("CDI spec:      {} {}{}\n", kDefaultSpecPath,
			   spec_state["problems"].empty() ? "valid" : "INVALID (rbln-ctk cdi validate)",
			   spec_state["up_to_date"] ? "" : ", out of date (rbln-ctk cdi generate)");
	return kOk;
}

} // namespace

int main(int argc, char **argv)
{
	CLI::App app{"The RBLN container toolkit: CDI specs for the NPUs of this host, and the container "
		     "engines' configuration for them.", "rbln-ctk"};
	app.footer(exit_codes_help() + "(cdi list and cdi validate: 1 when they find no device or a problem)");
	app.set_version_flag("--version", std::string("rbln-ctk ") + RBLN_CTK_VERSION);
	app.require_subcommand(1);
	std::function<int()> action;

	auto *cdi = app.add_subcommand("cdi", "CDI specs (kind rebellions.ai/npu)")->require_subcommand(1);
	GenerateOptions g;
	auto *gen = cdi->add_subcommand("generate", "write a CDI spec: npu=N, npu=<uuid>, npu=all, with "
					"librbln_devmgr.so.0, rbln-smi and an ldcache hook");
	gen->add_option("--format", g.format, "yaml or json")->check(CLI::IsMember({"yaml", "json"}))
		->capture_default_str();
	gen->add_option("--output", g.output, "default /var/run/cdi/rbln.yaml (.json for json)");
	gen->add_option("--device-name-strategy", g.strategy, "index, uuid or both")
		->check(CLI::IsMember({"index", "uuid", "both"}))->capture_default_str();
	auto *library = gen->add_option("--library", g.inject.library,
					"librbln_devmgr.so.0 to give containers (default: the installed one, "
					"else the loader's)")->check(CLI::ExistingFile);
	auto *smi = gen->add_option("--smi", g.inject.smi, "rbln-smi to give containers (default: the "
				    "installed one, else PATH)")->check(CLI::ExistingFile);
	gen->add_flag("--no-inject", g.no_inject, "device nodes only: no library, tool or ldcache hook")
		->excludes(library)->excludes(smi);
	auto *dry = gen->add_flag("--dry-run", g.dry_run, "print the spec instead of writing it");
	gen->add_flag("--refresh", g.refresh, "for udev and the boot unit: one writer at a time, write only "
		      "if changed, no NPU removes the spec")->excludes(dry);
	gen->callback([&] { action = [&] { return cdi_generate(g); }; });

	cdi->add_subcommand("list", "the CDI device names in /etc/cdi and /var/run/cdi")
		->callback([&] { action = cdi_list; });

	std::string spec_file;
	bool no_host_check = false;
	auto *validate = cdi->add_subcommand("validate", "check a spec against the CDI rules (docs/rbln-ctk.md); "
					     "one line per problem");
	validate->add_option("file", spec_file, "the spec (default: the one generate writes)");
	validate->add_flag("--no-host-check", no_host_check, "do not require the device nodes to exist here");
	validate->callback([&] { action = [&] { return cdi_validate(spec_file, !no_host_check); }; });

	auto *hook = app.add_subcommand("hook", "OCI hooks of the CDI spec")->require_subcommand(1);
	std::vector<std::string> folders;
	auto *ldcache = hook->add_subcommand("update-ldcache", "createContainer hook: ldconfig in the container's "
					     "root (reads the OCI state on stdin)");
	ldcache->add_option("--folder", folders, "a library directory inside the container (repeatable)");
	ldcache->callback([&] { action = [&] { return hook_update_ldcache(folders); }; });

	auto *runtime = app.add_subcommand("runtime", "container engines")->require_subcommand(1);
	RuntimeOptions ro;
	bool rc_dry_run = false;
	auto *configure = runtime->add_subcommand("configure", "register rbln-container-runtime and enable CDI; "
						  "shows the diff, backs up files");
	configure->add_option("-r,--runtime", ro.runtime, "the engine")->required()
		->check(CLI::IsMember({"containerd", "crio", "cri-o", "docker", "podman"}));
	configure->add_option("--runtime-path", ro.shim_path, "the shim")->capture_default_str();
	configure->add_option("--root", ro.root, "configure the files under DIR instead of /")
		->check(CLI::ExistingDirectory);
	configure->add_option("--config", ro.config, "containerd's config.toml or docker's daemon.json at "
			      "this path instead of under --root (containerd's drop-in goes to conf.d/ beside it)");
	configure->add_flag("--set-as-default", ro.set_as_default, "make rbln the engine's default runtime");
	configure->add_flag("--dry-run", rc_dry_run, "show the diff only");
	configure->callback([&] { action = [&] { return runtime_configure(ro, rc_dry_run); }; });

	bool as_json = false;
	auto *info_cmd = app.add_subcommand("info", "versions, NPUs, toolkit settings and the state of the spec");
	info_cmd->add_flag("--json", as_json, "JSON output");
	info_cmd->callback([&] { action = [&] { return info(as_json); }; });

	// nfd parses its own options (nfd.cpp), --help included.
	auto *nfd = app.add_subcommand("nfd", "write the Node Feature Discovery feature file (rebellions.ai/npu.* "
				       "labels); rbln-ctk nfd --help");
	nfd->set_help_flag();
	nfd->allow_extras();
	nfd->callback([&] { action = [&] { return nfd_command(nfd->remaining()); }; });

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == 0)
			return app.exit(e);
		// Point at the help of the deepest command given.
		std::string where = "rbln-ctk";
		for (CLI::App *a = &app; !a->get_subcommands().empty();) {
			a = a->get_subcommands()[0];
			where += " " + a->get_name();
		}
		fmt::print(stderr, "rbln-ctk: {} (see {} --help)\n", e.what(), where);
		return kUsage;
	}
	try {
		return action();
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-ctk: {}\n", e.what());
		return int(exit_code(e));
	}
}
