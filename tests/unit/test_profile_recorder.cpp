// The in-process recorder on a fake Rebel100 (fake_npu.h): jobs staged by
// several threads, by a thread that exits, while a Session ends, in a forked
// child, and the driver's device times matched to them in any order; read
// back from the files the Sessions write.
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <semaphore>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "../../libdevmgr/src/profile/seqno_table.h"
#include "fake_npu.h"
#include "perfetto_trace.pb.h"
#include "rbln/profile.hpp"

namespace pb = rbln::trace;
using rbln::profile::detail::SeqnoTable;

namespace {

// A job as its run's file shows it.
struct Slice {
	uint64_t seqno = 0, bytes = 0, queued_ns = 0;
	bool device_times = true;	// no "times" note: the driver's
	std::set<std::string> after;	// the labels of the jobs it waited for
};

std::string dir()
{
	static const std::string d = [] {
		auto p = std::filesystem::temp_directory_path() / fmt::format("rbln-recorder-{}", getpid());
		std::filesystem::create_directories(p);
		return p.string();
	}();
	return d;
}

// The slices of a run's file, by name (each name once: a repeat fails).
std::map<std::string, Slice> read_run(const std::string &path)
{
	std::map<std::string, Slice> out;
	if (path.empty())
		return out;
	std::ifstream in(path, std::ios::binary);
	std::stringstream bytes;
	bytes << in.rdbuf();
	pb::Trace t;
	EXPECT_TRUE(t.ParseFromString(bytes.str())) << path;
	std::map<uint64_t, std::string> from, to;
	for (const auto &p : t.packet()) {
		if (!p.has_track_event() || p.track_event().type() != pb::TrackEvent::TYPE_SLICE_BEGIN)
			continue;
		const auto &e = p.track_event();
		if (e.name().find("Device Workload") != std::string::npos)
			continue;
		EXPECT_FALSE(out.contains(e.name())) << e.name() << " recorded twice";
		Slice &s = out[e.name()];
		for (const auto &a : e.debug_annotations()) {
			if (a.name() == "seqno")
				s.seqno = a.uint_value();
			else if (a.name() == "bytes")
				s.bytes = a.uint_value();
			else if (a.name() == "queued_ns")
				s.queued_ns = a.uint_value();
			else if (a.name() == "times")
				s.device_times = false;
		}
		for (uint64_t f : e.flow_ids())
			from[f] = e.name();
		for (uint64_t f : e.terminating_flow_ids())
			to[f] = e.name();
	}
	for (const auto &[f, name] : to) {
		EXPECT_TRUE(from.contains(f)) << name << ": an arrow from no job";
		out[name].after.insert(from[f]);
	}
	return out;
}

struct Buffers {
	rbln::Buffer a, b;
	explicit Buffers(rbln::Device &dev)
		: a(dev.allocate(4096, rbln::Placement::on_chiplet(1))),
		  b(dev.allocate(4096, rbln::Placement::on_chiplet(1))) {}
};

// @n jobs labelled @prefix0.. on @dev, each after the one before; every
// 100th also after the 6 before it (more than a record holds inline).
std::vector<std::string> submit_chain(rbln::Device &dev, const std::string &prefix, int n)
{
	Buffers buf(dev);
	std::vector<rbln::Job> jobs;
	std::vector<std::string> labels;
	for (int i = 0; i < n; i++) {
		std::vector<rbln::Job> after;
		if (i)
			after.push_back(jobs.back());
		if (i % 100 == 99)
			after.assign(jobs.end() - 6, jobs.end());
		labels.push_back(fmt::format("{}{}", prefix, i));
		jobs.push_back(dev.submit(rbln::Engine::neural_dma, 1, {{buf.a, buf.b, 0, 0, 64u + unsigned(i)}},
					  labels.back(), after));
	}
	return labels;
}

// Every label of @labels in @run with the driver's times and its dependencies.
void expect_chain(const std::map<std::string, Slice> &run, const std::vector<std::string> &labels)
{
	for (size_t i = 0; i < labels.size(); i++) {
		auto it = run.find(labels[i]);
		ASSERT_NE(it, run.end()) << labels[i] << " missing";
		const Slice &s = it->second;
		EXPECT_TRUE(s.device_times) << labels[i];
		EXPECT_EQ(s.queued_ns, 100u) << labels[i] << ": the fake's start is submit + 100";
		EXPECT_EQ(s.bytes, 64u + i) << labels[i];
		std::set<std::string> after;
		if (i)
			after.insert(labels[i - 1]);
		if (i % 100 == 99)
			after.insert(labels.begin() + ptrdiff_t(i - 6), labels.begin() + ptrdiff_t(i));
		EXPECT_EQ(s.after, after) << labels[i];
	}
}

// A fake NPU of an older interface @version, past the library's ABI check
// (its warning swallowed).
rbln::Device open_older(uint32_t version, fake_npu::Options options = {})
{
	options.uapi_version = version;
	setenv("RBLN_SKIP_ABI_CHECK", "1", 1);
	testing::internal::CaptureStderr();
	rbln::Device dev = fake_npu::open(options);
	unsetenv("RBLN_SKIP_ABI_CHECK");
	testing::internal::GetCapturedStderr();
	return dev;
}

// Child @pid's end, waited for at most @secs seconds (then killed): "" when
// it exited 0, else what became of it.
std::string wait_child(pid_t pid, int secs)
{
	for (int i = 0; i < secs * 100; i++) {
		int status = 0;
		const pid_t got = waitpid(pid, &status, WNOHANG);
		if (got < 0 && errno != EINTR)
			return fmt::format("waitpid: {}", strerror(errno));
		if (got == pid) {
			if (WIFEXITED(status))
				return WEXITSTATUS(status) ? fmt::format("exited {}", WEXITSTATUS(status)) : "";
			return fmt::format("killed by signal {} ({})", WTERMSIG(status),
					   strsignal(WTERMSIG(status)));
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
	return fmt::format("still running after {} s (killed)", secs);
}

// "DIR/rbln_{date}_{time}" of @path, a file of the recorder's.
std::string time_stem(const std::string &path)
{
	std::smatch m;
	EXPECT_TRUE(std::regex_match(path, m, std::regex(R"((.*/rbln_[0-9]{8}_[0-9]{6})(_pid[0-9]+)?(_[0-9]+)?\.pb)")))
		<< path;
	return m.empty() ? path : m[1].str();
}

} // namespace

TEST(SeqnoTable, MatchesInAnyOrderAndKeepsStragglers)
{
	SeqnoTable<int> t;
	std::vector<int> items(40000);
	for (int i = 0; i < 3000; i++)
		t.add(uint64_t(i) + 1, &items[size_t(i)]);
	EXPECT_EQ(t.waiting(), 3000u);
	for (int i = 2999; i >= 1; i--)	// all but seqno 1, from the end
		EXPECT_EQ(t.take(uint64_t(i) + 1), &items[size_t(i)]);
	EXPECT_EQ(t.take(2), nullptr) << "taken once";
	EXPECT_EQ(t.take(99999), nullptr);
	t.trim();
	EXPECT_EQ(t.waiting(), 1u);
	// A job recorded after later ones were matched and trimmed away.
	t.add(2, &items[1]);
	// Far beyond the oldest waiting one: that one goes aside, still found.
	for (uint64_t s = 3001; s < 3001 + 2 * SeqnoTable<int>::kSpan; s++)
		t.add(s, &items[s % items.size()]);
	t.trim();
	EXPECT_EQ(t.take(1), &items[0]);
	EXPECT_EQ(t.take(2), &items[1]);
	for (uint64_t s = 3001; s < 3001 + 2 * SeqnoTable<int>::kSpan; s++)
		ASSERT_EQ(t.take(s), &items[s % items.size()]) << s;
	t.trim();
	EXPECT_TRUE(t.empty());
	// A leap (jobs not recorded in between) with one still waiting.
	t.add(100000, &items[0]);
	t.add(100000 + 10 * SeqnoTable<int>::kSpan, &items[1]);
	t.trim();
	EXPECT_EQ(t.take(100000), &items[0]);
	EXPECT_EQ(t.take(100000 + 10 * SeqnoTable<int>::kSpan), &items[1]);
	EXPECT_TRUE(t.empty());
}

// Interface 15: every job's times come from JOB_TIMES' ring.
TEST(ProfilerRecorder, EveryJobOnceWithItsTimesFromTheRingInAnyOrder)
{
	rbln::Device dev = open_older(15, {.reverse_times = true});
	rbln::profile::Session run(dir());
	const uint64_t calls = fake_npu::job_times_calls();
	// Past a chunk (512), a drain (1024) and with spilled dependencies.
	const auto labels = submit_chain(dev, "one_", 2600);
	const auto got = read_run(run.end());
	EXPECT_GE(fake_npu::job_times_calls(), calls + 2) << "a drain every 1024 jobs";
	EXPECT_EQ(got.size(), labels.size());
	expect_chain(got, labels);
}

// Interface 16: a job that ended inside SUBMIT brings its times with it
// (DRM_RBLN_SUBMIT_REPORT_TIMES), and nothing is read from the ring.
TEST(ProfilerRecorder, JobsEndedInsideSubmitBringTheirTimes)
{
	rbln::Device dev = fake_npu::open();
	rbln::profile::Session run(dir());
	const uint64_t calls = fake_npu::job_times_calls();
	const auto labels = submit_chain(dev, "reported_", 2600);
	const auto got = read_run(run.end());
	EXPECT_EQ(fake_npu::job_times_calls(), calls) << "no JOB_TIMES for jobs that reported their times";
	EXPECT_EQ(got.size(), labels.size());
	expect_chain(got, labels);
}

TEST(ProfilerRecorder, ThreadsStageConcurrently)
{
	// Interface 15: every job waits for its times in the ring, so the drains
	// run while the threads stage.
	// Opened here (stderr captured once at a time), closed by their threads.
	rbln::Device shared = open_older(15);
	std::vector<rbln::Device> own;
	own.push_back(open_older(15));
	own.push_back(open_older(15));
	rbln::profile::Session run(dir());
	const uint64_t calls = fake_npu::job_times_calls();
	std::vector<std::vector<std::string>> labels(4);
	std::vector<std::thread> threads;
	for (int k = 0; k < 4; k++)
		threads.emplace_back([&, k] {
			// Two on the device they share, two on files of their own.
			if (k < 2) {
				labels[size_t(k)] = submit_chain(shared, fmt::format("t{}_", k), 1500);
			} else {
				rbln::Device mine = std::move(own[size_t(k - 2)]);
				labels[size_t(k)] = submit_chain(mine, fmt::format("t{}_", k), 1500);
			}
		});
	for (auto &t : threads)
		t.join();
	EXPECT_GT(fake_npu::job_times_calls(), calls + 2) << "drained while the threads ran";
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), 6000u);
	for (const auto &l : labels)
		expect_chain(got, l);
}

