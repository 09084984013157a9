// libdevmgr's jobs against the real module: the Rebel100 chain joined only
// by `after`, a hung first job holding the rest until its timeout fails them
// all, a job waiting for a job of another device or open file, a job's fd
// waking poll(), the C ABI's forms, and failures SUBMIT reports itself.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"
#include "devmgr_error_of.h"
#include "rbln_test_util.h"

using namespace std::chrono_literals;
using rbln::Engine;
using rbln::Errc;
using rbln::Placement;
using rbln::test::debugfs_write;

using rbln::test::error_of;

namespace {

constexpr uint64_t k4K = 4096;

bool contains(const std::string &text, const std::string &part)
{
	return text.find(part) != std::string::npos;
}

// Sets the module's job_timeout_ms for one test and puts the old value back.
class JobTimeout {
public:
	explicit JobTimeout(const std::string &ms) { EXPECT_EQ(rbln::test::write_file(kParam, ms), 0); }
	~JobTimeout() { EXPECT_EQ(rbln::test::write_file(kParam, old_), 0); }

private:
	static constexpr const char *kParam = "/sys/module/rbln/parameters/job_timeout_ms";
	std::string old_ = rbln::test::read_file(kParam).value_or("1000");
};

// Whether @fd is readable within @timeout.
bool readable(int fd, std::chrono::milliseconds timeout)
{
	pollfd p{fd, POLLIN, 0};
	return poll(&p, 1, int(timeout.count())) == 1 && (p.revents & POLLIN);
}

// The Rebel100 pattern through the library: Neural DMA on chiplet 1 produces,
// Task DMA brings it to chiplet 0, External HDMA to the host; the stages are
// joined only by `after`.  Above 64 KiB no stage can end inside SUBMIT, so
// the kernel really orders them by their fences.
struct Chain {
	rbln::Device &dev;
	uint64_t size;
	rbln::Buffer src, mid, gather, host;

	Chain(rbln::Device &d, uint64_t bytes)
		: dev(d), size(bytes), src(dev.allocate(size, Placement::on_chiplet(1))),
		  mid(dev.allocate(size, Placement::on_chiplet(1))),
		  gather(dev.allocate(size, Placement::on_chiplet(0))), host(dev.allocate_host(size))
	{
	}
	void fill(uint64_t seed)
	{
		std::mt19937_64 rng(seed);
		for (std::byte &b : src.map())
			b = std::byte(rng());
		std::ranges::fill(host.map(), std::byte{0});
	}
	// produce, gather, deliver: no stage waits in user space.
	std::vector<rbln::Job> submit()
	{
		auto produced = dev.submit(Engine::neural_dma, 1, {{src, mid, 0, 0, size}}, "produce");
		auto gathered = dev.submit(Engine::task_dma, 0, {{mid, gather, 0, 0, size}}, "gather",
					   {produced});
		auto delivered = dev.submit(Engine::external_hdma, 0, {{gather, host, 0, 0, size}},
					    "deliver", {gathered});
		return {produced, gathered, delivered};
	}
	bool intact() { return std::memcmp(src.map().data(), host.map().data(), size) == 0; }
	bool delivered_nothing()
	{
		return std::ranges::all_of(host.map(), [](std::byte b) { return b == std::byte{0}; });
	}
};

} // namespace

TEST(DevmgrJobs, Rebel100ChainJoinedByAfterKeepsTheBytes)
{
	auto dev = rbln::Device::open(1);
	const uint64_t baseline = dev.memory().used;
	for (uint64_t size : {k4K, uint64_t(1) << 20}) {
		Chain chain(dev, size);
		for (int round = 0; round < 10; round++) {
			chain.fill(size + round);
			auto jobs = chain.submit();
			jobs.back().wait(10s);
			ASSERT_TRUE(chain.intact()) << size << " bytes, round " << round;
			EXPECT_TRUE(jobs[0].done());
			EXPECT_TRUE(jobs[1].done());
		}
	}
	EXPECT_EQ(dev.memory().used, baseline) << "every job let its buffers go";
}

