// rbln-smi's command line (CLI11): parsed into Options by a pure function, so
// every error message is unit-tested on the host.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "rbln/exit_codes.hpp"

namespace rbln::smi {

// Exit codes: libdevmgr's table (rbln/exit_codes.hpp), shared by every tool.
enum Exit : int {
	kOk = int(ExitCode::ok),
	kError = int(ExitCode::error),
	kBadArgument = int(ExitCode::bad_argument),
	kNoDriver = int(ExitCode::no_driver),
	kPermission = int(ExitCode::permission),
	kNotFound = int(ExitCode::not_found),
	kInUse = int(ExitCode::in_use),
	kNotSupported = int(ExitCode::not_supported),
	kIncomplete = int(ExitCode::incomplete),
};

// --format csv[,noheader][,nounits], as nvidia-smi takes it.
struct CsvFormat {
	bool header = true;	// the line of field names (with their [unit])
	bool units = true;	// a value's unit after it: "41 C"
};

enum class Command { show, query, groups, events, reclaim, diagnose, triage, selftest, reset, dmon, pmon, topo, trace_record, trace_summary, help, version };

struct Options {
	Command command = Command::show;
	bool full = false;			// -q
	bool json = false;			// -j
	bool vendor_json = false;		// --json-format vendor
	std::vector<std::string> ids;		// -i
	std::vector<std::string> query_fields;	// --query
	bool csv = false;			// --format csv, or --query without -j
	CsvFormat csv_format;
	bool force = false;			// reset --force
	bool matrix = false;			// topo -m
	std::optional<double> loop_seconds;	// -l SECONDS, or -lms MS / 1000
	std::optional<unsigned> count;		// events/dmon --count
	double delay_seconds = 1;		// dmon -d
	bool dmon_date = false, dmon_time = false;	// dmon -o D / T: leading columns
	std::optional<unsigned> timeout_seconds;	// events --timeout
	std::vector<std::string> diff;		// diagnose --diff A B
	std::string message;			// triage "<error text>"
	std::string trace_output;		// trace record -o FILE ("": rbln_{date}_{time}.pb)
	std::string trace_format;		// trace record --format pb|json
	std::optional<double> trace_duration;	// trace record --duration SECONDS
	std::vector<std::string> trace_command;	// trace record -- COMMAND...
	unsigned trace_buffer_kib = 16384;	// trace record --buffer-kib: the ftrace ring per CPU
	std::string trace_file;			// trace summary FILE
	std::string help;			// --help: the (sub)command's help
};

struct ParseResult {
	std::optional<Options> options;
	std::string error;	// set when options is empty
};

ParseResult parse_options(const std::vector<std::string> &args);

// The fields --query accepts, in help order.
const std::vector<std::string> &query_field_names();
// "2026/12/01 16:34:00.123", the local time as nvidia-smi's timestamp field
// and the loop's header show it.
std::string timestamp_text(std::chrono::system_clock::time_point t);
// A field's unit in CSV ("C", "W", "B", "%"), or "" for none.
std::string query_field_unit(const std::string &field);
// "temperature [C]": a field as the CSV header and --help name it.
std::string query_field_header(const std::string &field);

std::string help_text();

} // namespace rbln::smi
