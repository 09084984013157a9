// DMA against the real module: bytes really move host -> chiplet -> other
// chiplets -> host through the engines that may move them; every bad submit
// is refused; hung engines time out and recover; faults are reported; dying
// processes leave nothing behind.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <pthread.h>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

// Submits one copy and waits for it; returns the job's status or the errno.
int copy(int fd, uint32_t engine, uint32_t chiplet, drm_rbln_copy c)
{
	uint64_t seqno = 0;
	int err = submit(fd, engine, chiplet, {c}, &seqno, "test copy");
	return err ? err : wait_job(fd, seqno);
}

struct Buffer {
	uint32_t handle = 0;
	uint64_t size = 0;
	uint8_t *map = nullptr;
};

Buffer make_buffer(int fd, uint64_t size, uint32_t flags, uint32_t chiplet, bool map = false)
{
	Buffer b;
	b.size = size;
	EXPECT_EQ(bo_create(fd, size, flags, chiplet, &b.handle), 0);
	if (map) {
		drm_rbln_bo_info info{};
		EXPECT_EQ(bo_info(fd, b.handle, info), 0);
		void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset);
		EXPECT_NE(p, MAP_FAILED);
		b.map = static_cast<uint8_t *>(p);
	}
	return b;
}

void free_buffer(int fd, Buffer &b)
{
	if (b.map)
		munmap(b.map, b.size);
	EXPECT_EQ(gem_close(fd, b.handle), 0);
}

uint64_t param(int fd, uint32_t p)
{
	uint64_t v = 0;
	EXPECT_EQ(get_param(fd, p, &v), 0);
	return v;
}

// One round trip of @len bytes at random offsets through every chiplet:
// host -(External HDMA)-> chiplet 0 -(Task DMA)-> chiplet N -(Neural DMA)->
// chiplet N -(Task DMA, gather)-> chiplet 0 -(External HDMA)-> host.
void round_trip(int fd, uint32_t chiplets, std::mt19937_64 &rng, uint64_t len)
{
	// Room for the copy at a random offset; small enough for many at once.
	const uint64_t size = (2 * len + 8191) & ~4095ull;
	std::uniform_int_distribution<uint64_t> off(0, size - len);
	Buffer in = make_buffer(fd, size, DRM_RBLN_BO_HOST, 0, true);
	Buffer out = make_buffer(fd, size, DRM_RBLN_BO_HOST, 0, true);
	Buffer c0 = make_buffer(fd, size, 0, 0);
	for (uint64_t i = 0; i < size; i++)
		in.map[i] = uint8_t(rng());

	uint64_t src = off(rng), at0 = off(rng);
	ASSERT_EQ(copy(fd, DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0, {in.handle, c0.handle, src, at0, len}), 0);
	uint64_t cur = at0;
	for (uint32_t n = 1; n < chiplets; n++) {
		Buffer a = make_buffer(fd, size, 0, n), b = make_buffer(fd, size, 0, n);
		uint64_t at_a = off(rng), at_b = off(rng), back = off(rng);
		ASSERT_EQ(copy(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {c0.handle, a.handle, cur, at_a, len}), 0);
		ASSERT_EQ(copy(fd, DRM_RBLN_ENGINE_NEURAL_DMA, n, {a.handle, b.handle, at_a, at_b, len}), 0);
		// Chiplet 0's Task DMA gathers the result back into a fresh range.
		Buffer c0b = make_buffer(fd, size, 0, 0);
		ASSERT_EQ(copy(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {b.handle, c0b.handle, at_b, back, len}), 0);
		free_buffer(fd, c0);
		c0 = c0b;
		cur = back;
		free_buffer(fd, a);
		free_buffer(fd, b);
	}
	uint64_t dst = off(rng);
	ASSERT_EQ(copy(fd, DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0, {c0.handle, out.handle, cur, dst, len}), 0);
	ASSERT_EQ(memcmp(in.map + src, out.map + dst, len), 0) << "len " << len;
	free_buffer(fd, in);
	free_buffer(fd, out);
	free_buffer(fd, c0);
}

// NPU 1 is the Rebel100 (4 chiplets), NPU 0 the ATOM (1 chiplet).
class Dma : public ::testing::Test {
protected:
	void SetUp() override
	{
		fd_ = open_node(sim_device(1)->node);
		ASSERT_TRUE(fd_);
		used_ = param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED);
		ASSERT_TRUE(param(fd_.get(), DRM_RBLN_PARAM_CAPABILITIES) & DRM_RBLN_CAP_DMA);
	}
	void TearDown() override
	{
		EXPECT_EQ(param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED), used_) << "memory leaked";
	}
	Fd fd_;
	uint64_t used_ = 0;
};

} // namespace

TEST_F(Dma, RoundTripsThroughEveryChipletKeepTheBytes)
{
	std::mt19937_64 rng(1234);
	std::uniform_int_distribution<uint64_t> len(1, 2 * kMiB);
	uint64_t busy_before = param(fd_.get(), DRM_RBLN_PARAM_BUSY_NS);
	const std::vector<uint64_t> lengths{1, 4095, 4096, 65537, len(rng), len(rng)};
	for (uint64_t l : lengths)
		round_trip(fd_.get(), 4, rng, l);
	EXPECT_GT(param(fd_.get(), DRM_RBLN_PARAM_BUSY_NS), busy_before) << "busy time recorded";

	Fd atom = open_node(sim_device(0)->node);
	round_trip(atom.get(), 1, rng, 12345);
}

TEST_F(Dma, ConcurrentSubmittersFromThreadsAndProcesses)
{
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			Fd fd = open_node(sim_device(1)->node);
			std::mt19937_64 rng(100 + k);
			for (int i = 0; i < 4; i++)
				round_trip(fd.get(), 4, rng, 1 + rng() % (512 * 1024));
			_exit(::testing::Test::HasFailure() ? 1 : 0);
		}
	}
	std::vector<std::thread> threads;
	for (int t = 0; t < 3; t++)
		threads.emplace_back([this, t] {
			std::mt19937_64 rng(t);
			for (int i = 0; i < 4; i++)
				round_trip(fd_.get(), 4, rng, 1 + rng() % (512 * 1024));
		});
	for (auto &t : threads)
		t.join();
	for (pid_t pid : kids) {
		int status = 0;
		waitpid(pid, &status, 0);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child round trips";
	}
}

