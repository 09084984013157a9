// Revocation (RECLAIM, RESET with FORCE) racing what the revoked client is
// doing, and what it leaves behind, against the real module.  Each test here
// guards a bug a review found: a copy into freed memory, a double revocation,
// handles and host buffers left behind, a page left mapped, memory charged to
// nobody.
#include <atomic>
#include <chrono>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

uint64_t memory_used(int fd)
{
	uint64_t v = 0;
	EXPECT_EQ(get_param(fd, DRM_RBLN_PARAM_MEMORY_USED, &v), 0);
	return v;
}

std::optional<drm_rbln_client> client_of(int fd, pid_t pid)
{
	for (const auto &c : list_clients(fd))
		if (c.creator_pid == uint32_t(pid))
			return c;
	return std::nullopt;
}

// A T in memory shared with forked children.
template <typename T> auto shared()
{
	auto unmap = [](T *t) { munmap(t, sizeof(T)); };
	void *p = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return std::unique_ptr<T, decltype(unmap)>(p == MAP_FAILED ? nullptr : new (p) T{}, unmap);
}

sigjmp_buf probe_jump;

void on_sigbus(int)
{
	siglongjmp(probe_jump, 1);
}

// Reads one byte; false if that raised SIGBUS.
bool touch(const volatile uint8_t *p)
{
	struct sigaction sa{}, old{};
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, &old);
	volatile bool readable = false;
	if (sigsetjmp(probe_jump, 1) == 0) {
		(void)*p;
		readable = true;
	}
	sigaction(SIGBUS, &old, nullptr);
	return readable;
}

// How many pages of [p, p + len) can still be read.
size_t readable_pages(const volatile uint8_t *p, size_t len)
{
	size_t readable = 0;
	for (size_t off = 0; off < len; off += 4096)
		readable += touch(p + off);
	return readable;
}

} // namespace

// Small jobs run inside SUBMIT itself.  A forced reclaim must wait for them
// before it frees their buffers (it once freed one between placement and the
// copy: a kernel oops in memcpy).
TEST(Revoke, ForcedReclaimWaitsForJobsRunningInsideSubmit)
{
	Fd admin = open_node(sim_device(0)->node);
	const uint64_t baseline = memory_used(admin.get());
	std::vector<std::unique_ptr<Child>> submitters;
	for (int k = 0; k < 3; k++) {
		pid_t pid = ::fork();
		if (pid == 0) {
			for (;;) {	// reopen whenever revoked
				Fd fd = open_node(sim_device(0)->node);
				uint32_t src = 0, dst = 0;
				if (bo_create(fd.get(), 64 * 1024, 0, 0, &src) ||
				    bo_create(fd.get(), 64 * 1024, 0, 0, &dst))
					continue;
				std::vector<drm_rbln_copy> copies;
				for (uint64_t i = 0; i < 16; i++)
					copies.push_back({src, dst, i * 4096, i * 4096, 4096});
				uint64_t seqno;
				while (submit(fd.get(), DRM_RBLN_ENGINE_TASK_DMA, 0, copies, &seqno) == 0 &&
				       wait_job(fd.get(), seqno) == 0) {
				}
			}
		}
		ASSERT_GT(pid, 0);
		submitters.push_back(std::make_unique<Child>(pid));
	}

	int reclaimed = 0;
	for (auto end = std::chrono::steady_clock::now() + 3s; std::chrono::steady_clock::now() < end;)
		for (const auto &c : list_clients(admin.get()))
			if (!(c.flags & (DRM_RBLN_CLIENT_SELF | DRM_RBLN_CLIENT_REVOKED)) &&
			    reclaim(admin.get(), c.client_id, DRM_RBLN_RECLAIM_FORCE) == 0)
				reclaimed++;
	submitters.clear();
	EXPECT_GE(reclaimed, 10) << "the race was hardly exercised";
	// A killed submitter's jobs (scheduled when another held the engine) end
	// in a work item after its reap: their buffers go back within a second.
	EXPECT_TRUE(memory_used_back_within(admin.get(), baseline, 1500))
		<< "still in use: " << memory_used(admin.get()) << " bytes, baseline " << baseline;
}

