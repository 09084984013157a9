#include "options.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rbln::smi {

const std::vector<std::string> &query_field_names()
{
	static const std::vector<std::string> names = {
		"npu", "name", "uuid", "pci.bus_id", "status", "temperature", "power", "pstate",
		"memory.used", "memory.total", "utilization", "driver_version",
	};
	return names;
}

static std::vector<std::string> split(const std::string &s)
{
	std::vector<std::string> out;
	size_t pos = 0;
	while (true) {
		size_t comma = s.find(',', pos);
		out.push_back(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
		if (comma == std::string::npos)
			return out;
		pos = comma + 1;
	}
}

ParseResult parse_options(const std::vector<std::string> &args)
{
	Options o;
	auto fail = [](std::string msg) { return ParseResult{std::nullopt, std::move(msg)}; };
	size_t i = 0;
	if (!args.empty() && !args[0].starts_with("-")) {
		i = 1;
		if (args[0] == "events") {
			o.command = Command::events;
		} else if (args[0] == "dmon") {
			o.command = Command::dmon;
		} else if (args[0] == "topo") {
			o.command = Command::topo;
		} else if (args[0] == "reset") {
			o.command = Command::reset;
		} else if (args[0] == "selftest") {
			o.command = Command::selftest;
		} else if (args[0] == "diagnose") {
			o.command = Command::diagnose;
		} else if (args[0] == "triage") {
			o.command = Command::triage;
			if (args.size() < 2 || args[1].starts_with("-"))
				return fail("triage needs the error message, quoted: rbln-smi triage \"<error text>\"");
			o.message = args[1];
			i = 2;
		} else {
			return fail(fmt::format("unknown command '{}' (commands: events, dmon, topo, diagnose, triage, selftest, reset; see "
						"rbln-smi --help)", args[0]));
		}
	}
	for (; i < args.size(); i++) {
		std::string a = args[i], value;
		bool has_value = false;
		if (auto eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
			value = a.substr(eq + 1);
			a = a.substr(0, eq);
			has_value = true;
		}
		auto take = [&]() -> std::optional<std::string> {
			if (has_value)
				return value;
			if (i + 1 < args.size())
				return args[++i];
			return std::nullopt;
		};
		if (a == "-h" || a == "--help") {
			o.command = Command::help;
		} else if (a == "--version") {
			o.command = Command::version;
		} else if (a == "-q" || a == "--query-all") {
			o.full = true;
		} else if (a == "-j" || a == "--json") {
			o.json = true;
		} else if (a == "-g" || a == "--groups") {
			o.command = Command::groups;
		} else if (a == "--reclaim") {
			o.command = Command::reclaim;
		} else if (a == "-i" || a == "--id") {
			auto v = take();
			if (!v || v->empty())
				return fail("-i needs NPUs: indices, uuids or PCI bus ids, comma-separated (e.g. -i 0,2)");
			for (auto &id : split(*v)) {
				if (id.empty())
					return fail(fmt::format("-i '{}': empty entry", *v));
				o.ids.push_back(id);
			}
		} else if (a == "--query") {
			auto v = take();
			if (!v || v->empty())
				return fail(fmt::format("--query needs fields; valid: {}", fmt::join(query_field_names(), ",")));
			for (auto &f : split(*v)) {
				const auto &names = query_field_names();
				if (std::find(names.begin(), names.end(), f) == names.end())
					return fail(fmt::format("--query: unknown field '{}'; valid: {}", f,
								fmt::join(names, ",")));
				o.query_fields.push_back(f);
			}
			o.command = Command::query;
		} else if (a == "--format") {
			auto v = take();
			if (v == "csv")
				o.csv = true;
			else if (v == "csv,noheader")
				o.csv = true, o.csv_header = false;
			else
				return fail(fmt::format("--format '{}': valid formats are csv and csv,noheader",
							v.value_or("")));
		} else if (a == "-l" || a == "--loop") {
			auto v = take();
			char *end = nullptr;
			double secs = v ? std::strtod(v->c_str(), &end) : 0;
			if (!v || end == v->c_str() || *end || !(secs > 0 && secs <= 86400))
				return fail(fmt::format("-l '{}': the loop interval must be seconds in (0, 86400]",
							v.value_or("")));
			o.loop_seconds = secs;
		} else if (a == "--force" && o.command == Command::reset) {
			o.force = true;
		} else if (a == "--diff" && o.command == Command::diagnose) {
			if (i + 2 >= args.size())
				return fail("--diff needs two reports: rbln-smi diagnose --diff A.json B.json");
			o.diff = {args[i + 1], args[i + 2]};
			i += 2;
		} else if (a == "-d" && o.command == Command::dmon) {
			auto v = take();
			char *end = nullptr;
			double secs = v ? std::strtod(v->c_str(), &end) : 0;
			if (!v || end == v->c_str() || *end || !(secs > 0 && secs <= 3600))
				return fail(fmt::format("-d '{}': the interval must be seconds in (0, 3600]",
							v.value_or("")));
			o.delay_seconds = secs;
		} else if ((a == "--count" && (o.command == Command::events || o.command == Command::dmon)) ||
			   (a == "--timeout" && o.command == Command::events)) {
			auto v = take();
			unsigned long n = 0;
			try {
				n = v ? std::stoul(*v) : 0;
			} catch (...) {
				n = 0;
			}
			if (!v || n == 0 || n > 1000000)
				return fail(fmt::format("{} '{}': expected a positive whole number", a,
							v.value_or("")));
			(a == "--count" ? o.count : o.timeout_seconds) = unsigned(n);
		} else {
			return fail(fmt::format("unknown option '{}' (see rbln-smi --help)", args[i]));
		}
	}
	if (o.command == Command::reset && o.ids.empty())
		return fail("reset needs the NPUs to reset: rbln-smi reset -i N [--force]");
	if (o.csv && o.command != Command::query)
		return fail("--format csv goes with --query FIELDS");
	if (o.command == Command::query && !o.csv && !o.json)
		o.csv = true;	// --query alone prints CSV, like nvidia-smi --query-gpu
	return {o, {}};
}

std::string help_text()
{
	return fmt::format(R"(Usage: rbln-smi [OPTIONS]
       rbln-smi events [--json] [--count N] [--timeout SECONDS]
       rbln-smi diagnose [--json] | diagnose --diff A.json B.json
       rbln-smi triage "<error message>" [--json]
       rbln-smi selftest [-i LIST] [--json]
       rbln-smi reset -i LIST [--force]
       rbln-smi dmon [-i LIST] [-d SECONDS] [--count N]
       rbln-smi topo [-i LIST]

Shows the RBLN NPUs of this host, their processes, and acts on them.

Views:
  (none)              device table and process (context) table
  -q, --query-all     full report: also memory and engines of each chiplet
  -i, --id LIST       only these NPUs: indices, uuids or PCI bus ids (e.g. -i 0,2)
  -j, --json          JSON (schema_version 1; bytes and counts are integers)
      --query FIELDS  chosen fields, CSV by default; fields:
                      {}
      --format csv[,noheader]
  -l, --loop SECONDS  repeat every SECONDS until interrupted
  -g, --groups        logical devices of this environment (RBLN_VISIBLE_DEVICES,
                      RBLN_NPUS_PER_DEVICE, RBLN_DEVICE_MAP)

Actions:
      --reclaim       reclaim stale clients (their process exited but the file
                      lives on): root reclaims any, others their own; with -i
  events              stream driver events until interrupted (or --count N)
  dmon                one line per NPU every -d SECONDS (default 1), --count N times
  topo                chiplets of each NPU and how they connect (die-to-die links,
                      the host link through chiplet 0), with PCI bus id and NUMA node
  diagnose            environment report (host, module, DKMS, device nodes, udev
                      rules, library candidates, ABI verdict, RBLN_* variables,
                      grouping, container, processes); works without the driver;
                      anything missing shows as MISSING (null in --json)
  diagnose --diff A B what changed between two --json reports, one line each
  triage "<message>"  which layer an error message points at, what to check first
  reset -i LIST       (root) back to READY: engines, chiplets and faults cleared;
                      refused while processes have the NPU open (it says which)
                      unless --force, which revokes their access
  selftest            per NPU: allocate, DMA round trip through every chiplet,
                      compare, free; a PASS/FAIL line each (exit 1 on a FAIL)

Memory is shown in one unit per field (MiB below 1 GiB of total, else GiB).

Exit codes:
  0 success   1 other error   2 bad argument   3 no driver or no NPU
  4 permission denied   5 NPU not found   6 device in use
)", fmt::join(query_field_names(), ","));
}

} // namespace rbln::smi