TEST_F(Dma, BadSubmitsAreRejected)
{
	int fd = fd_.get();
	Buffer host = make_buffer(fd, 8192, DRM_RBLN_BO_HOST, 0);
	Buffer d0 = make_buffer(fd, 8192, 0, 0), d1 = make_buffer(fd, 8192, 0, 1);
	Buffer il = make_buffer(fd, 4 * 4096, 0, DRM_RBLN_CHIPLET_INTERLEAVED);
	const drm_rbln_copy ok{host.handle, d0.handle, 0, 0, 4096};
	const auto H = DRM_RBLN_ENGINE_EXTERNAL_HDMA, T = DRM_RBLN_ENGINE_TASK_DMA,
		   N = DRM_RBLN_ENGINE_NEURAL_DMA;

	struct Row {
		const char *why;
		uint32_t engine, chiplet;
		drm_rbln_copy c;
		int err;
	};
	const Row rows[] = {
		{"valid, for reference", H, 0, ok, 0},
		{"unknown engine", DRM_RBLN_ENGINE_COUNT, 0, ok, EINVAL},
		{"chiplet out of range", H, 4, ok, EINVAL},
		{"External HDMA off chiplet 0", H, 1, {host.handle, d1.handle, 0, 0, 4096}, EINVAL},
		{"zero size", H, 0, {host.handle, d0.handle, 0, 0, 0}, EINVAL},
		{"source range past the end", H, 0, {host.handle, d0.handle, 4096, 0, 8192}, EINVAL},
		{"destination range past the end", H, 0, {host.handle, d0.handle, 0, 8000, 4096}, EINVAL},
		{"offset + size overflows", H, 0, {host.handle, d0.handle, ~0ull - 10, 0, 4096}, EINVAL},
		{"unknown source handle", H, 0, {9999, d0.handle, 0, 0, 4096}, ENOENT},
		{"unknown destination handle", H, 0, {host.handle, 9999, 0, 0, 4096}, ENOENT},
		{"External HDMA device to device", H, 0, {d0.handle, d0.handle, 0, 4096, 4096}, EINVAL},
		{"External HDMA host to host", H, 0, {host.handle, host.handle, 0, 4096, 4096}, EINVAL},
		{"External HDMA to chiplet 1 memory", H, 0, {host.handle, d1.handle, 0, 0, 4096}, EINVAL},
		{"Task DMA from host memory", T, 0, {host.handle, d0.handle, 0, 0, 4096}, EINVAL},
		{"Task DMA between two other chiplets", T, 2, {d0.handle, d1.handle, 0, 0, 4096}, EINVAL},
		{"Neural DMA across chiplets", N, 0, {d0.handle, d1.handle, 0, 0, 4096}, EINVAL},
		{"overlapping ranges in one buffer", T, 0, {d0.handle, d0.handle, 0, 100, 4096}, EINVAL},
		{"interleaved is on every chiplet", N, 3, {il.handle, il.handle, 0, 8192, 4096}, 0},
	};
	for (const auto &row : rows) {
		uint64_t seqno = 0;
		int err = submit(fd, row.engine, row.chiplet, {row.c}, &seqno);
		EXPECT_EQ(err, row.err) << row.why;
		if (!err) {
			EXPECT_EQ(wait_job(fd, seqno), 0) << row.why;
		}
	}

	// Fields of the submit itself.
	drm_rbln_copy one = ok;
	uint64_t last_seqno = 0;
	auto raw = [&](auto edit) {
		drm_rbln_submit a{};
		a.engine = H;
		a.chiplet = 0;
		a.copies = reinterpret_cast<uintptr_t>(&one);
		a.copy_count = 1;
		a.copy_size = sizeof(one);
		edit(a);
		if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &a))
			return errno;
		last_seqno = a.seqno;
		return 0;
	};
	EXPECT_EQ(raw([](auto &a) { a.flags = 1u << 2; }), EINVAL) << "unknown flag (bit 1 is SUBMIT_TIMES since 14)";
	EXPECT_EQ(raw([](auto &a) { a.reserved = 1; }), EINVAL) << "reserved";
	EXPECT_EQ(raw([](auto &a) { a.copy_count = 0; }), EINVAL) << "no copies";
	EXPECT_EQ(raw([](auto &a) { a.copy_count = DRM_RBLN_MAX_COPIES + 1; }), EINVAL) << "too many";
	EXPECT_EQ(raw([](auto &a) { a.copy_size = sizeof(drm_rbln_copy) - 8; }), EINVAL) << "short element";
	EXPECT_EQ(raw([](auto &a) { a.copy_size = 8192; }), EINVAL) << "huge element";
	EXPECT_EQ(raw([](auto &a) { a.copies = 8; }), EFAULT) << "bad pointer";
	{
		// The second element would sit in a page that is not mapped.
		long page = sysconf(_SC_PAGESIZE);
		auto *pages = static_cast<uint8_t *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
							  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		ASSERT_NE(pages, MAP_FAILED);
		munmap(pages + page, page);
		auto *edge = reinterpret_cast<drm_rbln_copy *>(pages + page) - 1;
		*edge = ok;
		EXPECT_EQ(raw([&](auto &a) {
			a.copies = reinterpret_cast<uintptr_t>(edge);
			a.copy_count = 2;
		}), EFAULT) << "array runs into unmapped memory";
		munmap(pages, page);
	}
	EXPECT_EQ(raw([](auto &a) { a.label = 8; }), EFAULT) << "bad label pointer";
	std::string long_label(DRM_RBLN_LABEL_MAX, 'x');
	EXPECT_EQ(raw([&](auto &a) { a.label = reinterpret_cast<uintptr_t>(long_label.c_str()); }),
		  EINVAL) << "label without NUL within the limit";
	// A newer, larger element is fine when its extra bytes are zero, refused otherwise.
	struct Bigger {
		drm_rbln_copy c;
		uint64_t future;
	} big{ok, 0};
	auto bigger = [&](uint64_t future) {
		big.future = future;
		return raw([&](auto &a) {
			a.copies = reinterpret_cast<uintptr_t>(&big);
			a.copy_size = sizeof(big);
		});
	};
	EXPECT_EQ(bigger(0), 0) << "larger element, zero tail";
	EXPECT_EQ(wait_job(fd, last_seqno), 0);
	EXPECT_EQ(bigger(1), EINVAL) << "larger element, unknown field set";

	// Waits.
	drm_rbln_wait w{};
	EXPECT_EQ(ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) ? errno : 0, EINVAL) << "seqno 0";
	w.seqno = 1ull << 60;
	EXPECT_EQ(ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) ? errno : 0, EINVAL) << "never issued";
	w.seqno = 1;
	w.flags = 1;
	EXPECT_EQ(ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) ? errno : 0, EINVAL) << "flags";
	w.flags = 0;
	w.timeout_ns = -1;
	EXPECT_EQ(ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) ? errno : 0, EINVAL) << "negative timeout";

	for (Buffer *b : {&host, &d0, &d1, &il})
		free_buffer(fd, *b);
}

