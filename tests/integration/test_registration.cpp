// Exclusive acquisition, the client list, staleness, and all-or-nothing
// registration of logical devices, against the real module.
#include <csignal>
#include <functional>

#include <grp.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"
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
	struct group *grp = getgrnam("rbln");
	ASSERT_NE(grp, nullptr);
	pid_t pid = fork();
	if (pid == 0) {
		gid_t g = grp->gr_gid;
		if (setgroups(1, &g) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		auto clients = rbln::Device::open(0).clients();
		bool only_own = clients.size() == 1 && clients[0].self && clients[0].uid == 65534;
		_exit(only_own ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
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

TEST(Registration, StaleHolderIsNamedAsSuch)
{
	// A process acquires NPU 1, allocates, hands the file to a child by
	// fork and is killed: the file lives on in the child.
	int ready[2];
	ASSERT_EQ(pipe(ready), 0);
	pid_t parent = fork();
	if (parent == 0) {
		auto dev = rbln::Device::open(1);
		dev.acquire();
		auto buf = dev.allocate(2 << 20, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		if (fork() == 0) {	// the child keeps the fd and says who it is
			close(ready[0]);
			pid_t self = getpid();
			(void)!write(ready[1], &self, sizeof(self));
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	close(ready[1]);
	pid_t orphan = 0;
	ASSERT_EQ(read(ready[0], &orphan, sizeof(orphan)), ssize_t(sizeof(orphan)));
	close(ready[0]);
	kill_and_reap(parent);

	auto h = holder(1);
	ASSERT_TRUE(h);
	EXPECT_TRUE(h->stale);
	EXPECT_EQ(h->creator_pid, unsigned(parent));
	EXPECT_EQ(h->device_memory, 2u << 20);

	try {
		rbln::Registration::acquire(3, {1});
		ADD_FAILURE() << "registered over a stale holder";
	} catch (const rbln::Error &e) {
		EXPECT_NE(std::string(e.what()).find("NPU 1 is held by PID " + std::to_string(parent) +
						     " (rbln_integratio), which has exited: the holder is "
						     "stale"), std::string::npos) << e.what();
	}

	// Killing the process that holds the file releases everything.
	kill(orphan, SIGKILL);
	for (int i = 0; i < 100 && holder(1); i++)
		usleep(20000);
	EXPECT_FALSE(holder(1));
	EXPECT_NO_THROW(rbln::Registration::acquire(3, {1}));
}
