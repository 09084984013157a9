// What one user can take from the others, against the real module: a hostile
// member of group rbln runs into its file's limits (file_max_buffers,
// file_max_bytes) and its user's (user_max_bytes), whatever number of files
// it opens and buffers it exports, before the device's mmap offsets or
// capacity run out, so
// another user's BO_CREATE and PRIME import still work; a full memory cgroup
// fails buffer creation with ENOMEM there and kills nobody; a full job
// table is an error libdrm's drmIoctl() returns instead of retrying forever;
// and a submitter its cgroup gives little CPU does not hold an engine the
// longer for it.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>

#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

// Creates buffers of @size and @flags on @fd, asking each one's mmap offset,
// until one is refused or @limit went in; returns that errno (0: none) and
// the count made in @made.
int create_until_refused(int fd, uint64_t size, uint32_t flags, unsigned limit, unsigned *made)
{
	for (*made = 0; *made < limit; ++*made) {
		uint32_t h = 0;
		drm_rbln_bo_info info{};
		if (int err = bo_create(fd, size, flags, 0, &h))
			return err;
		if (int err = bo_info(fd, h, info))
			return err;
	}
	return 0;
}

// Another user (root here) still gets what it asks for on NPU 0: a device
// and a host buffer, mapped, and a buffer of NPU 1 imported.  0 or an errno.
int victim_still_served()
{
	Fd atom = open_node(sim_device(0)->node), rebel = open_node(sim_device(1)->node);
	if (!atom || !rebel)
		return ENODEV;
	uint32_t dev = 0, host = 0, theirs = 0, imported = 0;
	int dmabuf = -1;
	drm_rbln_bo_info info{};
	int err = bo_create(atom.get(), kMiB, 0, 0, &dev) ?:
		  bo_create(atom.get(), kMiB, DRM_RBLN_BO_HOST, 0, &host) ?:
		  bo_info(atom.get(), host, info);
	if (err)
		return err;
	void *p = mmap(nullptr, kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, atom.get(), info.mmap_offset);
	if (p == MAP_FAILED)
		return errno;
	munmap(p, kMiB);
	err = bo_create(rebel.get(), kMiB, DRM_RBLN_BO_HOST, 0, &theirs) ?:
	      prime_export(rebel.get(), theirs, &dmabuf) ?:
	      prime_import(atom.get(), dmabuf, &imported) ?:
	      bo_info(atom.get(), imported, info);
	if (dmabuf >= 0)
		close(dmabuf);
	return err;
}

struct Refusal {
	int error = -1;
	unsigned made = 0;
};

// A hostile member of group rbln fills @files open files of NPU 0 with
// buffers until refused, then what is left with 1 MiB ones, and keeps them
// (the child lives on, killed at the end of the test); @report gets what
// each file was first refused with.
pid_t hostile(unsigned files, uint64_t size, uint32_t flags, unsigned limit, Refusal *report)
{
	return fork_until_ready([=](const std::function<void()> &ready) {
		if (become_nobody(true))
			_exit(2);
		std::vector<Fd> fds;
		for (unsigned i = 0; i < files; i++) {
			fds.push_back(open_node(sim_device(0)->node));
			report[i].error = create_until_refused(fds.back().get(), size, flags, limit,
							       &report[i].made);
			unsigned more = 0;
			create_until_refused(fds.back().get(), kMiB, flags, limit, &more);
		}
		ready();
		for (;;)
			pause();
	});
}

// @n of T in memory shared with forked children.
template <typename T> T *shared_array(size_t n)
{
	void *p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		return nullptr;
	T *t = static_cast<T *>(p);
	for (size_t i = 0; i < n; i++)
		new (&t[i]) T{};
	return t;
}

} // namespace

