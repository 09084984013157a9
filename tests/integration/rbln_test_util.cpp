#include "rbln_test_util.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <csignal>

#include <fcntl.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rbln::test {

std::optional<std::string> read_file(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		return std::nullopt;
	std::stringstream ss;
	ss << in.rdbuf();
	if (in.bad())
		return std::nullopt;
	std::string s = ss.str();
	while (!s.empty() && s.back() == '\n')
		s.pop_back();
	return s;
}

int write_file(const std::string &path, const std::string &value)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ssize_t n = ::write(fd, value.data(), value.size());
	int err = n < 0 ? errno : 0;
	::close(fd);
	return err;
}

static std::string node_of(const fs::path &dev)
{
	std::error_code ec;
	for (const char *sub : {"accel", "drm"})
		for (const auto &e : fs::directory_iterator(dev / sub, ec)) {
			std::string name = e.path().filename();
			if (name.starts_with("accel"))
				return "/dev/accel/" + name;
			if (name.starts_with("renderD"))
				return "/dev/dri/" + name;
		}
	return {};
}

std::vector<SimDevice> sim_devices()
{
	std::vector<SimDevice> out;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(fs::path(kSimBus) / "devices", ec)) {
		fs::path dev = fs::canonical(e.path(), ec);
		auto index = read_file(dev / "index");
		if (!index)
			continue;
		out.push_back({dev.string(), unsigned(std::stoul(*index)), node_of(dev)});
	}
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.index < b.index; });
	return out;
}

std::optional<SimDevice> sim_device(unsigned index)
{
	for (auto &d : sim_devices())
		if (d.index == index)
			return d;
	return std::nullopt;
}

// Tried again when it cannot reach udevd (on the sanitizer kernel once
// "Failed to wait for daemon to reply: Broken pipe", which stopped the whole
// binary); the binary stops, as a test after an unsettled udev would fail
// for the wrong reason, only when three tries failed.
void udev_settle()
{
	for (int i = 0; i < 3; i++) {
		if (std::system("udevadm settle --timeout=60") == 0)
			return;
		std::this_thread::sleep_for(std::chrono::seconds(1));
	}
	std::fputs("udev_settle: udevadm settle failed three times\n", stderr);
	std::abort();
}

int get_param(int fd, drm_rbln_get_param &args)
{
	return ::ioctl(fd, DRM_IOCTL_RBLN_GET_PARAM, &args) ? errno : 0;
}

int get_param(int fd, uint32_t param, uint64_t *value, uint32_t flags, uint32_t chiplet)
{
	drm_rbln_get_param args{};
	args.param = param;
	args.flags = flags;
	args.chiplet = chiplet;
	int err = get_param(fd, args);
	if (!err)
		*value = args.value;
	return err;
}

bool memory_used_back_within(int fd, uint64_t used, unsigned limit_ms)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
	uint64_t now = 0;
	while (get_param(fd, DRM_RBLN_PARAM_MEMORY_USED, &now) == 0 && now != used &&
	       std::chrono::steady_clock::now() < end)
		::usleep(20'000);
	return now == used;
}

int device_info(int fd, drm_rbln_device_info &info)
{
	return ::ioctl(fd, DRM_IOCTL_RBLN_DEVICE_INFO, &info) ? errno : 0;
}

int bo_create(int fd, uint64_t size, uint32_t flags, uint32_t chiplet, uint32_t *handle)
{
	drm_rbln_bo_create args{};
	args.size = size;
	args.flags = flags;
	args.chiplet = chiplet;
	if (::ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &args))
		return errno;
	*handle = args.handle;
	return 0;
}

int bo_info(int fd, uint32_t handle, drm_rbln_bo_info &info)
{
	info = {};
	info.handle = handle;
	return ::ioctl(fd, DRM_IOCTL_RBLN_BO_INFO, &info) ? errno : 0;
}

int gem_close(int fd, uint32_t handle)
{
	drm_gem_close args{};
	args.handle = handle;
	return ::ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args) ? errno : 0;
}

