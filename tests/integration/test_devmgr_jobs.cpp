// libdevmgr's jobs against the real module: the Rebel100 chain joined only
// by `after`, and in one batch, a hung first job holding the rest until its
// timeout fails them all, a job waiting for a job of another device or open file, a job's fd
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
using rbln::test::ScheduledJobs;

using rbln::test::error_of;

namespace {

constexpr uint64_t k4K = 4096;

bool contains(const std::string &text, const std::string &part)
{
	return text.find(part) != std::string::npos;
}

// Whether @fd is readable within @timeout.
bool readable(int fd, std::chrono::milliseconds timeout)
{
	pollfd p{fd, POLLIN, 0};
	return poll(&p, 1, int(timeout.count())) == 1 && (p.revents & POLLIN);
}

// The Rebel100 pattern through the library: Neural DMA on chiplet 1 produces,
// Task DMA brings it to chiplet 0, External HDMA to the host; the stages are
// joined only by `after`.  With the direct path off (ScheduledJobs) no stage
// can end inside SUBMIT, so the kernel really orders them by their fences.
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
	// The same three jobs in one SUBMIT_BATCH, joined by their places in it.
	std::vector<rbln::Job> submit_batch()
	{
		const rbln::Copy produce[] = {{src, mid, 0, 0, size}};
		const rbln::Copy move[] = {{mid, gather, 0, 0, size}};
		const rbln::Copy deliver[] = {{gather, host, 0, 0, size}};
		const uint32_t first[] = {0}, second[] = {1};
		const rbln::JobSpec jobs[] = {
			{Engine::neural_dma, 1, produce, "produce"},
			{Engine::task_dma, 0, move, "gather", {}, first},
			{Engine::external_hdma, 0, deliver, "deliver", {}, second},
		};
		return dev.submit_batch(jobs);
	}
	bool intact() { return std::memcmp(src.map().data(), host.map().data(), size) == 0; }
	bool delivered_nothing()
	{
		return std::ranges::all_of(host.map(), [](std::byte b) { return b == std::byte{0}; });
	}
};

// The chain's buffers of NPU 1 through the C ABI, 1 MiB each, the source
// filled with one byte; let go with the fixture.
struct CChain {
	static constexpr uint64_t size = 1 << 20;
	rbln_device *dev = nullptr;
	rbln_buffer *src = nullptr, *mid = nullptr, *gather = nullptr, *host = nullptr;
	unsigned char *out = nullptr;
	rbln_copy produce{}, move{}, deliver{};

	void open(unsigned char fill)
	{
		ASSERT_EQ(rbln_device_open(1, &dev), RBLN_OK) << rbln_last_error();
		ASSERT_EQ(rbln_buffer_alloc(dev, size, 1, 0, &src), RBLN_OK);
		ASSERT_EQ(rbln_buffer_alloc(dev, size, 1, 0, &mid), RBLN_OK);
		ASSERT_EQ(rbln_buffer_alloc(dev, size, 0, 0, &gather), RBLN_OK);
		ASSERT_EQ(rbln_buffer_alloc(dev, size, 0, RBLN_ALLOC_HOST, &host), RBLN_OK);
		void *in = nullptr, *mapped = nullptr;
		ASSERT_EQ(rbln_buffer_map(src, &in), RBLN_OK);
		ASSERT_EQ(rbln_buffer_map(host, &mapped), RBLN_OK);
		std::memset(in, fill, size);
		out = static_cast<unsigned char *>(mapped);
		produce = {sizeof(rbln_copy), src, mid, 0, 0, size};
		move = {sizeof(rbln_copy), mid, gather, 0, 0, size};
		deliver = {sizeof(rbln_copy), gather, host, 0, 0, size};
	}
	~CChain()
	{
		for (rbln_buffer *buf : {src, mid, gather, host})
			if (buf)
				rbln_buffer_free(buf);
		if (dev)
			rbln_device_close(dev);
	}
};

} // namespace

// Ten rounds of the chain at 4 KiB (inside SUBMIT) and 5 MiB (every job
// scheduled), submitted by @submit: the bytes arrive, the jobs are numbered in
// order, every job lets its buffers go.
static void chain_keeps_the_bytes(std::vector<rbln::Job> (Chain::*submit)())
{
	auto dev = rbln::Device::open(1);
	const uint64_t baseline = dev.memory().used;
	for (bool scheduled : {false, true}) {
		const uint64_t size = scheduled ? 5 << 20 : k4K;
		ScheduledJobs only(1, scheduled);
		ASSERT_EQ(only.error(), 0) << "no_direct";
		Chain chain(dev, size);
		for (int round = 0; round < 10; round++) {
			chain.fill(size + round);
			auto jobs = (chain.*submit)();
			ASSERT_EQ(jobs.size(), 3u);
			EXPECT_EQ(jobs[2].seqno(), jobs[0].seqno() + 2);
			jobs.back().wait(10s);
			ASSERT_TRUE(chain.intact()) << size << " bytes, round " << round;
			EXPECT_TRUE(jobs[0].done());
			EXPECT_TRUE(jobs[1].done());
		}
	}
	EXPECT_EQ(dev.memory().used, baseline);
}

