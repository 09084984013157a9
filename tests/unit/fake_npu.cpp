// The fake NPU's ioctls (see fake_npu.h).  The library calls ::ioctl; a
// definition in the executable is the one it links to, so every ioctl of
// the process comes here, and those of fds the fake did not open go on to
// the kernel.
#include "fake_npu.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

#include "drm.h"

#include "rbln_drm.h"

namespace fake_npu {
namespace {

struct File {
	Options options;
	uint64_t last_seqno = 0;
	uint32_t next_handle = 1;
	// CLOCK_MONOTONIC, as the driver's times: the recorder compares them
	// with its own clock readings (when counters are due).
	uint64_t clock = [] {
		timespec ts{};
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
	}();
	std::deque<drm_rbln_job_time> ring, held;
};

std::mutex g_mu;
std::map<int, File> g_files;
const Options *g_opening = nullptr;	// open() is making this file
uint64_t g_job_times_calls = 0;
std::function<void()> g_submit_hook, g_job_times_hook;

// As the driver: flags it does not know are refused, and a job ended inside
// SUBMIT reports its times there when asked (16), else its record goes to
// the ring.  A held job (hold_times) is still in flight at SUBMIT's return.
// A job labelled "refused" is refused, as the driver refuses a bad one.
int submit(File &f, drm_rbln_submit &s)
{
	if (s.label && std::strcmp(reinterpret_cast<const char *>(s.label), "refused") == 0)
		return EINVAL;
	const uint32_t known = f.options.uapi_version >= 16 ? DRM_RBLN_SUBMIT_FLAGS :
			       f.options.uapi_version >= 14 ? DRM_RBLN_SUBMIT_REPORT_END | DRM_RBLN_SUBMIT_TIMES :
							      DRM_RBLN_SUBMIT_REPORT_END;
	const uint32_t report_needs = DRM_RBLN_SUBMIT_TIMES | DRM_RBLN_SUBMIT_REPORT_END;
	if (s.flags & ~known || s.reserved3 ||
	    (s.flags & DRM_RBLN_SUBMIT_REPORT_TIMES && (s.flags & report_needs) != report_needs))
		return EINVAL;
	s.seqno = ++f.last_seqno;
	s.ended = f.options.hold_times ? 0 : 1;
	s.status = 0;
	s.submit_ns = s.start_ns = s.end_ns = 0;
	s.time_flags = 0;
	if (s.flags & DRM_RBLN_SUBMIT_TIMES) {
		const uint64_t t = f.clock += 1000;
		drm_rbln_job_time r{s.seqno, t, t + 100, t + 500, 0, DRM_RBLN_JOB_TIME_RAN,
				    s.chiplet, s.engine};
		if (s.ended && s.flags & DRM_RBLN_SUBMIT_REPORT_TIMES) {
			s.submit_ns = r.submit_ns;
			s.start_ns = r.start_ns;
			s.end_ns = r.end_ns;
			s.time_flags = r.flags;
		} else {
			(f.options.hold_times ? f.held : f.ring).push_back(r);
		}
	}
	return 0;
}

// Its elements in order, as SUBMIT each, up to the first refused.
int submit_batch(File &f, drm_rbln_submit_batch &b)
{
	auto *subs = reinterpret_cast<drm_rbln_submit *>(b.submits);
	b.submitted = 0;
	b.error = 0;
	for (uint32_t i = 0; i < b.count; i++, b.submitted++) {
		if (int err = submit(f, subs[i])) {
			if (!i)
				return err;
			b.error = -err;
			break;
		}
	}
	return 0;
}

int job_times(File &f, drm_rbln_job_times &a)
{
	g_job_times_calls++;
	if (f.options.reverse_times)
		std::reverse(f.ring.begin(), f.ring.end());
	auto *out = reinterpret_cast<drm_rbln_job_time *>(uintptr_t(a.entries));
	uint32_t n = 0;
	for (; n < a.count && !f.ring.empty(); n++) {
		out[n] = f.ring.front();
		f.ring.pop_front();
	}
	a.count = n;
	a.pending = uint32_t(f.ring.size());
	a.lost = 0;
	return 0;
}

int answer(File &f, unsigned long request, void *arg)
{
	switch (request) {
	case DRM_IOCTL_RBLN_DEVICE_INFO: {
		auto &di = *static_cast<drm_rbln_device_info *>(arg);
		di = {};
		di.index = 1;
		di.sku = DRM_RBLN_SKU_REBEL100;
		di.chiplet_count = 4;
		di.numa_node = -1;
		di.uapi_version = f.options.uapi_version;
		di.memory_total = 1ull << 34;
		di.capabilities = DRM_RBLN_CAP_SIMULATED | DRM_RBLN_CAP_MEMORY | DRM_RBLN_CAP_DMA |
				  DRM_RBLN_CAP_SYNCOBJ;
		std::strcpy(di.name, "RBLN-CR03");
		std::strcpy(di.driver_version, "fake");
		return 0;
	}
	case DRM_IOCTL_RBLN_GET_PARAM: {
		auto &p = *static_cast<drm_rbln_get_param *>(arg);
		switch (p.param) {
		case DRM_RBLN_PARAM_UAPI_VERSION: p.value = f.options.uapi_version; return 0;
		case DRM_RBLN_PARAM_UAPI_COMPAT_VERSION: p.value = DRM_RBLN_UAPI_COMPAT_VERSION; return 0;
		case DRM_RBLN_PARAM_JOB_MAX_BYTES: p.value = 16 << 20; return 0;
		case DRM_RBLN_PARAM_MEMORY_USED: p.value = 4096; return 0;
		default: return EINVAL;
		}
	}
	case DRM_IOCTL_RBLN_DEVICE_STATUS:
		*static_cast<drm_rbln_device_status *>(arg) = {};
		return 0;
	case DRM_IOCTL_RBLN_BO_CREATE:
		static_cast<drm_rbln_bo_create *>(arg)->handle = f.next_handle++;
		return 0;
	case DRM_IOCTL_RBLN_BO_INFO: {
		auto &i = *static_cast<drm_rbln_bo_info *>(arg);
		i.size = 1 << 20;
		i.device_address = uint64_t(i.handle) << 20;
		return 0;
	}
	case DRM_IOCTL_SYNCOBJ_CREATE:
		static_cast<drm_syncobj_create *>(arg)->handle = f.next_handle++;
		return 0;
	case DRM_IOCTL_RBLN_SUBMIT:
		return submit(f, *static_cast<drm_rbln_submit *>(arg));
	case DRM_IOCTL_RBLN_SUBMIT_BATCH:
		return submit_batch(f, *static_cast<drm_rbln_submit_batch *>(arg));
	case DRM_IOCTL_RBLN_JOB_TIMES:
		return job_times(f, *static_cast<drm_rbln_job_times *>(arg));
	case DRM_IOCTL_GEM_CLOSE:
	case DRM_IOCTL_SYNCOBJ_DESTROY:
	case DRM_IOCTL_SYNCOBJ_WAIT:
	case DRM_IOCTL_SYNCOBJ_RESET:
	case DRM_IOCTL_RBLN_WAIT:
		return 0;	// every job ended inside SUBMIT, and well
	default:
		return ENOTTY;
	}
}

} // namespace

rbln::Device open(const Options &options)
{
	Options o = options;
	if (!o.uapi_version)
		o.uapi_version = DRM_RBLN_UAPI_VERSION;
	// One open at a time: g_opening names the file being opened.
	static std::mutex opening;
	std::lock_guard one(opening);
	{
		std::lock_guard lock(g_mu);
		g_opening = &o;
	}
	rbln::Device dev = rbln::Device::open_path("/dev/null");
	std::lock_guard lock(g_mu);
	g_opening = nullptr;
	return dev;
}

void release_times()
{
	std::lock_guard lock(g_mu);
	for (auto &[fd, f] : g_files) {
		f.ring.insert(f.ring.end(), f.held.begin(), f.held.end());
		f.held.clear();
	}
}

void on_submit(std::function<void()> hook)
{
	std::lock_guard lock(g_mu);
	g_submit_hook = std::move(hook);
}

void on_job_times(std::function<void()> hook)
{
	std::lock_guard lock(g_mu);
	g_job_times_hook = std::move(hook);
}

uint64_t job_times_calls()
{
	std::lock_guard lock(g_mu);
	return g_job_times_calls;
}

} // namespace fake_npu

extern "C" int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	std::function<void()> hook;
	bool faked = false;
	{
		std::lock_guard lock(fake_npu::g_mu);
		// DEVICE_INFO is open_node's first call on a new fd: (re)claim it.
		if (fake_npu::g_opening && request == DRM_IOCTL_RBLN_DEVICE_INFO) {
			fake_npu::g_files.erase(fd);
			fake_npu::g_files[fd].options = *fake_npu::g_opening;
		}
		auto it = fake_npu::g_files.find(fd);
		if (it != fake_npu::g_files.end()) {
			int err = fake_npu::answer(it->second, request, arg);
			if (err) {
				errno = err;
				return -1;
			}
			faked = true;
			if (request == DRM_IOCTL_RBLN_SUBMIT && fake_npu::g_submit_hook) [[unlikely]]
				hook = fake_npu::g_submit_hook;
			else if (request == DRM_IOCTL_RBLN_JOB_TIMES && fake_npu::g_job_times_hook)
				hook = fake_npu::g_job_times_hook;
		}
	}
	if (hook)
		hook();
	if (faked)
		return 0;
	return int(syscall(SYS_ioctl, fd, request, arg));
}
