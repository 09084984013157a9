// The profiler against the real module: the example workload recorded with
// RBLN_PROFILER=1 (as root and as an unprivileged member of group rbln) and
// with rbln::profile::Session in this process; each file decoded by protoc
// against the project's .proto and checked for the seed's layout, every job
// once, engine tracks without overlaps, a flow for every dependency,
// counters; a hung engine's timeout shows as a failed slice; a killed
// process leaves no file under a final name.  rbln-smi trace record around
// the same example: the same jobs and layout, system-wide from the tracepoints;
// an ATOM's engines under its device; a ring that lost events said so.  Linked with the static
// libdevmgr: the profiler and the generated messages are this process's own.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perfetto_trace.pb.h"
#include "rbln/devmgr.hpp"
#include "rbln/exit_codes.hpp"
#include "rbln/profile.hpp"
#include "rbln_test_util.h"

namespace fs = std::filesystem;
namespace pb = rbln::trace;
using namespace rbln::test;

namespace {

// A fresh directory anyone may write (the unprivileged run writes there too).
fs::path scratch(const std::string &name)
{
	fs::path d = fs::temp_directory_path() / fmt::format("rbln-profiler-{}-{}", name, getpid());
	fs::remove_all(d);
	fs::create_directories(d);
	fs::permissions(d, fs::perms::all);
	return d;
}

std::vector<std::string> files_in(const fs::path &dir)
{
	std::vector<std::string> names;
	for (const auto &e : fs::directory_iterator(dir))
		names.push_back(e.path().filename().string());
	std::ranges::sort(names);
	return names;
}

// protoc --decode, then the text parsed by libprotobuf's TextFormat.
pb::Trace decode(const fs::path &file)
{
	const fs::path proto(RBLN_TRACE_PROTO);
	const std::string cmd = fmt::format("protoc --decode=rbln.trace.Trace --proto_path={} {} < {}",
					    proto.parent_path().string(), proto.filename().string(), file.string());
	FILE *p = ::popen(cmd.c_str(), "r");
	EXPECT_TRUE(p) << cmd;
	std::string text;
	char buf[65536];
	for (size_t n; p && (n = fread(buf, 1, sizeof(buf), p)) > 0;)
		text.append(buf, n);
	EXPECT_EQ(p ? ::pclose(p) : -1, 0) << cmd;
	pb::Trace t;
	EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &t)) << file;
	return t;
}

struct Slice {
	std::string name;
	uint64_t track, begin, end;
	std::map<std::string, std::string> args;
	std::vector<uint64_t> flows_out, flows_in;
};

// What a trace holds, by track and slice.
struct Summary {
	std::map<uint64_t, pb::TrackDescriptor> tracks;
	std::vector<Slice> slices;
	size_t counters = 0;

	explicit Summary(const pb::Trace &t)
	{
		std::map<uint64_t, std::vector<size_t>> open;	// track -> slices begun
		for (const auto &p : t.packet()) {
			if (p.has_track_descriptor())
				tracks[p.track_descriptor().uuid()] = p.track_descriptor();
			if (!p.has_track_event())
				continue;
			const auto &e = p.track_event();
			if (e.type() == pb::TrackEvent::TYPE_COUNTER) {
				counters++;
			} else if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
				Slice s{e.name(), e.track_uuid(), p.timestamp(), 0, {}, {}, {}};
				for (const auto &a : e.debug_annotations())
					s.args[a.name()] = a.has_string_value() ? a.string_value()
										: std::to_string(a.uint_value());
				s.flows_out.assign(e.flow_ids().begin(), e.flow_ids().end());
				s.flows_in.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
				open[e.track_uuid()].push_back(slices.size());
				slices.push_back(std::move(s));
			} else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
				auto &stack = open[e.track_uuid()];
				EXPECT_FALSE(stack.empty()) << "an end without a begin";
				if (stack.empty())
					continue;
				slices[stack.back()].end = p.timestamp();
				stack.pop_back();
			}
		}
	}
	const pb::TrackDescriptor *named(const std::string &name, uint64_t parent) const
	{
		for (const auto &[u, d] : tracks)
			if (d.name() == name && d.parent_uuid() == parent)
				return &d;
		return nullptr;
	}
	std::vector<const Slice *> on(uint64_t track) const
	{
		std::vector<const Slice *> out;
		for (const Slice &s : slices)
			if (s.track == track)
				out.push_back(&s);
		return out;
	}
};

