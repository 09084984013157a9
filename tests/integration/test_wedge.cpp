// The hardware contract (rbln_hw.h) against the real module: a reset that
// fails wedges the device until a RESET works, a removed device's memory is
// no longer reachable through a CPU mapping, and a backend that moves bytes
// by DMA gets every buffer mapped through the DMA API (the simulator's
// sim_dma mode) and copies byte-exact through those addresses.
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <random>
#include <vector>

#include <sys/ioctl.h>
#include <sys/mman.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

// Ids of devices these tests make and remove themselves.
constexpr unsigned kWedgeId = 9;
constexpr unsigned kUnplugId = 10;
constexpr unsigned kDmaId = 11;

std::string status_of(unsigned id)
{
	auto d = sim_device(id);
	return d ? read_file(d->sysfs + "/status").value_or("?") : "gone";
}

int reset(int fd)
{
	drm_rbln_reset args{};
	return ioctl(fd, DRM_IOCTL_RBLN_RESET, &args) ? -errno : 0;
}

// One small copy on chiplet 0's Task DMA, waited for: 0 or the (negative) error.
int copy_and_wait(int fd)
{
	uint32_t src = 0, dst = 0;
	if (bo_create(fd, 4096, 0, 0, &src) || bo_create(fd, 4096, 0, 0, &dst))
		return -ENOMEM;
	uint64_t seqno = 0;
	// SUBMIT's errno is positive, a job's status negative: both negative here.
	int ret = -submit(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {{src, dst, 0, 0, 4096}}, &seqno);
	if (!ret)
		ret = wait_job(fd, seqno);
	gem_close(fd, src);
	gem_close(fd, dst);
	return ret;
}

sigjmp_buf bus_jump;

void on_sigbus(int)
{
	siglongjmp(bus_jump, 1);
}

// Reads one byte; false if that raised SIGBUS.
bool readable(const volatile uint8_t *p)
{
	struct sigaction sa{}, old{};
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, &old);
	volatile bool ok = false;
	if (sigsetjmp(bus_jump, 1) == 0) {
		(void)*p;
		ok = true;
	}
	sigaction(SIGBUS, &old, nullptr);
	return ok;
}

class Wedge : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(sim_new_device(std::to_string(kWedgeId) + " atom 16"), 0); }
	void TearDown() override { EXPECT_EQ(sim_del_device(kWedgeId), 0); }
};

} // namespace