// 1 GiB lazy host buffers cost nothing but their mmap offsets; the device has
// about a thousand of those.  A buffer takes its offsets only when they are
// asked for, and each user (not only each file: opening more files does not
// help) stops at user_max_bytes, 256 GiB by default.  Before the per-user
// limit five files of 256 GiB each took every offset.
TEST(Limits, HostileUserWithManyFilesRunsIntoItsUserLimitNotTheDevicesOffsets)
{
	constexpr unsigned kFiles = 5;
	Refusal *report = shared_array<Refusal>(kFiles);
	ASSERT_NE(report, nullptr);
	Child child(hostile(kFiles, kGiB, DRM_RBLN_BO_HOST, 2048, report));
	ASSERT_GT(child.pid(), 0);
	EXPECT_EQ(report[0].error, EDQUOT) << "after " << report[0].made;
	EXPECT_EQ(report[0].made, 256u) << "256 GiB by default";
	for (unsigned i = 1; i < kFiles; i++) {
		EXPECT_EQ(report[i].error, EDQUOT) << "file " << i << " after " << report[i].made;
		EXPECT_EQ(report[i].made, 0u) << "file " << i << ": the user's 256 GiB are taken";
	}
	EXPECT_EQ(victim_still_served(), 0) << "with the hostile files still open";
	munmap(report, kFiles * sizeof(Refusal));
}

// A buffer counts against the user who made it until it is freed: exporting
// buffers (each export takes its mmap offsets) and closing the file leaves
// them alive in dma-bufs and still charged, so new files get nothing more;
// once the dma-bufs go, the user may make buffers again.
TEST(Limits, ExportedBuffersOfAClosedFileStillCountAgainstTheirCreator)
{
	constexpr unsigned kRounds = 5;
	Refusal *report = shared_array<Refusal>(kRounds);
	ASSERT_NE(report, nullptr);
	{
		Child child(fork_until_ready([=](const std::function<void()> &ready) {
			if (become_nobody(true))
				_exit(2);
			std::vector<Fd> exports;
			for (unsigned r = 0; r < kRounds; r++) {
				Fd fd = open_node(sim_device(0)->node);
				for (report[r].made = 0; report[r].made < 2048; report[r].made++) {
					uint32_t h = 0;
					int dmabuf = -1;
					if ((report[r].error = bo_create(fd.get(), kGiB, DRM_RBLN_BO_HOST, 0, &h)))
						break;
					if ((report[r].error = prime_export(fd.get(), h, &dmabuf)))
						break;
					exports.emplace_back(dmabuf);
				}
			}	// each file closes here; its exports live on
			ready();
			for (;;)
				pause();
		}));
		ASSERT_GT(child.pid(), 0);
		EXPECT_EQ(report[0].error, EDQUOT) << "after " << report[0].made;
		EXPECT_EQ(report[0].made, 256u);
		for (unsigned r = 1; r < kRounds; r++) {
			EXPECT_EQ(report[r].error, EDQUOT) << "file " << r << " after " << report[r].made;
			EXPECT_EQ(report[r].made, 0u) << "file " << r << ": the exports still count";
		}
		EXPECT_EQ(victim_still_served(), 0) << "with 256 GiB of exports alive";
	}
	const std::string node = sim_device(0)->node;
	EXPECT_EQ(run_as_nobody(true, [&] {
		Fd fd = open_node(node);
		uint32_t h = 0;
		return bo_create(fd.get(), kGiB, DRM_RBLN_BO_HOST, 0, &h);
	}), 0) << "the exports were freed with their holder: the user's charge went with them";
	munmap(report, kRounds * sizeof(Refusal));
}