// The example's jobs per workload: input, embedding, 3 weights on each of
// chiplets 1-3, 3 gathers, the layernorm weight, the output.
constexpr size_t kJobsPerWorkload = 1 + 1 + 9 + 3 + 1 + 1;
// Its dependencies: embedding <- input; 9 weights <- embedding; each gather
// <- its chiplet's 3 weights; layernorm <- embedding; output <- 4 jobs.
constexpr size_t kDepsPerWorkload = 1 + 9 + 9 + 1 + 4;

// Whether a trace has every dependency's arrow (the in-process profiler), or
// those the driver's tracepoints show (rbln-smi trace record: a dependency
// that had ended inside its SUBMIT is never given to the driver to wait for).
enum class Flows { every, traced };

// The checks of the issue on one file of the example's @workloads workloads.
void check_example_trace(const Summary &s, size_t workloads, Flows flows = Flows::every)
{
	const auto *dev = s.named("rbln1 RBLN-CR03", 0);
	ASSERT_TRUE(dev) << "the device group, named as rbln-smi shows it";
	EXPECT_EQ(dev->child_ordering(), pb::TrackDescriptor::EXPLICIT);
	std::vector<uint64_t> chiplet(4);
	for (unsigned c = 0; c < 4; c++) {
		const auto *g = s.named(fmt::format("Chiplet {}", c), dev->uuid());
		ASSERT_TRUE(g) << c;
		chiplet[c] = g->uuid();
	}
	std::map<uint64_t, std::set<std::string>> engines;
	for (const auto &[u, d] : s.tracks)
		if (std::ranges::count(chiplet, d.parent_uuid()) && !d.has_counter())
			engines[d.parent_uuid()].insert(d.name());
	EXPECT_EQ(engines[chiplet[0]], (std::set<std::string>{"Task DMA", "External HDMA"}));
	for (unsigned c = 1; c < 4; c++)
		EXPECT_EQ(engines[chiplet[c]], (std::set<std::string>{"Neural DMA"})) << "chiplet " << c;

	const auto *wl = s.named("Device Workload", dev->uuid());
	ASSERT_TRUE(wl);
	size_t jobs = 0, weights = 0;
	std::set<std::string> labels;
	const std::regex name(R"(^i[01]_0_W\d+_.+)");
	for (const Slice &sl : s.slices) {
		if (sl.track == wl->uuid()) {
			EXPECT_TRUE(std::regex_match(sl.name, std::regex(R"(^i[01]_0_Device Workload_\d+$)"))) << sl.name;
			continue;
		}
		jobs++;
		EXPECT_TRUE(std::regex_match(sl.name, name)) << sl.name;
		EXPECT_TRUE(labels.insert(sl.name + "@" + std::to_string(sl.track)).second ||
			    sl.name.find("weight") != std::string::npos) << "twice: " << sl.name;
		if (sl.name.find("q_proj.weight") != std::string::npos) {
			weights++;
			EXPECT_EQ(sl.args.at("bytes"), std::to_string(64 << 10));
		}
		EXPECT_EQ(sl.args.at("status"), "ok");
		EXPECT_EQ(sl.args.at("command"), "rbln-example-re") << "the process's comm";
		EXPECT_LE(sl.begin, sl.end);
	}
	EXPECT_EQ(jobs, kJobsPerWorkload * workloads);
	EXPECT_EQ(weights, 3 * workloads) << "one q_proj slice per chiplet 1-3 per workload";
	EXPECT_EQ(s.on(wl->uuid()).size(), workloads);
	// Per engine track: in time order, none overlapping the one before.
	for (const auto &[u, d] : s.tracks) {
		if (d.has_counter() || u == wl->uuid())
			continue;
		uint64_t last_end = 0;
		for (const Slice *sl : s.on(u)) {
			EXPECT_LE(last_end, sl->begin) << d.name() << ": " << sl->name << " overlaps the one before";
			last_end = sl->end;
		}
	}
	// Flows: each starts once and ends once, one per dependency; into each
	// output from its gathers and layernorm only.
	std::map<uint64_t, const Slice *> from, to;
	for (const Slice &sl : s.slices) {
		for (uint64_t f : sl.flows_out)
			EXPECT_TRUE(from.emplace(f, &sl).second);
		for (uint64_t f : sl.flows_in)
			EXPECT_TRUE(to.emplace(f, &sl).second);
	}
	if (flows == Flows::every) {
		EXPECT_EQ(from.size(), kDepsPerWorkload * workloads);
	} else {
		EXPECT_GT(from.size(), 0u) << "the driver showed no syncobj wait at all";
		EXPECT_LE(from.size(), kDepsPerWorkload * workloads);
	}
	EXPECT_EQ(to.size(), from.size());
	for (const auto &[f, dst] : to) {
		ASSERT_TRUE(from.contains(f));
		const Slice *src = from[f];
		EXPECT_LE(src->end, dst->begin) << src->name << " -> " << dst->name << ": started before its input ended";
		if (dst->name.ends_with("_output")) {
			EXPECT_TRUE(src->name.find("gather") != std::string::npos ||
				    src->name.find("layernorm") != std::string::npos) << src->name;
		}
	}
	EXPECT_GT(s.counters, 0u) << "memory and utilisation counters";
}

