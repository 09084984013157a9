// Jobs joined by DRM syncobjs against the real module: the Rebel100 chain
// (Neural DMA on chiplets 1-3, Task DMA to chiplet 0, External HDMA to the
// host) with no WAIT between the stages; a hung first stage holds the rest
// until the engine's timeout, then they fail with its error; a job waits for
// a job of another device; a job's sync_file wakes poll(); busy buffers and
// killed processes leave no memory behind.
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr uint64_t k4K = 4096;
constexpr uint64_t kStage = 256 * 1024;

uint64_t param(int fd, uint32_t p)
{
	uint64_t v = 0;
	EXPECT_EQ(get_param(fd, p, &v), 0);
	return v;
}

// Waits for @handle's fence; returns 0 or the errno (ETIME if not signalled in time).
int syncobj_wait(int fd, uint32_t handle, int64_t timeout_ms)
{
	drm_syncobj_wait w{};
	w.handles = reinterpret_cast<uintptr_t>(&handle);
	w.count_handles = 1;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	w.timeout_nsec = now.tv_sec * 1'000'000'000ll + now.tv_nsec + timeout_ms * 1'000'000ll;
	return ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w) ? errno : 0;
}

// One job with syncobjs; returns 0 or the errno, its number in @seqno.
int submit_sync(int fd, uint32_t engine, uint32_t chiplet, std::vector<drm_rbln_copy> copies,
		const std::vector<uint32_t> &after, uint32_t out, uint64_t *seqno = nullptr)
{
	std::vector<drm_rbln_sync> in;
	for (uint32_t h : after)
		in.push_back({h, 0, 0});
	drm_rbln_submit s{};
	s.engine = engine;
	s.chiplet = chiplet;
	s.copies = reinterpret_cast<uintptr_t>(copies.data());
	s.copy_count = static_cast<uint32_t>(copies.size());
	s.copy_size = sizeof(drm_rbln_copy);
	s.in_syncs = reinterpret_cast<uintptr_t>(in.data());
	s.in_sync_count = static_cast<uint32_t>(in.size());
	s.out_sync.handle = out;
	if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s))
		return errno;
	if (seqno)
		*seqno = s.seqno;
	return 0;
}

struct Buffer {
	uint32_t handle = 0;
	uint64_t size = 0;
	uint8_t *map = nullptr;
};

Buffer make_buffer(int fd, uint64_t size, uint32_t flags, uint32_t chiplet)
{
	Buffer b;
	b.size = size;
	EXPECT_EQ(bo_create(fd, size, flags, chiplet, &b.handle), 0);
	drm_rbln_bo_info info{};
	EXPECT_EQ(bo_info(fd, b.handle, info), 0);
	void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset);
	EXPECT_NE(p, MAP_FAILED);
	b.map = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
	return b;
}

void free_buffer(int fd, Buffer &b)
{
	if (b.map)
		munmap(b.map, b.size);
	EXPECT_EQ(gem_close(fd, b.handle), 0);
	b = {};
}

// The Rebel100 (NPU 1): buffers of the chain and its syncobjs.
class Sync : public ::testing::Test {
protected:
	void SetUp() override
	{
		fd_ = open_node(sim_device(1)->node);
		ASSERT_TRUE(fd_);
		used_ = param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED);
		ASSERT_TRUE(param(fd_.get(), DRM_RBLN_PARAM_CAPABILITIES) & DRM_RBLN_CAP_SYNCOBJ);
	}
	void TearDown() override
	{
		EXPECT_EQ(param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED), used_) << "memory leaked";
	}
	Fd fd_;
	uint64_t used_ = 0;
};

// The Rebel100 pattern: chiplets 1-3 each produce a stage (Neural DMA), Task
// DMA gathers them on chiplet 0, External HDMA takes them to the host.  No
// job runs inside SUBMIT (the simulator's no_direct, NPU 1), so every job
// goes through its engine's scheduler and only the fences keep them in order.
struct Chain {
	int fd;
	Buffer src[4], mid[4], gather, host;
	uint32_t produced[4] = {}, gathered = 0, delivered = 0;
	uint64_t seq_produce[4] = {}, seq_gather = 0, seq_deliver = 0;