// Lazy device buffers reserve capacity without backing: file_max_bytes bounds
// what one file reserves, and file_max_buffers how many handles it holds.
TEST(Limits, HostileUserRunsIntoItsFilesCapacityAndCountLimits)
{
	Fd atom = open_node(sim_device(0)->node);
	ASSERT_TRUE(atom);
	uint64_t total = 0;
	ASSERT_EQ(get_param(atom.get(), DRM_RBLN_PARAM_MEMORY_TOTAL, &total), 0);
	Refusal *report = shared_array<Refusal>(2);
	ASSERT_NE(report, nullptr);
	{
		ModuleParam bytes("file_max_bytes", std::to_string(total / 2));
		ASSERT_EQ(bytes.error(), 0);
		Child child(hostile(1, kMiB, 0, 4096, &report[0]));
		ASSERT_GT(child.pid(), 0);
		EXPECT_EQ(report[0].error, EDQUOT);
		EXPECT_EQ(report[0].made, total / 2 / kMiB);
		EXPECT_EQ(victim_still_served(), 0) << "half the device left";
	}
	{
		ModuleParam count("file_max_buffers", "100");
		ASSERT_EQ(count.error(), 0);
		Child child(hostile(1, 4096, DRM_RBLN_BO_HOST, 4096, &report[1]));
		ASSERT_GT(child.pid(), 0);
		EXPECT_EQ(report[1].error, EMFILE);
		EXPECT_EQ(report[1].made, 100u);
		EXPECT_EQ(victim_still_served(), 0);

		// An import counts as a handle too; closing one makes room.
		Fd fd = open_node(sim_device(0)->node), rebel = open_node(sim_device(1)->node);
		unsigned made = 0;
		ASSERT_EQ(create_until_refused(fd.get(), 4096, DRM_RBLN_BO_HOST, 4096, &made), EMFILE);
		uint32_t theirs = 0, imported = 0, last = 0;
		int dmabuf = -1;
		ASSERT_EQ(bo_create(rebel.get(), 4096, DRM_RBLN_BO_HOST, 0, &theirs), 0);
		ASSERT_EQ(prime_export(rebel.get(), theirs, &dmabuf), 0);
		Fd shared(dmabuf);
		EXPECT_EQ(prime_import(fd.get(), dmabuf, &imported), EMFILE);
		EXPECT_EQ(gem_close(fd.get(), 1), 0) << "handles count from 1";
		EXPECT_EQ(prime_import(fd.get(), dmabuf, &imported), 0);
		EXPECT_EQ(bo_create(fd.get(), 4096, DRM_RBLN_BO_HOST, 0, &last), EMFILE);
	}
	munmap(report, 2 * sizeof(Refusal));
}

// The driver's bookkeeping of a buffer is charged to its creator's memory
// cgroup: millions of lazy buffers cannot pin kernel memory nobody sees.  A
// full cgroup fails BO_CREATE with ENOMEM, there, without its OOM killer, and
// everyone else carries on.
TEST(Limits, FullMemoryCgroupFailsBufferCreationWithEnomem)
{
	Cgroup cg("memory");
	if (!cg.usable())
		GTEST_SKIP() << "no memory controller in this VM";
	ASSERT_EQ(cg.set("memory.max", std::to_string(8 * kMiB)), 0);
	pid_t pid = fork();
	if (pid == 0) {
		// Its own pages copied and locked first, outside the cgroup: a page
		// fault in a full cgroup would call its OOM killer.
		if (mlockall(MCL_CURRENT | MCL_FUTURE) || !cg.join(getpid()))
			_exit(101);
		Fd fd = open_node(sim_device(0)->node);
		unsigned made = 0;
		// Below file_max_buffers, so that only the cgroup can refuse.
		int err = create_until_refused(fd.get(), 4096, DRM_RBLN_BO_HOST, 60000, &made);
		_exit(err == ENOMEM ? 0 : err ? err : 100);
	}
	ASSERT_GT(pid, 0);
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
	EXPECT_EQ(WEXITSTATUS(status), 0) << "100: 60000 buffers and the cgroup never filled; "
					      "else the errno BO_CREATE failed with";
	EXPECT_EQ(cg.event("oom_kill"), 0u);
	EXPECT_GT(cg.event("max"), 0u) << "the cgroup's limit was what refused";
	EXPECT_EQ(victim_still_served(), 0) << "outside the cgroup all is well";
}

