// Buffers: allocation with the product's error messages, mapping, sharing.
#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "device_state.h"
#include "rbln_drm.h"

namespace rbln {

using detail::fail;

Buffer::Buffer(std::shared_ptr<detail::DeviceState> dev, uint32_t handle, bool host)
	: dev_(std::move(dev)), handle_(handle), host_(host)
{
	drm_rbln_bo_info info{};
	info.handle = handle;
	if (int err = dev_->ioctl(DRM_IOCTL_RBLN_BO_INFO, &info))
		fail(err, fmt::format("{}: cannot query buffer {}: {}", dev_->name(), handle,
				      detail::errno_text(err)));
	size_ = info.size;
	device_address_ = info.device_address;
	mmap_offset_ = info.mmap_offset;
}

Buffer::Buffer(Buffer &&o) noexcept
	: dev_(std::move(o.dev_)), handle_(o.handle_), size_(o.size_),
	  device_address_(o.device_address_), mmap_offset_(o.mmap_offset_), host_(o.host_),
	  map_(o.map_)
{
	o.map_ = nullptr;
}

Buffer &Buffer::operator=(Buffer &&o) noexcept
{
	if (this != &o) {
		reset();
		dev_ = std::move(o.dev_);
		handle_ = o.handle_;
		size_ = o.size_;
		device_address_ = o.device_address_;
		mmap_offset_ = o.mmap_offset_;
		host_ = o.host_;
		map_ = std::exchange(o.map_, nullptr);
	}
	return *this;
}

void Buffer::reset() noexcept
{
	if (!dev_)
		return;
	if (map_)
		::munmap(map_, size_);
	map_ = nullptr;
	drm_gem_close args{};
	args.handle = handle_;
	dev_->ioctl(DRM_IOCTL_GEM_CLOSE, &args);
	dev_.reset();
}

Buffer::~Buffer()
{
	reset();
}

std::span<std::byte> Buffer::map()
{
	if (!map_) {
		void *p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, dev_->fd,
				 mmap_offset_);
		if (p == MAP_FAILED) {
			int err = errno;
			fail(err, fmt::format("cannot map a {} buffer of {}: {}", detail::bytes_text(size_),
					      dev_->name(),
					      err == ENOMEM ? "the host could not provide the memory"
							    : detail::errno_text(err)));
		}
		map_ = static_cast<std::byte *>(p);
	}
	return {map_, size_};
}

int Buffer::export_fd() const
{
	drm_prime_handle args{};
	args.handle = handle_;
	args.flags = DRM_CLOEXEC | DRM_RDWR;
	if (int err = dev_->ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
		fail(err, fmt::format("{}: cannot export buffer {}: {}", dev_->name(), handle_,
				      detail::errno_text(err)));
	return args.fd;
}

// What went wrong with an allocation, in the words users know.
static std::string alloc_message(const detail::DeviceState &dev, int err, uint64_t size,
				 Placement placement, AllocMode mode, bool host)
{
	const char *what = host ? "rbln_malloc_host" : mode == AllocMode::eager ? "rbln_malloc_eager"
										: "rbln_malloc_lazy";
	std::string head = fmt::format("{} failed ({}, {} bytes)", what, dev.name(), size);
	const uint32_t chiplet = placement.chiplet();
	switch (err) {
	case ENOSPC: {
		std::string where = chiplet == RBLN_CHIPLET_INTERLEAVED
					    ? std::string("interleaved over all chiplets")
					    : fmt::format("on chiplet {}", chiplet);
		return fmt::format("{}; the device may be out of memory or hold stale allocations "
				   "(asked for {} {}; see rbln-smi for who holds memory)",
				   head, detail::bytes_text(size), where);
	}
	case EINVAL:
		if (!host && chiplet != RBLN_CHIPLET_INTERLEAVED && chiplet >= dev.info.chiplet_count)
			return fmt::format("{}: chiplet {} does not exist; {} has chiplets 0..{} "
					   "(or interleaved)", head, chiplet, dev.info.name,
					   dev.info.chiplet_count - 1);
		return fmt::format("{}: invalid request (size must be non-zero; host buffers "
				   "take no chiplet)", head);
	case E2BIG:
		return fmt::format("{}: host buffers are limited to {}", head,
				   detail::bytes_text(DRM_RBLN_HOST_BO_MAX));
	case ENOMEM:
		return fmt::format("{}; the host could not provide the memory, or this process's "
				   "memory cgroup is full", head);
	case EMFILE:
		return fmt::format("{}: this device handle, or this user on all NPUs, holds as many "
				   "buffers as rbln.ko allows (module parameters file_max_buffers, "
				   "user_max_buffers; exported buffers count for their creator until "
				   "freed); free some first", head);
	case EDQUOT:
		return fmt::format("{}: the buffers of this device handle, or of this user on all "
				   "NPUs, would exceed the bytes rbln.ko allows (module parameters "
				   "file_max_bytes, user_max_bytes; exported buffers count for their "
				   "creator until freed); free some first", head);
	default:
		return fmt::format("{}: {}", head, detail::errno_text(err));
	}
}

static uint32_t create_bo(const detail::DeviceState &dev, uint64_t size, Placement placement,
			  AllocMode mode, bool host)
{
	drm_rbln_bo_create args{};
	args.size = size;
	args.chiplet = host ? 0 : placement.chiplet();
	args.flags = (mode == AllocMode::eager ? DRM_RBLN_BO_EAGER : 0) | (host ? DRM_RBLN_BO_HOST : 0);
	if (int err = dev.ioctl(DRM_IOCTL_RBLN_BO_CREATE, &args))
		fail(err, alloc_message(dev, err, size, placement, mode, host));
	return args.handle;
}

Buffer Device::allocate(uint64_t size, Placement placement, AllocMode mode)
{
	return Buffer(state_, create_bo(*state_, size, placement, mode, false), false);
}

Buffer Device::allocate_host(uint64_t size)
{
	return Buffer(state_, create_bo(*state_, size, Placement::on_chiplet(0), AllocMode::lazy, true),
		      true);
}

Buffer Device::import(int dmabuf_fd)
{
	drm_prime_handle args{};
	args.fd = dmabuf_fd;
	if (int err = state_->ioctl(DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
		fail(err, fmt::format("{}: cannot import dma-buf fd {}: {}", name(), dmabuf_fd,
				      detail::errno_text(err)));
	drm_rbln_bo_info info{};
	info.handle = args.handle;
	state_->ioctl(DRM_IOCTL_RBLN_BO_INFO, &info);
	return Buffer(state_, args.handle, info.flags & DRM_RBLN_BO_HOST);
}

} // namespace rbln