int run_example(const fs::path &dir, const std::vector<std::string> &extra = {})
{
	pid_t pid = ::fork();
	if (pid == 0) {
		std::vector<std::string> args = {RBLN_TEST_EXAMPLE, "--npu", "1", "--workloads", "3"};
		args.insert(args.end(), extra.begin(), extra.end());
		std::vector<char *> argv;
		for (auto &a : args)
			argv.push_back(a.data());
		argv.push_back(nullptr);
		::setenv("RBLN_PROFILER", "on", 1);
		::setenv("RBLN_PROFILER_DIR", dir.c_str(), 1);
		::execv(argv[0], argv.data());
		_exit(127);
	}
	int status = 0;
	::waitpid(pid, &status, 0);
	return status;
}

// The arrows of a trace, each as (from slice, its track, to slice, its track).
std::set<std::tuple<std::string, uint64_t, std::string, uint64_t>> arrows(const Summary &s)
{
	std::map<uint64_t, const Slice *> from;
	for (const Slice &sl : s.slices)
		for (uint64_t f : sl.flows_out)
			from[f] = &sl;
	std::set<std::tuple<std::string, uint64_t, std::string, uint64_t>> out;
	for (const Slice &sl : s.slices)
		for (uint64_t f : sl.flows_in)
			if (from.contains(f))
				out.insert({from[f]->name, from[f]->track, sl.name, sl.track});
	return out;
}

// The job slices of a trace, each as (track, name): the Device Workload's aside.
std::multiset<std::pair<uint64_t, std::string>> job_slices(const Summary &s)
{
	std::multiset<std::pair<uint64_t, std::string>> out;
	for (const Slice &sl : s.slices)
		if (sl.name.find("_Device Workload_") == std::string::npos)
			out.insert({sl.track, sl.name});
	return out;
}

// Runs @args (with @env added), its stderr and stdout captured; the wait status.
int run_captured(const std::vector<std::string> &args, std::string &output,
		 const std::vector<std::pair<std::string, std::string>> &env = {})
{
	int pipefd[2];
	if (::pipe(pipefd))
		return -1;
	pid_t pid = ::fork();
	if (pid == 0) {
		::dup2(pipefd[1], 1);
		::dup2(pipefd[1], 2);
		::close(pipefd[0]);
		for (const auto &[k, v] : env)
			::setenv(k.c_str(), v.c_str(), 1);
		std::vector<char *> argv;
		for (const std::string &a : args)
			argv.push_back(const_cast<char *>(a.c_str()));
		argv.push_back(nullptr);
		::execv(argv[0], argv.data());
		_exit(127);
	}
	::close(pipefd[1]);
	char buf[4096];
	for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof(buf))) > 0;)
		output.append(buf, size_t(n));
	::close(pipefd[0]);
	int status = 0;
	::waitpid(pid, &status, 0);
	return status;
}

// What a recording's ftrace rings lost, from its FtraceStats packets (the
// end's counts less the start's); nullopt without both.
std::optional<uint64_t> lost_in(const pb::Trace &t)
{
	std::map<int, std::map<uint64_t, uint64_t>> at;	// phase -> cpu -> lost so far
	for (const auto &p : t.packet())
		if (p.has_ftrace_stats())
			for (const auto &c : p.ftrace_stats().cpu_stats())
				at[p.ftrace_stats().phase()][c.cpu()] = c.overrun() + c.commit_overrun() + c.dropped_events();
	if (!at.contains(pb::FtraceStats::START_OF_TRACE) || !at.contains(pb::FtraceStats::END_OF_TRACE))
		return std::nullopt;
	uint64_t lost = 0;
	for (const auto &[cpu, n] : at[pb::FtraceStats::END_OF_TRACE])
		lost += n - std::min(n, at[pb::FtraceStats::START_OF_TRACE][cpu]);
	return lost;
}