// The engine reset after a timeout fails: the job still ends (ETIMEDOUT), the
// device goes FAULT and refuses jobs (EIO); a RESET that fails says so and
// leaves it wedged; one that works brings it back.
TEST_F(Wedge, FailedEngineResetWedgesTheDeviceUntilResetWorks)
{
	Fd fd = open_node("/dev/rbln" + std::to_string(kWedgeId));
	ASSERT_TRUE(fd);
	ASSERT_EQ(copy_and_wait(fd.get()), 0) << "the device works before";
	ASSERT_EQ(debugfs_write(kWedgeId, "hang", "0 task_dma"), 0);
	ASSERT_EQ(debugfs_write(kWedgeId, "fail_next_resets", "1"), 0);
	EXPECT_EQ(copy_and_wait(fd.get()), -ETIMEDOUT) << "the hung job ends by its timeout";
	// The wedge is announced from a work item: give it a moment.
	for (int i = 0; i < 100 && status_of(kWedgeId) != "FAULT"; i++)
		usleep(10'000);
	EXPECT_EQ(status_of(kWedgeId), "FAULT");
	EXPECT_EQ(copy_and_wait(fd.get()), -EIO) << "a wedged device runs no job";

	ASSERT_EQ(debugfs_write(kWedgeId, "fail_next_resets", "1"), 0);
	EXPECT_EQ(reset(fd.get()), -EIO) << "a RESET the backend fails returns its error";
	EXPECT_EQ(status_of(kWedgeId), "FAULT");
	EXPECT_EQ(copy_and_wait(fd.get()), -EIO) << "still wedged";

	EXPECT_EQ(reset(fd.get()), 0);
	EXPECT_EQ(status_of(kWedgeId), "READY");
	EXPECT_EQ(copy_and_wait(fd.get()), 0) << "the device works again";
}

// A timed-out job whose engine reset works wedges nothing.
TEST_F(Wedge, WorkingEngineResetLeavesTheDeviceReady)
{
	Fd fd = open_node("/dev/rbln" + std::to_string(kWedgeId));
	ASSERT_TRUE(fd);
	ASSERT_EQ(debugfs_write(kWedgeId, "hang", "0 task_dma"), 0);
	EXPECT_EQ(copy_and_wait(fd.get()), -ETIMEDOUT);
	usleep(100'000);
	EXPECT_EQ(status_of(kWedgeId), "READY");
	EXPECT_EQ(copy_and_wait(fd.get()), 0);
}

// Removal with a buffer mapped: the mapping raises SIGBUS from then on (no
// fault reaches the removed backend), the file gets ENODEV, and closing both
// afterwards is clean.
TEST(Unplug, MappingRaisesSigbusAfterRemoval)
{
	ASSERT_EQ(sim_new_device(std::to_string(kUnplugId) + " atom 16"), 0);
	Fd fd = open_node("/dev/rbln" + std::to_string(kUnplugId));
	ASSERT_TRUE(fd);
	uint32_t bo = 0;
	ASSERT_EQ(bo_create(fd.get(), 2 * 4096, 0, 0, &bo), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd.get(), bo, info), 0);
	void *p = mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), info.mmap_offset);
	ASSERT_NE(p, MAP_FAILED) << strerror(errno);
	auto *bytes = static_cast<volatile uint8_t *>(p);
	bytes[0] = 0x5a;	// the first page faulted in, the second not yet
	EXPECT_TRUE(readable(bytes));

	ASSERT_EQ(sim_del_device(kUnplugId), 0);
	EXPECT_FALSE(readable(bytes)) << "a page mapped before removal is zapped";
	EXPECT_FALSE(readable(bytes + 4096)) << "a page never faulted in stays unreachable";
	uint64_t v = 0;
	EXPECT_EQ(get_param(fd.get(), DRM_RBLN_PARAM_MEMORY_USED, &v), ENODEV);
	EXPECT_EQ(munmap(p, info.size), 0);
}

namespace {

// A buffer's bytes through its CPU mapping (MAP_FAILED on error).
uint8_t *map_bo(int fd, uint32_t bo, uint64_t size)
{
	drm_rbln_bo_info info{};
	if (bo_info(fd, bo, info))
		return static_cast<uint8_t *>(MAP_FAILED);
	return static_cast<uint8_t *>(
		mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset));
}

} // namespace

