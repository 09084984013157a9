// Buffer objects against the real module: lazy vs eager placement and its
// accounting, interleaving, capacity and fragmentation, mmap, PRIME, ownership, bad input, and
// a killed process leaving nothing behind.
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <linux/dma-heap.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

uint64_t param(int fd, uint32_t p, int chiplet = -1)
{
	uint64_t v = ~0ull;
	EXPECT_EQ(get_param(fd, p, &v, chiplet < 0 ? 0 : DRM_RBLN_GET_PARAM_CHIPLET,
			    chiplet < 0 ? 0 : chiplet), 0);
	return v;
}

struct Usage {
	uint64_t used, placed;
	bool operator==(const Usage &) const = default;
};

Usage usage(int fd, int chiplet = -1)
{
	return {param(fd, DRM_RBLN_PARAM_MEMORY_USED, chiplet),
		param(fd, DRM_RBLN_PARAM_MEMORY_PLACED, chiplet)};
}

std::ostream &operator<<(std::ostream &os, const Usage &u)
{
	return os << "{used " << u.used << ", placed " << u.placed << "}";
}

// The Rebel100 (4 chiplets, 64 MiB in the suite) is NPU 1.
class Memory : public ::testing::Test {
protected:
	void SetUp() override
	{
		auto d = sim_device(1);
		ASSERT_TRUE(d);
		fd_ = open_node(d->node);
		ASSERT_TRUE(fd_);
		ASSERT_EQ(param(fd_.get(), DRM_RBLN_PARAM_CHIPLET_COUNT), 4u);
		baseline_ = usage(fd_.get());
	}
	void TearDown() override { EXPECT_EQ(usage(fd_.get()), baseline_) << "memory leaked"; }

	Fd fd_;
	Usage baseline_{};
};

} // namespace

TEST_F(Memory, LazyBufferReservesAtCreationAndPlacesOnFirstUse)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 3 * kMiB, 0, 2, &h), 0);
	EXPECT_EQ(usage(fd_.get()), (Usage{baseline_.used + 3 * kMiB, baseline_.placed}));
	EXPECT_EQ(usage(fd_.get(), 2).used, 3 * kMiB);

	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	EXPECT_EQ(info.size, 3 * kMiB);
	EXPECT_EQ(info.chiplet, 2u);
	EXPECT_FALSE(info.flags & DRM_RBLN_BO_PLACED);

	// CPU access through mmap needs backing: the buffer gets placed.
	void *p = mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(),
		       info.mmap_offset);
	ASSERT_NE(p, MAP_FAILED);
	EXPECT_EQ(usage(fd_.get()), (Usage{baseline_.used + 3 * kMiB, baseline_.placed + 3 * kMiB}));
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	EXPECT_TRUE(info.flags & DRM_RBLN_BO_PLACED);

	// Fresh device memory reads as zeros; writes are seen by a second mapping.
	auto *bytes = static_cast<uint8_t *>(p);
	EXPECT_EQ(bytes[0], 0);
	EXPECT_EQ(bytes[info.size - 1], 0);
	for (uint64_t i = 0; i < info.size; i += 4096)
		bytes[i] = uint8_t(i >> 12);
	void *q = mmap(nullptr, info.size, PROT_READ, MAP_SHARED, fd_.get(), info.mmap_offset);
	ASSERT_NE(q, MAP_FAILED);
	EXPECT_EQ(memcmp(p, q, info.size), 0);
	munmap(q, info.size);
	munmap(p, info.size);
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

TEST_F(Memory, EagerBufferIsPlacedAtCreation)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 5000, DRM_RBLN_BO_EAGER, 0, &h), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	EXPECT_EQ(info.size, 8192u) << "sizes are rounded up to pages";
	EXPECT_TRUE(info.flags & DRM_RBLN_BO_PLACED);
	EXPECT_EQ(usage(fd_.get(), 0), (Usage{8192, 8192}));
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

TEST_F(Memory, InterleavedBufferIsSplitOverChiplets)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 4 * kMiB + 4096, DRM_RBLN_BO_EAGER,
			    DRM_RBLN_CHIPLET_INTERLEAVED, &h), 0);
	EXPECT_EQ(usage(fd_.get(), 0).used, kMiB + 4096) << "remainder on chiplet 0";
	for (int c = 1; c < 4; c++)
		EXPECT_EQ(usage(fd_.get(), c), (Usage{kMiB, kMiB})) << "chiplet " << c;
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