// rbln-smi trace record @args running beside the test: started once it says
// it records, stopped by SIGINT (its Ctrl-C) or by its own end.
class Recording {
public:
	explicit Recording(const std::vector<std::string> &args)
	{
		int pipefd[2];
		if (::pipe(pipefd))
			return;
		pid_ = ::fork();
		if (pid_ == 0) {
			::dup2(pipefd[1], 2);
			::close(pipefd[0]);
			std::vector<char *> argv{const_cast<char *>(RBLN_TEST_SMI), const_cast<char *>("trace"),
						 const_cast<char *>("record")};
			for (const std::string &a : args)
				argv.push_back(const_cast<char *>(a.c_str()));
			argv.push_back(nullptr);
			::execv(argv[0], argv.data());
			_exit(127);
		}
		::close(pipefd[1]);
		err_ = pipefd[0];
		char buf[512];
		for (ssize_t n; said_.find("recording every process") == std::string::npos &&
				(n = ::read(err_, buf, sizeof(buf))) > 0;)
			said_.append(buf, size_t(n));
	}
	~Recording()
	{
		if (pid_ > 0 && !status_)
			stop();
	}
	bool recording() const { return said_.find("recording every process") != std::string::npos; }
	// Its wait status; what it said on stderr is said().
	int stop(bool interrupt = true)
	{
		if (interrupt)
			::kill(pid_, SIGINT);
		char buf[512];
		for (ssize_t n; (n = ::read(err_, buf, sizeof(buf))) > 0;)
			said_.append(buf, size_t(n));
		::close(err_);
		int status = 0;
		::waitpid(pid_, &status, 0);
		status_ = status;
		return status;
	}
	const std::string &said() const { return said_; }

private:
	pid_t pid_ = -1;
	int err_ = -1;
	std::string said_;
	std::optional<int> status_;
};

} // namespace

TEST(Profiler, TheExampleWithRblnProfilerGivesTheWholeAndTheRunFile)
{
	const fs::path dir = scratch("env");
	ASSERT_EQ(run_example(dir), 0);
	const auto names = files_in(dir);
	ASSERT_EQ(names.size(), 2u) << fmt::format("{}", fmt::join(names, " "));
	const std::regex whole(R"(^rbln_\d{8}_\d{6}\.pb$)"), run(R"(^rbln_\d{8}_\d{6}_0\.pb$)");
	EXPECT_TRUE(std::regex_match(names[0], whole)) << names[0];
	EXPECT_TRUE(std::regex_match(names[1], run)) << names[1];
	const Summary all(decode(dir / names[0])), run0(decode(dir / names[1]));
	check_example_trace(all, 6);
	check_example_trace(run0, 6);
	EXPECT_EQ(all.slices.size(), run0.slices.size()) << "the one run is the whole process";
	fs::remove_all(dir);
}

// The seed's `with profile(output_dir=...)`: a region (rbln::profile::Session)
// that ends before the process does.  Its file is written then, the whole
// trace at exit by the recorder's destructor, after the statics made since
// the library loaded (the writer's among them) are gone: it must not use
// them.  Many jobs, so that a freed one's memory is in use again by then.
TEST(Profiler, ARegionEndedBeforeExitAndTheWholeTraceAtExit)
{
	const fs::path dir = scratch("region");
	std::string out;
	const size_t workloads = 50;
	const int status = run_captured({RBLN_TEST_EXAMPLE, "--npu", "1", "--workloads",
					 std::to_string(workloads), "--profile-dir", dir.string()}, out);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
	EXPECT_EQ(out.find("RBLN_PROFILER"), std::string::npos) << "no warning: " << out;
	const auto names = files_in(dir);
	ASSERT_EQ(names.size(), 2u) << fmt::format("{}", fmt::join(names, " "));
	EXPECT_NE(out.find("profiled region written to " + (dir / names[1]).string()), std::string::npos) << out;
	const Summary all(decode(dir / names[0])), run0(decode(dir / names[1]));
	check_example_trace(all, 2 * workloads);
	check_example_trace(run0, 2 * workloads);
	EXPECT_EQ(job_slices(all), job_slices(run0)) << "the region was the whole process";
	fs::remove_all(dir);
}

TEST(Profiler, AnUnprivilegedMemberOfGroupRblnProfilesToo)
{
	const fs::path dir = scratch("nobody");
	int status = run_as_nobody(true, [&] { return WEXITSTATUS(run_example(dir)); });
	ASSERT_EQ(status, 0);
	const auto names = files_in(dir);
	ASSERT_EQ(names.size(), 2u);
	check_example_trace(Summary(decode(dir / names[0])), 6);
	fs::remove_all(dir);
}