TEST_F(Dma, HungEngineTimesOutIsResetAndOthersKeepWorking)
{
	int fd = fd_.get();
	Buffer a = make_buffer(fd, 8192, 0, 0), b = make_buffer(fd, 8192, 0, 0);
	const std::string resets = sim_device(1)->sysfs + "/chiplet0/engine_resets";
	const auto before = std::stoul(read_file(resets).value_or("0"));
	const std::string device_resets = sim_device(1)->sysfs + "/engine_resets";
	const auto device_before = std::stoul(read_file(device_resets).value_or("0"));

	// A timeout long enough that a slow guest sees the job running before it ends.
	std::optional<JobTimeout> timeout{"3000"};
	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
	uint64_t hung = 0;
	ASSERT_EQ(submit(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {{a.handle, b.handle, 0, 0, 4096}}, &hung), 0);
	EXPECT_EQ(wait_job(fd, hung, 0), ETIME) << "still running: polling says so";
	const std::string dev = sim_device(1)->sysfs;
	// The engine's worker picks the job up asynchronously.
	for (int i = 0; i < 100 && read_file(dev + "/status") != "BUSY"; i++)
		usleep(10000);
	EXPECT_EQ(read_file(dev + "/status"), "BUSY") << "a job is running";
	EXPECT_EQ(read_file(dev + "/status_code"), "1");
	EXPECT_EQ(param(fd, DRM_RBLN_PARAM_STATUS), uint64_t{DRM_RBLN_STATUS_BUSY});

	// Another client on another engine is not held up.
	Fd other = open_node(sim_device(1)->node);
	Buffer c = make_buffer(other.get(), 8192, 0, 0), d = make_buffer(other.get(), 8192, 0, 0);
	EXPECT_EQ(copy(other.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {c.handle, d.handle, 0, 0, 4096}), 0);

	EXPECT_EQ(wait_job(fd, hung), -ETIMEDOUT);
	timeout.reset();
	EXPECT_EQ(wait_job(fd, hung), 0) << "a failure is reported once";
	EXPECT_EQ(read_file(dev + "/status"), "READY") << "idle again";
	EXPECT_EQ(std::stoul(read_file(resets).value_or("0")), before + 1);
	EXPECT_EQ(std::stoul(read_file(device_resets).value_or("0")), device_before + 1) << "the device's sum";
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {a.handle, b.handle, 0, 4096, 4096}), 0)
		<< "the engine works again after its reset";
	free_buffer(other.get(), c);
	free_buffer(other.get(), d);
	free_buffer(fd, a);
	free_buffer(fd, b);
}

// A WAIT interrupted by signals (with SA_RESTART, so the kernel restarts it)
// still ends at its timeout: it once restarted with the full timeout each
// time and, with signals coming often enough, waited for the job instead.
TEST_F(Dma, SignalsDoNotStretchAWait)
{
	int fd = fd_.get();
	Buffer a = make_buffer(fd, 8192, 0, 0), b = make_buffer(fd, 8192, 0, 0);
	JobTimeout timeout("20000");
	ASSERT_EQ(debugfs_write(1, "hang", "0 neural_dma"), 0);
	uint64_t hung = 0;
	ASSERT_EQ(submit(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 0, {{a.handle, b.handle, 0, 0, 4096}}, &hung), 0);

	struct sigaction sa{}, old{};
	sa.sa_handler = [](int) {};
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, &old);
	std::atomic<bool> done{false};
	pthread_t waiter = pthread_self();
	std::thread pester([&] {
		while (!done) {
			pthread_kill(waiter, SIGUSR1);
			usleep(100'000);
		}
	});
	auto start = std::chrono::steady_clock::now();
	drm_rbln_wait w{};
	w.seqno = hung;
	w.timeout_ns = 2'000'000'000;
	int err = ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) ? errno : 0;
	auto waited = std::chrono::steady_clock::now() - start;
	done = true;
	pester.join();
	sigaction(SIGUSR1, &old, nullptr);

	EXPECT_EQ(err, ETIME);
	EXPECT_LT(waited, std::chrono::seconds(15)) << "the wait restarted with its full timeout";
	EXPECT_EQ(debugfs_write(1, "hang", "0 neural_dma 0"), 0);
	EXPECT_EQ(wait_job(fd, hung), 0);
	free_buffer(fd, a);
	free_buffer(fd, b);
}

// [start, end) of rbln's code and data (/proc/modules), or {0, 0}.
static std::pair<uint64_t, uint64_t> module_range()
{
	std::istringstream modules(read_file("/proc/modules").value_or(""));
	std::string name, refs, deps, state, addr;
	uint64_t size = 0;
	while (modules >> name >> size >> refs >> deps >> state >> addr) {
		if (name == "rbln")
			return {std::stoull(addr, nullptr, 16), std::stoull(addr, nullptr, 16) + size};
		modules.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
	}
	return {0, 0};
}