// DRM_RBLN_MAX_INFLIGHT failed jobs not waited for fill a file's table; the
// next SUBMIT fails with ENOSPC, which drmIoctl() returns (it retries EAGAIN,
// the error before interface 13, forever).  As a member of group rbln.
TEST(Limits, FullJobTableIsAnErrorDrmIoctlReturns)
{
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", std::to_string(DRM_RBLN_MAX_INFLIGHT)), 0);
	const std::string node = sim_device(1)->node;
	int rc = run_as_nobody(true, [&] {
		Fd fd = open_node(node);
		uint32_t a = 0, b = 0;
		if (!fd || bo_create(fd.get(), 4096, 0, 0, &a) || bo_create(fd.get(), 4096, 0, 0, &b))
			return 10;
		drm_rbln_copy copy{a, b, 0, 0, 4096};
		drm_rbln_submit s{};
		s.engine = DRM_RBLN_ENGINE_NEURAL_DMA;
		s.copies = reinterpret_cast<uintptr_t>(&copy);
		s.copy_count = 1;
		s.copy_size = sizeof(copy);
		for (int i = 0; i < DRM_RBLN_MAX_INFLIGHT; i++)
			if (drmIoctl(fd.get(), DRM_IOCTL_RBLN_SUBMIT, &s))
				return 11;
		alarm(5);	// a drmIoctl() spinning on the error ends here
		int ret = drmIoctl(fd.get(), DRM_IOCTL_RBLN_SUBMIT, &s);
		return ret == -1 && errno == ENOSPC ? 0 : 12;
	});
	EXPECT_EQ(rc, 0) << "-1: killed by the alarm, drmIoctl() kept retrying";
	EXPECT_EQ(debugfs_write(1, "fail_next_jobs", "0"), 0);
}

