// The profiler's pure logic on the host: RBLN_PROFILER's values, the label
// helper, the track layout and slices of the Perfetto file (decoded with the
// project's .proto), and the JSON export of the same recording.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perfetto_trace.pb.h"
#include "rbln/profile.hpp"
#include "rbln_drm.h"
#include "rbln/devmgr.hpp"
#include "trace_record.hpp"
#include "trace_summary.hpp"

namespace pb = rbln::trace;
using namespace rbln::profile;

namespace {

// The seed's end of a workload on a Rebel100: chiplets 1-3 load their share
// of a weight by Neural DMA, chiplet 0's Task DMA gathers, External HDMA
// sends it out after the gathers.
Trace rebel_trace()
{
	Trace t;
	t.devices.push_back({1, "rbln1 RBLN-CR03", 4});
	t.realtime_ns = 1'700'000'000'000'000'000ull;
	t.monotonic_ns = 1000;
	uint64_t id = 1, ts = 10'000;
	auto job = [&](unsigned chiplet, unsigned engine, std::string label, std::vector<uint64_t> after) {
		TraceJob j;
		j.id = id++;
		j.device = 1;
		j.chiplet = chiplet;
		j.engine = engine;
		j.label = std::move(label);
		j.bytes = 4096 * j.id;
		j.pid = 42;
		j.command = "rbln-example";
		j.seqno = j.id;
		j.submit_ns = ts;
		j.start_ns = ts + 100;
		j.end_ns = ts + 1000;
		ts += 2000;
		j.after = std::move(after);
		t.jobs.push_back(j);
		return j.id;
	};
	const std::string w = label(0, 0, 1);
	std::vector<uint64_t> gathers;
	for (unsigned c = 1; c <= 3; c++) {
		uint64_t n = job(c, DRM_RBLN_ENGINE_NEURAL_DMA, w + "_model.model.layers.0.self_attn.q_proj.weight", {});
		gathers.push_back(job(0, DRM_RBLN_ENGINE_TASK_DMA, w + "_gather", {n}));
	}
	job(0, DRM_RBLN_ENGINE_EXTERNAL_HDMA, w + "_out", gathers);
	for (unsigned c = 0; c < 4; c++)
		t.memory_used.push_back({1, c, 20'000, double(1 << 20) * (c + 1)});
	t.utilization.push_back({1, std::nullopt, 20'000, 37.5});
	t.workloads.push_back({1, 0, 0, 1});
	return t;
}

pb::Trace decode(const std::string &bytes)
{
	pb::Trace t;
	EXPECT_TRUE(t.ParseFromString(bytes));
	return t;
}

std::map<uint64_t, pb::TrackDescriptor> tracks(const pb::Trace &t)
{
	std::map<uint64_t, pb::TrackDescriptor> out;
	for (const auto &p : t.packet())
		if (p.has_track_descriptor())
			out[p.track_descriptor().uuid()] = p.track_descriptor();
	return out;
}

const pb::TrackDescriptor *named(const std::map<uint64_t, pb::TrackDescriptor> &all, const std::string &name,
				 uint64_t parent)
{
	for (const auto &[u, d] : all)
		if (d.name() == name && d.parent_uuid() == parent)
			return &d;
	return nullptr;
}

} // namespace

TEST(Profile, SwitchValues)
{
	for (const char *on : {"1", "ON", "on", "True", "TRUE", "yes", "YeS"})
		EXPECT_EQ(parse_switch(on), true) << on;
	for (const char *off : {"", "0", "off", "FALSE", "No"})
		EXPECT_EQ(parse_switch(off), false) << off;
	for (const char *bad : {"2", "enabled", "y", " 1", "1 "})
		EXPECT_EQ(parse_switch(bad), std::nullopt) << bad;
}

TEST(Profile, LabelHelper)
{
	EXPECT_EQ(label(0, 3, 12), "i0_3_W12");
	EXPECT_EQ(label(1, 0, 2, "model.model.embed_tokens.weight"), "i1_0_W2_model.model.embed_tokens.weight");
}

TEST(Profile, RebelLayoutDeviceChipletsEnginesInTheSeedsOrder)
{
	const pb::Trace t = decode(to_perfetto(rebel_trace()));
	const auto all = tracks(t);
	const auto *dev = named(all, "rbln1 RBLN-CR03", 0);
	ASSERT_TRUE(dev);
	EXPECT_EQ(dev->child_ordering(), pb::TrackDescriptor::EXPLICIT);
	std::vector<uint64_t> chiplets;
	for (unsigned c = 0; c < 4; c++) {
		const auto *g = named(all, "Chiplet " + std::to_string(c), dev->uuid());
		ASSERT_TRUE(g) << c;
		EXPECT_EQ(g->child_ordering(), pb::TrackDescriptor::EXPLICIT);
		EXPECT_EQ(g->sibling_order_rank(), int(c) + 1);
		chiplets.push_back(g->uuid());
	}
	ASSERT_TRUE(named(all, "Device Workload", dev->uuid()));
	// Only the engines that ran something: chiplet 0 Task DMA and External HDMA, the others Neural DMA.
	std::map<uint64_t, std::set<std::string>> engines;
	std::map<std::string, int> rank;
	for (const auto &[u, d] : all)
		if (std::ranges::count(chiplets, d.parent_uuid()) && !d.has_counter()) {
			engines[d.parent_uuid()].insert(d.name());
			rank[d.name()] = d.sibling_order_rank();
		}
	EXPECT_EQ(engines[chiplets[0]], (std::set<std::string>{"Task DMA", "External HDMA"}));
	for (unsigned c = 1; c < 4; c++)
		EXPECT_EQ(engines[chiplets[c]], (std::set<std::string>{"Neural DMA"})) << c;
	EXPECT_LT(rank["Neural DMA"], rank["Task DMA"]);
	EXPECT_LT(rank["Task DMA"], rank["External HDMA"]);
	// Counters: memory per chiplet (bytes), utilisation of the device.
	int memory = 0, util = 0;
	for (const auto &[u, d] : all)
		if (d.has_counter()) {
			if (d.name() == "Memory used") {
				memory++;
				EXPECT_EQ(d.counter().unit(), pb::CounterDescriptor::UNIT_SIZE_BYTES);
				EXPECT_TRUE(std::ranges::count(chiplets, d.parent_uuid()));
			} else if (d.name() == "Utilization") {
				util++;
				EXPECT_EQ(d.parent_uuid(), dev->uuid());
			}
		}
	EXPECT_EQ(memory, 4);
	EXPECT_EQ(util, 1);
	// The clock: CLOCK_MONOTONIC, as the driver's times.
	ASSERT_TRUE(t.packet(0).has_clock_snapshot());
	EXPECT_EQ(t.packet(0).clock_snapshot().primary_trace_clock(), pb::BUILTIN_CLOCK_MONOTONIC);
}

TEST(Profile, OneSlicePerJobWithArgsAndAFlowPerDependency)
{
	const Trace in = rebel_trace();
	const pb::Trace t = decode(to_perfetto(in));
	std::map<std::string, int> begins;
	std::map<uint64_t, std::string> flow_from, flow_to;
	int ends = 0, counters = 0;
	uint64_t last_ts = 0;
	for (const auto &p : t.packet()) {
		if (!p.has_track_event())
			continue;
		EXPECT_GE(p.timestamp(), last_ts) << "events in time order";
		last_ts = p.timestamp();
		EXPECT_EQ(p.timestamp_clock_id(), uint32_t(pb::BUILTIN_CLOCK_MONOTONIC));
		const auto &e = p.track_event();
		if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
			begins[e.name()]++;
			for (uint64_t f : e.flow_ids())
				flow_from[f] = e.name();
			for (uint64_t f : e.terminating_flow_ids())
				flow_to[f] = e.name();
			if (e.name().ends_with("_out")) {
				std::set<std::string> args;
				for (const auto &a : e.debug_annotations())
					args.insert(a.name());
				EXPECT_EQ(args, (std::set<std::string>{"bytes", "pid", "command", "seqno", "status",
								       "queued_ns"}));
			}
		} else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
			ends++;
		} else if (e.type() == pb::TrackEvent::TYPE_COUNTER) {
			counters++;
		}
	}
	EXPECT_EQ(begins["i0_0_W1_model.model.layers.0.self_attn.q_proj.weight"], 3) << "one per chiplet";
	EXPECT_EQ(begins["i0_0_W1_gather"], 3);
	EXPECT_EQ(begins["i0_0_W1_out"], 1);
	EXPECT_EQ(begins["i0_0_Device Workload_1"], 1);
	EXPECT_EQ(ends, int(in.jobs.size()) + 1);
	EXPECT_EQ(counters, 5);
	// Arrows: 3 weight -> gather, 3 gather -> out; each begins once and ends once.
	EXPECT_EQ(flow_from.size(), 6u);
	EXPECT_EQ(flow_to.size(), 6u);
	int into_out = 0;
	for (const auto &[f, to] : flow_to) {
		ASSERT_TRUE(flow_from.contains(f));
		if (to == "i0_0_W1_out") {
			into_out++;
			EXPECT_EQ(flow_from[f], "i0_0_W1_gather");
		}
	}
	EXPECT_EQ(into_out, 3);
}

TEST(Profile, AtomHasNoChipletGroups)
{
	Trace t;
	t.devices.push_back({0, "rbln0 RBLN-CA12", 1});
	TraceJob j;
	j.id = 1;
	j.engine = DRM_RBLN_ENGINE_EXTERNAL_HDMA;
	j.label = "upload";
	j.start_ns = 10;
	j.end_ns = 20;
	t.jobs.push_back(j);
	const auto all = tracks(decode(to_perfetto(t)));
	const auto *dev = named(all, "rbln0 RBLN-CA12", 0);
	ASSERT_TRUE(dev);
	EXPECT_TRUE(named(all, "External HDMA", dev->uuid())) << "the engine sits under the device";
	for (const auto &[u, d] : all)
		EXPECT_FALSE(d.name().starts_with("Chiplet")) << d.name();
}

TEST(Profile, AFailedJobIsMarked)
{
	Trace t = rebel_trace();
	t.jobs.back().status = -ETIMEDOUT;
	t.jobs.back().timed_out = true;
	const pb::Trace out = decode(to_perfetto(t));
	bool seen = false;
	for (const auto &p : out.packet())
		if (p.has_track_event() && p.track_event().name() == "i0_0_W1_out [TIMED OUT]") {
			seen = true;
			std::map<std::string, std::string> args;
			for (const auto &a : p.track_event().debug_annotations())
				if (a.has_string_value())
					args[a.name()] = a.string_value();
			EXPECT_EQ(args["status"], "ETIMEDOUT");
			EXPECT_EQ(args["timed_out"], "yes");
		}
	EXPECT_TRUE(seen);
}

// A job whose end was not seen (still running when the file was written, its
// times lost, or taken by another process on the same device file) did not
// fail: it says it has no device times, in both formats and in the summary,
// apart from a job that did fail.  An old driver's jobs, all without them,
// say why once each and are not renamed.
TEST(Profile, AJobWithoutDeviceTimesIsMarkedSoNotAsFailed)
{
	Trace t = rebel_trace();
	TraceJob &old = t.jobs.front(), &failed = t.jobs[1], &unseen = t.jobs.back();
	old.device_times = false;	// an old driver's: at its submit, status 0
	old.start_ns = old.end_ns = old.submit_ns;
	old.label += "_old";		// its name once in the trace
	failed.status = -EIO;
	failed.label += "_failed";
	// As rbln-smi trace record leaves a job it saw start but not end.
	unseen.device_times = false;
	unseen.status = -EINPROGRESS;
	unseen.start_ns = unseen.end_ns = unseen.submit_ns + 100;
	const std::string unseen_name = unseen.label + " [NO DEVICE TIMES]";
	const std::string failed_name = failed.label + " [FAILED EIO]";

	std::map<std::string, std::map<std::string, std::string>> perfetto_args;
	std::map<std::string, uint64_t> queued_ns;
	const pb::Trace perfetto = decode(to_perfetto(t));
	for (const auto &p : perfetto.packet()) {
		if (!p.has_track_event() || p.track_event().type() != pb::TrackEvent::TYPE_SLICE_BEGIN)
			continue;
		const std::string &name = p.track_event().name();
		for (const auto &a : p.track_event().debug_annotations()) {
			if (a.has_string_value())
				perfetto_args[name][a.name()] = a.string_value();
			else if (a.name() == "queued_ns")
				queued_ns[name] = a.uint_value();
		}
	}
	ASSERT_TRUE(perfetto_args.contains(unseen_name));
	EXPECT_EQ(perfetto_args[unseen_name]["status"], "unknown");
	EXPECT_NE(perfetto_args[unseen_name]["times"].find("its end was not seen"), std::string::npos);
	EXPECT_EQ(queued_ns[unseen_name], 100u) << "its start was seen";
	ASSERT_TRUE(perfetto_args.contains(old.label));
	EXPECT_EQ(perfetto_args[old.label]["status"], "unknown");
	EXPECT_NE(perfetto_args[old.label]["times"].find("before interface 14"), std::string::npos);
	ASSERT_TRUE(perfetto_args.contains(failed_name));
	EXPECT_EQ(perfetto_args[failed_name]["status"], "EIO");
	EXPECT_FALSE(perfetto_args[failed_name].contains("times")) << "it has its device times";

	std::map<std::string, nlohmann::json> json_args;
	const auto json = nlohmann::json::parse(to_chrome_json(t));
	for (const auto &e : json.at("traceEvents"))
		if (e.at("ph") == "X")
			json_args[e.at("name").get<std::string>()] = e.value("args", nlohmann::json::object());
	ASSERT_TRUE(json_args.contains(unseen_name));
	EXPECT_EQ(json_args[unseen_name].value("status", ""), "unknown");
	EXPECT_NE(json_args[unseen_name].value("times", "").find("its end was not seen"), std::string::npos);
	EXPECT_EQ(json_args[old.label].value("status", ""), "unknown");
	EXPECT_NE(json_args[old.label].value("times", "").find("before interface 14"), std::string::npos);
	EXPECT_EQ(json_args[failed_name].value("status", ""), "EIO");
	EXPECT_FALSE(json_args[failed_name].contains("times"));

	const auto path = std::filesystem::temp_directory_path() / fmt::format("rbln-unseen-{}.pb", getpid());
	write_file_atomically(path.string(), to_perfetto(t));
	const std::string s = rbln::smi::summarize_trace(path.string());
	std::filesystem::remove(path);
	EXPECT_NE(s.find(": 7 job slices on 5 engine tracks, 1 failed, 2 without device times; "), std::string::npos)
		<< s;
	// Per engine track: chiplet 0's gathers hold the failure, its External
	// HDMA the job not seen to end, chiplet 1's Neural DMA the old driver's.
	EXPECT_TRUE(std::regex_search(s, std::regex(R"(\n    Task DMA +3 slices, [^\n]*, 1 failed\n)"))) << s;
	EXPECT_TRUE(std::regex_search(s, std::regex(R"(\n    External HDMA +1 slices, [^\n]*, 1 without device times\n)")))
		<< s;
	EXPECT_TRUE(std::regex_search(s, std::regex(R"(\n    Neural DMA +1 slices, [^\n]*, 1 without device times\n)")))
		<< s;
}

// A workload's span is its jobs' device times: a job of it without them (its
// end not seen, so only its submit or start is known) does not stretch it.
// A workload none of whose jobs has them (an old driver's) still gets one.
TEST(Profile, AWorkloadSpansOnlyItsJobsDeviceTimes)
{
	Trace t = rebel_trace();
	TraceJob late = t.jobs.back();
	late.id = 100;
	late.label = label(0, 0, 1, "late");
	late.device_times = false;
	late.status = -EINPROGRESS;
	late.submit_ns = late.start_ns = late.end_ns = 90'000;
	late.after.clear();
	t.jobs.push_back(late);
	TraceJob early = late;	// one with status 0 but no times, before the others
	early.id = 99;
	early.status = 0;
	early.submit_ns = early.start_ns = early.end_ns = 1'000;
	t.jobs.push_back(early);
	TraceJob old = late;	// workload 2: only an old driver's job
	old.id = 101;
	old.label = label(0, 0, 2, "old");
	old.status = 0;
	old.submit_ns = old.start_ns = old.end_ns = 95'000;
	t.jobs.push_back(old);

	std::map<std::string, std::pair<double, double>> spans;	// name -> ts, dur (us)
	const auto json = nlohmann::json::parse(to_chrome_json(t));
	for (const auto &e : json.at("traceEvents"))
		if (e.value("cat", "") == "workload")
			spans[e.at("name").get<std::string>()] = {e.at("ts").get<double>(), e.at("dur").get<double>()};
	ASSERT_TRUE(spans.contains("i0_0_Device Workload_1"));
	// The first weight starts at 10.1 us, the out job ends at 23 us.
	EXPECT_DOUBLE_EQ(spans["i0_0_Device Workload_1"].first, 10.1);
	EXPECT_DOUBLE_EQ(spans["i0_0_Device Workload_1"].second, 12.9)
		<< "stretched by a job without device times (at 1 or 90 us)";
	ASSERT_TRUE(spans.contains("i0_0_Device Workload_2"));
	EXPECT_DOUBLE_EQ(spans["i0_0_Device Workload_2"].first, 95.0);
	EXPECT_DOUBLE_EQ(spans["i0_0_Device Workload_2"].second, 0.0);
}

TEST(Profile, ChromeJsonHoldsTheSameSlicesAndFlows)
{
	const Trace in = rebel_trace();
	const auto j = nlohmann::json::parse(to_chrome_json(in));
	std::multiset<std::string> slices;
	int starts = 0, finishes = 0, counters = 0;
	for (const auto &e : j.at("traceEvents")) {
		const std::string ph = e.at("ph");
		if (ph == "X" && e.at("cat") == "rbln")
			slices.insert(e.at("name").get<std::string>());
		starts += ph == "s";
		finishes += ph == "f";
		counters += ph == "C";
	}
	std::multiset<std::string> want;
	for (const auto &job : in.jobs)
		want.insert(job.label);
	EXPECT_EQ(slices, want);
	EXPECT_EQ(starts, 6);
	EXPECT_EQ(finishes, 6);
	EXPECT_EQ(counters, 5);
}

TEST(Profile, FilesAppearWholeUnderTheirName)
{
	const auto dir = std::filesystem::temp_directory_path() / ("rbln-profile-" + std::to_string(getpid()));
	std::filesystem::create_directories(dir);
	const std::string path = (dir / "rbln_x.pb").string();
	write_file_atomically(path, "abc");
	std::ifstream f(path);
	std::string got((std::istreambuf_iterator<char>(f)), {});
	EXPECT_EQ(got, "abc");
	int entries = 0;
	for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator(dir))
		entries++;
	EXPECT_EQ(entries, 1) << "no temporary file left";
	EXPECT_THROW(write_file_atomically((dir / "no/such/dir/x.pb").string(), "abc"), std::exception);
	std::filesystem::remove_all(dir);
	EXPECT_EQ(file_stem(0).size(), std::string("rbln_19700101_000000").size());
}

// rbln-smi trace summary reads the file back: the tree as Perfetto orders it,
// slices and bytes per engine, the flows; a file that is no trace is named.
TEST(Profile, TraceSummaryOfAFile)
{
	const auto path = std::filesystem::temp_directory_path() / fmt::format("rbln-summary-{}.pb", getpid());
	write_file_atomically(path.string(), to_perfetto(rebel_trace()));
	const std::string s = rbln::smi::summarize_trace(path.string());
	EXPECT_NE(s.find(": 7 job slices on 5 engine tracks, 0 failed; 1 workload slices; 6 flows (dependencies)"),
		  std::string::npos) << s;
	// Chiplet 0 first, its Task DMA before its External HDMA (the seed's order).
	const size_t dev = s.find("\nrbln1 RBLN-CR03\n"), c0 = s.find("\n  Chiplet 0\n"),
		     task = s.find("\n    Task DMA"), ext = s.find("\n    External HDMA"), c3 = s.find("\n  Chiplet 3\n");
	ASSERT_NE(dev, std::string::npos) << s;
	EXPECT_TRUE(dev < c0 && c0 < task && task < ext && ext < c3 && c3 != std::string::npos) << s;
	// The 3 gathers are jobs 2, 4, 6 (4096 bytes per id): 48 KiB.
	EXPECT_TRUE(std::regex_search(s, std::regex(R"(\n    Task DMA +3 slices, 48\.0 KiB\n)"))) << s;
	EXPECT_TRUE(std::regex_search(s, std::regex(R"(\n    Memory used +counter, 1 samples\n)"))) << s;

	std::ofstream(path) << "not a trace";
	try {
		rbln::smi::summarize_trace(path.string());
		ADD_FAILURE() << "no error for a file that is no trace";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::invalid_argument);
		EXPECT_NE(std::string(e.what()).find(path.string() + " is not a Perfetto protobuf trace"), std::string::npos) << e.what();
	}
	std::filesystem::remove(path);
	EXPECT_THROW(rbln::smi::summarize_trace(path.string()), rbln::Error) << "a missing file";
}