TEST(ProfilerRecorder, AThreadThatExitsLeavesItsJobs)
{
	rbln::Device dev = fake_npu::open();
	rbln::profile::Session run(dir());
	std::vector<std::string> labels;
	// Fewer than a chunk holds: nothing but its exit hands them over.
	std::thread([&] { labels = submit_chain(dev, "exited_", 7); }).join();
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), 7u);
	expect_chain(got, labels);
}

// A thread_local destructor that runs after the profiler's own (its object
// made first) submits more, in two threads at once: those jobs are recorded
// all the same, and the ended threads' stages are not registered again (to
// be read after they are gone).
TEST(ProfilerRecorder, JobsFromALateThreadLocalDestructorAreRecorded)
{
	rbln::Device dev = fake_npu::open();
	rbln::profile::Session run(dir());
	struct Late {
		rbln::Device *dev = nullptr;
		std::string prefix;
		std::vector<std::string> *labels = nullptr;
		std::latch *both = nullptr;
		~Late()
		{
			if (!dev)
				return;
			both->arrive_and_wait();
			*labels = submit_chain(*dev, prefix, 3);
		}
	};
	std::vector<std::string> labels[2], late_labels[2];
	std::latch both(2);
	std::vector<std::thread> threads;
	for (int k = 0; k < 2; k++) {
		threads.emplace_back([&, k] {
			static thread_local Late late;
			late.prefix = fmt::format("late{}_", k);
			late.labels = &late_labels[k];
			late.both = &both;
			late.dev = &dev;
			labels[k] = submit_chain(dev, fmt::format("early{}_", k), 7);
		});
	}
	for (auto &t : threads)
		t.join();
	// Another thread, maybe at the ended ones' TCB, stages as usual.
	std::vector<std::string> after;
	std::thread([&] { after = submit_chain(dev, "after_", 5); }).join();
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), 2 * (7u + 3u) + 5u);
	for (int k = 0; k < 2; k++) {
		expect_chain(got, labels[k]);
		expect_chain(got, late_labels[k]);
	}
	expect_chain(got, after);
}