// A create refused by the file's limits changes nothing: it is refused before
// any capacity is reserved or memory placed, so an eager buffer bigger than
// what is free gets the limit's error (it got ENOSPC from the reservation
// before), the device's and the file's memory are as they were, and the
// file's idle time (LIST_CLIENTS) goes on.  As a member of group rbln.
TEST(Limits, CreateRefusedByTheFilesLimitsChangesNothing)
{
	ModuleParam count("file_max_buffers", "2");
	ASSERT_EQ(count.error(), 0);
	const std::string node = sim_device(0)->node;
	int rc = run_as_nobody(true, [&] {
		Fd fd = open_node(node);
		uint32_t a = 0, b = 0, c = 0;
		uint64_t total = 0, free_before = 0, used_before = 0, used_after = 0;
		if (!fd || bo_create(fd.get(), kMiB, DRM_RBLN_BO_EAGER, 0, &a) ||
		    bo_create(fd.get(), 4096, DRM_RBLN_BO_HOST, 0, &b) ||
		    get_param(fd.get(), DRM_RBLN_PARAM_MEMORY_TOTAL, &total) ||
		    get_param(fd.get(), DRM_RBLN_PARAM_MEMORY_USED, &used_before))
			return 10;
		free_before = total - used_before;
		drm_rbln_client_usage before{}, after{};
		if (drmIoctl(fd.get(), DRM_IOCTL_RBLN_CLIENT_USAGE, &before))
			return 11;
		sleep(2);	// idle for LIST_CLIENTS (whole seconds)
		// One that fits the device but not the file, and one that fits neither.
		if (bo_create(fd.get(), kMiB, DRM_RBLN_BO_EAGER, 0, &c) != EMFILE)
			return 12;
		if (bo_create(fd.get(), free_before + kMiB, DRM_RBLN_BO_EAGER, 0, &c) != EMFILE)
			return 13;
		if (get_param(fd.get(), DRM_RBLN_PARAM_MEMORY_USED, &used_after) ||
		    drmIoctl(fd.get(), DRM_IOCTL_RBLN_CLIENT_USAGE, &after))
			return 11;
		if (used_after != used_before || after.memory_total != before.memory_total ||
		    after.memory_resident != before.memory_resident ||
		    after.device_memory != before.device_memory)
			return 14;
		for (const auto &cl : list_clients(fd.get()))
			if (cl.flags & DRM_RBLN_CLIENT_SELF && cl.idle_ns < 1'000'000'000ull)
				return 15;
		// The limits still count right: one handle back makes room for one.
		if (gem_close(fd.get(), b) || bo_create(fd.get(), kMiB, DRM_RBLN_BO_EAGER, 0, &c) ||
		    bo_create(fd.get(), 4096, DRM_RBLN_BO_HOST, 0, &b) != EMFILE)
			return 16;
		return 0;
	});
	EXPECT_EQ(rc, 0) << "10/11: setup; 12: not EMFILE at the limit; 13: a create too big "
			    "for the device got the capacity's error, not the limit's; 14: memory "
			    "changed; 15: the refused create counted as activity; 16: the count "
			    "drifted";
}

// Writes @map as the uid and gid maps of @pid's user namespace (as newuidmap would).
static bool map_ids(pid_t pid, const std::string &map)
{
	for (const char *file : {"uid_map", "gid_map"}) {
		const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
		FILE *f = fopen(path.c_str(), "w");
		bool done = f && fputs(map.c_str(), f) >= 0;
		if (!f || fclose(f) != 0 || !done)
			return false;
	}
	return true;
}

// A user namespace maps as many uids as its creator is granted (newuidmap
// maps a whole /etc/subuid range; root here writes the map as newuidmap
// would): each of them is the creator's for user_max_buffers, or every uid of
// the range would be a fresh user.  The hostile member of group rbln makes
// the limit's buffers, enters a namespace of its own, becomes its uid 1
// (another uid of the initial namespace, 200001) and is still refused.
// Before the limits keyed on the namespace's owner, the uid 1 got 4 more.
TEST(Limits, UidsOfAUserNamespaceCountAsItsCreator)
{
	constexpr unsigned kLimit = 4;
	ModuleParam count("user_max_buffers", std::to_string(kLimit));
	ASSERT_EQ(count.error(), 0);
	int to_parent[2], to_child[2];
	ASSERT_EQ(pipe(to_parent), 0);
	ASSERT_EQ(pipe(to_child), 0);
	const std::string node = sim_device(0)->node;
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		// Exit codes: 0 refused as it should be, 1 served beyond the limit,
		// 4 no unprivileged user namespaces here, others a failed step.
		close(to_parent[0]);
		close(to_child[1]);
		if (become_nobody(true))
			_exit(2);
		Fd fd = open_node(node);
		if (!fd)
			_exit(3);
		unsigned made = 0;
		if (create_until_refused(fd.get(), 4096, DRM_RBLN_BO_HOST, kLimit + 1, &made) != EMFILE ||
		    made != kLimit)
			_exit(5);
		char ok = unshare(CLONE_NEWUSER) ? 'n' : 'y';
		if (write(to_parent[1], &ok, 1) != 1 || ok != 'y')
			_exit(ok == 'y' ? 6 : 4);
		if (read(to_child[0], &ok, 1) != 1 || ok != 'y')
			_exit(7);
		if (setresgid(1, 1, 1) || setresuid(1, 1, 1) || getuid() != 1)
			_exit(8);
		uint32_t h = 0;
		int err = bo_create(fd.get(), 4096, DRM_RBLN_BO_HOST, 0, &h);
		if (write(to_parent[1], &err, sizeof(err)) != sizeof(err))
			_exit(9);
		(void)!read(to_child[0], &ok, 1);	/* the parent has looked at us */
		_exit(err == EMFILE ? 0 : 1);
	}
	Child child(pid);
	close(to_parent[1]);
	close(to_child[0]);
	char ok = 0;
	ASSERT_EQ(read(to_parent[0], &ok, 1), 1) << "the child failed before unshare";
	if (ok != 'y')
		GTEST_SKIP() << "no unprivileged user namespaces in this kernel";
	// The subordinate range newuidmap would map: ns 0 is the creator, 1.. others.
	const std::string proc = "/proc/" + std::to_string(pid);
	ASSERT_TRUE(map_ids(pid, "0 65534 1\n1 200001 100\n"));
	ok = 'y';
	ASSERT_EQ(write(to_child[1], &ok, 1), 1);
	int err = -1;
	ASSERT_EQ(read(to_parent[0], &err, sizeof(err)), ssize_t(sizeof(err)))
		<< "the child failed to become the namespace's uid 1";
	// The child really is another user of the initial namespace now.
	EXPECT_EQ(run_shell("grep -qE '^Uid:\\s+200001\\s' " + proc + "/status").exit, 0);
	EXPECT_EQ(err, EMFILE) << "uid 1 of the namespace got a buffer past its creator's limit";
	close(to_child[1]);	/* the child may go */
	int status = 0;
	EXPECT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << std::hex << status;
	close(to_parent[0]);
}

