// libdevmgr against the real module: the C++ and C APIs move bytes, and
// their errors carry the codes and messages users see.
#include <algorithm>
#include <cstring>
#include <random>

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"
#include "devmgr_error_of.h"
#include "rbln_test_util.h"

using namespace std::chrono_literals;

using rbln::test::error_of;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

} // namespace

TEST(Devmgr, RoundTripThroughTheCppApi)
{
	auto dev = rbln::Device::open(1);
	EXPECT_EQ(dev.info().name, "RBLN-CR03");
	EXPECT_EQ(dev.info().chiplet_count, 4u);
	EXPECT_EQ(dev.name(), "rbln:1");
	const auto baseline = dev.memory();

	auto in = dev.allocate_host(kMiB), out = dev.allocate_host(kMiB);
	auto c0 = dev.allocate(kMiB, rbln::Placement::on_chiplet(0));
	auto c2 = dev.allocate(kMiB, rbln::Placement::on_chiplet(2), rbln::AllocMode::eager);
	std::mt19937 rng(7);
	std::ranges::generate(in.map(), [&] { return std::byte(rng()); });

	dev.submit(rbln::Engine::external_hdma, 0, {{in, c0, 0, 0, kMiB}}, "upload").wait();
	dev.submit(rbln::Engine::task_dma, 0, {{c0, c2, 0, 0, kMiB}}, "scatter").wait();
	dev.submit(rbln::Engine::task_dma, 0, {{c2, c0, 0, 0, kMiB}}, "gather").wait();
	auto job = dev.submit(rbln::Engine::external_hdma, 0, {{c0, out, 0, 0, kMiB}}, "download");
	job.wait(10s);
	EXPECT_TRUE(job.done());
	EXPECT_EQ(memcmp(in.map().data(), out.map().data(), kMiB), 0);

	EXPECT_EQ(dev.memory().used, baseline.used + 2 * kMiB);
	EXPECT_EQ(dev.memory(2).placed, kMiB);
	EXPECT_GT(dev.usage().engine_busy_ns[RBLN_ENGINE_EXTERNAL_HDMA], 0u);
}

TEST(Devmgr, BuffersOutliveTheirDeviceObject)
{
	std::optional<rbln::Buffer> keep;
	{
		auto dev = rbln::Device::open(0);
		keep.emplace(dev.allocate_host(4096));
	}
	keep->map()[10] = std::byte{5};
	EXPECT_EQ(keep->map()[10], std::byte{5});
}

TEST(Devmgr, OutOfDeviceMemorySaysSoInTheProductsWords)
{
	auto dev = rbln::Device::open(1);
	auto msg = error_of([&] { dev.allocate(64 * kMiB, rbln::Placement::on_chiplet(1)); },
			    rbln::Errc::device_memory);
	EXPECT_EQ(msg.rfind("rbln_malloc_lazy failed (rbln:1, 67108864 bytes); the device may be out "
			    "of memory or hold stale allocations", 0), 0u) << msg;
	EXPECT_NE(msg.find("64 MiB on chiplet 1"), std::string::npos) << msg;

	// The whole 64 MiB fits interleaved; four more pages do not.
	msg = error_of([&] {
		dev.allocate(64 * kMiB + 4 * 4096, rbln::Placement::interleaved(), rbln::AllocMode::eager);
	}, rbln::Errc::device_memory);
	EXPECT_EQ(msg.rfind("rbln_malloc_eager failed (rbln:1, 67125248 bytes)", 0), 0u) << msg;
	EXPECT_NE(msg.find("interleaved over all chiplets"), std::string::npos) << msg;
}