int prime_export(int fd, uint32_t handle, int *dmabuf_fd)
{
	drm_prime_handle args{};
	args.handle = handle;
	args.flags = DRM_CLOEXEC | DRM_RDWR;
	if (::ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
		return errno;
	*dmabuf_fd = args.fd;
	return 0;
}

int prime_import(int fd, int dmabuf_fd, uint32_t *handle)
{
	drm_prime_handle args{};
	args.fd = dmabuf_fd;
	if (::ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
		return errno;
	*handle = args.handle;
	return 0;
}

int submit(int fd, uint32_t engine, uint32_t chiplet, std::vector<drm_rbln_copy> copies,
	   uint64_t *seqno, const char *label)
{
	drm_rbln_submit args{};
	args.engine = engine;
	args.chiplet = chiplet;
	args.copies = reinterpret_cast<uintptr_t>(copies.data());
	args.copy_count = copies.size();
	args.copy_size = sizeof(drm_rbln_copy);
	args.label = reinterpret_cast<uintptr_t>(label);
	if (::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &args))
		return errno;
	*seqno = args.seqno;
	return 0;
}

int wait_job(int fd, uint64_t seqno, int64_t timeout_ns)
{
	drm_rbln_wait args{};
	args.seqno = seqno;
	args.timeout_ns = timeout_ns;
	if (::ioctl(fd, DRM_IOCTL_RBLN_WAIT, &args))
		return errno;
	return args.status;
}

uint32_t syncobj_create(int fd)
{
	drm_syncobj_create args{};
	return ::ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &args) ? 0 : args.handle;
}

int syncobj_destroy(int fd, uint32_t handle)
{
	drm_syncobj_destroy args{};
	args.handle = handle;
	return ::ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &args) ? errno : 0;
}

ModuleParam::ModuleParam(const std::string &name, const std::string &value)
	: path_("/sys/module/rbln/parameters/" + name), old_(read_file(path_).value_or("")),
	  error_(write_file(path_, value))
{
}

ModuleParam::~ModuleParam()
{
	if (!error_)
		write_file(path_, old_);
}

std::vector<drm_rbln_client> list_clients(int fd)
{
	std::vector<drm_rbln_client> clients(64);
	drm_rbln_list_clients args{};
	args.count = clients.size();
	args.entries = reinterpret_cast<uintptr_t>(clients.data());
	args.entry_size = sizeof(drm_rbln_client);
	if (::ioctl(fd, DRM_IOCTL_RBLN_LIST_CLIENTS, &args))
		return {};
	clients.resize(std::min<size_t>(args.count, clients.size()));
	return clients;
}

int reclaim(int fd, uint64_t client_id, uint32_t flags, uint64_t *freed)
{
	drm_rbln_reclaim args{};
	args.client_id = client_id;
	args.flags = flags;
	if (::ioctl(fd, DRM_IOCTL_RBLN_RECLAIM, &args))
		return errno;
	if (freed)
		*freed = args.freed_bytes;
	return 0;
}

int debugfs_write(unsigned npu, const std::string &file, const std::string &value)
{
	return write_file("/sys/kernel/debug/rbln/rbln" + std::to_string(npu) + "/" + file, value);
}

bool kernel_has_accel()
{
	return fs::exists("/sys/class/accel");
}

bool module_loaded()
{
	return fs::exists("/sys/module/rbln");
}

int unload_module()
{
	return ::syscall(SYS_delete_module, "rbln", O_NONBLOCK) ? errno : 0;
}

