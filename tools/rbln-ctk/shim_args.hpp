// SPDX-License-Identifier: MIT
// The shim's command line: what rbln-container-runtime needs of runc's.
#pragma once

#include <string>

namespace rbln::ctk {

struct Invocation {
	std::string command;		// create, run, start, delete, ...
	std::string bundle = ".";
	bool help = false;		// --help was answered
};

// The command, and the bundle of create and run.  Everything else is the
// runtime's business and passes through unread.  Throws CLI::ParseError.
Invocation parse_shim_args(int argc, const char *const *argv);

} // namespace rbln::ctk
