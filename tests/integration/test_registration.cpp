// Exclusive acquisition, the client list, staleness, and all-or-nothing
// registration of logical devices, against the real module.
#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <grp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"
#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

int acquire(int fd, uint32_t flags = 0)
{
	drm_rbln_acquire a{};
	a.flags = flags;
	return ioctl(fd, DRM_IOCTL_RBLN_ACQUIRE, &a) ? errno : 0;
}

int release(int fd)
{
	drm_rbln_acquire a{};
	return ioctl(fd, DRM_IOCTL_RBLN_RELEASE, &a) ? errno : 0;
}

std::string error_of_reclaim(rbln::Device &dev, uint64_t client_id)
{
	try {
		dev.reclaim(client_id);
	} catch (const rbln::Error &e) {
		return e.what();
	}
	return {};
}

std::optional<rbln::ClientInfo> holder(unsigned npu)
{
	for (const auto &c : rbln::Device::open(npu).clients())
		if (c.acquired)
			return c;
	return std::nullopt;
}

} // namespace

TEST(Acquire, OneFileAtATimeAndCloseReleases)
{
	Fd a = open_node(sim_device(0)->node), b = open_node(sim_device(0)->node);
	EXPECT_EQ(acquire(a.get()), 0);
	EXPECT_EQ(acquire(a.get()), 0) << "again: a no-op";
	EXPECT_EQ(acquire(b.get()), EBUSY);
	EXPECT_EQ(release(b.get()), EINVAL) << "b does not hold it";
	EXPECT_EQ(acquire(a.get(), 1), EINVAL) << "flags";
	EXPECT_EQ(release(a.get()), 0);
	EXPECT_EQ(acquire(b.get()), 0);
	b.reset();	// closing releases
	EXPECT_EQ(acquire(a.get()), 0);
	EXPECT_EQ(release(a.get()), 0);
}

// Exclusive means exclusive: while one file holds the device, the others may
// look (queries, their existing buffers) but not allocate or submit.
TEST(Acquire, OtherFilesCannotAllocateOrSubmitWhileItIsHeld)
{
	Fd holder = open_node(sim_device(0)->node), other = open_node(sim_device(0)->node);
	uint32_t src = 0, dst = 0, h = 0;
	ASSERT_EQ(bo_create(other.get(), 4096, 0, 0, &src), 0);
	ASSERT_EQ(bo_create(other.get(), 4096, 0, 0, &dst), 0);
	ASSERT_EQ(acquire(holder.get()), 0);

	uint64_t seqno = 0;
	EXPECT_EQ(bo_create(other.get(), 4096, 0, 0, &h), EBUSY);
	EXPECT_EQ(submit(other.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {{src, dst, 0, 0, 4096}}, &seqno),
		  EBUSY);
	drm_rbln_bo_info info{};
	EXPECT_EQ(bo_info(other.get(), src, info), 0) << "looking is allowed";
	ASSERT_EQ(bo_create(holder.get(), 4096, 0, 0, &h), 0) << "the holder may";
	EXPECT_EQ(gem_close(holder.get(), h), 0);

	ASSERT_EQ(release(holder.get()), 0);
	ASSERT_EQ(submit(other.get(), DRM_RBLN_ENGINE_NEURAL_DMA, 0, {{src, dst, 0, 0, 4096}}, &seqno), 0);
	EXPECT_EQ(wait_job(other.get(), seqno), 0);
}

// LIST_CLIENTS copies out after dropping the device's client lock: a caller
// whose buffer faults forever (userfaultfd here) must not block every other
// open and close of the device.
TEST(ClientList, AStalledCopyOutDoesNotBlockOpens)
{
	Fd uffd(int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK)));
	ASSERT_TRUE(uffd) << "userfaultfd: " << strerror(errno);
	uffdio_api api{};
	api.api = UFFD_API;
	ASSERT_EQ(ioctl(uffd.get(), UFFDIO_API, &api), 0);
	const size_t len = 4096;
	void *area = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(area, MAP_FAILED);
	uffdio_register reg{};
	reg.range = {reinterpret_cast<uintptr_t>(area), len};
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(ioctl(uffd.get(), UFFDIO_REGISTER, &reg), 0);

	Fd lister = open_node(sim_device(0)->node);
	int list_err = -1;
	std::thread stalled([&] {
		drm_rbln_list_clients args{};
		args.count = 4;
		args.entries = reinterpret_cast<uintptr_t>(area);
		args.entry_size = sizeof(drm_rbln_client);
		list_err = ioctl(lister.get(), DRM_IOCTL_RBLN_LIST_CLIENTS, &args) ? errno : 0;
	});
	pollfd pfd{uffd.get(), POLLIN, 0};
	ASSERT_EQ(poll(&pfd, 1, 10000), 1) << "LIST_CLIENTS never touched its buffer";

	// While it is stalled, a child opens and closes the device.
	pid_t child = fork();
	if (child == 0) {
		Fd fd = open_node(sim_device(0)->node);
		_exit(fd ? 0 : 1);
	}
	int status = -1;
	for (int i = 0; i < 500 && waitpid(child, &status, WNOHANG) == 0; i++)
		usleep(10000);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		<< "open blocked behind a stalled LIST_CLIENTS";

	uffdio_zeropage zero{};
	zero.range = reg.range;
	EXPECT_EQ(ioctl(uffd.get(), UFFDIO_ZEROPAGE, &zero), 0);
	stalled.join();
	EXPECT_EQ(list_err, 0);
	if (!WIFEXITED(status))
		waitpid(child, &status, 0);
	munmap(area, len);
}