TEST_F(Memory, CapacityIsEnforcedPerChiplet)
{
	const uint64_t chiplet_total = param(fd_.get(), DRM_RBLN_PARAM_MEMORY_TOTAL, 3);
	uint32_t all = 0, more = 0;
	EXPECT_EQ(bo_create(fd_.get(), chiplet_total + 4096, 0, 3, &more), ENOSPC);
	ASSERT_EQ(bo_create(fd_.get(), chiplet_total, 0, 3, &all), 0) << "lazy: no backing needed";
	EXPECT_EQ(bo_create(fd_.get(), 4096, 0, 3, &more), ENOSPC);
	// Four pages interleave one per chiplet, so chiplet 3 must take one.
	EXPECT_EQ(bo_create(fd_.get(), 4 * 4096, 0, DRM_RBLN_CHIPLET_INTERLEAVED, &more), ENOSPC);
	EXPECT_EQ(usage(fd_.get(), 3).used, chiplet_total);
	ASSERT_EQ(bo_create(fd_.get(), 4096, 0, 2, &more), 0) << "other chiplets unaffected";
	EXPECT_EQ(gem_close(fd_.get(), more), 0);
	EXPECT_EQ(gem_close(fd_.get(), all), 0);
}

TEST_F(Memory, BadCreateIsRejectedAndChangesNothing)
{
	struct Row {
		const char *why;
		drm_rbln_bo_create args;
		int err;
	};
	const Row rows[] = {
		{"zero size", {.size = 0, .flags = 0, .chiplet = 0, .handle = 0, .reserved = 0}, EINVAL},
		{"size overflows page rounding", {.size = ~0ull, .flags = 0, .chiplet = 0, .handle = 0, .reserved = 0}, EINVAL},
		{"unknown flag", {.size = 4096, .flags = 1u << 5, .chiplet = 0, .handle = 0, .reserved = 0}, EINVAL},
		{"PLACED is output only", {.size = 4096, .flags = DRM_RBLN_BO_PLACED, .chiplet = 0, .handle = 0, .reserved = 0}, EINVAL},
		{"reserved set", {.size = 4096, .flags = 0, .chiplet = 0, .handle = 0, .reserved = 1}, EINVAL},
		{"chiplet out of range", {.size = 4096, .flags = 0, .chiplet = 4, .handle = 0, .reserved = 0}, EINVAL},
		{"host buffer with a chiplet", {.size = 4096, .flags = DRM_RBLN_BO_HOST, .chiplet = 1, .handle = 0, .reserved = 0}, EINVAL},
		{"host buffer too large", {.size = DRM_RBLN_HOST_BO_MAX + 4096, .flags = DRM_RBLN_BO_HOST, .chiplet = 0, .handle = 0, .reserved = 0}, E2BIG},
		{"larger than the device", {.size = 1ull << 30, .flags = 0, .chiplet = 0, .handle = 0, .reserved = 0}, ENOSPC},
		// The limits come first: a refused create reserves nothing (interface 14).
		{"over file_max_bytes", {.size = 1ull << 40, .flags = 0, .chiplet = 0, .handle = 0, .reserved = 0}, EDQUOT},
	};
	for (const auto &row : rows) {
		drm_rbln_bo_create args = row.args;
		args.handle = 0xdead;
		EXPECT_EQ(ioctl(fd_.get(), DRM_IOCTL_RBLN_BO_CREATE, &args) ? errno : 0, row.err)
			<< row.why;
		EXPECT_EQ(args.handle, 0xdeadu) << row.why;
	}
}

TEST_F(Memory, HandlesBelongToTheirFile)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 4096, 0, 0, &h), 0);
	Fd other = open_node(sim_device(1)->node);
	drm_rbln_bo_info info{};
	EXPECT_EQ(bo_info(other.get(), h, info), ENOENT);
	EXPECT_EQ(bo_info(fd_.get(), h + 1000, info), ENOENT);
	info = {};
	info.handle = h;
	info.reserved = 1;
	EXPECT_EQ(ioctl(fd_.get(), DRM_IOCTL_RBLN_BO_INFO, &info) ? errno : 0, EINVAL);
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
	EXPECT_EQ(gem_close(fd_.get(), h), EINVAL) << "closing twice";
}

TEST_F(Memory, PrivateMappingsAreRefused)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 4096, 0, 0, &h), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	EXPECT_EQ(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd_.get(), info.mmap_offset), MAP_FAILED);
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

