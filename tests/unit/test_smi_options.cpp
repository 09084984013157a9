// rbln-smi's command line and units, without a device.
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
	EXPECT_FALSE(o->csv_header);

	o = parse_options({"--query", "npu"}).options;
	ASSERT_TRUE(o);
	EXPECT_TRUE(o->csv) << "--query alone prints CSV";

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
	const std::pair<std::vector<std::string>, std::string> rows[] = {
		{{"--bogus"}, "unknown option '--bogus' (see rbln-smi --help)"},
		{{"frobnicate"}, "unknown command 'frobnicate' (commands: events, dmon, topo, diagnose, triage, selftest, reset; see "
				 "rbln-smi --help)"},
		{{"reset"}, "reset needs the NPUs to reset: rbln-smi reset -i N [--force]"},
		{{"triage"}, "triage needs the error message, quoted: rbln-smi triage \"<error text>\""},
		{{"diagnose", "--diff", "a.json"}, "--diff needs two reports: rbln-smi diagnose --diff A.json B.json"},
		{{"-i"}, "-i needs NPUs: indices, uuids or PCI bus ids, comma-separated (e.g. -i 0,2)"},
		{{"-i", "0,,1"}, "-i '0,,1': empty entry"},
		{{"--query", "npu,colour"}, "--query: unknown field 'colour'; valid: npu,name,uuid,pci.bus_id,"
					    "status,temperature,power,pstate,memory.used,memory.total,"
					    "utilization,driver_version"},
		{{"--query", "npu", "--format", "xml"}, "--format 'xml': valid formats are csv and csv,noheader"},
		{{"--format", "csv"}, "--format csv goes with --query FIELDS"},
		{{"-l", "0"}, "-l '0': the loop interval must be seconds in (0, 86400]"},
		{{"-l", "soon"}, "-l 'soon': the loop interval must be seconds in (0, 86400]"},
		{{"events", "--count", "0"}, "--count '0': expected a positive whole number"},
		{{"--count", "2"}, "unknown option '--count' (see rbln-smi --help)"},
	};
	for (const auto &[args, message] : rows) {
		auto r = parse_options(args);
		EXPECT_FALSE(r.options) << message;
		EXPECT_EQ(r.error, message);
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
	for (const char *s : {"0 success", "2 bad argument", "3 no driver or no NPU", "4 permission denied",
			      "5 NPU not found", "6 device in use"})
		EXPECT_NE(help.find(s), std::string::npos) << s;
}