// On the sanitizer kernel (failslab): a timeout while every slab allocation
// with rbln's code on the stack fails, from any task.  The handler allocates
// nothing (its event goes from the job's end work, which then drops it), and
// its signalling section is lockdep's to check: run-vm.sh fails the run on a
// lockdep, KASAN or WARN report in the kernel log.
TEST_F(Dma, TimeoutUnderAllocationFailuresReportsNothing)
{
	const std::string slab = "/sys/kernel/debug/failslab";
	if (access(slab.c_str(), F_OK))
		GTEST_SKIP() << "no failslab: not the sanitizer kernel";
	auto [start, end] = module_range();
	ASSERT_NE(start, 0u) << "rbln is not in /proc/modules";
	int fd = fd_.get();
	Buffer a = make_buffer(fd, 8192, 0, 0), b = make_buffer(fd, 8192, 0, 0);
	JobTimeout timeout("500");
	ASSERT_EQ(debugfs_write(1, "hang", "0 neural_dma"), 0);
	uint64_t hung = 0;
	ASSERT_EQ(submit(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 0, {{a.handle, b.handle, 0, 0, 4096}}, &hung), 0);
	constexpr unsigned kBudget = 1000;
	const std::pair<const char *, std::string> on[] = {
		{"task-filter", "N"}, {"ignore-gfp-wait", "N"}, {"require-start", std::to_string(start)},
		{"require-end", std::to_string(end)}, {"stacktrace-depth", "32"}, {"verbose", "0"},
		{"interval", "1"}, {"space", "0"}, {"times", std::to_string(kBudget)},
		{"probability", "100"},
	};
	for (const auto &[name, value] : on)
		ASSERT_EQ(write_file(slab + "/" + name, value), 0) << name;
	const int status = wait_job(fd, hung);
	ASSERT_EQ(write_file(slab + "/probability", "0"), 0);
	EXPECT_EQ(status, -ETIMEDOUT);
	EXPECT_LT(std::stoul(read_file(slab + "/times").value_or("0")), kBudget)
		<< "no allocation failed: the timeout's path was not under injection";
	EXPECT_EQ(debugfs_write(1, "hang", "0 neural_dma 0"), 0);
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 0, {a.handle, b.handle, 0, 4096, 4096}), 0);
	free_buffer(fd, a);
	free_buffer(fd, b);
}

TEST_F(Dma, InjectedFailuresAndChipletDown)
{
	int fd = fd_.get();
	Buffer a = make_buffer(fd, 8192, 0, 2), b = make_buffer(fd, 8192, 0, 2);
	const drm_rbln_copy c{a.handle, b.handle, 0, 4096, 4096};

	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "2"), 0);
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 2, c), -EIO);
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_DEVICE_HDMA, 2, c), -EIO);
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 2, c), 0);

	const std::string sysfs = sim_device(1)->sysfs;
	const auto faults = std::stoul(read_file(sysfs + "/faults").value_or("0"));
	ASSERT_EQ(debugfs_write(1, "chiplet_down", "2 1"), 0);
	// A lost chiplet is a status a monitor reads without opening the device.
	EXPECT_EQ(read_file(sysfs + "/chiplet2/status"), "lost");
	EXPECT_EQ(read_file(sysfs + "/chiplet1/status"), "ok");
	EXPECT_EQ(read_file(sysfs + "/status"), "FAULT");
	EXPECT_EQ(read_file(sysfs + "/faults"), std::to_string(faults + 1));
	uint64_t seqno;
	EXPECT_EQ(submit(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 2, {c}, &seqno), ENODEV);
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 3,
		       {a.handle, b.handle, 0, 0, 1}), EINVAL) << "buffers are not on chiplet 3";
	ASSERT_EQ(debugfs_write(1, "chiplet_down", "2 0"), 0);
	EXPECT_EQ(copy(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 2, c), 0);

	EXPECT_EQ(debugfs_write(1, "hang", "0 external_hdma"), 0);
	EXPECT_EQ(debugfs_write(1, "hang", "0 external_hdma 0"), 0);
	EXPECT_EQ(debugfs_write(1, "hang", "1 external_hdma"), EINVAL) << "no such engine there";
	EXPECT_EQ(debugfs_write(1, "hang", "9 task_dma"), EINVAL);
	EXPECT_EQ(debugfs_write(1, "chiplet_down", "4"), EINVAL);
	free_buffer(fd, a);
	free_buffer(fd, b);
	EXPECT_EQ(read_file(sysfs + "/status"), "FAULT") << "the chiplet's return does not clear the fault";
	EXPECT_EQ(read_file(sysfs + "/chiplet2/status"), "ok");
	drm_rbln_reset reset{};
	ASSERT_EQ(ioctl(fd, DRM_IOCTL_RBLN_RESET, &reset), 0) << "this test's file is the only one open";
	EXPECT_EQ(read_file(sysfs + "/status"), "READY");
	EXPECT_EQ(read_file(sysfs + "/faults"), std::to_string(faults + 1)) << "a reset keeps the count";
}

// REPORT_END (interface 11): a job that ended inside SUBMIT is reported there,
// once, and not kept for WAIT; one that did not end is waited for as before.
TEST_F(Dma, SubmitReportsAJobThatEndedInsideIt)
{
	int fd = fd_.get();
	Buffer a = make_buffer(fd, 8192, 0, 0, true), b = make_buffer(fd, 8192, 0, 0, true);
	std::memset(a.map, 0x5a, 4096);
	const drm_rbln_copy c{a.handle, b.handle, 0, 0, 4096};
	auto submit_reporting = [&](uint32_t flags, drm_rbln_submit &s) {
		s = {};
		s.engine = DRM_RBLN_ENGINE_TASK_DMA;
		s.chiplet = 0;
		s.copies = reinterpret_cast<uintptr_t>(&c);
		s.copy_count = 1;
		s.copy_size = sizeof(c);
		s.flags = flags;
		s.ended = 77;		// out fields are written, not read
		s.status = 77;
		return ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s) ? errno : 0;
	};

	drm_rbln_submit s;
	ASSERT_EQ(submit_reporting(DRM_RBLN_SUBMIT_REPORT_END, s), 0);
	EXPECT_EQ(s.ended, 1u) << "a 4 KiB job on an idle engine runs inside SUBMIT";
	EXPECT_EQ(s.status, 0);
	EXPECT_EQ(b.map[4095], 0x5a) << "and its bytes are there when SUBMIT returns";
	EXPECT_EQ(wait_job(fd, s.seqno), 0);

	// A failure reported by SUBMIT is not kept: more of them than the file may
	// have in flight, never waited for, do not fill its table.
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", std::to_string(DRM_RBLN_MAX_INFLIGHT + 8)), 0);
	for (int i = 0; i < DRM_RBLN_MAX_INFLIGHT + 8; i++) {
		ASSERT_EQ(submit_reporting(DRM_RBLN_SUBMIT_REPORT_END, s), 0) << "job " << i;
		ASSERT_EQ(s.ended, 1u);
		ASSERT_EQ(s.status, -EIO);
	}
	EXPECT_EQ(wait_job(fd, s.seqno), 0) << "reported once, by SUBMIT";
	// Without the flag the same failure waits for WAIT, as before.
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "1"), 0);
	ASSERT_EQ(submit_reporting(0, s), 0);
	EXPECT_EQ(s.ended, 0u);
	EXPECT_EQ(s.status, 0);
	EXPECT_EQ(wait_job(fd, s.seqno), -EIO);

	// A job that cannot end inside SUBMIT (its engine hangs) is not reported.
	JobTimeout timeout("500");
	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
	ASSERT_EQ(submit_reporting(DRM_RBLN_SUBMIT_REPORT_END, s), 0);
	EXPECT_EQ(s.ended, 0u);
	EXPECT_EQ(s.status, 0);
	EXPECT_EQ(wait_job(fd, s.seqno), -ETIMEDOUT);
	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma 0"), 0);

	EXPECT_EQ(submit_reporting(1u << 2, s), EINVAL) << "unknown flag (bit 1 is SUBMIT_TIMES since 14)";
	free_buffer(fd, a);
	free_buffer(fd, b);
}