TEST(Profiler, AKilledProcessLeavesNoFileUnderAFinalName)
{
	const fs::path dir = scratch("killed");
	pid_t pid = ::fork();
	if (pid == 0) {
		::setenv("RBLN_PROFILER", "1", 1);
		::setenv("RBLN_PROFILER_DIR", dir.c_str(), 1);
		::execl(RBLN_TEST_EXAMPLE, RBLN_TEST_EXAMPLE, "--npu", "1", "--repeat", "100000", nullptr);
		_exit(127);
	}
	::sleep(2);
	ASSERT_EQ(::kill(pid, SIGKILL), 0);
	int status = 0;
	::waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFSIGNALED(status)) << "it was still running";
	for (const auto &n : files_in(dir))
		EXPECT_FALSE(std::regex_match(n, std::regex(R"(^rbln_.*\.pb$)"))) << n;
	fs::remove_all(dir);
}

TEST(Profiler, BadRblnProfilerValueIsNamed)
{
	const fs::path dir = scratch("bad");
	int pipefd[2];
	ASSERT_EQ(::pipe(pipefd), 0);
	pid_t pid = ::fork();
	if (pid == 0) {
		::dup2(pipefd[1], 2);
		::setenv("RBLN_PROFILER", "maybe", 1);
		::execl(RBLN_TEST_EXAMPLE, RBLN_TEST_EXAMPLE, "--npu", "1", nullptr);
		_exit(127);
	}
	::close(pipefd[1]);
	std::string err;
	char buf[4096];
	for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof(buf))) > 0;)
		err.append(buf, size_t(n));
	::close(pipefd[0]);
	int status = 0;
	::waitpid(pid, &status, 0);
	EXPECT_EQ(WEXITSTATUS(status), 2) << err;
	EXPECT_NE(err.find("RBLN_PROFILER=\"maybe\""), std::string::npos) << err;
	EXPECT_NE(err.find("1, ON, TRUE or YES"), std::string::npos) << err;
	fs::remove_all(dir);
}

TEST(Profiler, SessionsInProcessAndAHungEnginesFailedSlice)
{
	const fs::path dir = scratch("session");
	rbln::Device dev = rbln::Device::open(1);
	rbln::Buffer a = dev.allocate(1 << 20, rbln::Placement::on_chiplet(0));
	rbln::Buffer b = dev.allocate(1 << 20, rbln::Placement::on_chiplet(0));
	std::string first, second;
	{
		rbln::profile::Session run(dir.string());
		EXPECT_EQ(run.run(), 0u);
		dev.submit(rbln::Engine::task_dma, 0, {{a, b, 0, 0, 4096}}, "i0_0_W0_ok").wait();
		first = run.end();
	}
	{
		rbln::profile::Session run(dir.string());
		std::optional<JobTimeout> timeout{"300"};
		ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
		rbln::Job hung = dev.submit(rbln::Engine::task_dma, 0, {{a, b, 0, 4096, 4096}}, "i0_1_W0_hung");
		EXPECT_THROW(hung.wait(), rbln::Error);
		timeout.reset();
		second = run.end();
	}
	EXPECT_TRUE(first.ends_with("_0.pb")) << first;
	EXPECT_TRUE(second.ends_with("_1.pb")) << second;
	const Summary s0(decode(first)), s1(decode(second));
	ASSERT_EQ(s0.slices.size(), 2u) << "the job and its workload";
	bool failed = false;
	for (const Slice &sl : s1.slices)
		if (sl.name == "i0_1_W0_hung [TIMED OUT]") {
			failed = true;
			EXPECT_EQ(sl.args.at("status"), "ETIMEDOUT");
			EXPECT_GE(sl.end - sl.begin, 250'000'000u) << "it ran until about the timeout (the scheduler arms its timer just before run_job, to a jiffy)";
		}
	EXPECT_TRUE(failed) << "the timed-out job is marked";
	for (const Slice &sl : s1.slices)
		EXPECT_NE(sl.name, "i0_0_W0_ok") << "the first run's job is not in the second's file";
	// The whole trace, in the first run's directory: both runs' jobs.
	const std::string whole = rbln::profile::flush();
	EXPECT_EQ(fs::path(whole).parent_path(), dir);
	EXPECT_EQ(Summary(decode(whole)).slices.size(), s0.slices.size() + s1.slices.size());
	fs::remove_all(dir);
}