	explicit Chain(int f) : fd(f)
	{
		for (uint32_t c = 1; c <= 3; c++) {
			src[c] = make_buffer(fd, kStage, 0, c);
			mid[c] = make_buffer(fd, kStage, 0, c);
			produced[c] = syncobj_create(fd);
		}
		gather = make_buffer(fd, 4 * kStage, 0, 0);
		host = make_buffer(fd, 4 * kStage, DRM_RBLN_BO_HOST, 0);
		gathered = syncobj_create(fd);
		delivered = syncobj_create(fd);
	}
	~Chain()
	{
		for (uint32_t c = 1; c <= 3; c++) {
			free_buffer(fd, src[c]);
			free_buffer(fd, mid[c]);
			syncobj_destroy(fd, produced[c]);
		}
		free_buffer(fd, gather);
		free_buffer(fd, host);
		syncobj_destroy(fd, gathered);
		syncobj_destroy(fd, delivered);
	}
	void fill(uint64_t seed)
	{
		std::mt19937_64 rng(seed);
		for (uint32_t c = 1; c <= 3; c++)
			for (uint64_t i = 0; i < kStage; i++)
				src[c].map[i] = static_cast<uint8_t>(rng());
		std::memset(host.map, 0, 4 * kStage);
	}
	// Submits the three stages; no stage waits in user space.
	void submit()
	{
		ScheduledJobs scheduled(1);
		ASSERT_EQ(scheduled.error(), 0) << "no_direct";
		for (uint32_t c = 1; c <= 3; c++)
			ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_NEURAL_DMA, c,
					      {{src[c].handle, mid[c].handle, 0, 0, kStage}},
					      {}, produced[c], &seq_produce[c]), 0);
		std::vector<drm_rbln_copy> g;
		for (uint32_t c = 1; c <= 3; c++)
			g.push_back({mid[c].handle, gather.handle, 0, c * kStage, kStage});
		ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, g,
				      {produced[1], produced[2], produced[3]}, gathered, &seq_gather), 0);
		ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0,
				      {{gather.handle, host.handle, kStage, kStage, 3 * kStage}},
				      {gathered}, delivered, &seq_deliver), 0);
	}
	bool intact() const
	{
		for (uint32_t c = 1; c <= 3; c++)
			if (std::memcmp(host.map + c * kStage, src[c].map, kStage))
				return false;
		return true;
	}
};

} // namespace

// Each round holds one producer's engine until the later stages are in: the
// gather must wait for it (a driver ignoring in_syncs runs it at once).
TEST_F(Sync, Rebel100ChainJoinedBySyncobjsKeepsTheBytes)
{
	Chain chain(fd_.get());
	for (int round = 0; round < 20; round++) {
		const std::string held = std::to_string(round % 3 + 1) + " neural_dma";
		chain.fill(round);
		ASSERT_EQ(debugfs_write(1, "hang", held), 0);
		chain.submit();
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		EXPECT_EQ(syncobj_wait(fd_.get(), chain.gathered, 0), ETIME)
			<< "round " << round << ": the gather did not wait for chiplet " << held;
		ASSERT_EQ(debugfs_write(1, "hang", held + " 0"), 0);
		ASSERT_EQ(syncobj_wait(fd_.get(), chain.delivered, 10'000), 0);
		ASSERT_TRUE(chain.intact()) << "round " << round;
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_deliver), 0);
	}
}