static long long ms_since(std::chrono::steady_clock::time_point start)
{
	return std::chrono::duration_cast<std::chrono::milliseconds>(
		       std::chrono::steady_clock::now() - start)
		.count();
}

TEST_F(Dma, KilledProcessWithJobsInFlightLeavesNothing)
{
	for (int round = 0; round < 3; round++) {
		pid_t pid = fork_until_ready([](const std::function<void()> &ready) {
			Fd fd = open_node(sim_device(1)->node);
			Buffer a = make_buffer(fd.get(), 8 * kMiB, 0, 0);
			Buffer b = make_buffer(fd.get(), 8 * kMiB, 0, 1);
			// Fill the queue (ENOSPC at the per-file limit) and keep it full.
			for (int i = 0;; i++) {
				uint64_t s;
				int err = submit(fd.get(), DRM_RBLN_ENGINE_TASK_DMA, 0,
						 {{a.handle, b.handle, 0, 0, 8 * kMiB}}, &s);
				if (err && err != ENOSPC)
					_exit(1);
				if (i == 8)
					ready();
			}
		});
		ASSERT_GT(pid, 0) << "child failed to submit";
		kill_and_reap(pid);
		// Its running job ends in a work item, after the reap.
		EXPECT_TRUE(memory_used_back_within(fd_.get(), used_, 5000))
			<< "round " << round;
	}
}

// The simulator's engines of NPU @npu slowed (debugfs slow_us) for one test.
class SlowEngines {
public:
	SlowEngines(unsigned npu, const std::string &us_per_mib) : npu_(npu)
	{
		EXPECT_EQ(debugfs_write(npu_, "slow_us", us_per_mib), 0);
	}
	~SlowEngines() { EXPECT_EQ(debugfs_write(npu_, "slow_us", "0"), 0); }

private:
	unsigned npu_;
};

// What the UAPI promises a job still running at the timeout (SUBMIT, interface
// 13): it ends within job_timeout_ms plus 50 ms; a loaded guest without KVM
// may take kScheduling more to run the timer and the waiter.
constexpr auto kTimeout = std::chrono::milliseconds(1000);
constexpr auto kResetBound = std::chrono::milliseconds(50);
constexpr auto kScheduling = std::chrono::milliseconds(450);
// At 200 ms more per MiB the biggest job (16 MiB on the simulator) takes 3.2 s.
constexpr const char *kSlowUsPerMiB = "200000";

// The biggest job the driver's limit allows, as copies of 4 MiB between two
// buffers of the Rebel100's chiplet 0 (8 MiB of the 16 it has here).
struct BiggestJob {
	static constexpr uint64_t kPiece = 4 * kMiB;
	int fd;
	uint64_t limit = 0;
	Buffer a, b;
	std::vector<drm_rbln_copy> copies;

	explicit BiggestJob(int fd_) : fd(fd_)
	{
		if (get_param(fd, DRM_RBLN_PARAM_JOB_MAX_BYTES, &limit) || !limit || limit % kPiece)
			return;
		a = make_buffer(fd, kPiece, 0, 0);
		b = make_buffer(fd, kPiece, 0, 0);
		copies.assign(limit / kPiece, drm_rbln_copy{a.handle, b.handle, 0, 0, kPiece});
	}
	~BiggestJob()
	{
		if (!copies.empty()) {
			free_buffer(fd, a);
			free_buffer(fd, b);
		}
	}
	int submit(uint64_t *seqno, const std::vector<drm_rbln_copy> &c) const
	{
		return rbln::test::submit(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 0, c, seqno, "biggest job");
	}
};