int unload_module_once_unused()
{
	for (int i = 0; i < 100 && read_file("/sys/module/rbln/refcnt").value_or("0") != "0"; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	return unload_module();
}

int load_module()
{
	const char *ko = std::getenv("RBLN_KO");
	const char *params = std::getenv("RBLN_KO_PARAMS");
	if (!ko)
		return ENOENT;
	int fd = ::open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int err = ::syscall(SYS_finit_module, fd, params ? params : "", 0) ? errno : 0;
	::close(fd);
	if (!err)
		udev_settle();
	return err;
}

int sim_new_device(const std::string &spec)
{
	int err = write_file(std::string(kSimBus) + "/new_device", spec);
	if (!err)
		udev_settle();
	return err;
}

int sim_del_device(unsigned id)
{
	int err = write_file(std::string(kSimBus) + "/del_device", std::to_string(id));
	if (!err)
		udev_settle();
	return err;
}

pid_t fork_until_ready(const std::function<void(const std::function<void()> &ready)> &work)
{
	int pipefd[2];
	if (::pipe(pipefd))
		return -1;
	pid_t pid = ::fork();
	if (pid == 0) {
		::close(pipefd[0]);
		try {
			work([&] { (void)!::write(pipefd[1], "r", 1); });
		} catch (...) {
			_exit(3);	// never back into the test runner
		}
		for (;;)
			::pause();
	}
	::close(pipefd[1]);
	char c;
	bool ready = pid > 0 && ::read(pipefd[0], &c, 1) == 1;
	::close(pipefd[0]);
	if (!ready && pid > 0) {
		::waitpid(pid, nullptr, 0);
		return -1;
	}
	return ready ? pid : -1;
}

pid_t make_stale_client(unsigned npu, uint64_t bytes)
{
	int pipefd[2];
	if (::pipe(pipefd))
		return -1;
	pid_t creator = ::fork();
	if (creator == 0) {
		Fd fd = open_node(sim_device(npu)->node);
		uint32_t h;
		if (!fd || bo_create(fd.get(), bytes, DRM_RBLN_BO_EAGER, 0, &h))
			_exit(1);
		pid_t keeper = ::fork();
		if (keeper == 0) {
			pid_t self = ::getpid();
			(void)!::write(pipefd[1], &self, sizeof(self));
			for (;;)
				::pause();
		}
		_exit(0);	// the creator exits; its child keeps the file
	}
	::close(pipefd[1]);
	pid_t keeper = -1;
	if (::read(pipefd[0], &keeper, sizeof(keeper)) != ssize_t(sizeof(keeper)))
		keeper = -1;
	::close(pipefd[0]);
	::waitpid(creator, nullptr, 0);
	return keeper;
}

int become_nobody(bool rbln_group)
{
	struct group *grp = rbln_group ? ::getgrnam("rbln") : nullptr;
	if (rbln_group && !grp)
		return ENOENT;
	gid_t g = grp ? grp->gr_gid : 0;
	if (::setgroups(grp ? 1 : 0, &g) || ::setresgid(65534, 65534, 65534) ||
	    ::setresuid(65534, 65534, 65534))
		return errno;
	return 0;
}

int run_as_nobody(bool rbln_group, const std::function<int()> &body)
{
	if (rbln_group && !::getgrnam("rbln"))
		return -1;
	pid_t pid = ::fork();
	if (pid == 0) {
		if (become_nobody(rbln_group))
			_exit(2);
		try {
			_exit(body());
		} catch (...) {
			_exit(3);
		}
	}
	int status = 0;
	if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

Cgroup::Cgroup(const std::string &controller)
	: controller_(controller),
	  path_("/sys/fs/cgroup/rbln-test-" + std::to_string(::getpid()) + "-" + controller)
{
	(void)write_file("/sys/fs/cgroup/cgroup.subtree_control", "+" + controller);
	std::error_code ec;
	fs::create_directory(path_, ec);
}

Cgroup::~Cgroup()
{
	::rmdir(path_.c_str());
}

bool Cgroup::usable() const
{
	std::istringstream in(read_file(path_ + "/cgroup.controllers").value_or(""));
	std::string c;
	while (in >> c)
		if (c == controller_)
			return true;
	return false;
}

bool Cgroup::join(pid_t pid) const
{
	return set("cgroup.procs", std::to_string(pid)) == 0;
}

uint64_t Cgroup::current() const
{
	return std::stoull(read_file(path_ + "/memory.current").value_or("0"));
}

int Cgroup::set(const std::string &name, const std::string &value) const
{
	return write_file(path_ + "/" + name, value);
}

uint64_t Cgroup::event(const std::string &key) const
{
	std::istringstream in(read_file(path_ + "/memory.events").value_or(""));
	std::string k;
	uint64_t n;
	while (in >> k >> n)
		if (k == key)
			return n;
	return 0;
}

void kill_and_reap(pid_t pid)
{
	::kill(pid, SIGKILL);
	::waitpid(pid, nullptr, 0);
}

Fd::~Fd()
{
	if (fd_ >= 0)
		::close(fd_);
}

Fd open_node(const std::string &path)
{
	return Fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
}

std::string read_all(FILE *p)
{
	std::string out;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	return out;
}

CommandResult run_shell(const std::string &cmd)
{
	FILE *p = popen(cmd.c_str(), "r");
	if (!p)
		return {-1, "popen failed"};
	std::string out = read_all(p);
	int status = pclose(p);
	return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

} // namespace rbln::test