// Order is enforced by the fences: with the first stage's engine hung, the
// rest waits; the engine's timeout fails it and the rest with -ETIMEDOUT.
TEST_F(Sync, HungFirstStageHoldsTheChainUntilItsTimeoutThenAllFail)
{
	Chain chain(fd_.get());
	chain.fill(7);
	{
		JobTimeout timeout("1500");
		ASSERT_EQ(timeout.error(), 0);
		ASSERT_EQ(debugfs_write(1, "hang", "2 neural_dma"), 0);
		chain.submit();
		std::this_thread::sleep_for(std::chrono::milliseconds(300));
		EXPECT_EQ(syncobj_wait(fd_.get(), chain.gathered, 0), ETIME) << "gather waits";
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_deliver, 0), ETIME) << "delivery waits";
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_deliver), -ETIMEDOUT);
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_gather), -ETIMEDOUT);
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_produce[2]), -ETIMEDOUT);
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_produce[1]), 0);
		EXPECT_EQ(wait_job(fd_.get(), chain.seq_produce[3]), 0);
		for (uint64_t i = 0; i < 4 * kStage; i++)
			ASSERT_EQ(chain.host.map[i], 0) << "nothing delivered, at " << i;
	}
	// The engine was reset and works again; so does the chain.
	chain.submit();
	ASSERT_EQ(syncobj_wait(fd_.get(), chain.delivered, 10'000), 0);
	EXPECT_TRUE(chain.intact());
	EXPECT_EQ(wait_job(fd_.get(), chain.seq_deliver), 0);
}

// A job on the ATOM waits for a job on the Rebel100 through a syncobj fd.
TEST_F(Sync, JobOnOneDeviceWaitsForAJobOnAnother)
{
	Fd atom = open_node(sim_device(0)->node);
	ASSERT_TRUE(atom);
	Buffer a = make_buffer(fd_.get(), k4K, 0, 0), b = make_buffer(fd_.get(), k4K, 0, 0);
	Buffer c = make_buffer(atom.get(), k4K, 0, 0), d = make_buffer(atom.get(), k4K, 0, 0);
	std::memset(c.map, 0x3c, k4K);
	uint32_t theirs = syncobj_create(fd_.get());

	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
	ASSERT_EQ(submit_sync(fd_.get(), DRM_RBLN_ENGINE_TASK_DMA, 0, {{a.handle, b.handle, 0, 0, k4K}},
			      {}, theirs), 0);
	drm_syncobj_handle h{};
	h.handle = theirs;
	ASSERT_EQ(ioctl(fd_.get(), DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h), 0) << strerror(errno);
	Fd shared(h.fd);
	drm_syncobj_handle imp{};
	imp.fd = shared.get();
	ASSERT_EQ(ioctl(atom.get(), DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp), 0) << strerror(errno);

	uint64_t seqno = 0;
	ASSERT_EQ(submit_sync(atom.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0,
			      {{c.handle, d.handle, 0, 0, k4K}}, {imp.handle}, 0, &seqno), 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	EXPECT_EQ(wait_job(atom.get(), seqno, 0), ETIME) << "waits for the other device";
	EXPECT_NE(d.map[0], 0x3c);
	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma 0"), 0);
	EXPECT_EQ(wait_job(atom.get(), seqno), 0);
	EXPECT_EQ(d.map[k4K - 1], 0x3c);

	syncobj_destroy(atom.get(), imp.handle);
	syncobj_destroy(fd_.get(), theirs);
	free_buffer(atom.get(), c);
	free_buffer(atom.get(), d);
	free_buffer(fd_.get(), a);
	free_buffer(fd_.get(), b);
}

// A job's fence as a sync_file: poll() says not ready, then wakes when it ends.
TEST_F(Sync, SyncFileOfAJobWakesPoll)
{
	Buffer a = make_buffer(fd_.get(), k4K, 0, 1), b = make_buffer(fd_.get(), k4K, 0, 1);
	uint32_t out = syncobj_create(fd_.get());
	ASSERT_EQ(debugfs_write(1, "hang", "1 device_hdma"), 0);
	uint64_t seqno = 0;
	ASSERT_EQ(submit_sync(fd_.get(), DRM_RBLN_ENGINE_DEVICE_HDMA, 1,
			      {{a.handle, b.handle, 0, 0, k4K}}, {}, out, &seqno), 0);
	drm_syncobj_handle h{};
	h.handle = out;
	h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	ASSERT_EQ(ioctl(fd_.get(), DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h), 0) << strerror(errno);
	Fd sync_file(h.fd);
	pollfd p{sync_file.get(), POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 100), 0) << "the job is held";
	std::thread unhang([] {
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
		EXPECT_EQ(debugfs_write(1, "hang", "1 device_hdma 0"), 0);
	});
	p.revents = 0;
	EXPECT_EQ(poll(&p, 1, 10'000), 1);
	EXPECT_TRUE(p.revents & POLLIN);
	unhang.join();
	EXPECT_EQ(wait_job(fd_.get(), seqno), 0);
	syncobj_destroy(fd_.get(), out);
	free_buffer(fd_.get(), a);
	free_buffer(fd_.get(), b);
}

// One file's job waiting for its input does not hold up another file's jobs on
// the same engine: each file submits through a scheduler entity of its own.
// (With one entity per engine, the other file's job waited behind it.)
TEST_F(Sync, AJobWaitingForItsInputHoldsUpOnlyItsOwnFile)
{
	int fd = fd_.get();
	JobTimeout timeout("20000");
	Buffer a = make_buffer(fd, k4K, 0, 1), b = make_buffer(fd, k4K, 0, 1);
	Buffer c = make_buffer(fd, k4K, 0, 0), d = make_buffer(fd, k4K, 0, 0);
	ASSERT_EQ(debugfs_write(1, "hang", "1 neural_dma"), 0);
	const uint32_t input = syncobj_create(fd);
	uint64_t first = 0, waiting = 0, mine_after = 0;
	ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 1, {{a.handle, b.handle, 0, 0, k4K}},
			      {}, input, &first), 0);
	ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {{c.handle, d.handle, 0, 0, k4K}},
			      {input}, 0, &waiting), 0);
	ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {{d.handle, c.handle, 0, 0, k4K}},
			      {}, 0, &mine_after), 0);

	Fd other = open_node(sim_device(1)->node);
	Buffer e = make_buffer(other.get(), k4K, 0, 0), f = make_buffer(other.get(), k4K, 0, 0);
	uint64_t theirs = 0;
	ASSERT_EQ(submit_sync(other.get(), DRM_RBLN_ENGINE_TASK_DMA, 0,
			      {{e.handle, f.handle, 0, 0, k4K}}, {}, 0, &theirs), 0);
	EXPECT_EQ(wait_job(other.get(), theirs, 5'000'000'000), 0)
		<< "another file's job waited behind this file's blocked one";
	EXPECT_EQ(wait_job(fd, waiting, 0), ETIME) << "still waiting for its input";
	EXPECT_EQ(wait_job(fd, mine_after, 0), ETIME) << "a file's own jobs keep their order";

	ASSERT_EQ(debugfs_write(1, "hang", "1 neural_dma 0"), 0);
	EXPECT_EQ(wait_job(fd, first), 0);
	EXPECT_EQ(wait_job(fd, waiting), 0);
	EXPECT_EQ(wait_job(fd, mine_after), 0);
	syncobj_destroy(fd, input);
	free_buffer(other.get(), e);
	free_buffer(other.get(), f);
	for (Buffer *buf : {&a, &b, &c, &d})
		free_buffer(fd, *buf);
}

// GEM_CLOSE of buffers a running job uses: they go when the job ends.
TEST_F(Sync, ClosingBusyBuffersFreesThemWhenTheJobEnds)
{
	Buffer a = make_buffer(fd_.get(), 1 << 20, 0, 3), b = make_buffer(fd_.get(), 1 << 20, 0, 3);
	ASSERT_EQ(debugfs_write(1, "hang", "3 neural_dma"), 0);
	uint64_t seqno = 0;
	ASSERT_EQ(submit_sync(fd_.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 3,
			      {{a.handle, b.handle, 0, 0, 1 << 20}}, {}, 0, &seqno), 0);
	free_buffer(fd_.get(), a);
	free_buffer(fd_.get(), b);
	EXPECT_EQ(param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED), used_ + (2 << 20)) << "held by the job";
	ASSERT_EQ(debugfs_write(1, "hang", "3 neural_dma 0"), 0);
	EXPECT_EQ(wait_job(fd_.get(), seqno), 0);
}