TEST(ProfilerRecorder, JobsInFlightGetTheirTimesLater)
{
	rbln::Device dev = fake_npu::open({.hold_times = true});
	rbln::profile::Session run(dir());
	const auto labels = submit_chain(dev, "held_", 1500);
	std::string whole = rbln::profile::flush();	// their times not there yet
	for (const auto &[name, s] : read_run(whole))
		EXPECT_TRUE(!name.starts_with("held_") || !s.device_times) << name;
	fake_npu::release_times();
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), labels.size());
	expect_chain(got, labels);
}

// One thread's jobs, some bringing their times with SUBMIT and some whose
// times come later, interleaved in its chunk: the recorder takes over a
// run of reported jobs without looking at them, never one that waits.
TEST(ProfilerRecorder, ReportedAndLaterTimesInterleavedInOneThread)
{
	rbln::Device reports = fake_npu::open();
	rbln::Device holds = fake_npu::open({.hold_times = true});
	rbln::profile::Session run(dir());
	Buffers on_reports(reports), on_holds(holds);
	std::vector<std::string> held;
	for (int i = 0; i < 1500; i++) {
		const bool later = i % 7 == 3;
		const std::string label = fmt::format("mixed_{}_{}", later ? "held" : "reported", i);
		rbln::Device &dev = later ? holds : reports;
		Buffers &b = later ? on_holds : on_reports;
		dev.submit(rbln::Engine::neural_dma, 1, {{b.a, b.b, 0, 0, 4096}}, label);
		if (later)
			held.push_back(label);
	}
	fake_npu::release_times();
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), 1500u);
	for (const auto &[name, s] : got) {
		EXPECT_TRUE(s.device_times) << name;
		EXPECT_EQ(s.queued_ns, 100u) << name;
	}
	EXPECT_EQ(held.size(), 214u);
}