TEST(DevmgrJobs, Rebel100ChainJoinedByAfterKeepsTheBytes)
{
	chain_keeps_the_bytes(&Chain::submit);
}

TEST(DevmgrJobs, Rebel100ChainInOneBatchKeepsTheBytes)
{
	chain_keeps_the_bytes(&Chain::submit_batch);
}

// A refused job stops the batch: the error names it, and the jobs before it
// were submitted, ran, and are handed back.
TEST(DevmgrJobs, BatchRefusalNamesTheJobAndKeepsTheOnesBefore)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(k4K, Placement::on_chiplet(0));
	auto b = dev.allocate(k4K, Placement::on_chiplet(0));
	auto far = dev.allocate(k4K, Placement::on_chiplet(2));
	std::ranges::fill(a.map(), std::byte{0x5a});
	const rbln::Copy good[] = {{a, b, 0, 0, k4K}};
	const rbln::Copy out_of_range[] = {{a, b, 0, 8, k4K}};
	const rbln::Copy unreachable[] = {{a, far, 0, 0, k4K}};
	const uint32_t first[] = {0};
	std::vector<rbln::Job> jobs;
	const rbln::JobSpec refused_second[] = {
		{Engine::task_dma, 0, good, "good"},
		{Engine::task_dma, 0, out_of_range, "bad", {}, first},
		{Engine::task_dma, 0, good, "never"},
	};
	auto msg = error_of([&] { dev.submit_batch(refused_second, jobs); }, Errc::invalid_argument);
	EXPECT_TRUE(contains(msg, "rbln:1: submit of 1 copy on chiplet 0 task_dma (job 1 of the batch) "
				  "refused: a copy is out of its buffers' range")) << msg;
	ASSERT_EQ(jobs.size(), 1u);
	jobs[0].wait(10s);
	EXPECT_EQ(b.map()[k4K - 1], std::byte{0x5a});

	// Neural DMA stays within its chiplet: refused by the driver, as the first job.
	const rbln::JobSpec refused_first[] = {{Engine::neural_dma, 0, unreachable, "far"}};
	msg = error_of([&] { dev.submit_batch(refused_first, jobs); }, Errc::invalid_argument);
	EXPECT_TRUE(contains(msg, "(job 0 of the batch)")) << msg;
	EXPECT_TRUE(jobs.empty());

	// What the library refuses before the driver sees anything.
	const rbln::JobSpec waits_for_itself[] = {{Engine::task_dma, 0, good, "x", {}, first}};
	msg = error_of([&] { dev.submit_batch(waits_for_itself); }, Errc::invalid_argument);
	EXPECT_EQ(msg, "rbln:1: job 0 of the batch waits for job 0: a job waits only for jobs before "
		       "it in the batch");
	std::vector<rbln::JobSpec> too_many(RBLN_SUBMIT_MAX_BATCH + 1,
					    rbln::JobSpec{Engine::task_dma, 0, good});
	msg = error_of([&] { dev.submit_batch(too_many); }, Errc::invalid_argument);
	EXPECT_EQ(msg, "rbln:1: a batch holds at most 64 jobs, not 65; submit the rest in another");
	too_many.pop_back();
	auto all = dev.submit_batch(too_many);
	ASSERT_EQ(all.size(), size_t{RBLN_SUBMIT_MAX_BATCH});
	for (const auto &job : all)
		job.wait(10s);
	EXPECT_TRUE(dev.submit_batch({}).empty());
}