TEST(Acquire, ClientListShowsWhoHoldsWhat)
{
	auto dev = rbln::Device::open(1);
	auto buf = dev.allocate(1 << 20);
	dev.acquire();
	bool found = false;
	for (const auto &c : dev.clients()) {
		if (!c.self)
			continue;
		found = true;
		EXPECT_TRUE(c.acquired);
		EXPECT_FALSE(c.stale);
		EXPECT_EQ(c.creator_pid, unsigned(getpid()));
		EXPECT_EQ(c.creator_comm, "rbln_integratio") << "TASK_COMM_LEN cuts it";
		EXPECT_EQ(c.device_memory, 1u << 20);
		EXPECT_EQ(c.uid, 0u);
		EXPECT_EQ(c.client_id, dev.usage().client_id);
	}
	EXPECT_TRUE(found);

	// Bad requests.
	drm_rbln_list_clients args{};
	args.entry_size = sizeof(drm_rbln_client) - 8;
	EXPECT_EQ(ioctl(dev.fd(), DRM_IOCTL_RBLN_LIST_CLIENTS, &args) ? errno : 0, EINVAL);
	args = {};
	args.entry_size = sizeof(drm_rbln_client);
	EXPECT_EQ(ioctl(dev.fd(), DRM_IOCTL_RBLN_LIST_CLIENTS, &args), 0) << "count 0: just count";
	EXPECT_GE(args.count, 1u);
	args.reserved = 1;
	EXPECT_EQ(ioctl(dev.fd(), DRM_IOCTL_RBLN_LIST_CLIENTS, &args) ? errno : 0, EINVAL);
}

TEST(Acquire, OthersSeeOnlyTheirOwnClients)
{
	Fd root_file = open_node(sim_device(0)->node);	// a client of root's
	int status = run_as_nobody(true, [] {
		auto clients = rbln::Device::open(0).clients();
		return clients.size() == 1 && clients[0].self && clients[0].uid == 65534 ? 0 : 1;
	});
	EXPECT_EQ(status, 0);
}

TEST(Registration, AllOrNothing)
{
	// Another process holds NPU 1.
	pid_t holder_pid = fork_until_ready([](const std::function<void()> &ready) {
		auto dev = rbln::Device::open(1);
		dev.acquire();
		ready();
		pause();
	});
	ASSERT_GT(holder_pid, 0);

	try {
		rbln::Registration::acquire(0, {0, 1});
		ADD_FAILURE() << "registered a logical device whose NPU 1 is held";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::busy);
		const std::string msg = e.what();
		EXPECT_EQ(msg.rfind("rbln_register_device_id failed for rbln:0 on physical NPU(s) [0,1] "
				    "(rc=-16); rbln:1: NPU 1 is held by PID " + std::to_string(holder_pid) +
				    " (rbln_integratio)", 0), 0u) << msg;
		EXPECT_NE(msg.find("No NPU stays acquired by this process."), std::string::npos) << msg;
	}
	EXPECT_FALSE(holder(0)) << "NPU 0 was released again";

	kill_and_reap(holder_pid);	// a dead process holds nothing
	auto reg = rbln::Registration::acquire(0, {0, 1});
	EXPECT_EQ(reg.devices().size(), 2u);
	EXPECT_TRUE(holder(1) && holder(1)->creator_pid == unsigned(getpid()));
}

