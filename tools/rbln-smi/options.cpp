#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rbln::smi {

const std::vector<std::string> &query_field_names()
{
	static const std::vector<std::string> names = {
		"npu", "name", "uuid", "pci.bus_id", "pci.link_speed", "pci.link_width", "status", "temperature", "power", "pstate",
		"memory.used", "memory.total", "utilization", "driver_version", "timestamp",
	};
	return names;
}

std::string query_field_unit(const std::string &field)
{
	if (field == "temperature") return "C";
	if (field == "power") return "W";
	if (field == "memory.used" || field == "memory.total") return "B";
	if (field == "utilization") return "%";
	return "";
}

std::string timestamp_text(std::chrono::system_clock::time_point t)
{
	const time_t secs = std::chrono::system_clock::to_time_t(t);
	const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
	struct tm local {};
	localtime_r(&secs, &local);
	char text[32];
	std::strftime(text, sizeof(text), "%Y/%m/%d %H:%M:%S", &local);
	return fmt::format("{}.{:03}", text, ms);
}

std::string query_field_header(const std::string &field)
{
	std::string unit = query_field_unit(field);
	return unit.empty() ? field : fmt::format("{} [{}]", field, unit);
}

namespace {

constexpr const char *kFormatOptions = "valid: csv, noheader, nounits, comma-separated, e.g. csv,noheader,nounits";

// --format's words in any order, spaces after the commas allowed; csv is the
// one output format, so it must be among them.  The error, or "".
std::string parse_csv_format(const std::string &text, CsvFormat &format)
{
	std::vector<std::string> seen;
	for (size_t pos = 0;;) {
		size_t comma = text.find(',', pos);
		std::string word = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		word.erase(0, word.find_first_not_of(' '));
		word.erase(word.find_last_not_of(' ') + 1);
		if (word.empty())
			return fmt::format("--format: an empty option in '{}' ({})", text, kFormatOptions);
		if (word != "csv" && word != "noheader" && word != "nounits")
			return fmt::format("--format: '{}' is not a format option ({})", word, kFormatOptions);
		if (std::find(seen.begin(), seen.end(), word) != seen.end())
			return fmt::format("--format: '{}' is given twice in '{}'", word, text);
		seen.push_back(word);
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
	if (std::find(seen.begin(), seen.end(), "csv") == seen.end())
		return fmt::format("--format: '{}' lacks csv, the one output format (e.g. csv,{})", text, text);
	format.header = std::find(seen.begin(), seen.end(), "noheader") == seen.end();
	format.units = std::find(seen.begin(), seen.end(), "nounits") == seen.end();
	return {};
}

// Whole numbers only: "3x", "2.9", "-1", "0x10" and "" are refused (strtoul
// would read a prefix of them, CLI11 would take hex and octal).
const CLI::Validator kWholeNumber(
	[](std::string &s) -> std::string {
		if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ::isdigit))
			return fmt::format("'{}' is not a whole number", s);
		return {};
	},
	"");

// Seconds in (0, @max]: a decimal number, nothing after it.
CLI::Validator seconds_up_to(double max)
{
	return CLI::Validator(
		[max](std::string &s) -> std::string {
			char *end = nullptr;
			double v = std::strtod(s.c_str(), &end);
			if (s.empty() || *end || !std::isfinite(v) || !(v > 0 && v <= max))
				return fmt::format("'{}' is not a number of seconds in (0, {}]", s, max);
			return {};
		},
		"");
}

// -i LIST on the main command and on the subcommands that take it.
CLI::Option *add_ids(CLI::App &app, Options &o)
{
	return app.add_option("-i,--id", o.ids,
			      "only these NPUs: indices, uuids or PCI bus ids, comma-separated (-i 0,2)")
		->delimiter(',')
		->type_name("LIST")
		->check(CLI::Validator(
			[](std::string &s) { return s.empty() ? std::string("an entry is empty") : std::string(); },
			""));
}

CLI::Option *add_json(CLI::App &app, Options &o)
{
	return app.add_flag("-j,--json", o.json, "JSON output");
}

