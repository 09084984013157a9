// What the C ABI promises beyond single calls: a failed job stays failed, a
// buffer is mapped once whatever the threads, every array element says its
// size, an NPU that is gone is RBLN_ERR_NO_DEVICE however it is reached, and
// the C forms of reset, usage and identity.
#include <barrier>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.h"
#include "rbln/enumerate.hpp"
#include "rbln/figures.hpp"
#include "container_util.h"
#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr int64_t k10s = 10'000'000'000;

rbln_device *open_or_fail(unsigned index)
{
	rbln_device *dev = nullptr;
	EXPECT_EQ(rbln_device_open(index, &dev), RBLN_OK) << rbln_last_error();
	return dev;
}

// Lines of /proc/self/maps that map @node: one per live mapping of its buffers.
size_t mappings_of(const std::string &node)
{
	std::ifstream in("/proc/self/maps");
	size_t n = 0;
	for (std::string line; std::getline(in, line);)
		n += line.find(node) != std::string::npos;
	return n;
}

} // namespace

TEST(CContract, AFailedJobStaysFailed)
{
	rbln_device *dev = open_or_fail(1);
	ASSERT_NE(dev, nullptr);
	rbln_buffer *a = nullptr, *b = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, 0, &a), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, 0, &b), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(debugfs_write(1, "hang", "0 device_hdma"), 0);
	rbln_copy copy{sizeof(rbln_copy), a, b, 0, 0, 4096};
	rbln_job *job = nullptr;
	ASSERT_EQ(rbln_submit(dev, RBLN_ENGINE_DEVICE_HDMA, 0, &copy, 1, "sticky", &job), RBLN_OK)
		<< rbln_last_error();
	ASSERT_EQ(rbln_job_wait(job, k10s), RBLN_ERR_ENGINE_HUNG) << rbln_last_error();
	const std::string first = rbln_last_error();
	EXPECT_NE(first.find("the engine hung and was reset"), std::string::npos) << first;
	for (int64_t timeout : {k10s, int64_t(0)}) {
		EXPECT_EQ(rbln_job_wait(job, timeout), RBLN_ERR_ENGINE_HUNG) << "wait again, timeout " << timeout;
		EXPECT_EQ(rbln_last_error(), first);
	}
	rbln_job_free(job);
	rbln_buffer_free(a);
	rbln_buffer_free(b);
	rbln_device_close(dev);
}

// Two threads map each new buffer at the same moment: one mapping, one
// pointer, and none left once the buffers are freed.
TEST(CContract, ABufferIsMappedOnceFromTwoThreads)
{
	rbln_device *dev = open_or_fail(0);
	ASSERT_NE(dev, nullptr);
	const std::string node = sim_device(0)->node;
	const size_t before = mappings_of(node);
	constexpr int kRounds = 200;
	std::vector<rbln_buffer *> buffers(kRounds);
	for (auto &b : buffers)
		ASSERT_EQ(rbln_buffer_alloc(dev, 4096, 0, RBLN_ALLOC_HOST, &b), RBLN_OK) << rbln_last_error();
	std::vector<void *> seen[2] = {std::vector<void *>(kRounds), std::vector<void *>(kRounds)};
	std::barrier start(2);
	auto mapper = [&](int t) {
		for (int i = 0; i < kRounds; i++) {
			start.arrive_and_wait();
			EXPECT_EQ(rbln_buffer_map(buffers[i], &seen[t][i]), RBLN_OK);
		}
	};
	std::thread other(mapper, 1);
	mapper(0);
	other.join();
	for (int i = 0; i < kRounds; i++)
		EXPECT_EQ(seen[0][i], seen[1][i]) << "round " << i << ": two mappings of one buffer";
	EXPECT_EQ(mappings_of(node), before + kRounds);
	for (auto *b : buffers)
		rbln_buffer_free(b);
	EXPECT_EQ(mappings_of(node), before) << "a mapping outlived its buffer";
	rbln_device_close(dev);
}