TEST_F(Memory, PrimeShareWithinAndAcrossDevices)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 8192, DRM_RBLN_BO_HOST, 0, &h), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	auto *p = static_cast<char *>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
					   fd_.get(), info.mmap_offset));
	ASSERT_NE(p, MAP_FAILED);
	strcpy(p + 4096, "shared through PRIME");

	int dmabuf = -1;
	ASSERT_EQ(prime_export(fd_.get(), h, &dmabuf), 0);
	for (unsigned npu : {1u, 0u}) {	// same device, then the ATOM
		Fd other = open_node(sim_device(npu)->node);
		uint32_t imported = 0;
		ASSERT_EQ(prime_import(other.get(), dmabuf, &imported), 0) << "npu " << npu;
		drm_rbln_bo_info iinfo{};
		ASSERT_EQ(bo_info(other.get(), imported, iinfo), 0);
		EXPECT_EQ(iinfo.size, 8192u);
		auto *q = static_cast<char *>(mmap(nullptr, 8192, PROT_READ, MAP_SHARED, other.get(),
						   iinfo.mmap_offset));
		ASSERT_NE(q, MAP_FAILED);
		EXPECT_STREQ(q + 4096, "shared through PRIME") << "npu " << npu;
		munmap(q, 8192);
	}
	close(dmabuf);
	munmap(p, 8192);
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

// Device addresses stay inside their chiplet's memory however much is
// allocated and freed (they once came from a counter that ran into the next
// chiplet's window), and live buffers never overlap.
TEST_F(Memory, AddressesStayInTheirChipletsWindow)
{
	const uint64_t chiplet_memory = param(fd_.get(), DRM_RBLN_PARAM_MEMORY_TOTAL, 1);
	auto window = [](uint64_t w) { return w << 40; };
	for (int i = 0; i < 64; i++) {	// 64 x 8 MiB: four times the chiplet
		uint32_t h = 0;
		ASSERT_EQ(bo_create(fd_.get(), 8 * kMiB, 0, 1, &h), 0);
		drm_rbln_bo_info info{};
		ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
		EXPECT_GE(info.device_address, window(1)) << "round " << i;
		EXPECT_LE(info.device_address + info.size, window(1) + chiplet_memory) << "round " << i;
		ASSERT_EQ(gem_close(fd_.get(), h), 0);
	}

	std::vector<std::pair<uint64_t, uint64_t>> live;	// [start, end)
	std::vector<uint32_t> handles;
	for (uint32_t chiplet : {0u, 0u, 3u, DRM_RBLN_CHIPLET_INTERLEAVED, DRM_RBLN_CHIPLET_INTERLEAVED}) {
		uint32_t h = 0;
		ASSERT_EQ(bo_create(fd_.get(), 2 * kMiB, 0, chiplet, &h), 0);
		drm_rbln_bo_info info{};
		ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
		uint64_t w = chiplet == DRM_RBLN_CHIPLET_INTERLEAVED ? 4 : chiplet;
		EXPECT_EQ(info.device_address >> 40, w);
		for (auto [start, end] : live)
			EXPECT_TRUE(info.device_address >= end || info.device_address + info.size <= start);
		live.emplace_back(info.device_address, info.device_address + info.size);
		handles.push_back(h);
	}
	uint32_t host = 0;
	ASSERT_EQ(bo_create(fd_.get(), 4096, DRM_RBLN_BO_HOST, 0, &host), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), host, info), 0);
	EXPECT_EQ(info.device_address, 0u) << "host memory has no device address";
	handles.push_back(host);
	for (uint32_t h : handles)
		EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