TEST(Devmgr, BadRequestsNameTheBadValue)
{
	auto dev = rbln::Device::open(1);
	auto msg = error_of([&] { dev.allocate(4096, rbln::Placement::on_chiplet(7)); },
			    rbln::Errc::invalid_argument);
	EXPECT_NE(msg.find("chiplet 7 does not exist; RBLN-CR03 has chiplets 0..3"), std::string::npos)
		<< msg;

	auto host = dev.allocate_host(4096);
	auto c1 = dev.allocate(4096, rbln::Placement::on_chiplet(1));
	msg = error_of([&] { dev.submit(rbln::Engine::external_hdma, 0, {{host, c1, 0, 0, 4096}}); },
		       rbln::Errc::invalid_argument);
	EXPECT_NE(msg.find("rbln:1: submit of 1 copy on chiplet 0 external_hdma refused"),
		  std::string::npos) << msg;
	EXPECT_NE(msg.find("External HDMA: host <-> chiplet 0"), std::string::npos) << msg;

	msg = error_of([] { rbln::Device::open(77); }, rbln::Errc::no_device);
	EXPECT_NE(msg.find("cannot open /dev/rbln77: no such device node"), std::string::npos) << msg;
	EXPECT_NE(msg.find("lsmod | grep rbln"), std::string::npos) << msg;
}

TEST(Devmgr, PermissionDeniedPointsAtTheGroup)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, nullptr) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		try {
			rbln::Device::open(0);
		} catch (const rbln::Error &e) {
			bool ok = e.code() == rbln::Errc::permission &&
				  std::string(e.what()).find("group 'rbln'") != std::string::npos;
			_exit(ok ? 0 : 1);
		}
		_exit(3);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST(Devmgr, HungEngineAndTimeoutsAreTyped)
{
	auto dev = rbln::Device::open(1);
	auto a = dev.allocate(8192, rbln::Placement::on_chiplet(0));
	auto b = dev.allocate(8192, rbln::Placement::on_chiplet(0));
	ASSERT_EQ(rbln::test::write_file("/sys/kernel/debug/rbln/rbln1/hang", "0 device_hdma"), 0);
	auto job = dev.submit(rbln::Engine::device_hdma, 0, {{a, b, 0, 0, 4096}}, "stuck");
	auto msg = error_of([&] { job.wait(1ms); }, rbln::Errc::timeout);
	EXPECT_NE(msg.find("still running"), std::string::npos) << msg;
	msg = error_of([&] { job.wait(10s); }, rbln::Errc::engine_hung);
	EXPECT_NE(msg.find("chiplet 0 device_hdma failed: the engine hung and was reset"),
		  std::string::npos) << msg;
	EXPECT_NO_THROW(job.wait()) << "a failure is reported once";
}