// rbln-smi trace record's rings: each CPU's stats file read as the kernel
// writes it, what they lost between the start and the end in the Perfetto
// file (FtraceStats at both ends, Perfetto's own record of it), in the JSON's
// otherData, on stderr and in trace summary; none lost, and it says so.
TEST(Profile, WhatTheRingsLostIsInTheTraceAndItsSummary)
{
	const TraceRingStats cpu1 = rbln::smi::parse_ring_stats(1, "entries: 12\noverrun: 340\ncommit overrun: 2\n"
								   "bytes: 1800\noldest event ts:  1234.500000\n"
								   "now ts:  1240.250000\ndropped events: 5\n"
								   "read events: 9000\n");
	EXPECT_EQ(cpu1.cpu, 1u);
	EXPECT_EQ(cpu1.entries, 12u);
	EXPECT_EQ(cpu1.overrun, 340u);
	EXPECT_EQ(cpu1.commit_overrun, 2u);
	EXPECT_EQ(cpu1.dropped_events, 5u);
	EXPECT_EQ(cpu1.read_events, 9000u);

	TraceRings rings;
	rings.start = {{0, 0, 0, 0, 0, 0}, {1, 0, 40, 0, 0, 0}};
	rings.end = {{0, 3, 0, 0, 0, 500}, cpu1};
	EXPECT_EQ(lost_events(rings), 300u + 2 + 5) << "CPU 1's since the start";
	EXPECT_EQ(rbln::smi::lost_events_text(rings), "307 events (CPU 1: 307)");

	const pb::Trace out = decode(to_perfetto(rebel_trace(), rings));
	std::map<int, const pb::FtraceStats *> phases;
	for (const auto &p : out.packet())
		if (p.has_ftrace_stats())
			phases[p.ftrace_stats().phase()] = &p.ftrace_stats();
	ASSERT_EQ(phases.size(), 2u) << "one at the start, one at the end";
	ASSERT_TRUE(phases.contains(pb::FtraceStats::START_OF_TRACE));
	ASSERT_TRUE(phases.contains(pb::FtraceStats::END_OF_TRACE));
	const pb::FtraceStats &end = *phases[pb::FtraceStats::END_OF_TRACE];
	ASSERT_EQ(end.cpu_stats_size(), 2);
	EXPECT_EQ(end.cpu_stats(1).cpu(), 1u);
	EXPECT_EQ(end.cpu_stats(1).overrun(), 340u);
	EXPECT_EQ(end.cpu_stats(1).dropped_events(), 5u);
	EXPECT_EQ(phases[pb::FtraceStats::START_OF_TRACE]->cpu_stats(1).overrun(), 40u);
	EXPECT_EQ(out.packet(out.packet_size() - 1).ftrace_stats().phase(), pb::FtraceStats::END_OF_TRACE)
		<< "the end's counts come last";

	const auto other = nlohmann::json::parse(to_chrome_json(rebel_trace(), rings)).at("otherData");
	EXPECT_EQ(other.at("ftrace_lost_events"), "307");
	EXPECT_EQ(other.at("ftrace_overrun"), "300");
	EXPECT_EQ(other.at("ftrace_commit_overrun"), "2");
	EXPECT_EQ(other.at("ftrace_dropped_events"), "5");
	EXPECT_FALSE(nlohmann::json::parse(to_chrome_json(rebel_trace())).contains("otherData"))
		<< "an in-process recording has no rings";

	const auto path = std::filesystem::temp_directory_path() / fmt::format("rbln-lost-{}.pb", getpid());
	write_file_atomically(path.string(), to_perfetto(rebel_trace(), rings));
	std::string s = rbln::smi::summarize_trace(path.string());
	EXPECT_NE(s.find("\nINCOMPLETE: the kernel's ring lost 307 events while it recorded"), std::string::npos) << s;
	rings.end = rings.start;
	EXPECT_EQ(lost_events(rings), 0u);
	EXPECT_EQ(rbln::smi::lost_events_text(rings), "");
	write_file_atomically(path.string(), to_perfetto(rebel_trace(), rings));
	s = rbln::smi::summarize_trace(path.string());
	EXPECT_NE(s.find("\nthe kernel's ring lost no event while it recorded\n"), std::string::npos) << s;
	write_file_atomically(path.string(), to_perfetto(rebel_trace()));
	s = rbln::smi::summarize_trace(path.string());
	EXPECT_EQ(s.find("the kernel's ring"), std::string::npos) << "no rings, nothing said: " << s;
	std::filesystem::remove(path);
}