// Copies at random sizes and offsets, over page (and so DMA segment) borders,
// on every engine of a device in sim_dma mode: each is byte-exact, bytes
// outside the copy are untouched, and once the buffers are gone the device's
// memory is all back.
TEST(DmaAddressing, RandomCopiesThroughDmaAddressesAreByteExact)
{
	const std::string param = "/sys/module/rbln/parameters/sim_dma";
	ASSERT_EQ(write_file(param, "1"), 0);
	int made = sim_new_device(std::to_string(kDmaId) + " atom 16");
	EXPECT_EQ(write_file(param, "0"), 0);
	ASSERT_EQ(made, 0);
	{
		Fd fd = open_node("/dev/rbln" + std::to_string(kDmaId));
		ASSERT_TRUE(fd);
		constexpr uint64_t kSize = 5 * 4096;
		uint32_t src = 0, dst = 0;
		ASSERT_EQ(bo_create(fd.get(), kSize, 0, 0, &src), 0);
		ASSERT_EQ(bo_create(fd.get(), kSize, 0, 0, &dst), 0);
		uint8_t *s = map_bo(fd.get(), src, kSize), *d = map_bo(fd.get(), dst, kSize);
		ASSERT_NE(s, MAP_FAILED);
		ASSERT_NE(d, MAP_FAILED);
		std::mt19937_64 rng(26);
		const uint32_t engines[] = {DRM_RBLN_ENGINE_NEURAL_DMA, DRM_RBLN_ENGINE_TASK_DMA,
					    DRM_RBLN_ENGINE_DEVICE_HDMA};
		for (int round = 0; round < 24; round++) {
			for (uint64_t i = 0; i < kSize; i++) {
				s[i] = uint8_t(rng());
				d[i] = 0xee;
			}
			const uint64_t size = 1 + rng() % (kSize - 1);
			const uint64_t so = rng() % (kSize - size + 1), dof = rng() % (kSize - size + 1);
			uint64_t seqno = 0;
			ASSERT_EQ(submit(fd.get(), engines[round % 3], 0, {{src, dst, so, dof, size}}, &seqno), 0);
			ASSERT_EQ(wait_job(fd.get(), seqno), 0);
			ASSERT_EQ(memcmp(d + dof, s + so, size), 0)
				<< "round " << round << ": " << size << " bytes " << so << " -> " << dof;
			for (uint64_t i = 0; i < kSize; i++) {
				if (i < dof || i >= dof + size) {
					ASSERT_EQ(d[i], 0xee) << "byte " << i << " outside the copy, round " << round;
				}
			}
		}
		munmap(s, kSize);
		munmap(d, kSize);
		gem_close(fd.get(), src);
		gem_close(fd.get(), dst);
		uint64_t used = 1;
		ASSERT_EQ(get_param(fd.get(), DRM_RBLN_PARAM_MEMORY_USED, &used), 0);
		EXPECT_EQ(used, 0u) << "every buffer's memory is back";
	}
	EXPECT_EQ(sim_del_device(kDmaId), 0);
}

// A job maps only the bytes its copies move.  DRM_RBLN_MAX_COPIES one-byte
// copies out of a 64 MiB buffer once mapped the whole buffer per side of
// every copy: 8192 walks of 16384 pages (12.8 s inside SUBMIT on the 6.12
// VM, against 0.8 s now) and up to 2 GiB of scatterlists when the buffer's
// pages are scattered.  This checks the many small mappings land every byte;
// the bound itself is not visible from user space.
TEST(DmaAddressing, ManySmallCopiesOfABigBufferMapOnlyTheirBytes)
{
	const std::string param = "/sys/module/rbln/parameters/sim_dma";
	ASSERT_EQ(write_file(param, "1"), 0);
	int made = sim_new_device(std::to_string(kDmaId) + " atom 128");
	EXPECT_EQ(write_file(param, "0"), 0);
	ASSERT_EQ(made, 0);
	{
		Fd fd = open_node("/dev/rbln" + std::to_string(kDmaId));
		ASSERT_TRUE(fd);
		constexpr uint64_t kBig = 64ull << 20, kSmall = DRM_RBLN_MAX_COPIES;
		uint32_t src = 0, dst = 0;
		ASSERT_EQ(bo_create(fd.get(), kBig, 0, 0, &src), 0);
		ASSERT_EQ(bo_create(fd.get(), kSmall, 0, 0, &dst), 0);
		uint8_t *s = map_bo(fd.get(), src, kBig), *d = map_bo(fd.get(), dst, kSmall);
		ASSERT_NE(s, MAP_FAILED);
		ASSERT_NE(d, MAP_FAILED);
		std::vector<drm_rbln_copy> copies;
		for (uint64_t i = 0; i < kSmall; i++) {
			// One byte from each 16 KiB of the source, 4 pages apart.
			const uint64_t so = i * (kBig / kSmall) + i % 4096;
			s[so] = uint8_t(i * 7 + 1);
			d[i] = 0;
			copies.push_back({src, dst, so, i, 1});
		}
		uint64_t seqno = 0;
		ASSERT_EQ(submit(fd.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, copies, &seqno), 0);
		ASSERT_EQ(wait_job(fd.get(), seqno), 0);
		for (uint64_t i = 0; i < kSmall; i++)
			ASSERT_EQ(d[i], uint8_t(i * 7 + 1)) << "copy " << i;
		munmap(s, kBig);
		munmap(d, kSmall);
		gem_close(fd.get(), src);
		gem_close(fd.get(), dst);
	}
	EXPECT_EQ(sim_del_device(kDmaId), 0);
}