// SIGKILL with chains of dependent jobs in flight on several engines: no leak, no splat.
TEST_F(Sync, KilledProcessWithChainsInFlightLeavesNothing)
{
	for (int round = 0; round < 3; round++) {
		pid_t pid = fork_until_ready([](const std::function<void()> &ready) {
			Fd fd = open_node(sim_device(1)->node);
			Buffer a = make_buffer(fd.get(), 4 << 20, 0, 1), b = make_buffer(fd.get(), 4 << 20, 0, 1);
			Buffer c = make_buffer(fd.get(), 4 << 20, 0, 0);
			uint32_t s1 = syncobj_create(fd.get()), s2 = syncobj_create(fd.get());
			for (int i = 0;; i++) {
				int err = submit_sync(fd.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 1,
						      {{a.handle, b.handle, 0, 0, 4 << 20}}, {s2}, s1);
				if (err == EINVAL && i == 0)	/* s2 has no fence yet */
					err = submit_sync(fd.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 1,
							  {{a.handle, b.handle, 0, 0, 4 << 20}}, {}, s1);
				if (!err)
					err = submit_sync(fd.get(), DRM_RBLN_ENGINE_TASK_DMA, 0,
							  {{b.handle, c.handle, 0, 0, 4 << 20}}, {s1}, s2);
				if (err && err != ENOSPC)
					_exit(1);
				if (i == 6)
					ready();
			}
		});
		ASSERT_GT(pid, 0) << "child failed to submit";
		kill_and_reap(pid);
		// Its running jobs end in a work item, after the reap.
		EXPECT_TRUE(memory_used_back_within(fd_.get(), used_, 5000)) << "round " << round;
	}
}

