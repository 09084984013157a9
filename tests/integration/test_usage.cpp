// Per-file usage: CLIENT_USAGE on every kernel, and the standard DRM fdinfo
// keys where the kernel has them (DRM_RBLN_CAP_FDINFO), agreeing with it.
#include <fstream>
#include <map>

#include <sys/ioctl.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

drm_rbln_client_usage usage(int fd)
{
	drm_rbln_client_usage u{};
	EXPECT_EQ(ioctl(fd, DRM_IOCTL_RBLN_CLIENT_USAGE, &u), 0);
	return u;
}

std::map<std::string, std::string> fdinfo(int fd)
{
	std::map<std::string, std::string> keys;
	std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
	for (std::string line; std::getline(in, line);) {
		auto colon = line.find(':');
		if (colon == std::string::npos)
			continue;
		auto value = line.substr(colon + 1);
		value.erase(0, value.find_first_not_of(" \t"));
		keys[line.substr(0, colon)] = value;
	}
	return keys;
}

// "2 MiB" -> 2097152, as the DRM core prints sizes.
uint64_t fdinfo_bytes(const std::string &v)
{
	size_t end = 0;
	uint64_t n = std::stoull(v, &end);
	std::string unit = v.substr(end);
	unit.erase(0, unit.find_first_not_of(' '));
	const std::map<std::string, int> shift{{"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}};
	return n << shift.at(unit);
}

} // namespace

TEST(Usage, ClientUsageCountsBuffersAndEngineTime)
{
	Fd fd = open_node(sim_device(1)->node);
	ASSERT_TRUE(fd);
	drm_rbln_client_usage u = usage(fd.get());
	EXPECT_EQ(u.memory_total, 0u);
	for (uint64_t ns : u.engine_busy_ns)
		EXPECT_EQ(ns, 0u);

	uint32_t host = 0, dev = 0;
	ASSERT_EQ(bo_create(fd.get(), kMiB, DRM_RBLN_BO_HOST, 0, &host), 0);
	ASSERT_EQ(bo_create(fd.get(), kMiB, 0, 0, &dev), 0);
	u = usage(fd.get());
	EXPECT_EQ(u.memory_total, 2 * kMiB);
	EXPECT_EQ(u.memory_resident, 0u) << "both lazy";
	EXPECT_EQ(u.device_memory, kMiB) << "host memory takes no device capacity";

	const std::string chiplet0 = sim_device(1)->sysfs + "/chiplet0/";
	auto engine_busy = [&](const char *engine) {
		return std::stoull(read_file(chiplet0 + engine + "_busy_ns").value_or("0"));
	};
	uint64_t ehdma_before = engine_busy("external_hdma"), tdma_before = engine_busy("task_dma");

	drm_rbln_copy c{host, dev, 0, 0, kMiB};
	drm_rbln_submit s{};
	s.engine = DRM_RBLN_ENGINE_EXTERNAL_HDMA;
	s.copies = reinterpret_cast<uintptr_t>(&c);
	s.copy_count = 1;
	s.copy_size = sizeof(c);
	ASSERT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_SUBMIT, &s), 0);
	drm_rbln_wait w{};
	w.seqno = s.seqno;
	w.timeout_ns = 10'000'000'000;
	ASSERT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_WAIT, &w), 0);
	ASSERT_EQ(w.status, 0);

	u = usage(fd.get());
	EXPECT_EQ(u.memory_resident, 2 * kMiB) << "the job placed both";
	EXPECT_GT(u.engine_busy_ns[DRM_RBLN_ENGINE_EXTERNAL_HDMA], 0u);
	EXPECT_EQ(u.engine_busy_ns[DRM_RBLN_ENGINE_TASK_DMA], 0u);
	// The device's per-engine figures in sysfs moved the same way.
	EXPECT_GE(engine_busy("external_hdma") - ehdma_before, u.engine_busy_ns[DRM_RBLN_ENGINE_EXTERNAL_HDMA]);
	EXPECT_EQ(engine_busy("task_dma"), tdma_before);
	// External HDMA exists on chiplet 0 only, and so does its file.
	const std::string chiplet1 = sim_device(1)->sysfs + "/chiplet1/";
	EXPECT_FALSE(read_file(chiplet1 + "external_hdma_busy_ns").has_value());
	EXPECT_TRUE(read_file(chiplet1 + "neural_dma_busy_ns").has_value());

	Fd other = open_node(sim_device(1)->node);
	drm_rbln_client_usage o = usage(other.get());
	EXPECT_NE(o.client_id, u.client_id);
	EXPECT_EQ(o.memory_total, 0u) << "usage is per open file";

	drm_rbln_client_usage bad{};
	bad.flags = 1;
	EXPECT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_CLIENT_USAGE, &bad) ? errno : 0, EINVAL);
	bad = {};
	bad.reserved = 1;
	EXPECT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_CLIENT_USAGE, &bad) ? errno : 0, EINVAL);
	EXPECT_EQ(gem_close(fd.get(), host), 0);
	EXPECT_EQ(gem_close(fd.get(), dev), 0);
}

TEST(Usage, FdinfoHasTheDrmKeysWhereTheKernelSupportsThem)
{
	Fd fd = open_node(sim_device(0)->node);
	ASSERT_TRUE(fd);
	uint64_t caps = 0;
	ASSERT_EQ(get_param(fd.get(), DRM_RBLN_PARAM_CAPABILITIES, &caps), 0);
	uint32_t h = 0;
	ASSERT_EQ(bo_create(fd.get(), 3 * kMiB, DRM_RBLN_BO_EAGER, 0, &h), 0);
	drm_rbln_client_usage u = usage(fd.get());
	auto keys = fdinfo(fd.get());

	if (!(caps & DRM_RBLN_CAP_FDINFO)) {
		EXPECT_EQ(keys.count("drm-engine-task_dma"), 0u) << "the capability bit is honest";
		GTEST_SKIP() << "this kernel has no DRM fdinfo; CLIENT_USAGE covers it";
	}
	EXPECT_EQ(keys["drm-driver"], "rbln");
	EXPECT_EQ(keys["drm-client-id"], std::to_string(u.client_id));
	ASSERT_TRUE(keys.count("drm-total-memory"));
	EXPECT_EQ(fdinfo_bytes(keys["drm-total-memory"]), u.memory_total);
	ASSERT_TRUE(keys.count("drm-resident-memory"));
	EXPECT_EQ(fdinfo_bytes(keys["drm-resident-memory"]), u.memory_resident);
	for (const char *engine : {"neural_dma", "task_dma", "device_hdma", "external_hdma"})
		EXPECT_EQ(keys["drm-engine-" + std::string(engine)], "0 ns") << engine;
	EXPECT_EQ(gem_close(fd.get(), h), 0);
}
