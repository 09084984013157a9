// SPDX-License-Identifier: MIT
// rbln-container-runtime: an OCI runtime shim in front of runc or crun.  On
// "create" (and "run") it gives the container the NPUs it asks for, in its
// bundle's config.json, then execs the real runtime with the same arguments;
// every other command goes straight through.  Requests come from CDI
// annotations (cdi.k8s.io/*: rebellions.ai/npu=...) and from
// RBLN_VISIBLE_DEVICES in the container's environment, the latter only for
// privileged containers unless accept-env-unprivileged is set.  Inside, the
// variable then names exactly the NPUs given (or "none").  A bad request
// fails the start with a message naming it, and config.json stays as it was.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <rbln/devmgr.hpp>
#include <rbln/enumerate.hpp>
#include <rbln/exit_codes.hpp>

#include "cdi.hpp"
#include "oci.hpp"
#include "request.hpp"
#include "shim_args.hpp"
#include "text.hpp"
#include "toolkit_config.hpp"

using namespace rbln;
using namespace rbln::ctk;
namespace fs = std::filesystem;

namespace {

std::string find_runtime(const ToolkitConfig &cfg)
{
	std::vector<std::string> candidates;
	if (!cfg.runtime.empty())
		candidates.push_back(cfg.runtime);
	else
		candidates = {"runc", "crun"};
	std::error_code ec;
	const std::string self = fs::canonical("/proc/self/exe", ec).string();
	const char *path = std::getenv("PATH");
	const auto dirs = split(path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ':');
	for (const auto &c : candidates) {
		if (c.find('/') != std::string::npos)
			return c;
		for (const auto &d : dirs) {
			fs::path p = fs::path(d.empty() ? "." : d) / c;
			if (::access(p.c_str(), X_OK) == 0 && fs::canonical(p, ec).string() != self)
				return p.string();
		}
	}
	throw Error(Errc::system, ENOENT,
		    fmt::format("no OCI runtime found ({} not in PATH); set runtime: in {}",
				fmt::join(candidates, ", "), cfg.path));
}

// Gives the container in @bundle the NPUs it asks for.
void prepare(const std::string &bundle, const ToolkitConfig &cfg)
{
	const std::string path = (fs::path(bundle) / "config.json").string();
	std::ifstream in(path);
	if (!in) {
		int err = errno;
		throw std::system_error(err, std::generic_category(), fmt::format("cannot read {}", path));
	}
	json config;
	try {
		config = json::parse(in);
	} catch (const json::parse_error &e) {
		throw Error(Errc::invalid_argument, EINVAL, fmt::format("{}: not valid JSON: {}", path, e.what()));
	}

	auto cdi_names = rbln_names_in_cdi_annotations(oci_cdi_annotations(config));
	auto env = oci_env(config, "RBLN_VISIBLE_DEVICES");
	auto host = enumerate_npus();
	// "void" or empty and no CDI device: not a container for NPUs, left alone.
	if (cdi_names.empty() && !(env && npus_from_env(host, *env)))
		return;

	// CDI devices: applied from the spec on disk, as any CDI consumer would.
	bool spec_edits_applied = false;
	std::vector<NpuInfo> from_cdi;
	for (const auto &name : cdi_names) {
		json edits = cdi_device_edits(name);	// throws for a name no spec has
		from_cdi = merge_npus(from_cdi, npus_from_env(host, name).value_or(std::vector<NpuInfo>{}));
		oci_apply_cdi_edits(config, edits["device"], fmt::format("{}={}", kCdiKind, name));
		if (!spec_edits_applied)
			oci_apply_cdi_edits(config, edits["spec"], kCdiKind);
		spec_edits_applied = true;
	}

	std::vector<NpuInfo> npus;
	if (env) {
		if (oci_privileged(config) || cfg.accept_env_unprivileged) {
			if (auto requested = npus_from_env(host, *env))
				npus = merge_npus(npus, *requested);
		} else if (npus_from_env(host, *env).value_or(std::vector<NpuInfo>{}).size()) {
			fmt::print(stderr, "rbln-container-runtime: warning: ignoring RBLN_VISIBLE_DEVICES={}: "
				   "the container is not privileged and accept-env-unprivileged is off in {} "
				   "(request NPUs through CDI: --device {}=N)\n", *env, cfg.path, kCdiKind);
		}
	}
	oci_give_npus(config, npus);
	// Whatever path the NPUs came by, the variable inside names exactly them.
	oci_set_visible_devices(config, merge_npus(from_cdi, npus));
	const fs::perms mode = fs::status(path).permissions();
	write_file_atomic(path, config.dump(2) + "\n", mode == fs::perms::unknown ? 0644 : unsigned(mode));
}

} // namespace

int main(int argc, char **argv)
{
	Invocation inv;
	try {
		inv = parse_shim_args(argc, argv);
	} catch (const CLI::ParseError &e) {
		fmt::print(stderr, "rbln-container-runtime: error: {} (see rbln-container-runtime --help)\n", e.what());
		return int(ExitCode::bad_argument);
	}
	if (inv.help)
		return 0;
	try {
		// Only create and run need the settings; nothing else may be blocked
		// by a bad file (a container must always be deletable).
		const bool starts = inv.command == "create" || inv.command == "run";
		ToolkitConfig cfg = starts ? ToolkitConfig::load() : ToolkitConfig::load_lenient();
		for (const auto &s : cfg.skipped)
			fmt::print(stderr, "rbln-container-runtime: warning: ignoring {}\n", s);
		if (starts)
			prepare(inv.bundle, cfg);
		std::string runtime = find_runtime(cfg);
		std::vector<char *> argv2 = {const_cast<char *>(runtime.c_str())};
		for (int i = 1; i < argc; i++)
			argv2.push_back(argv[i]);
		argv2.push_back(nullptr);
		::execv(runtime.c_str(), argv2.data());
		int err = errno;
		throw std::system_error(err, std::generic_category(), fmt::format("cannot run {}", runtime));
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-container-runtime: error: {}\n", e.what());
		return int(exit_code(e));
	}
}