// Fragmentation follows the allocator: with every other MiB of a chiplet
// freed, half of it is free but 2 MiB fit nowhere (ENOSPC); once a freed MiB
// has free neighbours, they do, there.
TEST_F(Memory, FragmentedChipletFailsOnlyWhenNoRangeFits)
{
	constexpr uint32_t chiplet = 2;
	const uint64_t total = param(fd_.get(), DRM_RBLN_PARAM_MEMORY_TOTAL, chiplet);
	const uint64_t base = uint64_t(chiplet) << 40;
	ASSERT_EQ(usage(fd_.get(), chiplet).used, 0u) << "the pattern needs an empty chiplet";
	ASSERT_EQ(total % kMiB, 0u);

	std::vector<uint32_t> at(total / kMiB, 0);	// the buffer at each MiB (handles are > 0)
	for (size_t i = 0; i < at.size(); i++) {
		uint32_t h = 0;
		ASSERT_EQ(bo_create(fd_.get(), kMiB, 0, chiplet, &h), 0) << "buffer " << i;
		drm_rbln_bo_info info{};
		ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
		ASSERT_GE(info.device_address, base);
		const uint64_t offset = info.device_address - base;
		ASSERT_EQ(offset % kMiB, 0u);
		ASSERT_LT(offset / kMiB, at.size());
		ASSERT_EQ(at[offset / kMiB], 0u) << "two buffers at " << offset;
		at[offset / kMiB] = h;
	}
	auto close_at = [&](size_t mib) {
		EXPECT_EQ(gem_close(fd_.get(), at[mib]), 0);
		at[mib] = 0;
	};
	uint32_t h = 0;
	EXPECT_EQ(bo_create(fd_.get(), 4096, 0, chiplet, &h), ENOSPC) << "full";
	for (size_t mib = 0; mib < at.size(); mib += 2)
		close_at(mib);
	EXPECT_EQ(usage(fd_.get(), chiplet).used, total / 2);
	EXPECT_EQ(bo_create(fd_.get(), 2 * kMiB, 0, chiplet, &h), ENOSPC)
		<< "half the chiplet is free, but no 2 MiB in a row";
	EXPECT_EQ(bo_create(fd_.get(), 2 * kMiB, DRM_RBLN_BO_EAGER, chiplet, &h), ENOSPC);
	ASSERT_EQ(bo_create(fd_.get(), kMiB, 0, chiplet, &h), 0) << "one MiB fits";
	EXPECT_EQ(gem_close(fd_.get(), h), 0);

	close_at(1);	// [0, 3 MiB) is free now
	ASSERT_EQ(bo_create(fd_.get(), 2 * kMiB, DRM_RBLN_BO_EAGER, chiplet, &h), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	EXPECT_GE(info.device_address, base);
	EXPECT_LE(info.device_address + info.size, base + 3 * kMiB);
	EXPECT_EQ(usage(fd_.get(), chiplet), (Usage{total / 2 - kMiB + 2 * kMiB, 2 * kMiB}));
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
	for (size_t mib = 0; mib < at.size(); mib++)
		if (at[mib])
			close_at(mib);
	EXPECT_EQ(usage(fd_.get(), chiplet), (Usage{0, 0}));
}

// CPU faults find the page by the mapping's offset, not by its start: after
// the first page of a mapping is unmapped, the rest still shows its own bytes.
TEST_F(Memory, FaultsFollowTheMappingsOffsetAfterASplit)
{
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd_.get(), 8192, DRM_RBLN_BO_HOST, 0, &h), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), h, info), 0);
	auto map = [&] {
		return static_cast<char *>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
						fd_.get(), info.mmap_offset));
	};
	char *p = map();
	ASSERT_NE(p, MAP_FAILED);
	p[0] = 'A';
	p[4096] = 'B';
	munmap(p, 8192);

	p = map();	// fresh: nothing faulted in yet
	ASSERT_NE(p, MAP_FAILED);
	ASSERT_EQ(munmap(p, 4096), 0);
	EXPECT_EQ(p[4096], 'B') << "the second page shows the first one's bytes";
	munmap(p + 4096, 4096);
	EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

