// DRM syncobjs of an open device: the pool every Job takes its syncobj from,
// and the few syncobj calls jobs need (wait, sync_file export and import).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "rbln/abi_namespace.hpp"

RBLN_CXX_ABI_BEGIN namespace detail {

struct DeviceState;

// Free syncobj handles of one open file.  A job's syncobj goes back here when
// the job's last copy dies, so a steady stream of jobs creates none: SUBMIT's
// out_sync replaces the fence, a reused syncobj needs no reset.
class SyncobjPool {
public:
	// A free handle, created (DRM_IOCTL_SYNCOBJ_CREATE) when none is left; throws.
	uint32_t take(const DeviceState &dev);
	// Keeps @handle for the next take(), or destroys it when enough are kept.
	void give_back(const DeviceState &dev, uint32_t handle) noexcept;
	// Destroys the free handles (the DeviceState is going).
	void clear(const DeviceState &dev) noexcept;

private:
	std::mutex mutex_;
	std::vector<uint32_t> free_;
};

// A handle taken from @dev's pool for one scope.
class PooledSyncobj {
public:
	explicit PooledSyncobj(const DeviceState &dev);
	PooledSyncobj(const PooledSyncobj &) = delete;
	PooledSyncobj &operator=(const PooledSyncobj &) = delete;
	PooledSyncobj(PooledSyncobj &&o) noexcept : dev_(o.dev_), handle_(o.handle_) { o.handle_ = 0; }
	~PooledSyncobj();
	uint32_t get() const { return handle_; }
	// The caller keeps the handle (and gives it back itself).
	uint32_t release() { return std::exchange(handle_, 0); }

private:
	const DeviceState *dev_;
	uint32_t handle_;
};

// The CLOCK_MONOTONIC time @timeout from @now_ns, as DRM_IOCTL_SYNCOBJ_WAIT
// takes it: negative timeouts are 0, a deadline past INT64_MAX is INT64_MAX.
int64_t syncobj_deadline_ns(int64_t now_ns, std::chrono::nanoseconds timeout) noexcept;

// Waits for @handle's fence; 0 once signalled, ETIME after @timeout, else the errno.
int syncobj_wait(const DeviceState &dev, uint32_t handle, std::chrono::nanoseconds timeout);
// A new sync_file fd holding @handle's fence, or -errno.
int syncobj_export_sync_file(const DeviceState &dev, uint32_t handle);
// Puts the fence of sync_file @fd into @handle; 0 or the errno.
int syncobj_import_sync_file(const DeviceState &dev, uint32_t handle, int fd);

} RBLN_CXX_ABI_END // namespace rbln::detail
