// SPDX-License-Identifier: MIT
#include "shim_args.hpp"

#include "rbln/exit_codes.hpp"

#include <algorithm>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rbln::ctk {

namespace {

// runc's and crun's global options that take a value.
constexpr const char *kValueOptions[] = {"--root", "--log", "--log-format", "--log-level", "--criu",
					 "--rootless", "--cgroup-manager"};
// Their global flags that answer without a command.
constexpr const char *kStandaloneFlags[] = {"--version", "-v", "-V", "--usage"};

} // namespace

// What the shim needs of runc's command line: the command, and the bundle of
// create and run.  Everything else is the runtime's business and passes
// through unread.
Invocation parse_shim_args(int argc, const char *const *argv)
{
	Invocation inv;
	CLI::App global{"An OCI runtime shim: on create and run it adds the NPUs the container asks for "
			"(CDI annotations rebellions.ai/npu=..., or RBLN_VISIBLE_DEVICES=all|none|void|N,...|UUID,...) "
			"to the bundle's config.json, then runs the real runtime (runc or crun; see "
			"/etc/rbln-container-toolkit/config.yaml) with the same arguments. Any other command is "
			"passed through.", "rbln-container-runtime"};
	global.set_help_flag("-h,--help", "this help (COMMAND --help: the runtime's)");
	global.footer("Once the runtime runs, its exit code is the shim's. Before that:\n" + exit_codes_help());
	global.allow_extras();
	global.prefix_command();	// the first word that is not a global option is the command
	// runc's and crun's global options that take a value, and their flags.
	const std::string passed = "passed to the runtime";
	std::string ignored;
	for (const char *o : kValueOptions)
		global.add_option(o, ignored, passed);
	for (const char *f : {"--debug", "--systemd-cgroup"})
		global.add_flag(f, passed);
	try {
		global.parse(argc, argv);
	} catch (const CLI::CallForHelp &) {
		fmt::print("{}", global.help());
		inv.help = true;
		return inv;
	}
	auto rest = global.remaining();
	// What stays before the command are the runtimes' flags that end the
	// call (--version); anything else there is an option this shim cannot
	// tell from a value-taking one, whose value it would take for the
	// command and so inject nothing: refused, named.
	auto command = std::find_if(rest.begin(), rest.end(), [](const std::string &a) { return !a.starts_with("-"); });
	for (auto a = rest.begin(); a != command; ++a)
		if (std::ranges::find(kStandaloneFlags, *a) == std::end(kStandaloneFlags))
			throw CLI::ParseError(
				fmt::format("unknown runtime global option '{}' before the command (known: {} VALUE, and the "
					    "flags --debug, --systemd-cgroup, {}); rbln-container-runtime cannot tell whether "
					    "it takes a value, so it would not find the command",
					    *a, fmt::join(kValueOptions, " VALUE, "), fmt::join(kStandaloneFlags, ", ")),
				CLI::ExitCodes::ExtrasError);
	rest.erase(rest.begin(), command);
	if (rest.empty())
		return inv;
	inv.command = rest[0];
	if (inv.command != "create" && inv.command != "run")
		return inv;
	CLI::App cmd{"", inv.command};
	cmd.allow_extras();
	cmd.set_help_flag();	// --help goes to the runtime
	cmd.add_option("-b,--bundle", inv.bundle);
	rest.erase(rest.begin());
	std::reverse(rest.begin(), rest.end());	// CLI11 takes the arguments last first
	cmd.parse(rest);
	return inv;
}

} // namespace rbln::ctk