// Order comes from the fences: with the first stage's engine hung the rest
// waits; the engine's timeout fails it, and the rest with its error.
TEST(DevmgrJobs, HungFirstJobHoldsTheChainThenAllFailWithItsError)
{
	auto dev = rbln::Device::open(1);
	Chain chain(dev, k4K);
	chain.fill(3);
	{
		JobTimeout timeout("1500");
		ASSERT_EQ(debugfs_write(1, "hang", "1 neural_dma"), 0);
		auto jobs = chain.submit();
		std::this_thread::sleep_for(300ms);
		EXPECT_FALSE(jobs[1].done()) << "gather waits";
		EXPECT_FALSE(jobs[2].done()) << "delivery waits";
		auto msg = error_of([&] { jobs[2].wait(10s); }, Errc::engine_hung);
		EXPECT_TRUE(contains(msg, "chiplet 0 external_hdma failed: the engine hung and was reset "
					  "(here, or in a job it waited for)")) << msg;
		msg = error_of([&] { jobs[1].wait(10s); }, Errc::engine_hung);
		EXPECT_TRUE(contains(msg, "chiplet 0 task_dma failed")) << msg;
		msg = error_of([&] { jobs[0].wait(10s); }, Errc::engine_hung);
		EXPECT_TRUE(contains(msg, "chiplet 1 neural_dma failed: the engine hung and was reset"))
			<< msg;
		EXPECT_FALSE(contains(msg, "waited for")) << "the first job waited for nothing: " << msg;
		for (const auto &job : jobs)
			EXPECT_NO_THROW(job.wait()) << "a failure is reported once";
		EXPECT_TRUE(chain.delivered_nothing());
	}
	// The engine was reset and works again; so does the chain.
	chain.submit().back().wait(10s);
	EXPECT_TRUE(chain.intact());
}

// A job on the ATOM waits for a job on the Rebel100, and a job of a second
// open file of the Rebel100 for one of the first: both through a sync_file.
TEST(DevmgrJobs, JobWaitsForAJobOfAnotherDeviceOrOpenFile)
{
	auto rebel = rbln::Device::open(1);
	auto rebel_again = rbln::Device::open(1);
	auto atom = rbln::Device::open(0);
	auto a = rebel.allocate(k4K), b = rebel.allocate(k4K);
	auto c = atom.allocate(k4K), d = atom.allocate(k4K);
	auto e = rebel_again.allocate(k4K), f = rebel_again.allocate(k4K);
	std::ranges::fill(c.map(), std::byte{0x3c});
	std::ranges::fill(e.map(), std::byte{0x4d});

	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
	auto theirs = rebel.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "held");
	auto on_atom = atom.submit(Engine::neural_dma, 0, {{c, d, 0, 0, k4K}}, "after rebel", {theirs});
	auto on_file = rebel_again.submit(Engine::neural_dma, 0, {{e, f, 0, 0, k4K}}, "after file",
					  {theirs});
	std::this_thread::sleep_for(200ms);
	EXPECT_FALSE(on_atom.done()) << "waits for the other device";
	EXPECT_FALSE(on_file.done()) << "waits for the other open file";
	EXPECT_NE(d.map()[0], std::byte{0x3c});
	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma 0"), 0);
	on_atom.wait(10s);
	on_file.wait(10s);
	EXPECT_EQ(d.map()[k4K - 1], std::byte{0x3c});
	EXPECT_EQ(f.map()[k4K - 1], std::byte{0x4d});
	EXPECT_TRUE(theirs.done());

	// A failure crosses devices too, even one SUBMIT reported at once.
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "1"), 0);
	auto failed = rebel.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "fails");
	auto follows = atom.submit(Engine::neural_dma, 0, {{c, d, 0, 0, k4K}}, "follows", {failed});
	auto msg = error_of([&] { follows.wait(10s); }, Errc::job_failed);
	EXPECT_TRUE(contains(msg, "rbln:0: job")) << msg;
	EXPECT_TRUE(contains(msg, "(here, or in a job it waited for)")) << msg;
	error_of([&] { failed.wait(); }, Errc::job_failed);
}

