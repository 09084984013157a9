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
#include <vector>

#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <rbln/devmgr.hpp>
#include <rbln/enumerate.hpp>

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

enum Exit { kOk = 0, kFailed = 1, kUsage = 2, kNoDevice = 3, kPermission = 4 };

constexpr const char *kHelp = R"(Usage: rbln-ctk COMMAND [OPTIONS]

The RBLN container toolkit: CDI specs for the NPUs of this host, and the
container engines' configuration for them.

Commands:
  cdi generate    write a CDI spec (kind rebellions.ai/npu): npu=N, npu=<uuid>, npu=all
      --format yaml|json             (default yaml)
      --output PATH                  (default /var/run/cdi/rbln.yaml, .json for json)
      --device-name-strategy index|uuid|both   (default both)
      --dry-run                      print the spec instead of writing it
      --library PATH                 librbln_devmgr.so.0 to give containers (default:
                                     the installed one, else the loader's)
      --smi PATH                     rbln-smi to give containers (default: installed, else PATH)
      --no-inject                    device nodes only: no library, tool or ldcache hook
      --refresh                      for udev and the boot unit: one writer at a time,
                                     write only if changed, no NPU removes the spec
  cdi list        the CDI device names found in /etc/cdi and /var/run/cdi
  cdi validate [FILE]   check a spec against the CDI rules (default: the spec
                 generate writes); one line per problem
      --no-host-check                do not require the device nodes to exist here
  hook update-ldcache [--folder DIR]...
                  createContainer hook of the spec: ldconfig in the container's
                  root (reads the OCI state on stdin)
  runtime configure --runtime containerd|crio|docker|podman
                  register rbln-container-runtime and enable CDI (drop-in files
                  where the engine has them); shows the diff, backs up files
      --dry-run                      show the diff only
      --runtime-path PATH            the shim (default /usr/bin/rbln-container-runtime)
      --root DIR                     configure the files under DIR instead of /
      --set-as-default               make rbln the engine's default runtime (containerd, podman, docker)
  info [--json]   versions, NPUs, toolkit settings and the state of the spec
  nfd             write the Node Feature Discovery feature file (rebellions.ai/npu.* labels)
      --output PATH                  (default /etc/kubernetes/node-feature-discovery/features.d/rbln)
      --dry-run                      print it instead

Exit status: 0 success, 1 failure or problems found, 2 bad argument,
3 no driver or no NPU, 4 permission denied.
)";

struct UsageError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// argv after the command words, with "--opt VALUE" and "--opt=VALUE".
class Args {
public:
	Args(int argc, char **argv, int first) : args_(argv + first, argv + argc) {}

	std::optional<std::string> value(const std::string &name)
	{
		for (size_t i = 0; i < args_.size(); i++) {
			if (args_[i] == name) {
				if (i + 1 >= args_.size())
					throw UsageError(fmt::format("{} needs a value", name));
				std::string v = args_[i + 1];
				args_.erase(args_.begin() + i, args_.begin() + i + 2);
				return v;
			}
			if (args_[i].starts_with(name + "=")) {
				std::string v = args_[i].substr(name.size() + 1);
				args_.erase(args_.begin() + i);
				return v;
			}
		}
		return std::nullopt;
	}

	bool flag(const std::string &name)
	{
		auto it = std::find(args_.begin(), args_.end(), name);
		if (it == args_.end())
			return false;
		args_.erase(it);
		return true;
	}

	// What is left must be at most @max positional arguments.
	std::vector<std::string> rest(size_t max)
	{
		for (const auto &a : args_)
			if (a.starts_with("-"))
				throw UsageError(fmt::format("unknown option '{}' (see rbln-ctk --help)", a));
		if (args_.size() > max)
			throw UsageError(fmt::format("unexpected argument '{}'", args_[max]));
		return args_;
	}

private:
	std::vector<std::string> args_;
};

std::vector<NpuInfo> npus_or_fail()
{
	if (!fs::exists("/sys/module/rbln"))
		throw Error(Errc::no_device, ENODEV, "the rbln driver is not loaded (modprobe rbln)");
	auto npus = enumerate_npus();
	if (npus.empty())
		throw Error(Errc::no_device, ENODEV, "no NPUs found: a CDI spec needs at least one device");
	return npus;
}