TEST(Devmgr, CApiRoundTripAndLastError)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(1, &dev), RBLN_OK) << rbln_last_error();
	rbln_device_info info{};
	info.struct_size = sizeof(info);
	ASSERT_EQ(rbln_device_get_info(dev, &info), RBLN_OK);
	EXPECT_STREQ(info.name, "RBLN-CR03");
	info.struct_size = 4;
	EXPECT_EQ(rbln_device_get_info(dev, &info), RBLN_ERR_INVALID_ARGUMENT);

	rbln_buffer *host = nullptr, *dst = nullptr, *back = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, RBLN_ALLOC_HOST, &host), RBLN_OK);
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, 0, &dst), RBLN_OK);
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, RBLN_ALLOC_HOST, &back), RBLN_OK);
	void *p = nullptr, *q = nullptr;
	ASSERT_EQ(rbln_buffer_map(host, &p), RBLN_OK);
	strcpy(static_cast<char *>(p), "through the C ABI");

	rbln_copy up{sizeof(rbln_copy), host, dst, 0, 0, 8192}, down{sizeof(rbln_copy), dst, back, 0, 0, 8192};
	rbln_job *job = nullptr;
	ASSERT_EQ(rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &up, 1, "c-up", &job), RBLN_OK);
	EXPECT_EQ(rbln_job_wait(job, 10'000'000'000), RBLN_OK);
	EXPECT_GT(rbln_job_seqno(job), 0u);
	rbln_job_free(job);
	ASSERT_EQ(rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &down, 1, nullptr, &job), RBLN_OK);
	EXPECT_EQ(rbln_job_wait(job, 10'000'000'000), RBLN_OK);
	rbln_job_free(job);
	ASSERT_EQ(rbln_buffer_map(back, &q), RBLN_OK);
	EXPECT_STREQ(static_cast<char *>(q), "through the C ABI");

	rbln_buffer *huge = nullptr;
	// More than the device has, within rbln.ko's per-file and per-user limits.
	EXPECT_EQ(rbln_buffer_alloc(dev, 1ull << 34, 0, 0, &huge), RBLN_ERR_DEVICE_MEMORY);
	EXPECT_NE(std::string(rbln_last_error()).find("rbln_malloc_lazy failed (rbln:1"), std::string::npos);
	EXPECT_EQ(rbln_buffer_alloc(dev, 1ull << 40, 0, 0, &huge), RBLN_ERR_SYSTEM) << "EDQUOT";
	EXPECT_NE(std::string(rbln_last_error()).find("user_max_bytes"), std::string::npos)
		<< rbln_last_error();
	EXPECT_EQ(rbln_buffer_alloc(dev, 4096, 0, 1u << 7, &huge), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_NE(std::string(rbln_last_error()).find("unknown flags"), std::string::npos);

	rbln_memory_usage mu{};
	mu.struct_size = sizeof(mu);
	ASSERT_EQ(rbln_device_memory(dev, 0, &mu), RBLN_OK);
	EXPECT_EQ(mu.used, 8192u);
	rbln_buffer_free(host);
	rbln_buffer_free(dst);
	rbln_buffer_free(back);
	ASSERT_EQ(rbln_device_memory(dev, 0, &mu), RBLN_OK);
	EXPECT_EQ(mu.used, 0u);
	rbln_device_close(dev);

	EXPECT_EQ(rbln_device_open(99, &dev), RBLN_ERR_NO_DEVICE);
	EXPECT_NE(std::string(rbln_last_error()).find("/dev/rbln99"), std::string::npos);
}

TEST(Devmgr, ShareABufferWithAnotherDevice)
{
	auto rebel = rbln::Device::open(1);
	auto atom = rbln::Device::open(0);
	auto buf = rebel.allocate_host(8192);
	auto text = std::string_view("shared by libdevmgr");
	std::memcpy(buf.map().data() + 4096, text.data(), text.size());

	int fd = buf.export_fd();
	ASSERT_GE(fd, 0);
	auto imported = atom.import(fd);
	close(fd);
	EXPECT_EQ(imported.size(), 8192u);
	EXPECT_TRUE(imported.host()) << "another device's memory is host memory here";
	EXPECT_EQ(std::string_view(reinterpret_cast<const char *>(imported.map().data()) + 4096,
				   text.size()), text);

	// The ATOM's External HDMA can read it into its own memory.
	auto vram = atom.allocate(8192);
	auto back = atom.allocate_host(8192);
	atom.submit(rbln::Engine::external_hdma, 0, {{imported, vram, 4096, 0, text.size()}}).wait();
	atom.submit(rbln::Engine::external_hdma, 0, {{vram, back, 0, 0, text.size()}}).wait();
	EXPECT_EQ(std::string_view(reinterpret_cast<const char *>(back.map().data()), text.size()), text);

	auto msg = error_of([&] { atom.import(12345); }, rbln::Errc::invalid_argument);
	EXPECT_NE(msg.find("cannot import dma-buf fd 12345"), std::string::npos) << msg;
}

TEST(Devmgr, AbiCheckPassesQuietlyAndCanBeSkipped)
{
	testing::internal::CaptureStderr();
	rbln::Device::open(0);
	EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "matching driver: nothing to say";

	setenv("RBLN_SKIP_ABI_CHECK", "Yes", 1);
	testing::internal::CaptureStderr();
	rbln::Device::open(0);
	std::string err = testing::internal::GetCapturedStderr();
	// The node Device::open(0) took: NPU 0's accel or render node here.
	EXPECT_NE(err.find("libdevmgr: warning: RBLN_SKIP_ABI_CHECK is set: not checking " +
			   rbln::test::sim_device(0)->node),
		  std::string::npos) << err;

	setenv("RBLN_SKIP_ABI_CHECK", "maybe", 1);	// not one of 1/ON/TRUE/YES
	testing::internal::CaptureStderr();
	rbln::Device::open(0);
	EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
	unsetenv("RBLN_SKIP_ABI_CHECK");
}

TEST(Devmgr, CApiDeviceManagement)
{
	size_t n = 0;
	ASSERT_EQ(rbln_npu_count(&n), RBLN_OK);
	EXPECT_EQ(n, 2u);
	rbln_npu_info npu{};
	npu.struct_size = sizeof(npu);
	ASSERT_EQ(rbln_npu_get(1, &npu), RBLN_OK);
	EXPECT_STREQ(npu.name, "RBLN-CR03");
	EXPECT_EQ(npu.chiplet_count, 4u);
	EXPECT_TRUE(npu.node_present);
	EXPECT_STREQ(npu.status, "READY");
	EXPECT_EQ(rbln_npu_get(5, &npu), RBLN_ERR_NO_DEVICE);
	EXPECT_NE(std::string(rbln_last_error()).find("this host has 2"), std::string::npos);

	setenv("RBLN_DEVICE_MAP", "[0,1]", 1);
	EXPECT_EQ(rbln_logical_device_count(), 1u);
	char summary[512];
	size_t need = rbln_device_summary(summary, sizeof(summary));
	EXPECT_EQ(need, strlen(summary));
	EXPECT_NE(std::string(summary).find("0              | 0, 1             | Active (Aggregated)"),
		  std::string::npos) << summary;
	EXPECT_EQ(rbln_device_summary(nullptr, 0), need) << "size query";

	rbln_registration *reg = nullptr;
	ASSERT_EQ(rbln_register(0, &reg), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(rbln_register(1, &reg), RBLN_ERR_NOT_FOUND);
	EXPECT_NE(std::string(rbln_last_error()).find("rbln:1 does not exist: this process has 1 "
						      "logical device(s)"), std::string::npos);

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(1, &dev), RBLN_OK);
	EXPECT_EQ(rbln_device_acquire(dev), RBLN_ERR_BUSY) << "the registration holds it";
	rbln_client_info clients[8];
	for (auto &c : clients)
		c.struct_size = sizeof(c);
	size_t count = 0;
	ASSERT_EQ(rbln_device_clients(dev, clients, 8, &count), RBLN_OK);
	ASSERT_GE(count, 2u);
	int held = 0, self = 0;
	for (size_t i = 0; i < count && i < 8; i++) {
		held += clients[i].acquired;
		self += clients[i].self;
	}
	EXPECT_EQ(held, 1);
	EXPECT_EQ(self, 1);
	rbln_registration_free(reg);
	EXPECT_EQ(rbln_device_acquire(dev), RBLN_OK) << "freed registration released the NPUs";
	EXPECT_EQ(rbln_device_release(dev), RBLN_OK);
	unsetenv("RBLN_DEVICE_MAP");

	setenv("RBLN_NPUS_PER_DEVICE", "3", 1);
	testing::internal::CaptureStderr();
	EXPECT_EQ(rbln_logical_device_count(), 0u) << "configuration errors never fail the count";
	EXPECT_NE(testing::internal::GetCapturedStderr().find("RBLN_NPUS_PER_DEVICE='3'"), std::string::npos);
	EXPECT_EQ(rbln_register(0, &reg), RBLN_ERR_INVALID_ARGUMENT) << "the full error at first use";
	EXPECT_NE(std::string(rbln_last_error()).find("must be one of 1, 2, 4, 8, 16 or 32"),
		  std::string::npos);
	unsetenv("RBLN_NPUS_PER_DEVICE");

	rbln_event_listener *events = nullptr;
	ASSERT_EQ(rbln_event_listener_open(&events), RBLN_OK) << rbln_last_error();
	EXPECT_GE(rbln_event_listener_fd(events), 0);
	ASSERT_EQ(rbln::test::sim_new_device("14 atom 16"), 0);
	rbln_event ev{};
	ev.struct_size = sizeof(ev);
	bool added = false;
	for (int i = 0; i < 20 && !added; i++) {
		ASSERT_EQ(rbln_event_next(events, 10000, &ev), RBLN_OK) << rbln_last_error();
		added = ev.type == RBLN_EVENT_DEVICE_ADDED && ev.device == 14;
	}
	EXPECT_TRUE(added);
	EXPECT_EQ(ev.chiplet, -1) << "absent attributes are -1";
	ASSERT_EQ(rbln::test::sim_del_device(14), 0);
	rbln_event_listener_close(events);
	rbln_device_close(dev);
}

// C callers find NPUs by uuid or bus id and read status and per-chiplet
// engine figures through libdevmgr, with no sysfs layout of their own.
TEST(Devmgr, CApiLookupStatusAndEngines)
{
	auto sim = rbln::test::sim_device(1);
	ASSERT_TRUE(sim);
	std::string uuid = rbln::test::read_file(sim->sysfs + "/uuid").value_or("");
	rbln_npu_info by_uuid{}, by_bus{};
	by_uuid.struct_size = by_bus.struct_size = sizeof(rbln_npu_info);
	ASSERT_EQ(rbln_npu_find(uuid.c_str(), &by_uuid), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_npu_find("0000:01:20.0", &by_bus), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(by_uuid.index, 1u);
	EXPECT_EQ(by_bus.index, 1u);
	EXPECT_STREQ(by_bus.uuid, uuid.c_str());
	EXPECT_EQ(rbln_npu_find("0000:09:20.0", &by_bus), RBLN_ERR_NO_DEVICE);
	EXPECT_NE(std::string(rbln_last_error()).find("no NPU matches '0000:09:20.0'"), std::string::npos);

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(1, &dev), RBLN_OK);
	rbln_buffer *buf = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, 1 << 20, 2, RBLN_ALLOC_EAGER, &buf), RBLN_OK) << rbln_last_error();
	rbln_device_status st{}, from_sysfs{};
	st.struct_size = from_sysfs.struct_size = sizeof(rbln_device_status);
	ASSERT_EQ(rbln_device_get_status(dev, &st), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_npu_get_status("1", &from_sysfs), RBLN_OK) << rbln_last_error();
	// Sensors follow recent work (earlier tests), so only their range is fixed.
	for (const auto *s : {&st, &from_sysfs}) {
		EXPECT_STREQ(s->status, "READY");
		EXPECT_GE(s->temperature_mc, 30000);
		EXPECT_LE(s->temperature_mc, 100000);
		EXPECT_TRUE(s->pstate == 2 || s->pstate == 14) << s->pstate;
		EXPECT_GE(s->power_w, 60.0);
		EXPECT_LE(s->utilization, 100u);
		EXPECT_EQ(s->memory_total, 64ull << 20);
		EXPECT_EQ(s->memory_used, 1ull << 20);
		EXPECT_EQ(s->memory_placed, 1ull << 20);
	}

	// Rebel100: three engines on each of four chiplets, External HDMA on chiplet 0 only.
	size_t count = 0;
	ASSERT_EQ(rbln_npu_engines("1", nullptr, 0, &count), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(count, 13u);
	std::vector<rbln_engine_figures> engines(count);
	engines[0].struct_size = sizeof(rbln_engine_figures);
	ASSERT_EQ(rbln_npu_engines("1", engines.data(), engines.size(), &count), RBLN_OK);
	int external = 0;
	for (const auto &e : engines) {
		EXPECT_LT(e.chiplet, 4u);
		if (e.engine == RBLN_ENGINE_EXTERNAL_HDMA) {
			external++;
			EXPECT_EQ(e.chiplet, 0u);
		}
	}
	EXPECT_EQ(external, 1);
	rbln_buffer_free(buf);
	rbln_device_close(dev);
}
