// DRM syncobjs of an open device: the pool and the calls jobs make on them.
#include "syncobj.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <limits>

#include "device_state.h"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN namespace detail {

// Enough for every job a file may have unfinished (the driver's limit);
// beyond that, handles go back to the kernel.
static constexpr size_t kMaxFree = DRM_RBLN_MAX_INFLIGHT;

static void destroy_syncobj(const DeviceState &dev, uint32_t handle) noexcept
{
	drm_syncobj_destroy args{};
	args.handle = handle;
	dev.ioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &args);
}

uint32_t SyncobjPool::take(const DeviceState &dev)
{
	{
		std::lock_guard lock(mutex_);
		if (!free_.empty()) {
			uint32_t handle = free_.back();
			free_.pop_back();
			return handle;
		}
	}
	drm_syncobj_create args{};
	if (int err = dev.ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &args))
		fail(err, fmt::format("{}: cannot create a syncobj for a job: {}", dev.name(),
				      err == ENOMEM ? "the host is out of memory" : errno_text(err)));
	return args.handle;
}

void SyncobjPool::give_back(const DeviceState &dev, uint32_t handle) noexcept
{
	{
		std::lock_guard lock(mutex_);
		if (free_.size() < kMaxFree) {
			try {
				free_.push_back(handle);
				return;
			} catch (const std::bad_alloc &) {
				// destroyed below instead
			}
		}
	}
	destroy_syncobj(dev, handle);
}

void SyncobjPool::clear(const DeviceState &dev) noexcept
{
	std::lock_guard lock(mutex_);
	for (uint32_t handle : free_)
		destroy_syncobj(dev, handle);
	free_.clear();
}

PooledSyncobj::PooledSyncobj(const DeviceState &dev) : dev_(&dev), handle_(dev.syncobjs.take(dev)) {}

PooledSyncobj::~PooledSyncobj()
{
	if (handle_)
		dev_->syncobjs.give_back(*dev_, handle_);
}

int64_t syncobj_deadline_ns(int64_t now_ns, std::chrono::nanoseconds timeout) noexcept
{
	const int64_t t = std::max<int64_t>(0, timeout.count());
	if (t > std::numeric_limits<int64_t>::max() - now_ns)
		return std::numeric_limits<int64_t>::max();
	return now_ns + t;
}

int syncobj_wait(const DeviceState &dev, uint32_t handle, std::chrono::nanoseconds timeout)
{
	drm_syncobj_wait args{};
	args.handles = reinterpret_cast<uintptr_t>(&handle);
	args.count_handles = 1;
	// Absolute, so the EINTR retry in DeviceState::ioctl keeps the deadline.
	if (timeout.count() > 0) {
		timespec now{};
		clock_gettime(CLOCK_MONOTONIC, &now);
		args.timeout_nsec = syncobj_deadline_ns(now.tv_sec * 1'000'000'000ll + now.tv_nsec, timeout);
	}
	return dev.ioctl(DRM_IOCTL_SYNCOBJ_WAIT, &args);
}

int syncobj_export_sync_file(const DeviceState &dev, uint32_t handle)
{
	drm_syncobj_handle args{};
	args.handle = handle;
	args.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	args.fd = -1;
	if (int err = dev.ioctl(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &args))
		return -err;
	return args.fd;
}

int syncobj_import_sync_file(const DeviceState &dev, uint32_t handle, int fd)
{
	drm_syncobj_handle args{};
	args.handle = handle;
	args.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
	args.fd = fd;
	return dev.ioctl(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &args);
}

} RBLN_CXX_ABI_END // namespace rbln::detail