// A namespace root made (a container runtime's, each pod's uids a range the
// administrator handed out) is no user's: each of its uids is a user of its
// own.  Root holds the limit's buffers; uid 0 of a namespace root made, which
// is uid 300000 of the initial one, still gets its own.  Before the walk
// stopped at root, every such container shared root's one limit.
TEST(Limits, UidsOfANamespaceRootMadeAreUsersOfTheirOwn)
{
	constexpr unsigned kLimit = 4;
	ModuleParam count("user_max_buffers", std::to_string(kLimit));
	ASSERT_EQ(count.error(), 0);
	Fd fd = open_node(sim_device(0)->node);
	ASSERT_TRUE(fd);
	unsigned made = 0;
	ASSERT_EQ(create_until_refused(fd.get(), 4096, DRM_RBLN_BO_HOST, kLimit + 1, &made), EMFILE);
	ASSERT_EQ(made, kLimit);
	int to_parent[2], to_child[2];
	ASSERT_EQ(pipe(to_parent), 0);
	ASSERT_EQ(pipe(to_child), 0);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(to_parent[0]);
		close(to_child[1]);
		char ok = unshare(CLONE_NEWUSER) ? 'n' : 'y';
		if (write(to_parent[1], &ok, 1) != 1 || ok != 'y')
			_exit(2);
		if (read(to_child[0], &ok, 1) != 1 || ok != 'y')
			_exit(3);
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			_exit(4);
		uint32_t h = 0;
		int err = bo_create(fd.get(), 4096, DRM_RBLN_BO_HOST, 0, &h);
		if (write(to_parent[1], &err, sizeof(err)) != sizeof(err))
			_exit(5);
		(void)!read(to_child[0], &ok, 1);	/* the parent has looked at us */
		_exit(0);
	}
	Child child(pid);
	close(to_parent[1]);
	close(to_child[0]);
	char ok = 0;
	ASSERT_EQ(read(to_parent[0], &ok, 1), 1);
	ASSERT_EQ(ok, 'y') << "root could not make a user namespace";
	const std::string proc = "/proc/" + std::to_string(pid);
	ASSERT_TRUE(map_ids(pid, "0 300000 100\n"));
	ok = 'y';
	ASSERT_EQ(write(to_child[1], &ok, 1), 1);
	int err = -1;
	ASSERT_EQ(read(to_parent[0], &err, sizeof(err)), ssize_t(sizeof(err)))
		<< "the child failed to become the namespace's uid 0";
	EXPECT_EQ(run_shell("grep -qE '^Uid:\\s+300000\\s' " + proc + "/status").exit, 0);
	EXPECT_EQ(err, 0) << "uid 0 of root's namespace was charged to root: " << strerror(err);
	close(to_child[1]);
	int status = 0;
	EXPECT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << std::hex << status;
	close(to_parent[0]);
}