// The caller sets only element 0's struct_size; each element comes back saying
// the element size, whatever its struct_size held before.
TEST(CContract, EveryArrayElementSaysItsSize)
{
	rbln_device *dev = open_or_fail(1);
	rbln_device *second = open_or_fail(1);
	ASSERT_TRUE(dev && second);
	rbln_client_info clients[4];
	std::memset(clients, 0xa5, sizeof(clients));
	clients[0].struct_size = sizeof(rbln_client_info);
	size_t count = 0;
	ASSERT_EQ(rbln_device_clients(dev, clients, 4, &count), RBLN_OK) << rbln_last_error();
	ASSERT_GE(count, 2u);
	for (size_t i = 0; i < std::min<size_t>(count, 4); i++)
		EXPECT_EQ(clients[i].struct_size, sizeof(rbln_client_info)) << "clients[" << i << "]";

	rbln_engine_figures engines[16];
	std::memset(engines, 0xa5, sizeof(engines));
	engines[0].struct_size = sizeof(rbln_engine_figures);
	ASSERT_EQ(rbln_npu_engines("1", engines, 16, &count), RBLN_OK) << rbln_last_error();
	ASSERT_GE(count, 4u);
	for (size_t i = 0; i < std::min<size_t>(count, 16); i++)
		EXPECT_EQ(engines[i].struct_size, sizeof(rbln_engine_figures)) << "engines[" << i << "]";
	rbln_device_close(second);
	rbln_device_close(dev);
}

// Through a handle, by spec and by position: one code for an NPU that is gone.
// Its sysfs figures read after it went are an error, not zeros and "".
TEST(CContract, ARemovedNpuIsNoDeviceEverywhere)
{
	ASSERT_EQ(sim_new_device("5 atom"), 0);
	udev_settle();
	rbln_device *dev = open_or_fail(5);
	ASSERT_NE(dev, nullptr);
	rbln::NpuInfo before = rbln::find_npu("5");
	ASSERT_EQ(sim_del_device(5), 0);
	udev_settle();

	rbln_device_status st{};
	st.struct_size = sizeof(st);
	EXPECT_EQ(rbln_device_get_status(dev, &st), RBLN_ERR_NO_DEVICE) << rbln_last_error();
	EXPECT_EQ(rbln_npu_get_status("5", &st), RBLN_ERR_NO_DEVICE) << rbln_last_error();
	rbln_npu_info info{};
	info.struct_size = sizeof(info);
	EXPECT_EQ(rbln_npu_find("5", &info), RBLN_ERR_NO_DEVICE) << rbln_last_error();
	EXPECT_EQ(rbln_npu_get(2, &info), RBLN_ERR_NO_DEVICE) << rbln_last_error();
	rbln_device *again = nullptr;
	EXPECT_EQ(rbln_device_open(5, &again), RBLN_ERR_NO_DEVICE) << rbln_last_error();
	rbln_device_close(dev);

	try {
		rbln::npu_figures(before);
		ADD_FAILURE() << "figures of a removed NPU";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::no_device);
		EXPECT_NE(std::string(e.what()).find("NPU 5 was removed"), std::string::npos) << e.what();
	}
	EXPECT_THROW(rbln::chiplet_figures(before), rbln::Error);
}