namespace {

// A stale holder of NPU 1: a process acquires it, allocates and maps
// @bytes, forks an orphan that keeps the file (and the mapping), and is
// killed.  On command the orphan reports what its next ioctl returned and
// whether touching its mapping raised SIGBUS.
struct StaleHolder {
	pid_t creator = 0, orphan = 0;
	int commands = -1, results = -1;

	// Asks the orphan to try its file and its mapping; returns {ioctl errno, 'B' on SIGBUS}.
	std::pair<int, char> probe() const
	{
		(void)!write(commands, "x", 1);
		char err = 0, bus = 0;
		(void)!read(results, &err, 1);
		(void)!read(results, &bus, 1);
		return {err, bus};
	}
	~StaleHolder()
	{
		if (orphan > 0)
			kill(orphan, SIGKILL);
		close(commands);
		close(results);
	}
};

int g_results_fd = -1;

std::unique_ptr<StaleHolder> make_stale_holder(uint64_t bytes)
{
	int ready[2], commands[2], results[2];
	if (pipe(ready) || pipe(commands) || pipe(results))
		return nullptr;
	auto h = std::make_unique<StaleHolder>();
	h->creator = fork();
	if (h->creator == 0) {
		auto dev = rbln::Device::open(1);
		dev.acquire();
		auto buf = dev.allocate(bytes, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		volatile std::byte *p = buf.map().data();
		if (fork() == 0) {
			g_results_fd = results[1];
			signal(SIGBUS, [](int) {
				char b = 'B';
				(void)!write(g_results_fd, &b, 1);
				_exit(0);
			});
			pid_t self = getpid();
			(void)!write(ready[1], &self, sizeof(self));
			char cmd;
			while (read(commands[0], &cmd, 1) == 1) {
				drm_rbln_device_info info{};
				char err = ioctl(dev.fd(), DRM_IOCTL_RBLN_DEVICE_INFO, &info) ? char(errno) : 0;
				(void)!write(results[1], &err, 1);
				(void)p[0];	// SIGBUS once reclaimed
				char none = '-';
				(void)!write(results[1], &none, 1);
			}
			_exit(0);
		}
		for (;;)
			pause();
	}
	close(ready[1]);
	close(commands[0]);
	close(results[1]);
	h->commands = commands[1];
	h->results = results[0];
	if (read(ready[0], &h->orphan, sizeof(h->orphan)) != ssize_t(sizeof(h->orphan)))
		return nullptr;
	close(ready[0]);
	kill_and_reap(h->creator);
	return h;
}

} // namespace

TEST(Registration, StaleHolderIsNamedAsSuch)
{
	auto stale = make_stale_holder(2 << 20);
	ASSERT_TRUE(stale);
	auto h = holder(1);
	ASSERT_TRUE(h);
	EXPECT_TRUE(h->stale);
	EXPECT_EQ(h->creator_pid, unsigned(stale->creator));
	EXPECT_EQ(h->device_memory, 2u << 20);

	try {
		rbln::Registration::acquire(3, {1});
		ADD_FAILURE() << "registered over a stale holder";
	} catch (const rbln::Error &e) {
		const std::string msg = e.what();
		EXPECT_NE(msg.find("NPU 1 is held by PID " + std::to_string(stale->creator) +
				   " (rbln_integratio), which has exited: the holder is stale"),
			  std::string::npos) << msg;
		if (rbln::Device::open(1).info().capabilities & DRM_RBLN_CAP_FDINFO)
			EXPECT_NE(msg.find("the file is held now by PID " + std::to_string(stale->orphan) +
					   " (rbln_integratio)"), std::string::npos) << msg;
		else
			EXPECT_NE(msg.find("this kernel cannot tell which process holds the file now"),
				  std::string::npos) << msg;
	}
	EXPECT_EQ(rbln::client_holder_pids(h->client_id).size(),
		  rbln::Device::open(1).info().capabilities & DRM_RBLN_CAP_FDINFO ? 1u : 0u);

	// Killing the process that holds the file releases everything.
	kill(stale->orphan, SIGKILL);
	for (int i = 0; i < 100 && holder(1); i++)
		usleep(20000);
	EXPECT_FALSE(holder(1));
	EXPECT_NO_THROW(rbln::Registration::acquire(3, {1}));
}

TEST(Reclaim, FreesAStaleClientAndCutsItOff)
{
	auto dev = rbln::Device::open(1);
	const uint64_t baseline = dev.memory().used;
	auto stale = make_stale_holder(3 << 20);
	ASSERT_TRUE(stale);
	EXPECT_EQ(dev.memory().used, baseline + (3 << 20));
	auto h = holder(1);
	ASSERT_TRUE(h && h->stale);

	EXPECT_EQ(dev.reclaim(h->client_id), 3u << 20);
	EXPECT_EQ(dev.memory().used, baseline) << "memory back to baseline";
	EXPECT_EQ(dev.memory().placed, 0u);
	EXPECT_FALSE(holder(1)) << "the acquisition is gone";
	bool listed_revoked = false;
	for (const auto &c : dev.clients())
		listed_revoked |= c.client_id == h->client_id && c.revoked;
	EXPECT_TRUE(listed_revoked);

	auto [err, bus] = stale->probe();
	EXPECT_EQ(err, ENODEV) << "the revoked file's calls fail";
	EXPECT_EQ(bus, 'B') << "its mapping raises SIGBUS";
	stale->orphan = 0;	// it exited in its SIGBUS handler

	auto msg = error_of_reclaim(dev, h->client_id);
	EXPECT_NE(msg.find("cannot reclaim client"), std::string::npos);
	EXPECT_NO_THROW(rbln::Registration::acquire(0, {1}));
}

TEST(Reclaim, OnlyStaleClientsUnlessForcedByRoot)
{
	auto dev = rbln::Device::open(1);
	auto live = rbln::Device::open(1);
	const uint64_t live_id = live.usage().client_id;
	try {
		dev.reclaim(live_id);
		ADD_FAILURE() << "reclaimed a live client";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::busy);
		EXPECT_NE(std::string(e.what()).find("it is not stale"), std::string::npos) << e.what();
	}
	try {
		dev.reclaim(dev.usage().client_id);
		ADD_FAILURE() << "reclaimed itself";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::invalid_argument);
	}
	try {
		dev.reclaim(1ull << 60);
		ADD_FAILURE() << "reclaimed a client that does not exist";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::not_found);
	}
	EXPECT_EQ(dev.reclaim(live_id, true), 0u) << "root may force";
	uint64_t v = 0;
	EXPECT_EQ(get_param(live.fd(), DRM_RBLN_PARAM_UAPI_VERSION, &v), ENODEV);

	// Another user can neither see nor force root's clients.
	Fd root_file = open_node(sim_device(1)->node);
	drm_rbln_client_usage u{};
	ASSERT_EQ(ioctl(root_file.get(), DRM_IOCTL_RBLN_CLIENT_USAGE, &u), 0);
	int status = run_as_nobody(true, [&] {
		auto mine = rbln::Device::open(1);
		auto code = [&](bool force) {
			try {
				mine.reclaim(u.client_id, force);
			} catch (const rbln::Error &e) {
				return e.code();
			}
			return rbln::Errc::ok;
		};
		return code(false) == rbln::Errc::not_found && code(true) == rbln::Errc::permission ? 0 : 1;
	});
	EXPECT_EQ(status, 0);
}