// rbln-smi trace record, system-wide from the tracepoints, around the example
// run with RBLN_PROFILER=1: both traces of one run, each with the seed's
// layout; the same jobs on the same tracks; the recorder's arrows a subset of
// the in-process ones (real syncobj waits only).
TEST(TraceRecord, TheExampleSystemWideAgreesWithTheInProcessTrace)
{
	const fs::path dir = scratch("record");
	const fs::path file = dir / "system.pb";
	std::string out;
	const int status = run_captured({RBLN_TEST_SMI, "trace", "record", "-o", file.string(), "--",
					 RBLN_TEST_EXAMPLE, "--npu", "1", "--workloads", "3"},
					out, {{"RBLN_PROFILER", "1"}, {"RBLN_PROFILER_DIR", dir.string()}});
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
	EXPECT_NE(out.find("rbln-smi trace: recording every process's jobs"), std::string::npos) << out;
	EXPECT_NE(out.find(fmt::format("rbln-smi trace: {} jobs of 1 process on 1 NPU", kJobsPerWorkload * 6)),
		  std::string::npos) << out;
	EXPECT_NE(out.find("wrote " + file.string()), std::string::npos) << out;
	const pb::Trace decoded = decode(file);
	const Summary system(decoded);
	check_example_trace(system, 6, Flows::traced);
	EXPECT_EQ(lost_in(decoded), std::optional<uint64_t>(0)) << "the ring's counts, nothing lost";
	std::string whole;
	for (const auto &n : files_in(dir))
		if (std::regex_match(n, std::regex(R"(^rbln_\d{8}_\d{6}\.pb$)")))
			whole = n;
	ASSERT_FALSE(whole.empty()) << "the in-process profiler's file";
	const Summary in_process(decode(dir / whole));
	EXPECT_EQ(system.slices.size(), in_process.slices.size()) << "the same run, seen both ways";
	EXPECT_EQ(job_slices(system), job_slices(in_process)) << "every job on the same track, named the same";
	const auto traced = arrows(system), all = arrows(in_process);
	for (const auto &a : traced)
		EXPECT_TRUE(all.contains(a)) << std::get<0>(a) << " -> " << std::get<2>(a)
					     << ": an arrow without a dependency";

	// trace summary reads it back: the tree, slices per engine, the flows.
	std::string summary;
	ASSERT_EQ(run_captured({RBLN_TEST_SMI, "trace", "summary", file.string()}, summary), 0) << summary;
	EXPECT_NE(summary.find(fmt::format("{} job slices on 5 engine tracks, 0 failed; 6 workload slices; {} flows",
					   kJobsPerWorkload * 6, traced.size())), std::string::npos) << summary;
	EXPECT_NE(summary.find("\nthe kernel's ring lost no event while it recorded\n"), std::string::npos) << summary;
	for (const char *line : {"\nrbln1 RBLN-CR03\n", "\n  Chiplet 0\n", "\n  Chiplet 3\n"})
		EXPECT_NE(summary.find(line), std::string::npos) << line << " in\n" << summary;
	EXPECT_TRUE(std::regex_search(summary, std::regex(R"(\n    Neural DMA +18 slices, 1\.1 MiB\n)"))) << summary;
	EXPECT_TRUE(std::regex_search(summary, std::regex(R"(\n    External HDMA +12 slices)"))) << summary;
	fs::remove_all(dir);
}

TEST(TraceRecord, JsonFromTheSameRecording)
{
	const fs::path dir = scratch("record-json");
	const fs::path file = dir / "system.json";
	std::string out;
	const int status = run_captured({RBLN_TEST_SMI, "trace", "record", "-o", file.string(), "--",
					 RBLN_TEST_EXAMPLE, "--npu", "1", "--workloads", "1"}, out);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
	std::ifstream in(file);
	const auto j = nlohmann::json::parse(in);
	size_t jobs = 0;
	for (const auto &e : j.at("traceEvents"))
		jobs += e.at("ph") == "X" && e.value("cat", "") == "rbln";
	EXPECT_EQ(jobs, kJobsPerWorkload * 2);
	fs::remove_all(dir);
}

TEST(TraceRecord, WithoutRootItNamesThePermissionAndRblnProfiler)
{
	const int status = run_as_nobody(true, [] {
		std::string out;
		const int st = run_captured({RBLN_TEST_SMI, "trace", "record", "-o", "/tmp/never.pb", "--", "true"}, out);
		// The child's verdict: exit 10 if the message lacks a part.
		for (const char *part : {"tracefs", "root (CAP_SYS_ADMIN)", "RBLN_PROFILER=1"})
			if (out.find(part) == std::string::npos) {
				fmt::print(stderr, "missing '{}' in: {}\n", part, out);
				return 10;
			}
		return WIFEXITED(st) ? WEXITSTATUS(st) : 11;
	});
	EXPECT_EQ(status, int(rbln::ExitCode::permission));
	EXPECT_FALSE(fs::exists("/tmp/never.pb"));
}

