// rbln-smi's command line: parsed into Options by a pure function, so every
// error message is unit-tested on the host.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rbln::smi {

// Exit codes, documented in --help and the README.
enum Exit : int {
	kOk = 0,
	kError = 1,		// anything not below
	kBadArgument = 2,	// bad option or value
	kNoDriver = 3,		// rbln driver not loaded / no NPU found
	kPermission = 4,	// not allowed (device nodes, reclaim)
	kNotFound = 5,		// -i named an NPU that does not exist
	kInUse = 6,		// reset: device in use
};

enum class Command { show, query, groups, events, reclaim, diagnose, triage, selftest, reset, dmon, topo, help, version };

struct Options {
	Command command = Command::show;
	bool full = false;			// -q
	bool json = false;			// -j
	std::vector<std::string> ids;		// -i
	std::vector<std::string> query_fields;	// --query
	bool csv = false, csv_header = true;	// --format csv[,noheader]
	bool force = false;			// reset --force
	std::optional<double> loop_seconds;	// -l
	std::optional<unsigned> count;		// events/dmon --count
	double delay_seconds = 1;		// dmon -d
	std::optional<unsigned> timeout_seconds;	// events --timeout
	std::vector<std::string> diff;		// diagnose --diff A B
	std::string message;			// triage "<error text>"
};

struct ParseResult {
	std::optional<Options> options;
	std::string error;	// set when options is empty
};

ParseResult parse_options(const std::vector<std::string> &args);

// The fields --query accepts, in help order.
const std::vector<std::string> &query_field_names();

std::string help_text();

} // namespace rbln::smi