TEST(ProfilerRecorder, SessionsEndWhileAnotherThreadSubmits)
{
	rbln::Device dev = fake_npu::open();
	std::atomic<bool> stop{false};
	std::atomic<int> submitted{0};
	std::thread worker([&] {
		Buffers buf(dev);
		for (int i = 0; !stop; i++) {
			dev.submit(rbln::Engine::task_dma, 1, {{buf.a, buf.b, 0, 0, 4096}},
				   fmt::format("w_{}", i));
			submitted++;
		}
	});
	std::map<std::string, int> runs_of;
	for (int r = 0; r < 8; r++) {
		rbln::profile::Session run(dir());
		const int before = submitted;
		while (submitted < before + 200)
			std::this_thread::yield();
		for (const auto &[name, s] : read_run(run.end())) {
			runs_of[name]++;
			EXPECT_TRUE(s.device_times) << name;
		}
		// Between runs: jobs submitted now are nobody's.
		const int gap = submitted;
		while (submitted < gap + 50)
			std::this_thread::yield();
	}
	stop = true;
	worker.join();
	EXPECT_GE(runs_of.size(), 8u * 199);
	EXPECT_LT(runs_of.size(), size_t(submitted.load())) << "jobs between runs are not recorded";
	for (const auto &[name, n] : runs_of)
		EXPECT_EQ(n, 1) << name << " in " << n << " runs";
}

// A job whose id was drawn while one run was open, and that SUBMIT took
// after that run ended and the next began, belongs to neither; so too when
// the thread submitted another job meanwhile (recorded first, with a
// higher id).
TEST(ProfilerRecorder, AJobSubmittedAcrossTwoRunsIsInNeither)
{
	rbln::Device dev = fake_npu::open();
	Buffers buf(dev);
	const rbln::Copy copy[] = {{buf.a, buf.b, 0, 0, 4096}};
	for (const bool nested : {false, true}) {
		SCOPED_TRACE(nested ? "another job submitted meanwhile" : "alone");
		std::optional<rbln::profile::Session> run(std::in_place, dir());
		// Room in the thread's chunk (its first job of a run may make it).
		dev.submit(rbln::Engine::neural_dma, 1, copy, fmt::format("across_first_{}", nested));
		std::string first;
		fake_npu::on_submit([&] {
			fake_npu::on_submit({});
			first = run->end();
			run.emplace(dir());
			if (nested)
				dev.submit(rbln::Engine::task_dma, 1, copy, "across_nested");
		});
		const std::string straddles = fmt::format("straddles_{}", nested);
		dev.submit(rbln::Engine::neural_dma, 1, copy, straddles);
		dev.submit(rbln::Engine::neural_dma, 1, copy, fmt::format("inside_{}", nested));
		const auto whole = read_run(rbln::profile::flush());	// every run's jobs
		const auto second = read_run(run->end());
		EXPECT_FALSE(read_run(first).contains(straddles));
		EXPECT_FALSE(second.contains(straddles));
		EXPECT_TRUE(second.contains(fmt::format("inside_{}", nested)));
		EXPECT_EQ(second.contains("across_nested"), nested);
		EXPECT_FALSE(whole.contains(straddles));
		EXPECT_TRUE(whole.contains(fmt::format("inside_{}", nested)));
	}
}