TEST(TraceRecord, AHungEnginesTimeoutIsAFailedSlice)
{
	const fs::path dir = scratch("record-hang");
	const fs::path file = dir / "hang.pb";
	// The job goes once the recorder says it records.
	Recording rec({"-o", file.string(), "--duration", "4"});
	ASSERT_TRUE(rec.recording()) << rec.said();
	{
		rbln::Device dev = rbln::Device::open(1);
		rbln::Buffer a = dev.allocate(1 << 20, rbln::Placement::on_chiplet(0));
		rbln::Buffer b = dev.allocate(1 << 20, rbln::Placement::on_chiplet(0));
		std::optional<JobTimeout> timeout{"300"};
		ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
		rbln::Job hung = dev.submit(rbln::Engine::task_dma, 0, {{a, b, 0, 4096, 4096}}, "i0_0_W0_hung");
		EXPECT_THROW(hung.wait(), rbln::Error);
	}
	const int status = rec.stop(false);
	const std::string &said = rec.said();
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said;
	EXPECT_NE(said.find("rbln-smi trace: 1 job of 1 process on 1 NPU"), std::string::npos) << said;
	bool failed = false;
	std::vector<std::string> names;
	for (const Slice &sl : Summary(decode(file)).slices) {
		names.push_back(sl.name);
		if (sl.name == "i0_0_W0_hung [TIMED OUT]") {
			failed = true;
			EXPECT_EQ(sl.args.at("status"), "ETIMEDOUT");
			EXPECT_GE(sl.end - sl.begin, 250'000'000u) << "it ran until about the timeout";
		}
	}
	EXPECT_TRUE(failed) << "the timed-out job is marked; slices: " << fmt::format("{}", fmt::join(names, ", "));
	fs::remove_all(dir);
}

// A ring too small for the example's bursts (--buffer-kib 4: the kernel's
// least, two pages per CPU, between reads 50 ms apart): the events it lost
// are said on stderr, in the trace (FtraceStats) and by trace summary, and
// the exit code is incomplete's, the file written all the same.
TEST(TraceRecord, ARingThatLostEventsIsToldAndTheTraceSaysSo)
{
	const fs::path dir = scratch("record-lost");
	const fs::path file = dir / "lost.pb";
	std::string out;
	const int status = run_captured({RBLN_TEST_SMI, "trace", "record", "--buffer-kib", "4", "-o", file.string(),
					 "--", RBLN_TEST_EXAMPLE, "--npu", "1", "--workloads", "20"}, out);
	ASSERT_TRUE(WIFEXITED(status)) << out;
	EXPECT_EQ(WEXITSTATUS(status), int(rbln::ExitCode::incomplete)) << out;
	EXPECT_TRUE(std::regex_search(out, std::regex(R"(rbln-smi trace: INCOMPLETE: the kernel's ring lost \d+ events? \(CPU )")))
		<< out;
	EXPECT_NE(out.find("bigger ring than --buffer-kib 4"), std::string::npos) << out;
	const pb::Trace decoded = decode(file);
	const auto lost = lost_in(decoded);
	ASSERT_TRUE(lost) << "the ring's counts at the start and the end";
	EXPECT_GT(*lost, 0u);
	EXPECT_NE(out.find(fmt::format("ring lost {} event", *lost)), std::string::npos) << "the same count: " << out;
	std::string summary;
	ASSERT_EQ(run_captured({RBLN_TEST_SMI, "trace", "summary", file.string()}, summary), 0) << summary;
	EXPECT_NE(summary.find(fmt::format("\nINCOMPLETE: the kernel's ring lost {} event", *lost)), std::string::npos)
		<< summary;

	// The JSON of such a recording: the count in otherData.
	const fs::path json_file = dir / "lost.json";
	out.clear();
	ASSERT_EQ(WEXITSTATUS(run_captured({RBLN_TEST_SMI, "trace", "record", "--buffer-kib", "4", "-o",
					    json_file.string(), "--", RBLN_TEST_EXAMPLE, "--npu", "1",
					    "--workloads", "20"}, out)), int(rbln::ExitCode::incomplete)) << out;
	std::ifstream in(json_file);
	const auto j = nlohmann::json::parse(in);
	EXPECT_GT(std::stoull(j.at("otherData").at("ftrace_lost_events").get<std::string>()), 0u);
	fs::remove_all(dir);
}