CLI::Option *add_count(CLI::App &app, Options &o, const char *what)
{
	return app.add_option_function<unsigned>(
			  "--count", [&o](const unsigned &n) { o.count = n; }, what)
		->check(kWholeNumber)
		->check(CLI::Range(1u, 1000000u).description("1..1000000"))
		->type_name("N");
}

void build(CLI::App &app, Options &o, std::string &format)
{
	app.set_help_flag("-h,--help", "this help (every command has its own)");
	app.add_flag_callback("--version", [&o] { o.command = Command::version; }, "the version");
	auto *full = app.add_flag("-q,--query-all", o.full,
				  "full report: also memory and engines of each chiplet");
	auto *ids = add_ids(app, o);
	auto *json = add_json(app, o);
	std::vector<std::string> fields_help;
	for (const auto &f : query_field_names())
		fields_help.push_back(query_field_header(f));
	auto *query = app.add_option("--query", o.query_fields,
				     fmt::format("chosen fields, CSV unless -j; fields [CSV unit]: {}",
						 fmt::join(fields_help, ", ")))
			      ->delimiter(',')
			      ->type_name("FIELDS")
			      ->check(CLI::IsMember(query_field_names()));
	auto *fmt_opt = app.add_option("--format", format,
				       "with --query: csv, and noheader and/or nounits, comma-separated "
				       "(csv,noheader,nounits); the header names each unit (memory in "
				       "bytes, B), each value carries it unless nounits")
				->type_name("csv[,noheader][,nounits]")
				->needs(query);
	auto *loop = app.add_option_function<double>(
				"-l,--loop", [&o](const double &s) { o.loop_seconds = s; },
				"repeat every SECONDS until interrupted, each time under the time "
				"it was read (the table) or with the timestamp field (--query)")
			     ->check(seconds_up_to(86400))
			     ->type_name("SECONDS");
	// nvidia-smi spells it -lms; parse_options turns that into --loop-ms.
	auto *loop_ms = app.add_option_function<unsigned>(
				   "--loop-ms", [&o](const unsigned &ms) { o.loop_seconds = ms / 1000.0; },
				   "-lms MS: as -l, every MS milliseconds")
				->check(kWholeNumber)
				->check(CLI::Range(1u, 86400000u).description("1..86400000"))
				->type_name("MS")
				->excludes(loop);
	auto *json_format = app.add_option_function<std::string>(
				       "--json-format",
				       [&o](const std::string &f) { o.json = true, o.vendor_json = f == "vendor"; },
				       "JSON keys and types: rbln (default, versioned) or vendor (the "
				       "vendor's rbln-smi -j); implies -j")
				    ->check(CLI::IsMember({"rbln", "vendor"}))
				    ->excludes(query);
	auto *groups = app.add_flag_callback("-g,--groups", [&o] { o.command = Command::groups; },
					     "logical devices of this environment (RBLN_VISIBLE_DEVICES, "
					     "RBLN_NPUS_PER_DEVICE, RBLN_DEVICE_MAP); exit 2 if they are "
					     "misconfigured");
	auto *reclaim = app.add_flag_callback("--reclaim", [&o] { o.command = Command::reclaim; },
					      "reclaim stale clients (their process exited but the file "
					      "lives on): root any, others their own; with -i");
	for (auto *other : {full, ids, json, json_format, query, fmt_opt, loop, loop_ms, reclaim})
		groups->excludes(other);
	for (auto *other : {full, json, json_format, query, fmt_opt, loop, loop_ms})
		reclaim->excludes(other);
	full->excludes(query);

	auto *events = app.add_subcommand("events", "stream driver events until interrupted");
	events->callback([&o] { o.command = Command::events; });
	add_json(*events, o);
	add_count(*events, o, "stop after N events");
	events->add_option_function<unsigned>(
		      "--timeout", [&o](const unsigned &s) { o.timeout_seconds = s; },
		      "stop after SECONDS")
		->check(kWholeNumber)
		->check(CLI::Range(1u, 1000000u).description("1..1000000"))
		->type_name("SECONDS");

	auto *dmon = app.add_subcommand("dmon", "one line per NPU every -d SECONDS, --count N times");
	dmon->callback([&o] { o.command = Command::dmon; });
	add_ids(*dmon, o);
	dmon->add_option("-d,--delay", o.delay_seconds, "interval in seconds (default 1)")
		->check(seconds_up_to(3600))
		->type_name("SECONDS");
	add_count(*dmon, o, "stop after N samples");
	dmon->add_option_function<std::string>(
		     "-o,--options",
		     [&o](const std::string &v) {
			     for (char c : v)
				     (c == 'D' ? o.dmon_date : o.dmon_time) = true;
		     },
		     "leading columns, as nvidia-smi dmon: D the date (YYYYMMDD), T the time "
		     "(HH:MM:SS), or DT")
		->check(CLI::IsMember({"D", "T", "DT", "TD"}))
		->type_name("D|T|DT");

	auto *pmon = app.add_subcommand("pmon", "per process: each engine's busy share over the "
						"last -d SECONDS and its device memory (MiB), --count N times; "
						"as root every process, else your own");
	pmon->callback([&o] { o.command = Command::pmon; });
	add_ids(*pmon, o);
	pmon->add_option("-d,--delay", o.delay_seconds, "interval in seconds (default 1)")
		->check(seconds_up_to(3600))
		->type_name("SECONDS");
	add_count(*pmon, o, "stop after N samples");

	auto *topo = app.add_subcommand("topo", "chiplets of each NPU and how they connect, as the "
						"driver publishes it (die-to-die links, the host link); -m: the PCI "
						"path between NPUs");
	topo->callback([&o] { o.command = Command::topo; });
	add_ids(*topo, o);
	topo->add_flag("-m,--matrix", o.matrix,
		       "the matrix between NPUs, as nvidia-smi topo -m: X self, PIX one PCIe switch, PXB "
		       "several PCIe bridges, PHB through the host bridge, NODE across host bridges of "
		       "one NUMA node, SYS across NUMA nodes, SIM not on PCI (a simulated NPU)");
	add_json(*topo, o);

	auto *diagnose = app.add_subcommand(
		"diagnose", "environment report (host, module, DKMS, nodes, udev rules, libraries, "
			    "ABI, RBLN_* variables, grouping, container, processes); works without "
			    "the driver");
	diagnose->callback([&o] { o.command = Command::diagnose; });
	auto *djson = add_json(*diagnose, o);
	diagnose->add_option("--diff", o.diff, "what changed between two --json reports")
		->expected(2)
		->type_name("A.json B.json")
		->excludes(djson);

	auto *triage = app.add_subcommand("triage", "which layer an error message points at, "
						    "and what to check first");
	triage->callback([&o] { o.command = Command::triage; });
	triage->add_option("message", o.message, "the error message, quoted")->required();
	add_json(*triage, o);

	auto *selftest = app.add_subcommand("selftest", "per NPU: allocate, DMA round trip "
							"through every chiplet, compare (exit 1 on a FAIL)");
	selftest->callback([&o] { o.command = Command::selftest; });
	add_ids(*selftest, o);
	add_json(*selftest, o);

	auto *reset = app.add_subcommand("reset", "(root) back to READY; refused while processes "
						  "have the NPU open unless --force, which revokes them");
	reset->callback([&o] { o.command = Command::reset; });
	add_ids(*reset, o)->required();
	reset->add_flag("--force", o.force, "revoke the processes that have the NPU open");

	auto *trace = app.add_subcommand("trace", "Perfetto traces of the NPUs' DMA jobs: record "
						  "(root, every process) and summary");
	trace->require_subcommand(1);
	auto *record = trace->add_subcommand(
		"record", "(root) record every process's jobs from the driver's tracepoints while "
			  "COMMAND runs, for --duration, or until Ctrl-C, as one trace (device, Chiplet "
			  "0..3, engines; an arrow for every syncobj wait). Without root, run the program "
			  "with RBLN_PROFILER=1 instead: it records its own jobs");
	record->callback([&o] { o.command = Command::trace_record; });
	record->add_option("-o,--output", o.trace_output,
			   "the trace file (default rbln_{date}_{time}.pb, or .json, here); open a "
			   ".pb at https://ui.perfetto.dev (Open trace file)")
		->type_name("FILE");
	record->add_option("--format", o.trace_format,
			   "pb: Perfetto protobuf (the default, unless FILE ends in .json), json: Chrome trace-event JSON")
		->check(CLI::IsMember({"pb", "json"}))
		->type_name("pb|json");
	record->add_option_function<double>(
		      "--duration", [&o](const double &s) { o.trace_duration = s; },
		      "stop after SECONDS (with COMMAND: at the latest)")
		->check(seconds_up_to(86400))
		->type_name("SECONDS");
	record->add_option("--buffer-kib", o.trace_buffer_kib,
			   "the kernel's ring of events per CPU, in KiB; read every 50 ms, so it holds a "
			   "burst: when it overflows, the trace misses what it lost (said on stderr, "
			   "exit 8)")
		->check(kWholeNumber)
		->check(CLI::Range(1u, 4194304u).description("1..4194304"))
		->capture_default_str()
		->type_name("KIB");
	record->add_option("command", o.trace_command, "the program to record, after --")
		->type_name("-- COMMAND [ARGS...]");
	record->positionals_at_end();
	auto *summary = trace->add_subcommand("summary", "what a .pb trace holds: its tracks as "
							 "Perfetto shows them, slices and bytes per "
							 "engine, flows, counters");
	summary->callback([&o] { o.command = Command::trace_summary; });
	summary->add_option("file", o.trace_file, "the .pb file")->required()->type_name("FILE");

	app.require_subcommand(0, 1);
	app.footer("Memory is shown in one unit per field (MiB below 1 GiB of total, else GiB).\n\n" +
		   exit_codes_help());
}

} // namespace

