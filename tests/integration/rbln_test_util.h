// Helpers for integration tests that run inside the test VM against the real
// rbln.ko: sysfs access, the simulated devices, ioctls, module (re)loading.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "rbln_drm.h"

namespace rbln::test {

inline constexpr const char *kSimBus = "/sys/bus/rbln_sim";
// One simulated NPU as the kernel shows it.
struct SimDevice {
	std::string sysfs;	// /sys/bus/rbln_sim/devices/rbln_simN
	unsigned index;		// "index" attribute: N of /dev/rblnN
	std::string node;	// /dev/accel/accelM or /dev/dri/renderDM
};

std::vector<SimDevice> sim_devices();
std::optional<SimDevice> sim_device(unsigned index);

// Contents of a sysfs file without the trailing newline; nullopt if unreadable.
std::optional<std::string> read_file(const std::string &path);
// Writes @value; returns 0 or the errno of the write.
int write_file(const std::string &path, const std::string &value);

// Waits until udev has processed all events.
void udev_settle();

// GET_PARAM: returns 0 or errno; @value is written only on success.
int get_param(int fd, uint32_t param, uint64_t *value, uint32_t flags = 0, uint32_t chiplet = 0);
int get_param(int fd, drm_rbln_get_param &args);
int device_info(int fd, drm_rbln_device_info &info);
// Whether @fd's device's memory in use (MEMORY_USED) is back at @used within
// @limit_ms: a killed file's running jobs end in a work item after its reap.
bool memory_used_back_within(int fd, uint64_t used, unsigned limit_ms);

// Buffer objects; each returns 0 or errno.
int bo_create(int fd, uint64_t size, uint32_t flags, uint32_t chiplet, uint32_t *handle);
int bo_info(int fd, uint32_t handle, drm_rbln_bo_info &info);
int gem_close(int fd, uint32_t handle);
int prime_export(int fd, uint32_t handle, int *dmabuf_fd);
int prime_import(int fd, int dmabuf_fd, uint32_t *handle);

// DMA: one job of @copies on an engine (returns 0 or errno, the job's number
// in @seqno), and waiting for it (returns the ioctl's errno, or the job's
// status, 0 or negative, once it completed).
int submit(int fd, uint32_t engine, uint32_t chiplet, std::vector<drm_rbln_copy> copies,
	   uint64_t *seqno, const char *label = nullptr);
int wait_job(int fd, uint64_t seqno, int64_t timeout_ns = 10'000'000'000);

// DRM syncobjs: a new one (0 if it could not be made), and its end.
uint32_t syncobj_create(int fd);
int syncobj_destroy(int fd, uint32_t handle);

// Sets a parameter of rbln.ko while it lives, then puts the old value back;
// error() is the errno of setting it.
class ModuleParam {
public:
	ModuleParam(const std::string &name, const std::string &value);
	~ModuleParam();
	ModuleParam(const ModuleParam &) = delete;
	ModuleParam &operator=(const ModuleParam &) = delete;
	int error() const { return error_; }
private:
	std::string path_, old_;
	int error_;
};

// The engines' job_timeout_ms, in milliseconds.
class JobTimeout : public ModuleParam {
public:
	explicit JobTimeout(const std::string &ms) : ModuleParam("job_timeout_ms", ms) {}
};

// Clients: the device's open files as @fd's caller sees them, and a reclaim
// (returns 0 or errno; the device memory freed in @freed).
std::vector<drm_rbln_client> list_clients(int fd);
int reclaim(int fd, uint64_t client_id, uint32_t flags = 0, uint64_t *freed = nullptr);

// Fault injection: writes @value to /sys/kernel/debug/rbln/rbln<npu>/<file>; returns errno.
int debugfs_write(unsigned npu, const std::string &file, const std::string &value);

// While it lives, and @on, no job of simulated NPU @npu runs inside SUBMIT:
// each one, whatever its size, goes through its engine's scheduler (debugfs
// no_direct; read at SUBMIT, so a job submitted meanwhile stays scheduled).
// Not @on, it changes nothing.
class ScheduledJobs {
public:
	explicit ScheduledJobs(unsigned npu, bool on = true)
		: npu_(npu), on_(on), error_(on ? debugfs_write(npu, "no_direct", "1") : 0)
	{
	}
	~ScheduledJobs()
	{
		if (on_ && !error_)
			debugfs_write(npu_, "no_direct", "0");
	}
	ScheduledJobs(const ScheduledJobs &) = delete;
	ScheduledJobs &operator=(const ScheduledJobs &) = delete;
	int error() const { return error_; }

private:
	unsigned npu_;
	bool on_;
	int error_;
};

// True when this kernel gives rbln compute-accel nodes.
bool kernel_has_accel();

// Module control through the syscalls, for exact errnos.  The module path and
// load parameters come from RBLN_KO / RBLN_KO_PARAMS (set by tests/vm/suite.sh).
int unload_module();
// The same, once the module's last users are gone: a job's fences pin it until
// freed, a moment after its file closed (waits up to 10 s).
int unload_module_once_unused();
int load_module();
bool module_loaded();

// Adds/removes a simulated device through /sys/bus/rbln_sim; returns errno.
int sim_new_device(const std::string &spec);
int sim_del_device(unsigned id);

// Forks a child that runs @work, which calls its argument once it is ready
// (has allocated, queued, ...); the child then waits to be killed.  Returns
// the pid once the child is ready, or -1 if it exited before that.
pid_t fork_until_ready(const std::function<void(const std::function<void()> &ready)> &work);
// A stale client of NPU @npu holding @bytes of eager device memory: its
// creator exits, a child keeps the file.  Returns that child's pid (kill it
// to close the file), or -1.
pid_t make_stale_client(unsigned npu, uint64_t bytes);

// A shell command line's exit status (-1 if it did not exit) and stdout.
struct CommandResult {
	int exit;
	std::string out;
};
CommandResult run_shell(const std::string &cmd);
// Everything a popen()ed command writes until it exits.
std::string read_all(FILE *p);

// SIGKILLs @pid and reaps it.
void kill_and_reap(pid_t pid);

// A forked child that is killed and reaped when this goes out of scope, so a
// failed ASSERT cannot leave it running (holding files, or the VM's console).
class Child {
public:
	explicit Child(pid_t pid = -1) : pid_(pid) {}
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;
	~Child() { if (pid_ > 0) kill_and_reap(pid_); }
	pid_t pid() const { return pid_; }
private:
	pid_t pid_;
};

// Makes this process uid/gid 65534, in group rbln when @rbln_group; 0 or errno.
int become_nobody(bool rbln_group);

// Runs @body in a child as uid/gid 65534 (in group rbln when @rbln_group) and
// returns its exit status: @body's result, 2 if the identity could not be
// taken, 3 if it threw.  The child never returns into the test runner.
int run_as_nobody(bool rbln_group, const std::function<int()> &body);

// A cgroup of its own with @controller ("memory", "cpu") enabled, removed at
// the end (after its processes are gone).
class Cgroup {
public:
	explicit Cgroup(const std::string &controller);
	~Cgroup();
	Cgroup(const Cgroup &) = delete;
	Cgroup &operator=(const Cgroup &) = delete;
	// The kernel has the controller and gave it to this cgroup.
	bool usable() const;
	bool join(pid_t pid) const;
	// Memory controller: memory.current.
	uint64_t current() const;
	// Writes @value to its file @name (memory.max, cpu.max, ...); returns errno.
	int set(const std::string &name, const std::string &value) const;
	// Memory controller: the count of @key in memory.events (oom, oom_kill, ...).
	uint64_t event(const std::string &key) const;
	const std::string &path() const { return path_; }

private:
	std::string controller_, path_;
};

// RAII file descriptor.
class Fd {
public:
	explicit Fd(int fd = -1) : fd_(fd) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	Fd(Fd &&o) noexcept : fd_(o.release()) {}
	Fd &operator=(Fd &&o) noexcept
	{
		if (this != &o) {
			reset();
			fd_ = o.release();
		}
		return *this;
	}
	~Fd();
	int get() const { return fd_; }
	int release() { int fd = fd_; fd_ = -1; return fd; }
	void reset() { Fd closing(release()); }
	explicit operator bool() const { return fd_ >= 0; }
private:
	int fd_;
};

Fd open_node(const std::string &path);

} // namespace rbln::test