// An ATOM (one die): its engine tracks sit directly under the device, no
// chiplet groups; every job once, on its engine, with its label and bytes;
// an arrow for each of its dependencies; its counters under the device too.
TEST(TraceRecord, AnAtomsEnginesSitDirectlyUnderTheDevice)
{
	const fs::path dir = scratch("record-atom");
	const fs::path file = dir / "atom.pb";
	rbln::Device dev = rbln::Device::open(0);
	ASSERT_EQ(dev.info().chiplet_count, 1u) << dev.info().name;
	const std::string device = fmt::format("rbln0 {}", dev.info().name);
	rbln::Buffer host = dev.allocate_host(16384);
	auto on_die = [&] { return dev.allocate(16384, rbln::Placement::on_chiplet(0)); };
	rbln::Buffer a = on_die(), b = on_die(), c = on_die();
	// label -> (engine track, bytes); and the dependencies, as (from, to) labels.
	const std::map<std::string, std::pair<std::string, uint64_t>> want = {
		{"i0_0_W0_input", {"External HDMA", 8192}},
		{"i0_0_W0_model.weight", {"Neural DMA", 4096}},
		{"i0_0_W0_gather", {"Task DMA", 2048}},
		{"i0_0_W0_copy", {"Device HDMA", 1024}},
		{"i0_0_W0_output", {"External HDMA", 512}},
	};
	const std::set<std::pair<std::string, std::string>> deps = {
		{"i0_0_W0_input", "i0_0_W0_model.weight"}, {"i0_0_W0_model.weight", "i0_0_W0_gather"},
		{"i0_0_W0_model.weight", "i0_0_W0_copy"}, {"i0_0_W0_gather", "i0_0_W0_output"},
		{"i0_0_W0_copy", "i0_0_W0_output"},
	};
	Recording rec({"-o", file.string()});
	ASSERT_TRUE(rec.recording()) << rec.said();
	{
		using rbln::Engine;
		rbln::Job in = dev.submit(Engine::external_hdma, 0, {{host, a, 0, 0, 8192}}, "i0_0_W0_input");
		rbln::Job weight = dev.submit(Engine::neural_dma, 0, {{a, b, 0, 0, 4096}}, "i0_0_W0_model.weight", {in});
		rbln::Job gather = dev.submit(Engine::task_dma, 0, {{b, c, 0, 0, 2048}}, "i0_0_W0_gather", {weight});
		rbln::Job copy = dev.submit(Engine::device_hdma, 0, {{b, c, 0, 8192, 1024}}, "i0_0_W0_copy", {weight});
		dev.submit(Engine::external_hdma, 0, {{c, host, 0, 0, 512}}, "i0_0_W0_output", {gather, copy}).wait();
	}
	const int status = rec.stop();
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << rec.said();
	EXPECT_NE(rec.said().find("rbln-smi trace: 5 jobs of 1 process on 1 NPU, 5 dependencies"), std::string::npos)
		<< rec.said();

	const Summary s(decode(file));
	const auto *top = s.named(device, 0);
	ASSERT_TRUE(top) << "the device group, named as rbln-smi shows it: " << device;
	std::set<std::string> engines, counters;
	for (const auto &[u, d] : s.tracks) {
		EXPECT_FALSE(d.name().starts_with("Chiplet")) << "an ATOM has no chiplet groups: " << d.name();
		if (d.parent_uuid() == top->uuid())
			(d.has_counter() ? counters : engines).insert(d.name());
		else
			EXPECT_EQ(d.uuid(), top->uuid()) << d.name() << " is not under " << device;
	}
	EXPECT_EQ(engines, (std::set<std::string>{"Device Workload", "External HDMA", "Neural DMA", "Task DMA",
						  "Device HDMA"})) << "only the engines that ran, beside the workload";
	EXPECT_EQ(counters, (std::set<std::string>{"Memory used", "Utilization"}));
	EXPECT_GT(s.counters, 0u);

	std::map<std::string, const Slice *> by_label;
	for (const Slice &sl : s.slices) {
		const std::string track = s.tracks.at(sl.track).name();
		if (track == "Device Workload") {
			EXPECT_EQ(sl.name, "i0_0_Device Workload_0");
			continue;
		}
		ASSERT_TRUE(want.contains(sl.name)) << sl.name;
		EXPECT_TRUE(by_label.emplace(sl.name, &sl).second) << "twice: " << sl.name;
		EXPECT_EQ(track, want.at(sl.name).first) << sl.name;
		EXPECT_EQ(sl.args.at("bytes"), std::to_string(want.at(sl.name).second)) << sl.name;
		EXPECT_EQ(sl.args.at("status"), "ok") << sl.name;
		EXPECT_LE(sl.begin, sl.end) << sl.name;
	}
	EXPECT_EQ(by_label.size(), want.size());
	// Both External HDMA jobs on one track, the output after the input.
	if (by_label.size() == want.size()) {
		EXPECT_LE(by_label["i0_0_W0_input"]->end, by_label["i0_0_W0_output"]->begin);
	}
	std::set<std::pair<std::string, std::string>> drawn;
	for (const auto &[from, from_track, to, to_track] : arrows(s))
		drawn.insert({from, to});
	EXPECT_EQ(drawn, deps) << "an arrow for each dependency (all of one file: the driver saw each wait)";
	fs::remove_all(dir);
}