// A job's record is drafted in its thread's next place while its
// Submission is made: a batch's later jobs, a job the thread submits while
// another is in SUBMIT (recorded first), and a refused job, never recorded,
// leave every record whole.
TEST(ProfilerRecorder, BatchesNestedAndRefusedJobsKeepEveryRecordWhole)
{
	rbln::Device dev = fake_npu::open();
	Buffers buf(dev);
	const rbln::Copy copy[] = {{buf.a, buf.b, 0, 0, 4096}};
	const uint32_t first[] = {0}, second[] = {1};
	const rbln::JobSpec batch[] = {
		{rbln::Engine::neural_dma, 1, copy, "batch_0"},
		{rbln::Engine::task_dma, 1, copy, "batch_1", {}, first},
		{rbln::Engine::external_hdma, 1, copy, "batch_2", {}, second},
	};
	rbln::profile::Session run(dir());
	// Room in the thread's chunk (its first job of a run may make it).
	dev.submit(rbln::Engine::neural_dma, 1, copy, "batch_first");
	fake_npu::on_submit([&] {
		fake_npu::on_submit({});
		dev.submit(rbln::Engine::task_dma, 1, copy, "batch_nested");
	});
	const rbln::Job before = dev.submit(rbln::Engine::neural_dma, 1, copy, "batch_before");
	std::vector<rbln::Job> jobs;
	dev.submit_batch(batch, jobs);
	EXPECT_THROW(dev.submit(rbln::Engine::neural_dma, 1, copy, "refused"), rbln::Error);
	dev.submit(rbln::Engine::task_dma, 1, copy, "batch_after", {&jobs.back(), 1});
	const auto got = read_run(run.end());
	const std::map<std::string, std::set<std::string>> want = {
		{"batch_first", {}}, {"batch_before", {}}, {"batch_nested", {}}, {"batch_0", {}},
		{"batch_1", {"batch_0"}}, {"batch_2", {"batch_1"}}, {"batch_after", {"batch_2"}},
	};
	EXPECT_EQ(got.size(), want.size());
	for (const auto &[label, after] : want) {
		ASSERT_TRUE(got.contains(label)) << label;
		EXPECT_EQ(got.at(label).after, after) << label;
		EXPECT_TRUE(got.at(label).device_times) << label;
		EXPECT_EQ(got.at(label).bytes, 4096u) << label;
	}
}

TEST(ProfilerRecorder, AnOldDriverGivesNoDeviceTimes)
{
	// A library checks its driver's interface: not this time.
	setenv("RBLN_SKIP_ABI_CHECK", "1", 1);
	testing::internal::CaptureStderr();
	rbln::Device dev = fake_npu::open({.uapi_version = 13});
	unsetenv("RBLN_SKIP_ABI_CHECK");
	testing::internal::GetCapturedStderr();
	rbln::profile::Session run(dir());
	testing::internal::CaptureStderr();
	const auto labels = submit_chain(dev, "old_", 30);
	const std::string err = testing::internal::GetCapturedStderr();
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), 30u);
	for (const auto &l : labels) {
		ASSERT_TRUE(got.contains(l)) << l;
		EXPECT_FALSE(got.at(l).device_times) << l;
	}
	EXPECT_NE(err.find("device times need 14"), std::string::npos) << err;
}