TEST(Reclaim, RegistrationReclaimsStaleHoldersWhenAskedTo)
{
	auto stale = make_stale_holder(1 << 20);
	ASSERT_TRUE(stale);
	setenv("RBLN_RECLAIM_STALE", "on", 1);
	testing::internal::CaptureStderr();
	std::optional<rbln::Registration> reg;
	EXPECT_NO_THROW(reg.emplace(rbln::Registration::acquire(0, {0, 1})));
	std::string err = testing::internal::GetCapturedStderr();
	unsetenv("RBLN_RECLAIM_STALE");
	EXPECT_NE(err.find("reclaimed the stale holder of NPU 1 (client "), std::string::npos) << err;
	EXPECT_NE(err.find("of exited PID " + std::to_string(stale->creator)), std::string::npos) << err;
}

// The plan's NPUs are enumerated once per process: a hot-added or removed
// NPU must still be seen by the next registration.
TEST(Registration, SeesNpusAddedAndRemovedSinceTheLastOne)
{
	setenv("RBLN_VISIBLE_DEVICES", "5", 1);
	auto reg = [] {
		try {
			rbln::register_logical_device(0);
			return std::string("ok");
		} catch (const rbln::Error &e) {
			return std::string(e.what());
		}
	};
	EXPECT_NE(reg().find("RBLN_VISIBLE_DEVICES: host id 5 does not exist"), std::string::npos);
	ASSERT_EQ(sim_new_device("5 atom 16"), 0);
	EXPECT_EQ(reg(), "ok");
	ASSERT_EQ(sim_del_device(5), 0);
	EXPECT_NE(reg().find("RBLN_VISIBLE_DEVICES: host id 5 does not exist"), std::string::npos);
	unsetenv("RBLN_VISIBLE_DEVICES");
}
