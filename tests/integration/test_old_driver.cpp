// libdevmgr of this tree against rbln.ko of an older interface (9, 10 or 11,
// built from this repository's history by tests/old-drivers/build.sh and
// loaded by tests/old-drivers/suite.sh with RBLN_SKIP_ABI_CHECK=1): what the
// driver lacks is done another way (a batch as one SUBMIT each, a wait without
// an end report) or refused by name (dependencies without syncobjs).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"
#include "rbln/profile.hpp"
#include "devmgr_error_of.h"
#include "rbln_drm.h"

using namespace std::chrono_literals;
using rbln::Engine;
using rbln::Errc;
using rbln::Placement;
using rbln::test::error_of;

namespace {

constexpr uint64_t k4K = 4096;

uint32_t interface_of(const rbln::Device &dev)
{
	return uint32_t(dev.param(DRM_RBLN_PARAM_UAPI_VERSION));
}

bool contains(const std::string &text, const std::string &part)
{
	return text.find(part) != std::string::npos;
}

// The Rebel100 chain's buffers on NPU 1, the source filled at random.
struct Chain {
	rbln::Device dev = rbln::Device::open(1);
	uint64_t size;
	rbln::Buffer src, mid, gather, host;

	explicit Chain(uint64_t bytes)
		: size(bytes), src(dev.allocate(size, Placement::on_chiplet(1))),
		  mid(dev.allocate(size, Placement::on_chiplet(1))),
		  gather(dev.allocate(size, Placement::on_chiplet(0))), host(dev.allocate_host(size))
	{
		std::mt19937_64 rng(bytes);
		for (std::byte &b : src.map())
			b = std::byte(rng());
		std::ranges::fill(host.map(), std::byte{0});
	}
	bool intact() { return std::memcmp(src.map().data(), host.map().data(), size) == 0; }
};

} // namespace

// The suite is for older drivers only: against the current one it proves nothing.
TEST(OldDriver, TheDriverIsOlderThanTheLibrary)
{
	auto dev = rbln::Device::open(1);
	EXPECT_LT(interface_of(dev), uint32_t{DRM_RBLN_UAPI_VERSION});
	EXPECT_GE(interface_of(dev), 9u);
}

TEST(OldDriver, JobsRunAndAreWaitedFor)
{
	for (uint64_t size : {k4K, uint64_t(1) << 20}) {
		Chain c(size);
		c.dev.submit(Engine::neural_dma, 1, {{c.src, c.mid, 0, 0, size}}).wait(10s);
		c.dev.submit(Engine::task_dma, 0, {{c.mid, c.gather, 0, 0, size}}).wait(10s);
		auto last = c.dev.submit(Engine::external_hdma, 0, {{c.gather, c.host, 0, 0, size}});
		last.wait(10s);
		EXPECT_TRUE(last.done());
		EXPECT_TRUE(c.intact()) << size << " bytes";
	}
}

// A profiled region on an older driver: the jobs run as ever (SUBMIT gets no
// flag it does not know) and the run's file is written, its jobs at their
// submit before 14 (no device times), with them since.
TEST(OldDriver, ProfilingWorksWithoutDeviceTimes)
{
	char dir[] = "/tmp/rbln-old-profile-XXXXXX";
	ASSERT_TRUE(mkdtemp(dir));
	std::string file;
	{
		rbln::profile::Session run(dir);
		Chain c(k4K);
		c.dev.submit(Engine::neural_dma, 1, {{c.src, c.mid, 0, 0, k4K}}, "i0_0_W0_load").wait(10s);
		file = run.end();
	}
	ASSERT_FALSE(file.empty());
	EXPECT_EQ(access(file.c_str(), R_OK), 0) << file;
	// The whole trace is written at exit, into the same directory.
	unlink(file.c_str());
}

// Before interface 13 there is no job limit: a transfer goes as one job,
// however large (libdevmgr splits only what the driver says it must).  Since
// 13 the driver names its limit (DRM_RBLN_PARAM_JOB_MAX_BYTES) and the
// transfer goes as that many jobs, one after the other.
TEST(OldDriver, LargeTransferSplitsOnlyAtTheDriversLimit)
{
	constexpr uint64_t kPiece = 4 << 20, kCopies = 17;	// 68 MiB
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(kPiece), b = dev.allocate(kPiece);
	const std::vector<rbln::Copy> copies(kCopies, rbln::Copy{a, b, 0, 0, kPiece});
	uint64_t jobs = 1;
	if (interface_of(dev) >= 13) {
		const uint64_t limit = dev.param(DRM_RBLN_PARAM_JOB_MAX_BYTES);
		ASSERT_GT(limit, 0u);
		ASSERT_LT(limit, kCopies * kPiece) << "the transfer must exceed the limit to test it";
		jobs = (kCopies * kPiece + limit - 1) / limit;
	}
	auto before = dev.submit(Engine::neural_dma, 0, {{a, b, 0, 0, k4K}});
	auto job = dev.submit(Engine::neural_dma, 0, copies);
	EXPECT_EQ(job.seqno(), before.seqno() + jobs) << (jobs == 1 ? "one job" : "one job per limit's worth");
	job.wait(60s);
}