// A child forked while other threads of its parent have staged jobs goes on
// profiling.  Their stages are in their stacks (static TLS), which the
// child's glibc caches for its own threads and unmaps past 40 MiB as they
// end: the child records its jobs, and what the parent had staged (as it
// keeps what was taken), without reading the parent's threads' stages.
TEST(ProfilerRecorder, AForkedChildGoesOnWithoutTheParentsOtherThreads)
{
	rbln::Device dev = fake_npu::open();
	rbln::profile::Session run(dir());
	constexpr int kThreads = 6;
	std::vector<std::string> parent_labels[kThreads];
	std::mutex mu;
	std::condition_variable cv;
	int staged = 0;
	bool released = false;
	// 16 MiB stacks: six are more than glibc's stack cache keeps.
	pthread_attr_t big, old;
	pthread_getattr_default_np(&old);
	pthread_attr_init(&big);
	pthread_attr_setstacksize(&big, 16 << 20);
	pthread_setattr_default_np(&big);
	std::vector<std::thread> threads;
	for (int k = 0; k < kThreads; k++)
		threads.emplace_back([&, k] {
			// The first is taken over at once, the second stays staged.
			auto labels = submit_chain(dev, fmt::format("fork_parent{}_", k), 2);
			std::unique_lock lock(mu);
			parent_labels[k] = std::move(labels);
			staged++;
			cv.notify_all();
			cv.wait(lock, [&] { return released; });
		});
	pthread_setattr_default_np(&old);
	pthread_attr_destroy(&big);
	pthread_attr_destroy(&old);
	const auto main_labels = submit_chain(dev, "fork_main_", 2);
	bool all_staged;
	{
		std::unique_lock lock(mu);
		all_staged = cv.wait_for(lock, std::chrono::seconds(30), [&] { return staged == kThreads; });
	}
	std::string child_end = "not forked";
	if (all_staged) {
		const pid_t pid = fork();
		if (pid == 0) try {
			// The child's threads take cached stacks, and as each ends
			// the oldest past the cache's size (the parent's) are unmapped.
			std::vector<std::string> labels[3];
			for (int i = 0; i < 2; i++)
				std::thread([&, i] {
					labels[i] = submit_chain(dev, fmt::format("fork_child_thread{}_", i), 2);
				}).join();
			labels[2] = submit_chain(dev, "fork_child_", 3);
			const auto got = read_run(run.end());
			int missing = 0;
			auto expect = [&](const std::vector<std::string> &want) {
				for (const auto &l : want)
					if (!got.contains(l)) {
						fprintf(stderr, "child: %s missing\n", l.c_str());
						missing++;
					}
			};
			for (const auto &l : labels)
				expect(l);
			expect(main_labels);
			for (const auto &l : parent_labels)
				expect(l);
			// read_run's own checks (a job twice, an arrow from no job) count too.
			_exit(missing || ::testing::Test::HasFailure() ? 1 : 0);
		} catch (...) {
			_exit(3);	// never back into the test runner, nor exit()'s destructors
		}
		child_end = pid < 0 ? fmt::format("fork: {}", strerror(errno)) : wait_child(pid, 30);
	}
	{
		std::lock_guard lock(mu);
		released = true;
	}
	cv.notify_all();
	for (auto &t : threads)
		t.join();
	ASSERT_TRUE(all_staged);
	EXPECT_EQ(child_end, "") << "the child";
	// The parent's run: its own jobs, none of the child's.
	const auto got = read_run(run.end());
	EXPECT_EQ(got.size(), 2u * kThreads + 2u);
	for (const auto &l : parent_labels)
		expect_chain(got, l);
	expect_chain(got, main_labels);
}

// A forked child's files are its own, named by its pid as well: neither
// process overwrites the other's, whichever writes last.  The child's hold
// what the parent had recorded before the fork, and its own jobs; the
// parent's hold none of the child's.  Until it records, it writes nothing
// (its files would copy the parent's).
TEST(ProfilerRecorder, AForkedChildsFilesAreItsOwn)
{
	rbln::Device dev = fake_npu::open();
	rbln::profile::Session run(dir());
	const auto parent_labels = submit_chain(dev, "own_parent_", 2);
	const std::string parent_whole = rbln::profile::flush();
	int paths[2];
	ASSERT_EQ(pipe(paths), 0);
	const pid_t pid = fork();
	if (pid == 0) try {
		close(paths[0]);
		if (!rbln::profile::flush().empty())
			_exit(4);	// nothing of its own yet
		const auto labels = submit_chain(dev, "own_child_", 2);
		const std::string whole = rbln::profile::flush();
		const std::string text = fmt::format("{}\n{}\n", whole, run.end());
		_exit(write(paths[1], text.data(), text.size()) == ssize_t(text.size()) ? 0 : 1);
	} catch (...) {
		_exit(3);	// never back into the test runner, nor exit()'s destructors
	}
	close(paths[1]);
	// Its end first (a child that hangs is a timeout), then what it wrote
	// (far less than a pipe holds).
	const std::string child_end = pid < 0 ? fmt::format("fork: {}", strerror(errno)) : wait_child(pid, 30);
	std::string text;
	char buf[4096];
	for (ssize_t n; child_end.empty() && (n = read(paths[0], buf, sizeof(buf))) > 0;)
		text.append(buf, size_t(n));
	close(paths[0]);
	ASSERT_EQ(child_end, "") << "the child";
	std::istringstream lines(text);
	std::string child_whole, child_run;
	std::getline(lines, child_whole);
	std::getline(lines, child_run);
	// After the child's: a parent that writes last keeps its own.
	const std::string parent_run = run.end();
	const std::string stem = time_stem(parent_run), suffix = fmt::format("_pid{}", pid);
	EXPECT_EQ(child_whole, stem + suffix + ".pb");
	EXPECT_EQ(child_run, fmt::format("{}{}_{}.pb", stem, suffix, run.run()));
	// The parent's whole trace of just before the fork, and the child's jobs.
	const auto child_whole_got = read_run(child_whole);
	EXPECT_EQ(child_whole_got.size(), read_run(parent_whole).size() + 2) << child_whole;
	for (const auto &l : {"own_parent_0", "own_parent_1", "own_child_0", "own_child_1"})
		EXPECT_TRUE(child_whole_got.contains(l)) << l << " missing from " << child_whole;
	const auto child_got = read_run(child_run);
	EXPECT_EQ(child_got.size(), 4u) << child_run;
	expect_chain(child_got, parent_labels);
	const auto parent_got = read_run(parent_run);
	EXPECT_EQ(parent_got.size(), 2u) << parent_run;
	expect_chain(parent_got, parent_labels);
}