// As a member of group rbln: the biggest job the limit allows, on an engine
// too slow to finish it in time, ends with -ETIMEDOUT at the timeout (the
// reset stops it between chunks instead of waiting for the rest: this took
// the 3.2 s of the whole copy before); one byte more is refused; the engine
// then runs a small job.
TEST_F(Dma, BiggestJobTimesOutWithinTheBoundAndTheEngineGoesOn)
{
	JobTimeout timeout(std::to_string(kTimeout.count()));
	SlowEngines slow(1, kSlowUsPerMiB);
	int status = run_as_nobody(true, [] {
		Fd fd = open_node(sim_device(1)->node);
		BiggestJob job(fd.get());
		if (job.copies.empty())
			return 10;
		std::vector<drm_rbln_copy> over = job.copies;
		over.push_back({job.a.handle, job.b.handle, 0, 0, 1});
		uint64_t seqno = 0;
		if (job.submit(&seqno, over) != EINVAL)
			return 11;
		auto start = std::chrono::steady_clock::now();
		if (job.submit(&seqno, job.copies))
			return 12;
		int st = wait_job(fd.get(), seqno);
		auto took = std::chrono::steady_clock::now() - start;
		fprintf(stderr, "biggest job (%llu bytes): status %d after %lld ms\n",
			(unsigned long long)job.limit, st,
			(long long)std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
		if (st != -ETIMEDOUT)
			return 13;
		if (took > kTimeout + kResetBound + kScheduling)
			return 14;
		return copy(fd.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0,
			    {job.a.handle, job.b.handle, 0, 0, 4096}) ? 15 : 0;
	});
	EXPECT_EQ(status, 0) << "10: no job limit reported; 11: a job over it was not refused "
				"with EINVAL; 12: the biggest job was refused; 13: it did not time "
				"out; 14: its timeout came late; 15: the engine failed a small job after";
}

// A long timeout: the running job (6.4 s on an engine slowed this much) is
// not ended by it, so a reap within about a second (and kScheduling more for
// a loaded guest without KVM) shows the killed task did not wait for it.
constexpr const char *kLongTimeoutMs = "10000";
constexpr const char *kSlowerUsPerMiB = "400000";
constexpr auto kReaped = std::chrono::milliseconds(1000) + kScheduling;
constexpr auto kSlowJobsGone = std::chrono::milliseconds(15000);

// A member of group rbln killed with the biggest jobs queued on a slowed
// engine is reaped within about a second, long before its running job ends
// (it waited for that job in close before: 3 s of a 3.2 s job on 6.12): the running job
// finishes in a work item, the queued ones do not run, and everything is
// given back after it.
TEST_F(Dma, KilledSubmitterOfBiggestJobsIsReapedWithinASecond)
{
	JobTimeout timeout(kLongTimeoutMs);
	SlowEngines slow(1, kSlowerUsPerMiB);
	pid_t pid = fork_until_ready([](const std::function<void()> &ready) {
		if (become_nobody(true))
			_exit(2);
		Fd fd = open_node(sim_device(1)->node);
		BiggestJob job(fd.get());
		for (int i = 0; i < 8; i++) {
			uint64_t seqno = 0;
			if (job.copies.empty() || job.submit(&seqno, job.copies))
				_exit(1);
		}
		ready();
		for (;;)
			pause();	// the file stays open until the kill
	});
	ASSERT_GT(pid, 0) << "the child could not submit its jobs";
	usleep(200'000);	// the first job is copying
	auto start = std::chrono::steady_clock::now();
	kill_and_reap(pid);
	EXPECT_LT(ms_since(start), kReaped.count()) << "ms to reap the killed submitter";
	EXPECT_TRUE(memory_used_back_within(fd_.get(), used_, kSlowJobsGone.count()))
		<< "its buffers were not given back after its running job";
	Buffer a = make_buffer(fd_.get(), 8192, 0, 0), b = make_buffer(fd_.get(), 8192, 0, 0);
	EXPECT_EQ(copy(fd_.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {a.handle, b.handle, 0, 4096, 4096}), 0)
		<< "the engine runs a job after it";
	free_buffer(fd_.get(), a);
	free_buffer(fd_.get(), b);
}

// A member of group rbln reclaiming its own stale file, whose biggest job
// runs on a slowed engine, waits in RECLAIM for that job; killed there, it is
// reaped within about a second (it waited the job out before: 2.9 s of a
// 3.2 s job on 6.12), and the
// revocation still completes: the file is revoked and its memory comes back.
TEST_F(Dma, KilledReclaimerIsReapedWithinASecond)
{
	JobTimeout timeout(kLongTimeoutMs);
	SlowEngines slow(1, kSlowerUsPerMiB);
	// The stale file: its opener submits and exits, its child keeps the file.
	auto *keeper = static_cast<pid_t *>(mmap(nullptr, sizeof(pid_t), PROT_READ | PROT_WRITE,
						 MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	ASSERT_NE(keeper, MAP_FAILED);
	*keeper = -1;
	pid_t opener = fork_until_ready([keeper](const std::function<void()> &ready) {
		if (become_nobody(true))
			_exit(2);
		Fd fd = open_node(sim_device(1)->node);
		BiggestJob job(fd.get());
		for (int i = 0; i < 4; i++) {
			uint64_t seqno = 0;
			if (job.copies.empty() || job.submit(&seqno, job.copies))
				_exit(1);
		}
		if (fork() == 0) {
			*keeper = getpid();
			ready();
			for (;;)
				pause();
		}
		_exit(0);
	});
	ASSERT_GT(opener, 0) << "the stale file's jobs could not be submitted";
	waitpid(opener, nullptr, 0);
	ASSERT_GT(*keeper, 0);
	uint64_t victim = 0;
	for (const auto &c : list_clients(fd_.get()))
		if (c.flags & DRM_RBLN_CLIENT_STALE && c.uid == 65534)
			victim = c.client_id;
	ASSERT_NE(victim, 0u) << "no stale client of nobody";

	pid_t reclaimer = fork_until_ready([victim](const std::function<void()> &ready) {
		if (become_nobody(true))
			_exit(2);
		Fd fd = open_node(sim_device(1)->node);
		ready();
		_exit(reclaim(fd.get(), victim) == 0 ? 0 : 1);
	});
	ASSERT_GT(reclaimer, 0);
	usleep(300'000);	// inside RECLAIM, waiting for the running job
	int wstatus = 0;
	EXPECT_EQ(waitpid(reclaimer, &wstatus, WNOHANG), 0) << "RECLAIM did not wait for the job";
	auto start = std::chrono::steady_clock::now();
	kill_and_reap(reclaimer);
	EXPECT_LT(ms_since(start), kReaped.count()) << "ms to reap the killed reclaimer";

	bool revoked = false;
	for (const auto &c : list_clients(fd_.get()))
		if (c.client_id == victim)
			revoked = c.flags & DRM_RBLN_CLIENT_REVOKED;
	EXPECT_TRUE(revoked) << "the revocation was dropped with the reclaimer";
	EXPECT_TRUE(memory_used_back_within(fd_.get(), used_, kSlowJobsGone.count()))
		<< "the revoked file's memory did not come back";
	kill(*keeper, SIGKILL);	// not our child: its parent, the opener, is gone
	munmap(keeper, sizeof(pid_t));
}

// A job on a hung engine ends only at its timeout (long here, so that the
// kills come well before it); RECLAIM and RESET wait for a victim's jobs.
constexpr auto kHungTimeout = std::chrono::milliseconds(6000);
constexpr auto kHungJobGone = kHungTimeout + std::chrono::milliseconds(5000);

// A child with a file of NPU @npu (its node @node) holding @bytes of device
// memory, and with a job on Neural DMA of chiplet 0 when @job (the engine is
// hung by the caller): the file stays open until the child is killed.  It is
// ready once that job runs on the engine (the device is BUSY, no other job
// runs there): a job still queued is cancelled by a revocation, not waited
// for, and the scheduler may take its time to start it on a busy host.
pid_t hold_memory(const std::string &node, uint64_t bytes, bool job)
{
	return fork_until_ready([&](const std::function<void()> &ready) {
		Fd fd = open_node(node);
		Buffer a = make_buffer(fd.get(), bytes / 2, DRM_RBLN_BO_EAGER, 0);
		Buffer b = make_buffer(fd.get(), bytes / 2, DRM_RBLN_BO_EAGER, 0);
		uint64_t seqno = 0;
		if (job && submit(fd.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0,
				  {{a.handle, b.handle, 0, 0, bytes / 2}}, &seqno))
			_exit(1);
		for (int i = 0; job && param(fd.get(), DRM_RBLN_PARAM_STATUS) != DRM_RBLN_STATUS_BUSY; i++) {
			if (i == 1000)
				_exit(1);	/* 10 s and the job never started */
			usleep(10'000);
		}
		ready();
		for (;;)
			pause();
	});
}

// A forked child that calls @call (an ioctl that waits) once ready; killed
// while inside it, it must be reaped within about a second.  Returns false
// (and fails the test) if it was not inside it or took longer.
bool killed_inside_is_reaped(const std::function<int()> &call, const char *what)
{
	pid_t pid = fork_until_ready([&](const std::function<void()> &ready) {
		ready();
		_exit(call() == 0 ? 0 : 1);
	});
	EXPECT_GT(pid, 0);
	if (pid <= 0)
		return false;
	usleep(300'000);	// inside the call, waiting for the hung job
	int wstatus = 0;
	if (waitpid(pid, &wstatus, WNOHANG) != 0) {
		ADD_FAILURE() << what << " did not wait for the hung job";
		return false;
	}
	auto start = std::chrono::steady_clock::now();
	kill_and_reap(pid);
	const long long took = ms_since(start);
	EXPECT_LT(took, kReaped.count()) << "ms to reap the task killed in " << what;
	return took < kReaped.count();
}

// A forced RECLAIM of a file whose job waits on a hung engine waits for that
// job, which ends only at the timeout.  Killed there, the reclaimer is reaped
// within about a second, and the revocation is finished by a work item: the
// victim's memory, which only the revocation frees (its file stays open),
// is still held at the reap and comes back once the timeout ended the job.
TEST_F(Dma, KilledReclaimerOfAHungEnginesJobIsReapedAndAWorkItemFinishes)
{
	JobTimeout timeout(std::to_string(kHungTimeout.count()));
	ASSERT_EQ(timeout.error(), 0);
	ASSERT_EQ(debugfs_write(1, "hang", "0 neural_dma"), 0);
	Child victim(hold_memory(sim_device(1)->node, 2 * kMiB, true));
	ASSERT_GT(victim.pid(), 0) << "the victim could not submit its job";
	uint64_t victim_id = 0;
	for (const auto &c : list_clients(fd_.get()))
		if (c.creator_pid == uint32_t(victim.pid()))
			victim_id = c.client_id;
	ASSERT_NE(victim_id, 0u);
	const uint64_t held = used_ + 2 * kMiB;
	ASSERT_EQ(param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED), held);

	const std::string node = sim_device(1)->node;
	EXPECT_TRUE(killed_inside_is_reaped([&] {
		Fd fd = open_node(node);
		return reclaim(fd.get(), victim_id, DRM_RBLN_RECLAIM_FORCE);
	}, "RECLAIM"));
	EXPECT_EQ(param(fd_.get(), DRM_RBLN_PARAM_MEMORY_USED), held)
		<< "the revocation cannot have finished: the hung job still runs";
	EXPECT_TRUE(memory_used_back_within(fd_.get(), used_, kHungJobGone.count()))
		<< "the revocation was not finished after the reclaimer's kill";
	EXPECT_EQ(debugfs_write(1, "hang", "0 neural_dma 0"), 0);
	Buffer a = make_buffer(fd_.get(), 8192, 0, 0), b = make_buffer(fd_.get(), 8192, 0, 0);
	EXPECT_EQ(copy(fd_.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {a.handle, b.handle, 0, 4096, 4096}), 0)
		<< "the engine runs a job after its timeout";
	free_buffer(fd_.get(), a);
	free_buffer(fd_.get(), b);
}

// A device of this test's own: RESET revokes every file of its device.
class OwnDevice {
public:
	explicit OwnDevice(unsigned id)
		: id_(id), ok_(sim_new_device(std::to_string(id) + " atom 16") == 0)
	{
	}
	~OwnDevice()
	{
		if (ok_) {
			EXPECT_EQ(sim_del_device(id_), 0);
		}
	}
	bool ok() const { return ok_; }
	std::string node() const { return "/dev/rbln" + std::to_string(id_); }
private:
	unsigned id_;
	bool ok_;
};

// RESET with FORCE revokes every other file, waiting for each one's jobs:
// the first victim's job waits on a hung engine, until the timeout.  Killed
// there, the resetter is reaped within about a second, and work items finish
// what it had begun: the second victim (no jobs) is revoked at once, the first
// once the timeout ended its job, their memory back each time (only the
// revocations free it: both files stay open).  The killed call did not reset
// the device; the next RESET does, with nobody left to revoke.
TEST_F(Dma, KilledResetterWaitingForAHungEngineIsReapedAndWorkItemsFinish)
{
	constexpr unsigned kId = 16;
	OwnDevice own(kId);
	ASSERT_TRUE(own.ok());
	JobTimeout timeout(std::to_string(kHungTimeout.count()));
	ASSERT_EQ(timeout.error(), 0);
	ASSERT_EQ(debugfs_write(kId, "hang", "0 neural_dma"), 0);
	// Opened in this order, revoked in this order: the hung one first.
	Child hung(hold_memory(own.node(), 2 * kMiB, true));
	ASSERT_GT(hung.pid(), 0) << "the first victim could not submit its job";
	Child idle(hold_memory(own.node(), 4 * kMiB, false));
	ASSERT_GT(idle.pid(), 0);

	const std::string node = own.node();
	EXPECT_TRUE(killed_inside_is_reaped([&] {
		Fd fd = open_node(node);
		drm_rbln_reset r{};
		r.flags = DRM_RBLN_RESET_FORCE;
		return ioctl(fd.get(), DRM_IOCTL_RBLN_RESET, &r) ? errno : 0;
	}, "RESET"));
	// Opened after the victims were chosen: not one of them.
	Fd watcher = open_node(own.node());
	ASSERT_TRUE(watcher);
	EXPECT_TRUE(memory_used_back_within(watcher.get(), 2 * kMiB, 2000))
		<< "the second victim was not revoked after the kill (or the first was too early)";
	EXPECT_TRUE(memory_used_back_within(watcher.get(), 0, kHungJobGone.count()))
		<< "the first victim's revocation was not finished after the kill";
	for (const auto &c : list_clients(watcher.get()))
		if (!(c.flags & DRM_RBLN_CLIENT_SELF)) {
			EXPECT_TRUE(c.flags & DRM_RBLN_CLIENT_REVOKED) << "client " << c.client_id;
		}
	drm_rbln_reset r{};
	ASSERT_EQ(ioctl(watcher.get(), DRM_IOCTL_RBLN_RESET, &r), 0) << strerror(errno);
	EXPECT_EQ(r.revoked, 0u) << "the killed RESET's victims were all revoked already";
	Buffer a = make_buffer(watcher.get(), 8192, 0, 0), b = make_buffer(watcher.get(), 8192, 0, 0);
	EXPECT_EQ(copy(watcher.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {a.handle, b.handle, 0, 4096, 4096}),
		  0) << "the device runs a job after the reset";
	free_buffer(watcher.get(), a);
	free_buffer(watcher.get(), b);
}

TEST_F(Dma, InheritedFileKeepsWorkingInTheChild)
{
	Fd fd = open_node(sim_device(1)->node);
	Buffer a = make_buffer(fd.get(), 8192, 0, 0), b = make_buffer(fd.get(), 8192, 0, 0);
	pid_t pid = fork();
	if (pid == 0) {
		// Same open file, same handles, in another process.
		int st = copy(fd.get(), DRM_RBLN_ENGINE_TASK_DMA, 0, {a.handle, b.handle, 0, 4096, 4096});
		_exit(st == 0 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free_buffer(fd.get(), a);
	free_buffer(fd.get(), b);
}

// Submit, start and complete of a job appear in the "rbln" trace events with
// device, chiplet, engine, client, seqno, bytes and label.
TEST_F(Dma, TracepointsFollowAJob)
{
	const std::string tracing = "/sys/kernel/tracing";
	ASSERT_TRUE(read_file(tracing + "/trace")) << "tracefs mounted?";
	ASSERT_EQ(write_file(tracing + "/events/rbln/enable", "1"), 0);
	int fd = fd_.get();
	Buffer a = make_buffer(fd, 8192, 0, 3), b = make_buffer(fd, 8192, 0, 3);
	uint64_t seqno = 0;
	ASSERT_EQ(submit(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 3,
			 {{a.handle, b.handle, 0, 0, 1000}, {a.handle, b.handle, 4096, 4096, 24}},
			 &seqno, "model.layers.0.q_proj.weight"), 0);
	ASSERT_EQ(wait_job(fd, seqno), 0);
	ASSERT_EQ(write_file(tracing + "/events/rbln/enable", "0"), 0);

	drm_rbln_client_usage u{};
	ASSERT_EQ(ioctl(fd, DRM_IOCTL_RBLN_CLIENT_USAGE, &u), 0);
	const std::string expect = "dev=1 chiplet=3 engine=neural_dma client=" +
				   std::to_string(u.client_id) + " seqno=" + std::to_string(seqno) +
				   " bytes=1024 status=";
	std::string trace = read_file(tracing + "/trace").value_or("");
	for (const char *event : {"rbln_job_submit: ", "rbln_job_start: ", "rbln_job_complete: "})
		EXPECT_NE(trace.find(event + expect), std::string::npos) << event << "\n" << trace;
	EXPECT_NE(trace.find("rbln_job_complete: " + expect + "0 label=model.layers.0.q_proj.weight"),
		  std::string::npos) << trace;
	free_buffer(fd, a);
	free_buffer(fd, b);
}

// Utilisation comes from the engines' real busy time, and the simulated
// sensors follow it: idle reads 0% P14, a busy second reads > 0% P2, hotter.
TEST_F(Dma, UtilizationFollowsRealBusyTime)
{
	const std::string dev = sim_device(1)->sysfs;
	read_file(dev + "/utilization");	// close the current window
	usleep(1'100'000);
	EXPECT_EQ(read_file(dev + "/utilization"), "0");
	EXPECT_EQ(read_file(dev + "/pstate"), "P14");
	const auto idle_temp = std::stol(read_file(dev + "/temperature").value_or("0"));

	int fd = fd_.get();
	Buffer a = make_buffer(fd, 4 * kMiB, 0, 0), b = make_buffer(fd, 4 * kMiB, 0, 1);
	auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1200);
	while (std::chrono::steady_clock::now() < until)
		ASSERT_EQ(copy(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {a.handle, b.handle, 0, 0, 4 * kMiB}), 0);
	const auto util = std::stoul(read_file(dev + "/utilization").value_or("0"));
	// Busy is the copies alone; on a sanitizer kernel under TCG each submit and
	// wait around a 4 MiB copy costs more than the copy, hence only 5%.
	EXPECT_GE(util, 5u) << "a second of back-to-back copies";
	EXPECT_EQ(read_file(dev + "/pstate"), "P2");
	EXPECT_GT(std::stol(read_file(dev + "/temperature").value_or("0")), idle_temp);
	free_buffer(fd, a);
	free_buffer(fd, b);
}
