// rbln-smi's command line and units, without a device.
#include <chrono>
#include <cstdlib>
#include <ctime>

#include <gtest/gtest.h>

#include "options.hpp"
#include "views.hpp"

using namespace rbln::smi;

TEST(SmiOptions, ValidCommandLines)
{
	auto o = parse_options({"-q", "-i", "0,2", "-j"}).options;
	ASSERT_TRUE(o);
	EXPECT_TRUE(o->full);
	EXPECT_TRUE(o->json);
	EXPECT_EQ(o->ids, (std::vector<std::string>{"0", "2"}));

	o = parse_options({"--query=npu,memory.used", "--format", "csv,noheader"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->command, Command::query);
	EXPECT_TRUE(o->csv);
	EXPECT_FALSE(o->csv_format.header);
	EXPECT_TRUE(o->csv_format.units);

	o = parse_options({"--query", "npu"}).options;
	ASSERT_TRUE(o);
	EXPECT_TRUE(o->csv) << "--query alone prints CSV";
	EXPECT_TRUE(o->csv_format.header);
	EXPECT_TRUE(o->csv_format.units);

	// As nvidia-smi users type it: any order, spaces after the commas.
	for (const char *f : {"csv,noheader,nounits", "csv, noheader, nounits", "nounits,noheader,csv"}) {
		o = parse_options({"--query", "npu", "--format", f}).options;
		ASSERT_TRUE(o) << f;
		EXPECT_TRUE(o->csv) << f;
		EXPECT_FALSE(o->csv_format.header) << f;
		EXPECT_FALSE(o->csv_format.units) << f;
	}
	o = parse_options({"--query", "npu", "--format=csv,nounits"}).options;
	ASSERT_TRUE(o);
	EXPECT_TRUE(o->csv_format.header);
	EXPECT_FALSE(o->csv_format.units);

	o = parse_options({"events", "--json", "--count", "3"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->command, Command::events);
	EXPECT_EQ(o->count, 3u);

	o = parse_options({"-l", "0.5"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->loop_seconds, 0.5);
}

TEST(SmiOptions, EveryBadArgumentSaysWhatIsValid)
{
	const char *const commands = "(commands: events, dmon, pmon, topo, diagnose, triage, selftest, reset, trace; ";
	const std::pair<std::vector<std::string>, std::string> rows[] = {
		{{"--bogus"}, std::string("unexpected '--bogus' ") + commands + "see rbln-smi --help)"},
		{{"frobnicate"}, std::string("unexpected 'frobnicate' ") + commands + "see rbln-smi --help)"},
		{{"--count", "2"}, std::string("unexpected '--count 2' ") + commands + "see rbln-smi --help)"},
		{{"reset"}, "--id is required (see rbln-smi reset --help)"},
		{{"triage"}, "message is required (see rbln-smi triage --help)"},
		{{"diagnose", "--diff", "a.json"},
		 "--diff: At least 2 required but received 1 (see rbln-smi diagnose --help)"},
		{{"-i"}, "--id: 1 required LIST missing (see rbln-smi --help)"},
		{{"--query", "npu,colour"}, "--query: colour not in {npu,name,uuid,pci.bus_id,pci.link_speed,pci.link_width,status,"
					    "temperature,power,pstate,memory.used,memory.total,utilization,"
					    "driver_version,timestamp} (see rbln-smi --help)"},
		{{"--query", "npu", "--format", "xml"},
		 "--format: 'xml' is not a format option (valid: csv, noheader, nounits, comma-separated, "
		 "e.g. csv,noheader,nounits) (see rbln-smi --help)"},
		{{"--query", "npu", "--format", "csv,noheader,bogus"},
		 "--format: 'bogus' is not a format option (valid: csv, noheader, nounits, comma-separated, "
		 "e.g. csv,noheader,nounits) (see rbln-smi --help)"},
		{{"--query", "npu", "--format", "noheader"},
		 "--format: 'noheader' lacks csv, the one output format (e.g. csv,noheader) (see rbln-smi --help)"},
		{{"--query", "npu", "--format", "csv,nounits,nounits"},
		 "--format: 'nounits' is given twice in 'csv,nounits,nounits' (see rbln-smi --help)"},
		{{"--query", "npu", "--format", "csv,,noheader"},
		 "--format: an empty option in 'csv,,noheader' (valid: csv, noheader, nounits, "
		 "comma-separated, e.g. csv,noheader,nounits) (see rbln-smi --help)"},
		{{"--format", "csv"}, "--format requires --query (see rbln-smi --help)"},
		{{"--query", "npu", "--format", "csv", "-j"}, "--format excludes --json (see rbln-smi --help)"},
		{{"-l", "0"}, "--loop: '0' is not a number of seconds in (0, 86400] (see rbln-smi --help)"},
		{{"-l", "soon"}, "--loop: 'soon' is not a number of seconds in (0, 86400] (see rbln-smi --help)"},
		{{"-l", "1abc"}, "--loop: '1abc' is not a number of seconds in (0, 86400] (see rbln-smi --help)"},
		{{"-l", "nan"}, "--loop: 'nan' is not a number of seconds in (0, 86400] (see rbln-smi --help)"},
		// Whole numbers or nothing: no prefix is read, no fraction dropped.
		{{"events", "--count", "0"}, "--count: Value 0 not in range 1 to 1000000 (see rbln-smi events --help)"},
		{{"dmon", "--count", "3x"}, "--count: '3x' is not a whole number (see rbln-smi dmon --help)"},
		{{"dmon", "--count", "2.9"}, "--count: '2.9' is not a whole number (see rbln-smi dmon --help)"},
		{{"dmon", "--count", "-1"}, "--count: '-1' is not a whole number (see rbln-smi dmon --help)"},
		{{"dmon", "--count", "0x10"}, "--count: '0x10' is not a whole number (see rbln-smi dmon --help)"},
		{{"events", "--timeout", "1abc"},
		 "--timeout: '1abc' is not a whole number (see rbln-smi events --help)"},
		{{"dmon", "-d", "0.1s"}, "--delay: '0.1s' is not a number of seconds in (0, 3600] (see rbln-smi dmon --help)"},
		// Conflicts name both options.
		{{"-g", "-j"}, "--json excludes --groups (see rbln-smi --help)"},
		{{"-g", "-l", "1"}, "--loop excludes --groups (see rbln-smi --help)"},
		{{"-g", "-i", "0"}, "--id excludes --groups (see rbln-smi --help)"},
		{{"--reclaim", "-j"}, "--json excludes --reclaim (see rbln-smi --help)"},
		{{"-q", "--query", "npu"}, "--query-all excludes --query (see rbln-smi --help)"},
		{{"diagnose", "--json", "--diff", "a", "b"}, "--json excludes --diff (see rbln-smi diagnose --help)"},
	};
	for (const auto &[args, message] : rows) {
		auto r = parse_options(args);
		EXPECT_FALSE(r.options) << message;
		EXPECT_EQ(r.error, message);
	}
}

TEST(SmiOptions, QueryWithJsonKeepsTheFields)
{
	auto o = parse_options({"--query", "name", "-j"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->command, Command::query);
	EXPECT_TRUE(o->json);
	EXPECT_FALSE(o->csv);
	EXPECT_EQ(o->query_fields, std::vector<std::string>{"name"});
}

TEST(SmiOptions, VendorJsonFormat)
{
	auto o = parse_options({"--json-format", "vendor"}).options;
	ASSERT_TRUE(o);
	EXPECT_TRUE(o->json) << "implies -j";
	EXPECT_TRUE(o->vendor_json);
	o = parse_options({"-j", "--json-format", "rbln"}).options;
	ASSERT_TRUE(o);
	EXPECT_FALSE(o->vendor_json);
	auto r = parse_options({"-j", "--json-format", "nvidia"});
	EXPECT_EQ(r.error, "--json-format: nvidia not in {rbln,vendor} (see rbln-smi --help)");
	r = parse_options({"--query", "npu", "--json-format", "vendor"});
	EXPECT_FALSE(r.options);
	EXPECT_NE(r.error.find("excludes"), std::string::npos) << r.error;
}

TEST(SmiOptions, EveryCommandHasItsHelp)
{
	for (const char *cmd : {"events", "dmon", "pmon", "topo", "diagnose", "triage", "selftest", "reset"}) {
		auto o = parse_options({cmd, "--help"}).options;
		ASSERT_TRUE(o) << cmd;
		EXPECT_EQ(o->command, Command::help);
		EXPECT_NE(o->help.find(std::string("rbln-smi ") + cmd), std::string::npos) << o->help;
	}
}

TEST(SmiOptions, MemoryHasOneUnitPerField)
{
	EXPECT_EQ(memory_text(0, 64ull << 20), "0 / 64 MiB");
	EXPECT_EQ(memory_text(3ull << 20, 64ull << 20), "3 / 64 MiB");
	EXPECT_EQ(memory_text(0, 16076ull << 20), "0.0 / 15.7 GiB");
	EXPECT_EQ(memory_text(70ull << 30, 140ull << 30), "70.0 / 140.0 GiB");
}

TEST(SmiOptions, HelpDocumentsExitCodes)
{
	auto help = help_text();
	EXPECT_NE(help.find(rbln::exit_codes_help()), std::string::npos) << help;
	for (const char *s : {"  0  success", "  2  bad argument", "  3  rbln driver not loaded",
			      "  5  NPU not found, no NPU, or NPU removed", "  7  not supported"})
		EXPECT_NE(help.find(s), std::string::npos) << s;
}

namespace {

Snapshot csv_snapshot(const std::string &name)
{
	Snapshot snap;
	snap.driver_version = "0.5.0";
	DeviceSnapshot d{};
	d.npu.index = 1;
	d.npu.name = name;
	d.npu.memory_total = 64ull << 20;
	d.temperature_c = 41;
	d.power_w = 18.04;
	d.pstate = "P14";
	d.utilization = 7;
	d.memory_used = 3ull << 20;
	snap.devices.push_back(d);
	return snap;
}

} // namespace

TEST(SmiCsv, UnitsInTheHeaderAndTheValuesUnlessNounits)
{
	const std::vector<std::string> fields = {"npu", "temperature", "power", "memory.used",
						 "memory.total", "utilization", "pstate"};
	Snapshot snap = csv_snapshot("RBLN-CA12");
	EXPECT_EQ(render_csv(snap, fields, {}),
		  "npu, temperature [C], power [W], memory.used [B], memory.total [B], utilization [%], pstate\n"
		  "1, 41 C, 18.0 W, 3145728 B, 67108864 B, 7 %, P14\n");
	EXPECT_EQ(render_csv(snap, fields, {.header = true, .units = false}),
		  "npu, temperature [C], power [W], memory.used [B], memory.total [B], utilization [%], pstate\n"
		  "1, 41, 18.0, 3145728, 67108864, 7, P14\n");
	EXPECT_EQ(render_csv(snap, fields, {.header = false, .units = false}),
		  "1, 41, 18.0, 3145728, 67108864, 7, P14\n");
}

TEST(SmiCsv, QuotesPerRfc4180)
{
	// A comma, a quote, a line break or a leading space (the separator is
	// nvidia-smi's ", ") is quoted, quotes doubled; anything else is as it is.
	const std::pair<const char *, const char *> rows[] = {
		{"RBLN-CA12", "RBLN-CA12"},
		{"a,b", "\"a,b\""},
		{"say \"hi\"", "\"say \"\"hi\"\"\""},
		{"two\nlines", "\"two\nlines\""},
		{"cr\r", "\"cr\r\""},
		{" lead", "\" lead\""},
		{"", ""},
	};
	for (const auto &[name, cell] : rows)
		EXPECT_EQ(render_csv(csv_snapshot(name), {"name", "npu"}, {.header = false}),
			  std::string(cell) + ", 1\n") << name;
}

TEST(SmiCsv, HelpNamesTheUnits)
{
	auto help = help_text();
	for (const char *s : {"temperature [C]", "power [W]", "memory.used [B]", "utilization [%]",
			      "nounits"})
		EXPECT_NE(help.find(s), std::string::npos) << s << "\n" << help;
}

// nvidia-smi's loop in milliseconds, spelled as its users type it.
TEST(SmiOptions, LoopInMilliseconds)
{
	for (auto args : {std::vector<std::string>{"-lms", "250"}, {"-lms=250"}, {"--loop-ms", "250"}}) {
		auto r = parse_options(args);
		ASSERT_TRUE(r.options) << args[0] << ": " << r.error;
		ASSERT_TRUE(r.options->loop_seconds);
		EXPECT_DOUBLE_EQ(*r.options->loop_seconds, 0.25);
	}
	auto r = parse_options({"--query", "timestamp,npu", "-lms", "100"});
	ASSERT_TRUE(r.options) << r.error;
	EXPECT_EQ(r.options->command, Command::query);

	r = parse_options({"-lms", "0"});
	EXPECT_NE(r.error.find("--loop-ms: Value 0 not in range 1 to 86400000"), std::string::npos) << r.error;
	r = parse_options({"-lms", "1.5"});
	EXPECT_FALSE(r.options);
	EXPECT_NE(r.error.find("1.5"), std::string::npos) << r.error;
	r = parse_options({"-l", "1", "-lms", "100"});
	EXPECT_NE(r.error.find("--loop excludes --loop-ms"), std::string::npos) << r.error;
}

TEST(SmiOptions, DmonDateAndTimeColumns)
{
	auto o = parse_options({"dmon", "-o", "DT", "--count", "1"}).options;
	ASSERT_TRUE(o);
	EXPECT_TRUE(o->dmon_date);
	EXPECT_TRUE(o->dmon_time);
	o = parse_options({"dmon", "-o", "T"}).options;
	ASSERT_TRUE(o);
	EXPECT_FALSE(o->dmon_date);
	EXPECT_TRUE(o->dmon_time);
	auto r = parse_options({"dmon", "-o", "X"});
	EXPECT_NE(r.error.find("X not in {D,T,DT,TD}"), std::string::npos) << r.error;
}

namespace {

// 2026-12-01 16:34:05.042 UTC, read in UTC.
Snapshot timed_snapshot()
{
	setenv("TZ", "UTC", 1);
	tzset();
	Snapshot snap = csv_snapshot("RBLN-CA12");
	snap.taken = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796142845042));
	return snap;
}

} // namespace

TEST(SmiTimestamps, QueryFieldDmonColumnsAndText)
{
	Snapshot snap = timed_snapshot();
	EXPECT_EQ(timestamp_text(snap.taken), "2026/12/01 16:34:05.042");
	EXPECT_EQ(render_csv(snap, {"timestamp", "npu"}, {.header = false}), "2026/12/01 16:34:05.042, 1\n");
	EXPECT_EQ(render_dmon(snap, true, {.date = true, .time = true}),
		  "#     Date     Time npu  temp  power pstate  util  mem_used mem_total status\n"
		  "# YYYYMMDD HH:MM:SS idx     C      W           %       MiB       MiB\n"
		  "  20261201 16:34:05   1    41   18.0    P14     7         3        64 \n");
	EXPECT_EQ(render_dmon(snap, false), "    1    41   18.0    P14     7         3        64 \n")
		<< "without -o the columns are as before";
}

#include "pmon.hpp"

// pmon's busy share: busy time gained over the time between two samples.
TEST(SmiPmon, BusyShareBetweenSamples)
{
	using namespace std::chrono_literals;
	PmonSampler sampler;
	const auto t0 = std::chrono::steady_clock::time_point(10s);
	rbln::ProcessUsage u{1, 4242, "python3", 9, 16ull << 20, false,
			     std::array<uint64_t, 4>{0, 0, 0, 1'000'000'000}};
	auto first = sampler.sample({u}, t0);
	ASSERT_EQ(first.size(), 1u);
	EXPECT_FALSE(first[0].busy_percent) << "one sample has no interval";
	u.engine_busy_ns = std::array<uint64_t, 4>{500'000'000, 0, 0, 1'250'000'000};
	auto second = sampler.sample({u}, t0 + 1s);
	ASSERT_TRUE(second[0].busy_percent);
	EXPECT_EQ(*second[0].busy_percent, (std::array<unsigned, 4>{50, 0, 0, 25}));
	EXPECT_EQ(render_pmon(second, true),
		  "# npu      pid  ndma  tdma dhdma ehdma   mem command\n"
		  "# idx        #     %     %     %     %   MiB\n"
		  "    1     4242    50     0     0    25    16 python3\n");

	rbln::ProcessUsage no_fdinfo{0, 77, "old", 3, 0, false, std::nullopt};
	EXPECT_EQ(render_pmon(sampler.sample({no_fdinfo}, t0 + 2s), false),
		  "    0       77     -     -     -     -     0 old\n");
	EXPECT_EQ(render_pmon({}, false), "    -        -     -     -     -     -     - -\n");
}

TEST(SmiOptions, TraceRecordAndSummary)
{
	auto o = parse_options({"trace", "record", "-o", "x.pb", "--duration", "2.5", "--", "./app", "--npu", "1"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->command, Command::trace_record);
	EXPECT_EQ(o->trace_output, "x.pb");
	EXPECT_EQ(o->trace_format, "pb");
	EXPECT_EQ(o->trace_duration, 2.5);
	EXPECT_EQ(o->trace_command, (std::vector<std::string>{"./app", "--npu", "1"})) << "options after -- are the command's";

	o = parse_options({"trace", "record", "-o", "x.json"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->trace_format, "json") << "the file's name says which";
	o = parse_options({"trace", "record", "--format", "pb", "-o", "x.json"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->trace_format, "pb") << "--format wins";

	o = parse_options({"trace", "summary", "t.pb"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->command, Command::trace_summary);
	EXPECT_EQ(o->trace_file, "t.pb");

	auto bad = parse_options({"trace", "record", "--format", "xml"});
	ASSERT_FALSE(bad.options);
	EXPECT_NE(bad.error.find("xml"), std::string::npos) << bad.error;
	EXPECT_NE(bad.error.find("pb"), std::string::npos) << bad.error << " names the valid ones";
	o = parse_options({"trace", "record"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->trace_buffer_kib, 16384u) << "16 MiB per CPU unless told";
	o = parse_options({"trace", "record", "--buffer-kib", "4"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->trace_buffer_kib, 4u);
	for (const char *kib : {"0", "4.5", "lots", "4194305"}) {
		bad = parse_options({"trace", "record", "--buffer-kib", kib});
		ASSERT_FALSE(bad.options) << kib;
		EXPECT_NE(bad.error.find("--buffer-kib"), std::string::npos) << bad.error;
	}
	bad = parse_options({"trace", "record", "--duration", "0"});
	ASSERT_FALSE(bad.options);
	EXPECT_NE(bad.error.find("'0' is not a number of seconds"), std::string::npos) << bad.error;
	bad = parse_options({"trace"});
	ASSERT_FALSE(bad.options) << "trace needs record or summary";
	bad = parse_options({"trace", "summary"});
	ASSERT_FALSE(bad.options);
	EXPECT_NE(bad.error.find("file"), std::string::npos) << bad.error;

	o = parse_options({"trace", "record", "--help"}).options;
	ASSERT_TRUE(o);
	EXPECT_EQ(o->command, Command::help);
	EXPECT_NE(o->help.find("RBLN_PROFILER=1"), std::string::npos) << o->help;
	EXPECT_NE(o->help.find("ui.perfetto.dev"), std::string::npos) << o->help;
}