// The files of forked child @pid: its pid in their names.
std::vector<std::string> files_of(pid_t pid)
{
	std::vector<std::string> out;
	const std::regex mine(fmt::format(R"(.*_pid{}(_[0-9]+)?\.pb)", pid));
	for (const auto &e : std::filesystem::directory_iterator(dir()))
		if (std::regex_match(e.path().filename().string(), mine))
			out.push_back(e.path().filename().string());
	std::ranges::sort(out);
	return out;
}

// A forked child that recorded nothing of its own writes nothing, at a
// Session's end or at exit: its files would copy what its parent writes (a
// pre-forking server's workers, say).  One that recorded writes its open
// run and whole trace at exit.
TEST(ProfilerRecorder, AForkedChildWritesAtExitOnlyWhenItRecorded)
{
	rbln::Device dev = fake_npu::open();
	rbln::profile::Session run(dir());
	submit_chain(dev, "exit_parent_", 1);
	for (const bool records : {false, true}) {
		const pid_t pid = fork();
		if (pid == 0) try {
			if (records)
				submit_chain(dev, "exit_child_", 1);
			// An inherited run ended here: nothing of the child's.
			else if (!rbln::profile::Session(dir()).end().empty() || !run.end().empty())
				_exit(4);
			std::exit(0);	// exit's destructors: the recorder writes there
		} catch (...) {
			_exit(3);
		}
		ASSERT_EQ(pid < 0 ? fmt::format("fork: {}", strerror(errno)) : wait_child(pid, 30), "")
			<< "the child that " << (records ? "recorded" : "recorded nothing");
		const auto files = files_of(pid);
		if (!records) {
			EXPECT_TRUE(files.empty()) << fmt::format("{}", fmt::join(files, " "));
			continue;
		}
		const std::string stem = time_stem(run.end()).substr(dir().size() + 1);
		EXPECT_EQ(files, (std::vector<std::string>{fmt::format("{}_pid{}.pb", stem, pid),
							   fmt::format("{}_pid{}_{}.pb", stem, pid, run.run())}));
		const auto got = read_run(fmt::format("{}/{}_pid{}_{}.pb", dir(), stem, pid, run.run()));
		EXPECT_TRUE(got.contains("exit_parent_0") && got.contains("exit_child_0")) << got.size();
	}
}