// Two reclaims of one client at once: one revokes it, the other is told it
// already was.
TEST(Revoke, ConcurrentReclaimsOfOneClientRevokeItOnce)
{
	Fd admin = open_node(sim_device(0)->node);
	for (int round = 0; round < 20; round++) {
		Child keeper(make_stale_client(0, kMiB));
		ASSERT_GT(keeper.pid(), 0);
		std::optional<drm_rbln_client> victim;
		for (const auto &c : list_clients(admin.get()))
			if (c.flags & DRM_RBLN_CLIENT_STALE && !(c.flags & DRM_RBLN_CLIENT_REVOKED))
				victim = c;
		ASSERT_TRUE(victim);

		std::atomic<int> go{0};
		int err[2];
		uint64_t freed[2] = {};
		auto racer = [&](int i) {
			go++;
			while (go < 2) {
			}
			err[i] = reclaim(admin.get(), victim->client_id, 0, &freed[i]);
		};
		std::thread a(racer, 0), b(racer, 1);
		a.join();
		b.join();
		std::multiset<int> errs{err[0], err[1]};
		EXPECT_EQ(errs, (std::multiset<int>{0, EALREADY})) << "round " << round;
		EXPECT_EQ(freed[0] + freed[1], kMiB) << "round " << round;
	}
}

// A reclaimed file keeps no handles: GEM_CLOSE (a DRM core ioctl, not
// refused for revoked files) finds none, and the client holds nothing.
TEST(Revoke, ReclaimDeletesTheClientsHandles)
{
	Fd victim = open_node(sim_device(0)->node), admin = open_node(sim_device(0)->node);
	uint32_t dev = 0, host = 0;
	ASSERT_EQ(bo_create(victim.get(), kMiB, DRM_RBLN_BO_EAGER, 0, &dev), 0);
	ASSERT_EQ(bo_create(victim.get(), kMiB, DRM_RBLN_BO_HOST, 0, &host), 0);
	auto before = client_of(admin.get(), ::getpid());
	ASSERT_TRUE(before);
	uint64_t victim_id = 0;
	for (const auto &c : list_clients(admin.get()))
		if (c.creator_pid == uint32_t(::getpid()) && !(c.flags & DRM_RBLN_CLIENT_SELF) &&
		    c.device_memory == kMiB)
			victim_id = c.client_id;
	ASSERT_NE(victim_id, 0u);

	uint64_t freed = 0;
	ASSERT_EQ(reclaim(admin.get(), victim_id, DRM_RBLN_RECLAIM_FORCE, &freed), 0);
	EXPECT_EQ(freed, kMiB);
	EXPECT_EQ(gem_close(victim.get(), dev), EINVAL);
	EXPECT_EQ(gem_close(victim.get(), host), EINVAL);
	for (const auto &c : list_clients(admin.get())) {
		if (c.client_id == victim_id) {
			EXPECT_EQ(c.device_memory, 0u);
		}
	}
	EXPECT_EQ(reclaim(admin.get(), victim_id, DRM_RBLN_RECLAIM_FORCE), EALREADY);
}

// A buffer once exported stays whole through a reclaim of its creator:
// importers and mappings of the dma-buf reach it outside the creator's file.
TEST(Revoke, ReclaimLeavesExportedBuffersAlone)
{
	Fd victim = open_node(sim_device(0)->node), admin = open_node(sim_device(0)->node);
	const uint64_t baseline = memory_used(admin.get());
	uint32_t h = 0;
	ASSERT_EQ(bo_create(victim.get(), kMiB, DRM_RBLN_BO_EAGER, 0, &h), 0);
	int dmabuf = -1;
	ASSERT_EQ(prime_export(victim.get(), h, &dmabuf), 0);
	Fd buf(dmabuf);
	ASSERT_EQ(gem_close(victim.get(), h), 0) << "only the dma-buf holds it now";
	auto *p = static_cast<volatile uint8_t *>(mmap(nullptr, kMiB, PROT_READ | PROT_WRITE,
		MAP_SHARED, buf.get(), 0));
	ASSERT_NE(p, MAP_FAILED) << "mapping the dma-buf: " << strerror(errno);
	p[4096] = 0xa5;

	uint64_t victim_id = 0;
	for (const auto &c : list_clients(admin.get()))
		if (!(c.flags & DRM_RBLN_CLIENT_SELF) && c.creator_pid == uint32_t(::getpid()))
			victim_id = c.client_id;
	ASSERT_NE(victim_id, 0u);
	uint64_t freed = 1;
	ASSERT_EQ(reclaim(admin.get(), victim_id, DRM_RBLN_RECLAIM_FORCE, &freed), 0);
	EXPECT_EQ(freed, 0u);
	EXPECT_EQ(memory_used(admin.get()), baseline + kMiB) << "still held by the dma-buf";
	EXPECT_TRUE(touch(p + 4096)) << "the dma-buf's mapping lost its page";
	EXPECT_EQ(p[4096], 0xa5);
	munmap(const_cast<uint8_t *>(p), kMiB);
	buf.reset();
	EXPECT_EQ(memory_used(admin.get()), baseline);
}

