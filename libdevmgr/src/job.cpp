// DMA jobs: submit copies, wait for them, and explain failures.
#include <cerrno>
#include <climits>
#include <vector>

#include <sys/ioctl.h>

#include "device_state.h"
#include "rbln_drm.h"

namespace rbln {

using detail::fail;

static std::string submit_hint(int err, const Device &dev, Engine engine)
{
	switch (err) {
	case EINVAL:
		return fmt::format("a copy is out of its buffers' range, has size 0, or is not allowed "
				   "for {} (External HDMA: host <-> chiplet 0; Neural DMA and Device "
				   "HDMA: within the chiplet; Task DMA: device memory touching the "
				   "chiplet); {} has chiplets 0..{}",
				   detail::engine_name(engine), dev.info().name,
				   dev.info().chiplet_count - 1);
	case ENOENT:
		return "a buffer does not belong to this device handle";
	case EAGAIN:
		return fmt::format("{} jobs are already in flight; wait for one first",
				   DRM_RBLN_MAX_INFLIGHT);
	case ENODEV:
		return "the chiplet is down or the device was removed";
	default:
		return detail::errno_text(err);
	}
}

Job Device::submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label)
{
	std::vector<drm_rbln_copy> descs;
	descs.reserve(copies.size());
	for (const Copy &c : copies)
		descs.push_back({c.src.handle(), c.dst.handle(), c.src_offset, c.dst_offset, c.size});
	std::string label_z(label.substr(0, DRM_RBLN_LABEL_MAX - 1));

	drm_rbln_submit args{};
	args.engine = uint32_t(engine);
	args.chiplet = chiplet;
	args.copies = reinterpret_cast<uintptr_t>(descs.data());
	args.copy_count = uint32_t(descs.size());
	args.copy_size = sizeof(drm_rbln_copy);
	args.label = label.empty() ? 0 : reinterpret_cast<uintptr_t>(label_z.c_str());
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_SUBMIT, &args))
		fail(err, fmt::format("{}: submit of {} cop{} on chiplet {} {} refused: {}", name(),
				      descs.size(), descs.size() == 1 ? "y" : "ies", chiplet,
				      detail::engine_name(engine), submit_hint(err, *this, engine)));
	return Job(state_, args.seqno, engine, chiplet);
}

static std::string job_failure(int status)
{
	switch (-status) {
	case ETIMEDOUT:
		return "the engine hung and was reset";
	case EIO:
		return "the job failed on the device";
	case ENODEV:
		return "the chiplet went down or the device was removed";
	case ENOMEM:
		return "its buffers could not be placed: the host is out of memory";
	case ECANCELED:
		return "it was cancelled";
	default:
		return detail::errno_text(-status);
	}
}

bool Job::wait_for(std::chrono::nanoseconds timeout) const
{
	drm_rbln_wait args{};
	args.seqno = seqno_;
	args.timeout_ns = std::max<int64_t>(0, timeout.count());
	int err = dev_->ioctl(DRM_IOCTL_RBLN_WAIT, &args);
	if (err == ETIME)
		return false;
	if (err)
		fail(err, fmt::format("{}: cannot wait for job {}: {}", dev_->name(), seqno_,
				      detail::errno_text(err)));
	if (args.status)
		fail(-args.status, fmt::format("{}: job {} on chiplet {} {} failed: {}", dev_->name(),
					       seqno_, chiplet_, detail::engine_name(engine_),
					       job_failure(args.status)));
	return true;
}

void Job::wait(std::chrono::nanoseconds timeout) const
{
	if (!wait_for(timeout))
		fail(ETIME, fmt::format("{}: job {} on chiplet {} {} still running after {} ms",
					dev_->name(), seqno_, chiplet_, detail::engine_name(engine_),
					std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
}

bool Job::done() const
{
	return wait_for(std::chrono::nanoseconds(0));
}

} // namespace rbln