ParseResult parse_options(const std::vector<std::string> &args)
{
	Options o;
	std::string format;
	CLI::App app("Shows the RBLN NPUs of this host, their processes, and acts on them.",
		     "rbln-smi");
	build(app, o, format);
	std::vector<std::string> reversed;
	for (auto it = args.rbegin(); it != args.rend(); ++it)	// nvidia-smi's -lms N / -lms=N
		reversed.push_back(*it == "-lms" ? "--loop-ms"
				   : it->starts_with("-lms=") ? "--loop-ms=" + it->substr(5) : *it);
	try {
		app.parse(reversed);
	} catch (const CLI::CallForHelp &) {
		o.command = Command::help;
		o.help = app.help();
		return {o, {}};
	} catch (const CLI::ParseError &e) {
		std::string where = app.get_subcommands().empty()
					    ? std::string()
					    : " " + app.get_subcommands()[0]->get_name();
		if (dynamic_cast<const CLI::ExtrasError *>(&e))
			return {std::nullopt,
				fmt::format("unexpected '{}' (commands: events, dmon, pmon, topo, diagnose, "
					    "triage, selftest, reset, trace; see rbln-smi{} --help)",
					    fmt::join(app.remaining(true), " "),
					    where)};
		return {std::nullopt, fmt::format("{} (see rbln-smi{} --help)", e.what(), where)};
	}
	if (!o.query_fields.empty() && o.command == Command::show)
		o.command = Command::query;
	if (!format.empty()) {
		if (std::string error = parse_csv_format(format, o.csv_format); !error.empty())
			return {std::nullopt, error + " (see rbln-smi --help)"};
		o.csv = true;
	} else if (o.command == Command::query && !o.json)
		o.csv = true;	// --query alone prints CSV, like nvidia-smi --query-gpu
	if (o.csv && o.json)
		return {std::nullopt, "--format excludes --json (see rbln-smi --help)"};
	if (o.trace_format.empty())	// -o x.json says which
		o.trace_format = o.trace_output.ends_with(".json") ? "json" : "pb";
	if (o.command == Command::trace_record && !o.trace_command.empty() && o.trace_command[0].starts_with("-"))
		return {std::nullopt, fmt::format("trace record: '{}' is not an option of trace record; a "
						  "command goes after -- (see rbln-smi trace record --help)",
						  o.trace_command[0])};
	return {o, {}};
}

std::string help_text()
{
	return parse_options({"--help"}).options->help;
}

} // namespace rbln::smi
