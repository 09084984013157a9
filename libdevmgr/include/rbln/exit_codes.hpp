// SPDX-License-Identifier: MIT
// The exit codes of every rbln tool: one table from libdevmgr's statuses, so
// that a script sees the same number for the same failure whichever tool ran.
#pragma once

#include "abi_namespace.hpp"

#include <string>
#include <system_error>

#include "devmgr.hpp"

RBLN_CXX_ABI_BEGIN

enum class ExitCode : int {
	ok = 0,
	error = 1,		// any other failure; the message says which
	bad_argument = 2,	// a bad option, value or RBLN_* configuration
	no_driver = 3,		// rbln.ko is not loaded
	permission = 4,		// not allowed to open the device (group rbln?)
	not_found = 5,		// no such NPU, no NPU at all, or it was removed
	in_use = 6,		// held by another process
	not_supported = 7,	// the driver or kernel lacks the feature, or the ABI differs
	incomplete = 8,		// the result was written but misses data that was lost (the message says what)
};

struct ExitCodeRow {
	ExitCode code;
	const char *meaning;
};

inline constexpr ExitCodeRow exit_code_table[] = {
	{ExitCode::ok, "success"},
	{ExitCode::error, "error (the message says which)"},
	{ExitCode::bad_argument, "bad argument or RBLN_* configuration"},
	{ExitCode::no_driver, "rbln driver not loaded"},
	{ExitCode::permission, "permission denied (group rbln)"},
	{ExitCode::not_found, "NPU not found, no NPU, or NPU removed"},
	{ExitCode::in_use, "NPU in use by another process"},
	{ExitCode::not_supported, "not supported by the driver or kernel, or ABI mismatch"},
	{ExitCode::incomplete, "incomplete result: written, but data was lost (the message says what)"},
};

constexpr ExitCode exit_code(Errc code) noexcept
{
	switch (code) {
	case Errc::ok:
		return ExitCode::ok;
	case Errc::invalid_argument:
		return ExitCode::bad_argument;
	case Errc::driver_not_loaded:
		return ExitCode::no_driver;
	case Errc::permission:
		return ExitCode::permission;
	case Errc::not_found:
	case Errc::no_device:
		return ExitCode::not_found;
	case Errc::busy:
		return ExitCode::in_use;
	case Errc::not_supported:
	case Errc::abi_mismatch:
		return ExitCode::not_supported;
	default:
		return ExitCode::error;
	}
}

// A tool's failure, by its type: rbln::Error by its code; a system_error (a
// file the tool could not write, say) is permission when its errno says so.
// Never from errno, which something else may have set since.
inline ExitCode exit_code(const std::exception &e) noexcept
{
	if (auto *error = dynamic_cast<const Error *>(&e))
		return exit_code(error->code());
	if (auto *sys = dynamic_cast<const std::system_error *>(&e))
		if (sys->code() == std::errc::permission_denied ||
		    sys->code() == std::errc::operation_not_permitted)
			return ExitCode::permission;
	return ExitCode::error;
}

// "Exit codes: 0 success, 1 error ..., 8 ...", for --help.
inline std::string exit_codes_help()
{
	std::string text = "Exit codes:\n";
	for (const auto &row : exit_code_table)
		text += "  " + std::to_string(int(row.code)) + "  " + row.meaning + "\n";
	return text;
}

RBLN_CXX_ABI_END // namespace rbln