// A member of group rbln whose cgroup gives it 1 ms of CPU a second
// (cpu.max) keeps ATOM's Task DMA busy with jobs of the job limit, which an
// idle engine runs inside SUBMIT, on the submitter's CPU time.  The copy's
// chunks were points where the task could be throttled, and it then slept
// out its CPU debt holding the engine: another user's 4 KiB job waited 5 to
// 34 s.  A direct copy never sleeps now, so such a task is throttled only
// once it has let the engine go (on kernels that preempt only where asked,
// as Debian's 6.1 and 6.12; 7.x defers the throttle to the return to user
// space), and a job that has had the engine a slice while another waits
// yields it (RBLN_HW_RUN_NOW_SLICE_MS).
TEST(Limits, ThrottledSubmitterYieldsItsEngineToOthers)
{
	Cgroup cg("cpu");
	if (!cg.usable())
		GTEST_SKIP() << "no cpu controller in this VM";
	// The hog's jobs that ended inside SUBMIT, and the others (yielded, or
	// queued behind another's from the start).
	struct Report {
		std::atomic<long> direct{0}, scheduled{0};
	};
	Report *report = shared_array<Report>(1);
	ASSERT_NE(report, nullptr);
	const std::string node = sim_device(0)->node;
	uint64_t limit = 0;
	{
		Fd fd = open_node(node);
		ASSERT_EQ(get_param(fd.get(), DRM_RBLN_PARAM_JOB_MAX_BYTES, &limit), 0);
	}
	const Cgroup &group = cg;
	Child hog(fork_until_ready([&](const std::function<void()> &ready) {
		if (!group.join(getpid()) || become_nobody(true))
			_exit(2);
		Fd fd = open_node(node);
		uint32_t src = 0, dst = 0;
		if (!fd || bo_create(fd.get(), limit, 0, 0, &src) || bo_create(fd.get(), limit, 0, 0, &dst))
			_exit(3);
		drm_rbln_copy copy{src, dst, 0, 0, limit};
		for (bool told = false;; told = true) {
			drm_rbln_submit s{};
			s.engine = DRM_RBLN_ENGINE_TASK_DMA;
			s.copies = reinterpret_cast<uintptr_t>(&copy);
			s.copy_count = 1;
			s.copy_size = sizeof(copy);
			s.flags = DRM_RBLN_SUBMIT_REPORT_END;
			if (ioctl(fd.get(), DRM_IOCTL_RBLN_SUBMIT, &s))
				_exit(4);
			if (s.ended && s.status)
				_exit(5);
			if (s.ended) {
				report->direct++;
			} else {
				report->scheduled++;
				if (wait_job(fd.get(), s.seqno))
					_exit(6);
			}
			if (!told)
				ready();
		}
	}));
	ASSERT_GT(hog.pid(), 0);
	ASSERT_EQ(cg.set("cpu.max", "1000 1000000"), 0);

	Fd fd = open_node(node);
	uint32_t a = 0, b = 0;
	ASSERT_EQ(bo_create(fd.get(), 4096, 0, 0, &a), 0);
	ASSERT_EQ(bo_create(fd.get(), 4096, 0, 0, &b), 0);
	double longest_ms = 0;
	for (int probe = 0; probe < 6; probe++) {
		usleep(50'000);		// the hog is inside a copy again
		const auto start = std::chrono::steady_clock::now();
		uint64_t seqno = 0;
		ASSERT_EQ(submit(fd.get(), DRM_RBLN_ENGINE_TASK_DMA, 0, {{a, b, 0, 0, 4096}}, &seqno), 0);
		ASSERT_EQ(wait_job(fd.get(), seqno), 0);
		longest_ms = std::max(longest_ms, std::chrono::duration<double, std::milli>(
							  std::chrono::steady_clock::now() - start).count());
	}
	const std::string stat = read_file(cg.path() + "/cpu.stat").value_or("");
	EXPECT_EQ(cg.set("cpu.max", "max"), 0);	// the hog's last copy ends soon
	int status = 0;
	EXPECT_EQ(waitpid(hog.pid(), &status, WNOHANG), 0) << "the hog stopped early: "
							      << WEXITSTATUS(status);
	EXPECT_LT(longest_ms, 1000.0) << "another user's 4 KiB job waited that long for the engine";
	std::printf("the longest wait of another user's 4 KiB job: %.0f ms (the hog's jobs: %ld "
		    "inside SUBMIT, %ld scheduled; its cpu.stat: %s)\n", longest_ms,
		    report->direct.load(), report->scheduled.load(), stat.c_str());
}