// Before interface 12 a batch is one SUBMIT per job, in order; the jobs it
// joins wait for each other through syncobjs (interface 10 and later).
TEST(OldDriver, BatchGoesInAsOneSubmitEach)
{
	Chain c(1 << 20);
	const rbln::Copy produce[] = {{c.src, c.mid, 0, 0, c.size}};
	const rbln::Copy move[] = {{c.mid, c.gather, 0, 0, c.size}};
	const rbln::Copy deliver[] = {{c.gather, c.host, 0, 0, c.size}};
	const uint32_t first[] = {0}, second[] = {1};
	const rbln::JobSpec joined[] = {
		{Engine::neural_dma, 1, produce, "produce"},
		{Engine::task_dma, 0, move, "gather", {}, first},
		{Engine::external_hdma, 0, deliver, "deliver", {}, second},
	};
	if (interface_of(c.dev) < 10) {
		auto msg = error_of([&] { c.dev.submit_batch(joined); }, Errc::not_supported);
		EXPECT_TRUE(contains(msg, "syncobjs need 10 or later")) << msg;
		// Unjoined jobs go in all the same; the caller orders them by waiting.
		for (const rbln::JobSpec &spec : joined) {
			const rbln::JobSpec alone[] = {{spec.engine, spec.chiplet, spec.copies, spec.label}};
			auto jobs = c.dev.submit_batch(alone);
			ASSERT_EQ(jobs.size(), 1u);
			jobs[0].wait(10s);
		}
		EXPECT_TRUE(c.intact());
		return;
	}
	auto jobs = c.dev.submit_batch(joined);
	ASSERT_EQ(jobs.size(), 3u);
	EXPECT_EQ(jobs[2].seqno(), jobs[0].seqno() + 2);
	jobs[2].wait(10s);
	EXPECT_TRUE(c.intact());

	// A refused job stops the batch there, as SUBMIT_BATCH would.
	const rbln::Copy out_of_range[] = {{c.mid, c.gather, 1, 0, c.size}};
	const rbln::JobSpec refused[] = {
		{Engine::neural_dma, 1, produce},
		{Engine::task_dma, 0, out_of_range, {}, {}, first},
		{Engine::external_hdma, 0, deliver, {}, {}, second},
	};
	std::vector<rbln::Job> went_in;
	auto msg = error_of([&] { c.dev.submit_batch(refused, went_in); }, Errc::invalid_argument);
	EXPECT_TRUE(contains(msg, "(job 1 of the batch) refused")) << msg;
	ASSERT_EQ(went_in.size(), 1u);
	went_in[0].wait(10s);
}

// Without syncobjs (interface 9) a job can neither wait for another nor be
// polled; from interface 10 on both work.
TEST(OldDriver, DependenciesAndPollingNeedSyncobjs)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(k4K), b = dev.allocate(k4K);
	auto first = dev.submit(Engine::task_dma, 0, {{a, b, 0, 0, k4K}});
	if (interface_of(dev) < 10) {
		auto msg = error_of([&] { dev.submit(Engine::task_dma, 0, {{b, a, 0, 0, k4K}}, {}, {first}); },
				    Errc::not_supported);
		EXPECT_TRUE(contains(msg, "a job cannot wait for other jobs here")) << msg;
		msg = error_of([&] { (void)first.fd(); }, Errc::not_supported);
		EXPECT_TRUE(contains(msg, "interface")) << msg;
		first.wait(10s);
		return;
	}
	auto second = dev.submit(Engine::task_dma, 0, {{b, a, 0, 0, k4K}}, {}, {first});
	int fd = second.fd();
	ASSERT_GE(fd, 0);
	pollfd p{fd, POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 10000), 1);
	::close(fd);
	second.wait(10s);
	EXPECT_TRUE(first.done());
}

// Run by suite.sh without RBLN_SKIP_ABI_CHECK: the library is newer than every
// old driver, so opening must fail, and the report must name the library file
// that was loaded and both interface versions (the facts file's promise).
TEST(OldDriverAbiCheck, RefusesAndNamesTheLibraryAndBothVersions)
{
	if (std::getenv("RBLN_SKIP_ABI_CHECK"))
		GTEST_SKIP() << "run by suite.sh without RBLN_SKIP_ABI_CHECK";
	std::string library;
	std::ifstream maps("/proc/self/maps");
	for (std::string line; std::getline(maps, line) && library.empty();)
		if (auto at = line.find('/'); at != std::string::npos &&
		    line.find("librbln_devmgr.so") != std::string::npos)
			library = line.substr(at);
	ASSERT_FALSE(library.empty()) << "librbln_devmgr is not mapped";

	drm_rbln_get_param version{}, compat{};
	{
		int fd = ::open("/dev/rbln1", O_RDWR | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		version.param = DRM_RBLN_PARAM_UAPI_VERSION;
		compat.param = DRM_RBLN_PARAM_UAPI_COMPAT_VERSION;
		ASSERT_EQ(ioctl(fd, DRM_IOCTL_RBLN_GET_PARAM, &version), 0);
		ASSERT_EQ(ioctl(fd, DRM_IOCTL_RBLN_GET_PARAM, &compat), 0);
		::close(fd);
	}
	std::string msg = error_of([] { rbln::Device::open(1); }, Errc::abi_mismatch);
	// The library as the loader named it (librbln_devmgr.so.0); the map shows the file it is.
	const std::string head = "RBLN ABI mismatch: ", tail = " was built against interface ";
	const auto from = msg.find(head), to = msg.find(tail);
	ASSERT_TRUE(from == 0 && to != std::string::npos) << msg;
	const std::string named = msg.substr(head.size(), to - head.size());
	EXPECT_EQ(std::filesystem::canonical(named), std::filesystem::canonical(library)) << msg;
	EXPECT_TRUE(contains(msg, tail + std::to_string(DRM_RBLN_UAPI_VERSION) + ",")) << msg;
	EXPECT_TRUE(contains(msg, "implements interface " + std::to_string(version.value))) << msg;
	EXPECT_TRUE(contains(msg, std::to_string(compat.value) + ".." + std::to_string(version.value)))
		<< msg;
}