int cdi_generate(Args &a)
{
	std::string format = a.value("--format").value_or("yaml");
	if (format != "yaml" && format != "json")
		throw UsageError(fmt::format("--format '{}' is not yaml or json", format));
	std::string strategy = a.value("--device-name-strategy").value_or("both");
	NameStrategy names;
	if (strategy == "index")
		names = NameStrategy::index;
	else if (strategy == "uuid")
		names = NameStrategy::uuid;
	else if (strategy == "both")
		names = NameStrategy::both;
	else
		throw UsageError(fmt::format("--device-name-strategy '{}' is not index, uuid or both", strategy));
	std::string output = a.value("--output").value_or(format == "json" ? "/var/run/cdi/rbln.json"
									  : kDefaultSpecPath);
	InjectionOptions inject{a.value("--library").value_or(""), a.value("--smi").value_or(""), ""};
	bool no_inject = a.flag("--no-inject");
	bool dry_run = a.flag("--dry-run");
	bool refresh = a.flag("--refresh");
	a.rest(0);
	if (refresh && dry_run)
		throw UsageError("--refresh and --dry-run exclude each other");

	std::optional<SpecLock> lock;
	if (refresh)
		lock.emplace(output);
	std::vector<NpuInfo> npus;
	try {
		npus = npus_or_fail();
	} catch (const Error &e) {
		if (!refresh || e.code() != Errc::no_device)
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
	std::string text = format == "json" ? spec_to_json(spec) : spec_to_yaml(spec);
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

int cdi_list(Args &a)
{
	a.rest(0);
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

int cdi_validate(Args &a)
{
	bool host = !a.flag("--no-host-check");
	auto files = a.rest(1);
	std::string path = files.empty() ? kDefaultSpecPath : files[0];
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

int hook_update_ldcache(Args &a)
{
	std::vector<std::string> folders;
	while (auto f = a.value("--folder"))
		folders.push_back(*f);
	a.rest(0);
	auto cmd = ldconfig_command(container_root_from_state(std::cin), folders);
	std::vector<char *> argv;
	for (auto &c : cmd)
		argv.push_back(c.data());
	argv.push_back(nullptr);
	::execv(argv[0], argv.data());
	throw std::runtime_error(fmt::format("cannot run {}: {}", cmd[0], std::strerror(errno)));
}

int runtime_configure(Args &a)
{
	RuntimeOptions o;
	auto runtime = a.value("--runtime");
	if (auto r = a.value("-r"))
		runtime = r;
	if (!runtime)
		throw UsageError("runtime configure needs --runtime containerd|crio|docker|podman");
	o.runtime = *runtime;
	o.shim_path = a.value("--runtime-path").value_or(o.shim_path);
	o.root = a.value("--root").value_or("/");
	o.set_as_default = a.flag("--set-as-default");
	bool dry_run = a.flag("--dry-run");
	a.rest(0);

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

int info(Args &a)
{
	bool as_json = a.flag("--json");
	a.rest(0);
	json out;
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

int exit_for(const Error &e)
{
	switch (e.code()) {
	case Errc::invalid_argument:
		return kUsage;
	case Errc::no_device:
		return kNoDevice;
	case Errc::permission:
		return kPermission;
	default:
		return kFailed;
	}
}

} // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> words(argv + 1, argv + argc);
	if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
		fmt::print("{}", kHelp);
		return words.empty() ? kUsage : kOk;
	}
	if (words[0] == "--version") {
		fmt::print("rbln-ctk {}\n", RBLN_CTK_VERSION);
		return kOk;
	}
	try {
		std::string cmd = words[0], sub = words.size() > 1 ? words[1] : "";
		if (std::find(words.begin(), words.end(), "--help") != words.end()) {
			fmt::print("{}", kHelp);
			return kOk;
		}
		if (cmd == "cdi" && sub == "generate") {
			Args a(argc, argv, 3);
			return cdi_generate(a);
		}
		if (cmd == "cdi" && sub == "list") {
			Args a(argc, argv, 3);
			return cdi_list(a);
		}
		if (cmd == "cdi" && sub == "validate") {
			Args a(argc, argv, 3);
			return cdi_validate(a);
		}
		if (cmd == "hook" && sub == "update-ldcache") {
			Args a(argc, argv, 3);
			return hook_update_ldcache(a);
		}
		if (cmd == "runtime" && sub == "configure") {
			Args a(argc, argv, 3);
			return runtime_configure(a);
		}
		if (cmd == "nfd")
			return nfd_command({argv + 2, argv + argc});
		if (cmd == "info") {
			Args a(argc, argv, 2);
			return info(a);
		}
		throw UsageError(fmt::format("unknown command '{}' (commands: cdi generate|list|validate, "
					     "runtime configure, info, nfd; see rbln-ctk --help)",
					     fmt::format("{}", fmt::join(words.begin(), words.begin() + std::min<size_t>(2, words.size()), " "))));
	} catch (const UsageError &e) {
		fmt::print(stderr, "rbln-ctk: {}\n", e.what());
		return kUsage;
	} catch (const Error &e) {
		fmt::print(stderr, "rbln-ctk: {}\n", e.what());
		return exit_for(e);
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-ctk: {}\n", e.what());
		return errno == EACCES || errno == EPERM ? kPermission : kFailed;
	}
}