// Backing is charged to the memory cgroup of the process that places it
// (eager at creation, lazy when its first job is submitted, host memory
// too), and a reclaim gives all of it back, host buffers included.
TEST(Revoke, BackingIsChargedToTheCallersCgroupAndReclaimFreesIt)
{
	Cgroup cg("memory");
	if (!cg.usable())
		GTEST_SKIP() << "no memory controller in this VM";
	struct Report {
		std::atomic<int64_t> charged{-1};
	};
	auto report = shared<Report>();
	ASSERT_NE(report, nullptr);
	const Cgroup &group = cg;
	Child child(fork_until_ready([&](const std::function<void()> &ready) {
		if (!group.join(::getpid()))
			_exit(1);
		const uint64_t start = group.current();
		Fd fd = open_node(sim_device(0)->node);
		uint32_t host = 0, eager = 0, lazy = 0;
		if (bo_create(fd.get(), 16 * kMiB, DRM_RBLN_BO_HOST | DRM_RBLN_BO_EAGER, 0, &host) ||
		    bo_create(fd.get(), 8 * kMiB, DRM_RBLN_BO_EAGER, 0, &eager) ||
		    bo_create(fd.get(), 8 * kMiB, 0, 0, &lazy))
			_exit(1);
		uint64_t seqno;	// 8 MiB: a queued job, run by a kernel worker
		if (submit(fd.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {{eager, lazy, 0, 0, 8 * kMiB}},
			   &seqno) ||
		    wait_job(fd.get(), seqno))
			_exit(1);
		report->charged = int64_t(group.current() - start);
		ready();
		for (;;)
			::pause();	// keeps the file open
	}));
	ASSERT_GT(child.pid(), 0);
	EXPECT_GE(report->charged.load(), int64_t(31 * kMiB)) << "16 + 8 + 8 MiB placed";

	Fd admin = open_node(sim_device(0)->node);
	auto victim = client_of(admin.get(), child.pid());
	ASSERT_TRUE(victim);
	const uint64_t before = cg.current();
	uint64_t freed = 0;
	ASSERT_EQ(reclaim(admin.get(), victim->client_id, DRM_RBLN_RECLAIM_FORCE, &freed), 0);
	EXPECT_EQ(freed, 16 * kMiB);
	// Signed: a cgroup that grew meanwhile is a failure, not a wrapped difference.
	EXPECT_GE(int64_t(before) - int64_t(cg.current()), int64_t(31 * kMiB))
		<< "device and host backing given back";
}

// A reclaim racing first touches of a mapping: afterwards no page of it may
// still be mapped (a fault used to map its page after dropping the lock a
// revocation takes, so the zap could miss it).
TEST(Revoke, ReclaimRacingPageFaultsLeavesNoPageMapped)
{
	constexpr size_t kSize = 16 * kMiB;
	struct Shared {
		std::atomic<size_t> touched{0};
		std::atomic<bool> reclaimed{false};
		std::atomic<int64_t> readable{-1};
	};
	Fd admin = open_node(sim_device(0)->node);
	for (int round = 0; round < 8; round++) {
		auto sh = shared<Shared>();
		ASSERT_NE(sh, nullptr);
		Child child(fork_until_ready([&](const std::function<void()> &ready) {
			Fd fd = open_node(sim_device(0)->node);
			uint32_t h = 0;
			drm_rbln_bo_info info{};
			if (bo_create(fd.get(), kSize, DRM_RBLN_BO_EAGER, 0, &h) || bo_info(fd.get(), h, info))
				_exit(1);
			auto *p = static_cast<volatile uint8_t *>(mmap(nullptr, kSize, PROT_READ,
				MAP_SHARED, fd.get(), info.mmap_offset));
			if (p == MAP_FAILED)
				_exit(1);
			ready();
			// First touches, page by page, until the reclaim is over.
			for (size_t off = 0; off < kSize && !sh->reclaimed; off += 4096) {
				touch(p + off);
				sh->touched = off;
			}
			while (!sh->reclaimed)
				usleep(1000);
			sh->readable = int64_t(readable_pages(p, kSize));
			for (;;)
				::pause();
		}));
		ASSERT_GT(child.pid(), 0);
		// Reclaim somewhere in the middle of the touches.
		while (sh->touched < (round + 1) * kSize / 10)
			usleep(100);
		auto victim = client_of(admin.get(), child.pid());
		ASSERT_TRUE(victim);
		ASSERT_EQ(reclaim(admin.get(), victim->client_id, DRM_RBLN_RECLAIM_FORCE), 0);
		sh->reclaimed = true;
		for (int i = 0; i < 3000 && sh->readable < 0; i++)
			usleep(10000);
		EXPECT_EQ(sh->readable.load(), 0) << "round " << round << ": pages still mapped";
	}
}