// Order comes from the fences: with the first stage's engine hung the rest
// waits; the engine's timeout fails it, and the rest with its error.
TEST(DevmgrJobs, HungFirstJobHoldsTheChainThenAllFailWithItsError)
{
	auto dev = rbln::Device::open(1);
	Chain chain(dev, k4K);
	chain.fill(3);
	{
		rbln::test::JobTimeout timeout("1500");
		ASSERT_EQ(timeout.error(), 0);
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
	CChain c;
	ASSERT_NO_FATAL_FAILURE(c.open(0x6e));
	rbln_device *dev = c.dev;
	const uint64_t size = c.size;
	unsigned char *out = c.out;

	rbln_copy produce = c.produce, move = c.move, deliver = c.deliver;
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
	EXPECT_EQ(out[size - 1], 0x6e);

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
}

TEST(DevmgrJobs, CApiSubmitsABatch)
{
	CChain c;
	ASSERT_NO_FATAL_FAILURE(c.open(0x3c));
	rbln_device *dev = c.dev;
	const uint64_t size = c.size;
	unsigned char *out = c.out;

	rbln_copy produce = c.produce, move = c.move, deliver = c.deliver;
	const uint32_t first = 0, second = 1;
	rbln_job_desc descs[3] = {
		{sizeof(rbln_job_desc), RBLN_ENGINE_NEURAL_DMA, 1, &produce, 1, "c-produce", nullptr, 0,
		 nullptr, 0},
		{sizeof(rbln_job_desc), RBLN_ENGINE_TASK_DMA, 0, &move, 1, "c-gather", nullptr, 0, &first, 1},
		{sizeof(rbln_job_desc), RBLN_ENGINE_EXTERNAL_HDMA, 0, &deliver, 1, nullptr, nullptr, 0,
		 &second, 1},
	};
	rbln_job *jobs[3] = {};
	size_t submitted = 0;
	ASSERT_EQ(rbln_submit_batch(dev, descs, 3, jobs, &submitted), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(submitted, 3u);
	EXPECT_EQ(rbln_job_wait(jobs[2], 10'000'000'000), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(out[size - 1], 0x3c);
	EXPECT_EQ(rbln_job_seqno(jobs[2]), rbln_job_seqno(jobs[0]) + 2);
	for (rbln_job *&job : jobs) {
		rbln_job_free(job);
		job = nullptr;
	}

	// Job 1 refused by the driver: job 0 is handed back, the rest are NULL.
	rbln_copy bad{sizeof(rbln_copy), c.mid, c.gather, 1, 0, size};
	descs[1].copies = &bad;
	EXPECT_EQ(rbln_submit_batch(dev, descs, 3, jobs, &submitted), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_TRUE(contains(rbln_last_error(), "(job 1 of the batch) refused")) << rbln_last_error();
	EXPECT_EQ(submitted, 1u);
	ASSERT_NE(jobs[0], nullptr);
	EXPECT_EQ(jobs[1], nullptr);
	EXPECT_EQ(jobs[2], nullptr);
	EXPECT_EQ(rbln_job_wait(jobs[0], 10'000'000'000), RBLN_OK) << rbln_last_error();
	rbln_job_free(jobs[0]);
	jobs[0] = nullptr;

	// A caller's struct of another size in one element.
	descs[1].copies = &move;
	descs[2].struct_size = sizeof(rbln_job_desc) - 8;
	EXPECT_EQ(rbln_submit_batch(dev, descs, 3, jobs, &submitted), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_EQ(std::string(rbln_last_error()),
		  "rbln_submit_batch: descs[2].struct_size is " + std::to_string(sizeof(rbln_job_desc) - 8) +
			  ", descs[0]'s is " + std::to_string(sizeof(rbln_job_desc)));
	EXPECT_EQ(submitted, 0u);
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

// A transfer over the driver's job limit (16 MiB on the simulator) goes in
// as several jobs, a copy cut where a job fills up: the bytes of the cut copy
// arrive, and an earlier part's failure is what waiting for the transfer
// throws, once.
TEST(DevmgrJobs, TransferOverTheJobLimitGoesAsSeveralJobs)
{
	constexpr uint64_t kMiB = 1 << 20, kPiece = 4 * kMiB;
	auto dev = rbln::Device::open(1);
	const uint64_t limit = dev.param(DRM_RBLN_PARAM_JOB_MAX_BYTES);
	ASSERT_EQ(limit % kPiece, 0u) << limit;
	auto src = dev.allocate_host(2 * kPiece), out = dev.allocate_host(kPiece);
	auto scratch = dev.allocate(kPiece), dst = dev.allocate(kPiece);
	std::mt19937 rng(25);
	std::ranges::generate(src.map(), [&] { return std::byte(rng()); });
	// 1 MiB, then copies up to the limit, then the second half of src into
	// dst: the limit falls 3 MiB into that last copy.
	std::vector<rbln::Copy> copies{{src, scratch, 0, 0, kMiB}};
	for (uint64_t n = kMiB; n + kPiece <= limit; n += kPiece)
		copies.push_back({src, scratch, 0, 0, kPiece});
	copies.push_back({src, dst, kPiece, 0, kPiece});
	auto before = dev.submit(Engine::external_hdma, 0, {{src, scratch, 0, 0, k4K}});
	auto job = dev.submit(Engine::external_hdma, 0, copies, "split");
	EXPECT_EQ(job.seqno(), before.seqno() + 2) << "two jobs";
	job.wait(30s);
	dev.submit(Engine::external_hdma, 0, {{dst, out, 0, 0, kPiece}}).wait(10s);
	EXPECT_EQ(std::memcmp(out.map().data(), src.map().data() + kPiece, kPiece), 0)
		<< "both parts of the cut copy arrived where they belong";

	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "1"), 0);
	job = dev.submit(Engine::external_hdma, 0, copies, "split, first part fails");
	auto msg = error_of([&] { job.wait(30s); }, Errc::job_failed);
	EXPECT_TRUE(contains(msg, "the job failed on the device")) << msg;
	EXPECT_NO_THROW(job.wait(10s)) << "reported once";

	// A batch does not split: its jobs are named by their place.
	rbln::JobSpec spec{Engine::external_hdma, 0, copies};
	msg = error_of([&] { dev.submit_batch(std::span(&spec, 1)); }, Errc::invalid_argument);
	EXPECT_TRUE(contains(msg, "job 0 of the batch copies more than the 16 MiB")) << msg;
}

// One Device from several threads: jobs, their dependencies and the syncobj
// pool they share.
TEST(DevmgrJobs, ThreadsShareADeviceAndItsSyncobjs)
{
	auto dev = rbln::Device::open(1);
	const uint64_t baseline = dev.memory().used;
	// Once as submitted, once with every job scheduled (the direct path off).
	for (bool scheduled : {false, true}) {
		constexpr uint64_t kSize = 128 << 10;
		ScheduledJobs only(1, scheduled);
		ASSERT_EQ(only.error(), 0) << "no_direct";
		std::vector<std::thread> threads;
		std::atomic<int> failures{0};
		for (uint32_t chiplet = 0; chiplet < 4; chiplet++)
			threads.emplace_back([&, chiplet] {
				auto a = dev.allocate(kSize, Placement::on_chiplet(chiplet));
				auto b = dev.allocate(kSize, Placement::on_chiplet(chiplet));
				auto c = dev.allocate(kSize, Placement::on_chiplet(chiplet));
				try {
					for (int i = 0; i < 25; i++) {
						std::ranges::fill(a.map(), std::byte(i + chiplet));
						const uint64_t size = i % 2 ? kSize : k4K;
						const std::vector<rbln::Copy> produce{{a, b, 0, 0, size}};
						const std::vector<rbln::Copy> move{{b, c, 0, 0, size}};
						auto first = dev.submit(Engine::neural_dma, chiplet, produce);
						dev.submit(Engine::device_hdma, chiplet, move, {}, {first})
							.wait(10s);
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
	constexpr uint64_t kSize = 5 << 20;
	auto a = dev.allocate(kSize), b = dev.allocate(kSize);
	// Scheduled, and long enough not to end at once: the 64 allowed are real in_syncs.
	ScheduledJobs only(1);
	ASSERT_EQ(only.error(), 0) << "no_direct";
	auto job = dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, kSize}});
	std::vector<rbln::Job> after(RBLN_SUBMIT_MAX_AFTER + 1, job);
	auto msg = error_of([&] { dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "x", after); },
			    Errc::invalid_argument);
	EXPECT_EQ(msg, "rbln:1: a job may wait for at most 64 jobs, not 65; wait for some of them first");
	after.pop_back();
	dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}}, "x", after).wait(10s);
}

// A full job table (DRM_RBLN_MAX_INFLIGHT jobs queued behind a hung engine):
// the next submit is Errc::busy and says what to do, whether the driver
// answers ENOSPC (interface 13) or EAGAIN (before).
TEST(DevmgrJobs, FullJobTableIsBusyAndSaysWhy)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(k4K, Placement::on_chiplet(2));
	auto b = dev.allocate(k4K, Placement::on_chiplet(2));
	rbln::test::JobTimeout timeout("20000");
	ASSERT_EQ(timeout.error(), 0);
	ASSERT_EQ(debugfs_write(1, "hang", "2 neural_dma"), 0);
	std::vector<rbln::Job> jobs;
	for (int i = 0; i < DRM_RBLN_MAX_INFLIGHT; i++)
		jobs.push_back(dev.submit(Engine::neural_dma, 2, {{a, b, 0, 0, k4K}}));
	auto msg = error_of([&] { dev.submit(Engine::neural_dma, 2, {{a, b, 0, 0, k4K}}); },
			    Errc::busy);
	EXPECT_TRUE(contains(msg, "no room for more jobs in flight (at most 256")) << msg;
	ASSERT_EQ(debugfs_write(1, "hang", "2 neural_dma 0"), 0);
	for (const auto &job : jobs)
		EXPECT_NO_THROW(job.wait(10s));
}