TEST(CContract, IdentityUsageAndResetHaveCForms)
{
	rbln_device *dev = open_or_fail(1);
	ASSERT_NE(dev, nullptr);
	const std::string sysfs = sim_device(1)->sysfs;
	rbln_device_info info{};
	info.struct_size = sizeof(info);
	ASSERT_EQ(rbln_device_get_info(dev, &info), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(info.firmware_version, read_file(sysfs + "/firmware_version").value_or("?"));
	EXPECT_EQ(info.serial, read_file(sysfs + "/serial").value_or("?"));
	EXPECT_EQ(std::to_string(info.numa_node), read_file(sysfs + "/numa_node").value_or("?"));

	rbln_buffer *buf = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, 1 << 20, 0, RBLN_ALLOC_EAGER, &buf), RBLN_OK) << rbln_last_error();
	rbln_client_usage usage{};
	usage.struct_size = sizeof(usage);
	ASSERT_EQ(rbln_device_usage(dev, &usage), RBLN_OK) << rbln_last_error();
	EXPECT_NE(usage.client_id, 0u);
	EXPECT_EQ(usage.device_memory, 1u << 20);
	rbln_buffer_free(buf);
	usage.struct_size = 4;
	EXPECT_EQ(rbln_device_usage(dev, &usage), RBLN_ERR_INVALID_ARGUMENT);

	unsigned revoked = 99;
	EXPECT_EQ(rbln_device_reset(dev, 0, &revoked), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(revoked, 0u);
	rbln_device *other = open_or_fail(1);
	EXPECT_EQ(rbln_device_reset(dev, 0, &revoked), RBLN_ERR_BUSY);
	EXPECT_NE(std::string(rbln_last_error()).find("in use by PID"), std::string::npos) << rbln_last_error();
	EXPECT_EQ(rbln_device_reset(dev, 1, &revoked), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(revoked, 1u);
	rbln_device_close(other);
	rbln_device_close(dev);
}

// rbln_npu_get re-enumerates, so a hotplug between calls shifts it; a list
// taken once keeps its count and entries until freed.
TEST(CContract, AnNpuListIsASnapshot)
{
	rbln_npu_list *list = nullptr;
	ASSERT_EQ(rbln_npu_list_take(&list), RBLN_OK) << rbln_last_error();
	const size_t count = rbln_npu_list_count(list);
	ASSERT_EQ(count, 2u) << "the suite's two simulated NPUs";
	std::vector<std::string> uuids;
	for (size_t i = 0; i < count; i++) {
		rbln_npu_info info{};
		info.struct_size = sizeof(info);
		ASSERT_EQ(rbln_npu_list_get(list, i, &info), RBLN_OK) << rbln_last_error();
		uuids.push_back(info.uuid);
	}

	ASSERT_EQ(sim_new_device("6 atom"), 0);
	udev_settle();
	size_t now = 0;
	ASSERT_EQ(rbln_npu_count(&now), RBLN_OK);
	EXPECT_EQ(now, 3u) << "the live count sees the new NPU";
	EXPECT_EQ(rbln_npu_list_count(list), count) << "the snapshot does not";
	for (size_t i = 0; i < count; i++) {
		rbln_npu_info info{};
		info.struct_size = sizeof(info);
		ASSERT_EQ(rbln_npu_list_get(list, i, &info), RBLN_OK) << rbln_last_error();
		EXPECT_EQ(info.uuid, uuids[i]) << "entry " << i << " moved";
	}
	rbln_npu_info past{};
	past.struct_size = sizeof(past);
	EXPECT_EQ(rbln_npu_list_get(list, count, &past), RBLN_ERR_NO_DEVICE);
	EXPECT_STREQ(rbln_last_error(), "rbln_npu_list_get: entry 2 does not exist (the list holds 2)");
	EXPECT_EQ(rbln_npu_list_get(nullptr, 0, &past), RBLN_ERR_INVALID_ARGUMENT);
	rbln_npu_list_free(list);

	ASSERT_EQ(rbln_npu_list_take(&list), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(rbln_npu_list_count(list), 3u) << "a new snapshot has it";
	ASSERT_EQ(sim_del_device(6), 0);
	udev_settle();
	EXPECT_EQ(rbln_npu_list_count(list), 3u);
	rbln_npu_info gone{};
	gone.struct_size = sizeof(gone);
	ASSERT_EQ(rbln_npu_list_get(list, 2, &gone), RBLN_OK) << "the entry stays readable";
	EXPECT_EQ(gone.index, 6u);
	rbln_device *dev = nullptr;
	EXPECT_EQ(rbln_device_open(gone.index, &dev), RBLN_ERR_NO_DEVICE) << "but its NPU is gone";
	rbln_npu_list_free(list);
	rbln_npu_list_free(nullptr);
}

// docs/libdevmgr-c.md's thread-safety promises, checked by ThreadSanitizer: a
// C client using one device, one buffer's first map, one job's waits, the NPU
// list and its own last error from six threads, with the whole library built
// under -fsanitize=thread (tests/threads).
TEST(CContract, ThreadsRunCleanUnderThreadSanitizer)
{
	const std::string bin = rbln::test::cmake_build_dir() + "/tests/threads/rbln_c_threads";
	ASSERT_EQ(::access(bin.c_str(), X_OK), 0) << bin;
	const std::string suppressions = std::string(std::getenv("RBLN_TOP")) + "/tests/threads/tsan.supp";
	auto r = run_shell("TSAN_OPTIONS='halt_on_error=1 exitcode=66 suppressions=" + suppressions + "' " +
			   bin + " 0 2>&1");
	EXPECT_EQ(r.exit, 0) << r.out;
	EXPECT_EQ(r.out.find("ThreadSanitizer"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("6 threads x 8 rounds, 0 failures"), std::string::npos) << r.out;
}