// A buffer of another exporter (the system dma-heap, which sets no vm_ops on
// its mappings) imported as host memory: DMA reaches its bytes through the
// exporter's vmap, and mapping it through the rbln handle works and unmaps
// cleanly (the kernel log is checked).
TEST_F(Memory, ImportedHeapBufferIsReachedThroughItsExporter)
{
	Fd heap(::open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC));
	if (!heap)
		GTEST_SKIP() << "no system dma-heap in this kernel";
	dma_heap_allocation_data alloc{};
	alloc.len = 8192;
	alloc.fd_flags = O_RDWR | O_CLOEXEC;
	ASSERT_EQ(ioctl(heap.get(), DMA_HEAP_IOCTL_ALLOC, &alloc), 0) << strerror(errno);
	Fd buf(int(alloc.fd));
	auto *b = static_cast<char *>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, buf.get(), 0));
	ASSERT_NE(b, MAP_FAILED);
	memset(b, 0x5a, 8192);

	uint32_t imported = 0, dev = 0, back = 0;
	ASSERT_EQ(prime_import(fd_.get(), buf.get(), &imported), 0);
	ASSERT_EQ(bo_create(fd_.get(), 8192, 0, 0, &dev), 0);
	ASSERT_EQ(bo_create(fd_.get(), 8192, DRM_RBLN_BO_HOST, 0, &back), 0);
	uint64_t seqno = 0;
	ASSERT_EQ(submit(fd_.get(), DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0, {{imported, dev, 0, 0, 8192}}, &seqno), 0);
	EXPECT_EQ(wait_job(fd_.get(), seqno), 0);
	ASSERT_EQ(submit(fd_.get(), DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0, {{dev, back, 0, 0, 8192}}, &seqno), 0);
	EXPECT_EQ(wait_job(fd_.get(), seqno), 0);
	drm_rbln_bo_info info{};
	ASSERT_EQ(bo_info(fd_.get(), back, info), 0);
	auto *q = static_cast<char *>(mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd_.get(), info.mmap_offset));
	ASSERT_NE(q, MAP_FAILED);
	EXPECT_EQ(q[0], 0x5a);
	EXPECT_EQ(q[8191], 0x5a);
	munmap(q, 8192);

	ASSERT_EQ(bo_info(fd_.get(), imported, info), 0);
	auto *r = static_cast<char *>(mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd_.get(), info.mmap_offset));
	ASSERT_NE(r, MAP_FAILED) << "mapping the imported buffer through rbln: " << strerror(errno);
	EXPECT_EQ(r[4096], 0x5a);
	munmap(r, 8192);
	munmap(b, 8192);
	for (uint32_t h : {imported, dev, back})
		EXPECT_EQ(gem_close(fd_.get(), h), 0);
}

TEST_F(Memory, KilledProcessLeavesNothingBehind)
{
	for (int round = 0; round < 3; round++) {
		pid_t pid = fork_until_ready([](const std::function<void()> &ready) {
			Fd fd = open_node(sim_device(1)->node);
			uint32_t h;
			for (int c = 0; c < 4; c++)
				if (bo_create(fd.get(), 2 * kMiB, DRM_RBLN_BO_EAGER, c, &h))
					_exit(1);
			if (bo_create(fd.get(), kMiB, 0, DRM_RBLN_CHIPLET_INTERLEAVED, &h))
				_exit(1);
			drm_rbln_bo_info info{};
			bo_info(fd.get(), h, info);
			void *p = mmap(nullptr, kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(),
				       info.mmap_offset);
			if (p == MAP_FAILED)
				_exit(1);
			ready();
		});
		ASSERT_GT(pid, 0) << "child failed to allocate";
		EXPECT_EQ(usage(fd_.get()).used, baseline_.used + 9 * kMiB);
		kill_and_reap(pid);
		EXPECT_EQ(usage(fd_.get()), baseline_) << "round " << round;
	}
}

// Backing that the host cannot provide (a lazy buffer bigger than the VM's
// RAM on a device with its nominal 140 GiB) fails with ENOMEM, quietly: the
// suite's kernel-log check would catch an allocation-failure splat.
TEST(MemoryPlacement, BackingTheHostCannotProvideFailsCleanly)
{
	ASSERT_EQ(sim_new_device("10 rebel100 143360"), 0);	// nominal 140 GiB
	struct Remove {
		~Remove() { EXPECT_EQ(sim_del_device(10), 0); }
	} remove_device_10;
	{
		Fd fd = open_node(sim_device(10)->node);
		ASSERT_TRUE(fd);
		uint32_t h = 0;
		ASSERT_EQ(bo_create(fd.get(), 32ull << 30, 0, 1, &h), 0) << "lazy: capacity only";
		drm_rbln_bo_info info{};
		ASSERT_EQ(bo_info(fd.get(), h, info), 0);
		void *p = mmap(nullptr, info.size, PROT_READ, MAP_SHARED, fd.get(), info.mmap_offset);
		EXPECT_EQ(p, MAP_FAILED);
		EXPECT_EQ(errno, ENOMEM);
		ASSERT_EQ(bo_info(fd.get(), h, info), 0);
		EXPECT_FALSE(info.flags & DRM_RBLN_BO_PLACED);
		uint64_t placed = 1;
		ASSERT_EQ(get_param(fd.get(), DRM_RBLN_PARAM_MEMORY_PLACED, &placed), 0);
		EXPECT_EQ(placed, 0u);
		EXPECT_EQ(gem_close(fd.get(), h), 0);
	}
}