// An idle child asks the driver for no device times (those in the file it
// shares with its parent are the parent's), at a run's end, a flush or a
// device's close; and what the parent had staged before the fork stays in
// the child's trace when the child ends an inherited run while idle and
// records later.
TEST(ProfilerRecorder, AnIdleChildTakesNoTimesAndKeepsWhatItInherited)
{
	rbln::Device dev = fake_npu::open({.hold_times = true});
	rbln::profile::Session run(dir());
	const auto parent_labels = submit_chain(dev, "inherited_", 3);	// times held: in the ring
	fake_npu::release_times();
	const pid_t pid = fork();
	if (pid == 0) try {
		const uint64_t calls = fake_npu::job_times_calls();
		const bool wrote = !run.end().empty() || !rbln::profile::flush().empty();
		{
			rbln::Device closing = std::move(dev);
		}
		if (wrote || fake_npu::job_times_calls() != calls)
			_exit(4);
		rbln::Device again = fake_npu::open();
		rbln::profile::Session later(dir());
		submit_chain(again, "inherited_child_", 1);
		const auto got = read_run(rbln::profile::flush());
		// The parent's jobs without their times (left to the parent): marked so.
		auto has = [&](const std::string &l) {
			return got.contains(l) || got.contains(l + " [NO DEVICE TIMES]");
		};
		int missing = 0;
		for (const auto &l : parent_labels)
			if (!has(l)) {
				fprintf(stderr, "child: %s missing\n", l.c_str());
				missing++;
			}
		_exit(missing || !got.contains("inherited_child_0") ? 5 : 0);
	} catch (...) {
		_exit(3);
	}
	EXPECT_EQ(pid < 0 ? fmt::format("fork: {}", strerror(errno)) : wait_child(pid, 30), "")
		<< "the child (exit 4: it asked for times or wrote a copy; 5: jobs missing)";
	expect_chain(read_run(run.end()), parent_labels);
}

// Released as a fork starts, by its first prepare handler: registered after
// the library's, it runs before the library's, which takes the recorder's lock.
static std::binary_semaphore *g_fork_started = nullptr;

// A fork while another thread is inside the recorder (asking the driver for
// device times at a flush): the child finds its lock free, which no thread
// of the child would ever free.
TEST(ProfilerRecorder, AForkWhileAnotherThreadIsInsideTheRecorder)
{
	static const int registered = pthread_atfork(+[] {
		if (g_fork_started)
			g_fork_started->release();
	}, nullptr, nullptr);
	ASSERT_EQ(registered, 0);
	rbln::Device dev = fake_npu::open({.hold_times = true});
	rbln::profile::Session run(dir());
	submit_chain(dev, "inside_", 1);	// its times come later: a flush asks for them
	std::binary_semaphore inside(0), fork_started(0);
	g_fork_started = &fork_started;
	fake_npu::on_job_times([&] {
		fake_npu::on_job_times({});
		inside.release();
		// Still inside once the fork started, long enough for a fork that
		// does not wait for the lock to be done.
		if (fork_started.try_acquire_for(std::chrono::seconds(10)))
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
	});
	std::thread flushing([] { rbln::profile::flush(); });
	const bool was_inside = inside.try_acquire_for(std::chrono::seconds(10));
	std::string child_end = "not forked: the flush asked for no device times";
	if (was_inside) {
		const pid_t pid = fork();
		if (pid == 0) try {
			rbln::profile::flush();
			_exit(0);
		} catch (...) {
			_exit(3);
		}
		child_end = pid < 0 ? fmt::format("fork: {}", strerror(errno)) : wait_child(pid, 30);
	}
	g_fork_started = nullptr;
	fake_npu::on_job_times({});
	flushing.join();
	EXPECT_EQ(child_end, "") << "the child";
	fake_npu::release_times();
	EXPECT_EQ(read_run(run.end()).size(), 1u);
}

// A signal handler that forks (to exec a crash reporter, say) while its
// thread is inside the recorder: the fork does not wait for the lock that
// thread holds.  In a child of the test, so that a deadlock is a timeout.
TEST(ProfilerRecorder, ASignalHandlersForkInsideTheRecorderGoesOn)
{
	rbln::Device dev = fake_npu::open({.hold_times = true});
	const pid_t pid = fork();
	if (pid == 0) try {
		rbln::profile::Session run(dir());
		submit_chain(dev, "signal_", 1);	// its times come later: a flush asks for them
		static volatile sig_atomic_t grandchild = -1;
		signal(SIGUSR1, +[](int) {
			grandchild = fork();
			if (grandchild == 0)
				_exit(0);
		});
		fake_npu::on_job_times([] {
			fake_npu::on_job_times({});
			raise(SIGUSR1);		// on the flush's thread, inside the recorder
		});
		rbln::profile::flush();
		int status = 0;
		const bool reaped = grandchild > 0 && waitpid(pid_t(grandchild), &status, 0) == grandchild &&
				    WIFEXITED(status) && WEXITSTATUS(status) == 0;
		fake_npu::release_times();
		_exit(reaped ? 0 : 1);
	} catch (...) {
		_exit(3);
	}
	EXPECT_EQ(pid < 0 ? fmt::format("fork: {}", strerror(errno)) : wait_child(pid, 10), "")
		<< "the child that forked from its signal handler";
}