// A job's fd: not readable while the job is held, readable once it ends.
TEST(DevmgrJobs, JobFdWakesPollWhenTheJobEnds)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(k4K, Placement::on_chiplet(1)), b = dev.allocate(k4K, Placement::on_chiplet(1));
	ASSERT_EQ(debugfs_write(1, "hang", "1 device_hdma"), 0);
	auto job = dev.submit(Engine::device_hdma, 1, {{a, b, 0, 0, k4K}}, "held");
	rbln::test::Fd fd(job.fd());
	ASSERT_TRUE(fd);
	EXPECT_FALSE(readable(fd.get(), 100ms)) << "the job is held";
	std::thread unhang([] {
		std::this_thread::sleep_for(200ms);
		EXPECT_EQ(debugfs_write(1, "hang", "1 device_hdma 0"), 0);
	});
	EXPECT_TRUE(readable(fd.get(), 10s));
	unhang.join();
	EXPECT_TRUE(job.done());

	// A job that ended inside SUBMIT has a signalled fence: readable at once.
	auto quick = dev.submit(Engine::device_hdma, 1, {{a, b, 0, 0, k4K}}, "quick");
	rbln::test::Fd quick_fd(quick.fd());
	EXPECT_TRUE(readable(quick_fd.get(), 0ms));
	EXPECT_TRUE(quick.done());
}

TEST(DevmgrJobs, CApiJoinsJobsAndPollsThem)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(1, &dev), RBLN_OK) << rbln_last_error();
	const uint64_t size = 1 << 20;
	rbln_buffer *src = nullptr, *mid = nullptr, *gather = nullptr, *host = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, size, 1, 0, &src), RBLN_OK);
	ASSERT_EQ(rbln_buffer_alloc(dev, size, 1, 0, &mid), RBLN_OK);
	ASSERT_EQ(rbln_buffer_alloc(dev, size, 0, 0, &gather), RBLN_OK);
	ASSERT_EQ(rbln_buffer_alloc(dev, size, 0, RBLN_ALLOC_HOST, &host), RBLN_OK);
	void *in = nullptr, *out = nullptr;
	ASSERT_EQ(rbln_buffer_map(src, &in), RBLN_OK);
	ASSERT_EQ(rbln_buffer_map(host, &out), RBLN_OK);
	std::memset(in, 0x6e, size);

	rbln_copy produce{src, mid, 0, 0, size}, move{mid, gather, 0, 0, size}, deliver{gather, host, 0, 0, size};
	rbln_job *produced = nullptr, *gathered = nullptr, *delivered = nullptr;
	ASSERT_EQ(rbln_submit(dev, RBLN_ENGINE_NEURAL_DMA, 1, &produce, 1, "c-produce", &produced), RBLN_OK);
	ASSERT_EQ(rbln_submit_after(dev, RBLN_ENGINE_TASK_DMA, 0, &move, 1, "c-gather", &produced, 1,
				    &gathered), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_submit_after(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &deliver, 1, "c-deliver",
				    &gathered, 1, &delivered), RBLN_OK) << rbln_last_error();
	int fd = -1;
	ASSERT_EQ(rbln_job_fd(delivered, &fd), RBLN_OK) << rbln_last_error();
	rbln::test::Fd sync_file(fd);
	EXPECT_TRUE(readable(fd, 10s));
	EXPECT_EQ(rbln_job_wait(delivered, 0), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(static_cast<unsigned char *>(out)[size - 1], 0x6e);

	std::vector<const rbln_job *> many(RBLN_SUBMIT_MAX_AFTER + 1, produced);
	rbln_job *refused = nullptr;
	EXPECT_EQ(rbln_submit_after(dev, RBLN_ENGINE_TASK_DMA, 0, &move, 1, nullptr, many.data(),
				    many.size(), &refused), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_TRUE(contains(rbln_last_error(), "at most 64 jobs, not 65")) << rbln_last_error();
	many.assign(2, nullptr);
	EXPECT_EQ(rbln_submit_after(dev, RBLN_ENGINE_TASK_DMA, 0, &move, 1, nullptr, many.data(),
				    many.size(), &refused), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_STREQ(rbln_last_error(), "rbln_submit_after: after[0] is NULL");
	EXPECT_EQ(refused, nullptr);

	for (rbln_job *job : {produced, gathered, delivered})
		rbln_job_free(job);
	for (rbln_buffer *buf : {src, mid, gather, host})
		rbln_buffer_free(buf);
	rbln_device_close(dev);
}

// A failure that SUBMIT reported (the job ended inside it) is thrown by the
// first wait of any copy of the job, and by no later one; a job that waits
// for it fails the same way.
TEST(DevmgrJobs, FailureReportedBySubmitIsThrownOnce)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(k4K), b = dev.allocate(k4K);
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "1"), 0);
	auto job = dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "fails");
	auto copy = job;
	auto follows = dev.submit(Engine::neural_dma, 0, {{a, b, 0, 0, k4K}}, "follows", {job});
	auto msg = error_of([&] { job.wait(); }, Errc::job_failed);
	EXPECT_TRUE(contains(msg, "chiplet 0 task_dma failed: the job failed on the device")) << msg;
	EXPECT_NO_THROW(copy.wait()) << "reported once, for every copy";
	EXPECT_TRUE(job.done());
	msg = error_of([&] { follows.wait(10s); }, Errc::job_failed);
	EXPECT_TRUE(contains(msg, "chiplet 0 neural_dma failed")) << msg;
	EXPECT_NO_THROW(follows.wait());

	// A dependency that succeeded inside SUBMIT costs nothing and holds nothing.
	auto ok = dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}});
	dev.submit(Engine::neural_dma, 0, {{a, b, 0, 0, k4K}}, {}, {ok, ok}).wait(10s);
}