// Binaries built before syncobjs pass the 48-byte struct; it still works.
TEST_F(Sync, OldSubmitStructStillWorks)
{
	struct OldSubmit {
		uint32_t engine, chiplet;
		uint64_t copies;
		uint32_t copy_count, copy_size;
		uint64_t label;
		uint32_t flags, reserved;
		uint64_t seqno;
	};
	static_assert(sizeof(OldSubmit) == 48);
	Buffer a = make_buffer(fd_.get(), k4K, 0, 0), b = make_buffer(fd_.get(), k4K, 0, 0);
	std::memset(a.map, 0x77, k4K);
	drm_rbln_copy c{a.handle, b.handle, 0, 0, k4K};
	OldSubmit s{};
	s.engine = DRM_RBLN_ENGINE_TASK_DMA;
	s.copies = reinterpret_cast<uintptr_t>(&c);
	s.copy_count = 1;
	s.copy_size = sizeof(c);
	ASSERT_EQ(ioctl(fd_.get(), DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_SUBMIT, OldSubmit), &s), 0)
		<< strerror(errno);
	EXPECT_EQ(wait_job(fd_.get(), s.seqno), 0);
	EXPECT_EQ(b.map[100], 0x77);
	free_buffer(fd_.get(), a);
	free_buffer(fd_.get(), b);
}

TEST_F(Sync, BadSyncFieldsAreRejected)
{
	int fd = fd_.get();
	Buffer a = make_buffer(fd, k4K, 0, 0), b = make_buffer(fd, k4K, 0, 0);
	uint32_t empty = syncobj_create(fd);
	drm_rbln_copy c{a.handle, b.handle, 0, 0, k4K};
	auto raw = [&](auto edit) {
		drm_rbln_sync in{};
		drm_rbln_submit s{};
		s.engine = DRM_RBLN_ENGINE_TASK_DMA;
		s.copies = reinterpret_cast<uintptr_t>(&c);
		s.copy_count = 1;
		s.copy_size = sizeof(c);
		edit(s, in);
		return ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s) ? errno : 0;
	};
	const uint64_t before = param(fd, DRM_RBLN_PARAM_MEMORY_USED);
	EXPECT_EQ(raw([](auto &s, auto &) { s.reserved2 = 1; }), EINVAL) << "reserved2";
	EXPECT_EQ(raw([](auto &s, auto &) { s.in_sync_count = DRM_RBLN_MAX_IN_SYNCS + 1; }), EINVAL);
	EXPECT_EQ(raw([](auto &s, auto &) { s.in_sync_count = 1; s.in_syncs = 8; }), EFAULT);
	EXPECT_EQ(raw([&](auto &s, auto &in) {
		in.handle = empty;
		s.in_syncs = reinterpret_cast<uintptr_t>(&in);
		s.in_sync_count = 1;
	}), EINVAL) << "a syncobj without a fence";
	EXPECT_EQ(raw([&](auto &s, auto &in) {
		in.handle = 9999;
		s.in_syncs = reinterpret_cast<uintptr_t>(&in);
		s.in_sync_count = 1;
	}), EINVAL) << "no such syncobj";
	EXPECT_EQ(raw([](auto &s, auto &) { s.out_sync.handle = 9999; }), EINVAL) << "no such out syncobj";
	EXPECT_EQ(raw([&](auto &s, auto &) { s.out_sync.handle = empty; s.out_sync.flags = 1; }), EINVAL);
	EXPECT_EQ(raw([](auto &s, auto &) { s.out_sync.point = 5; }), EINVAL) << "a point without a syncobj";
	EXPECT_EQ(syncobj_wait(fd, empty, 0), EINVAL) << "bad submits signal nothing";
	EXPECT_EQ(param(fd, DRM_RBLN_PARAM_MEMORY_USED), before);
	// A failed job's error reaches the jobs that wait for it.
	uint32_t failed = syncobj_create(fd);
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "1"), 0);
	uint64_t first = 0, second = 0;
	ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {c}, {}, failed, &first), 0);
	ASSERT_EQ(submit_sync(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 0, {c}, {failed}, 0, &second), 0);
	EXPECT_EQ(wait_job(fd, first), -EIO);
	EXPECT_EQ(wait_job(fd, second), -EIO);
	syncobj_destroy(fd, failed);
	syncobj_destroy(fd, empty);
	free_buffer(fd, a);
	free_buffer(fd, b);
}