// One Device from several threads: jobs, their dependencies and the syncobj
// pool they share.
TEST(DevmgrJobs, ThreadsShareADeviceAndItsSyncobjs)
{
	auto dev = rbln::Device::open(1);
	const uint64_t baseline = dev.memory().used;
	{
		constexpr uint64_t kSize = 128 << 10;	// too big to end inside SUBMIT
		std::vector<std::thread> threads;
		std::atomic<int> failures{0};
		for (uint32_t chiplet = 0; chiplet < 4; chiplet++)
			threads.emplace_back([&, chiplet] {
				auto a = dev.allocate(kSize, Placement::on_chiplet(chiplet));
				auto b = dev.allocate(kSize, Placement::on_chiplet(chiplet));
				auto c = dev.allocate(kSize, Placement::on_chiplet(chiplet));
				try {
					for (int i = 0; i < 50; i++) {
						std::ranges::fill(a.map(), std::byte(i + chiplet));
						const uint64_t size = i % 2 ? kSize : k4K;
						auto first = dev.submit(Engine::neural_dma, chiplet,
									{{a, b, 0, 0, size}});
						dev.submit(Engine::device_hdma, chiplet, {{b, c, 0, 0, size}}, {},
							   {first}).wait(10s);
						if (c.map()[size - 1] != std::byte(i + chiplet))
							failures++;
					}
				} catch (const rbln::Error &e) {
					ADD_FAILURE() << e.what();
					failures++;
				}
			});
		for (auto &t : threads)
			t.join();
		EXPECT_EQ(failures, 0);
	}
	EXPECT_EQ(dev.memory().used, baseline);
}

TEST(DevmgrJobs, TooManyDependenciesNameTheLimit)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(1 << 20), b = dev.allocate(1 << 20);
	// Too big to end inside SUBMIT: the 64 allowed are real in_syncs.
	auto job = dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, 1 << 20}});
	std::vector<rbln::Job> after(RBLN_SUBMIT_MAX_AFTER + 1, job);
	auto msg = error_of([&] { dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "x", after); },
			    Errc::invalid_argument);
	EXPECT_EQ(msg, "rbln:1: a job may wait for at most 64 jobs, not 65; wait for some of them first");
	after.pop_back();
	dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "x", after).wait(10s);
}
