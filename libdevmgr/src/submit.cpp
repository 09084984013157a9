// Submitting jobs: copies, the jobs they wait for, and what a refusal means.
#include <array>
#include <cerrno>
#include <optional>
#include <span>
#include <vector>

#include <unistd.h>

#include "job_state.h"
#include "rbln_drm.h"

namespace rbln {

static_assert(RBLN_SUBMIT_MAX_AFTER == DRM_RBLN_MAX_IN_SYNCS);

using detail::fail;

namespace detail {

void check_dependency_count(const DeviceState &dev, size_t count)
{
	if (count > DRM_RBLN_MAX_IN_SYNCS)
		fail(EINVAL, fmt::format("{}: a job may wait for at most {} jobs, not {}; wait for some "
					 "of them first", dev.name(), DRM_RBLN_MAX_IN_SYNCS, count));
}

} // namespace detail

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

static std::string no_syncobjs(const detail::DeviceState &dev)
{
	return fmt::format("rbln.ko {} implements interface {}; syncobjs need 10 or later",
			   dev.info.driver_version, dev.uapi_version);
}

// The in_syncs of a job: its dependencies' syncobjs.  Those of another open
// file (another device, or this one opened again) travel as a sync_file into
// a syncobj of this file, held until SUBMIT has taken the fence.
// Nothing is allocated for dependencies that ended well inside SUBMIT.
class InSyncs {
public:
	const std::vector<drm_rbln_sync> &syncs() const { return syncs_; }

	void add(const detail::DeviceState &dev, const detail::JobState &dep)
	{
		if (dep.ended && !dep.ended_status)
			return;		// done and well: nothing to wait for
		if (!dep.syncobj)
			fail(EOPNOTSUPP, fmt::format("{}: job {} of {} cannot be waited for by another job: {}",
						     dev.name(), dep.seqno, dep.dev->name(),
						     no_syncobjs(*dep.dev)));
		if (dep.dev.get() == &dev) {
			syncs_.push_back({dep.syncobj, 0, 0});
			return;
		}
		int fd = detail::syncobj_export_sync_file(*dep.dev, dep.syncobj);
		if (fd < 0)
			fail(-fd, fmt::format("{}: cannot export the fence of job {} of {} as a sync_file: {}",
					      dev.name(), dep.seqno, dep.dev->name(), detail::errno_text(-fd)));
		detail::PooledSyncobj local(dev);
		int err = detail::syncobj_import_sync_file(dev, local.get(), fd);
		::close(fd);
		if (err)
			fail(err, fmt::format("{}: cannot import the fence of job {} of {}: {}", dev.name(),
					      dep.seqno, dep.dev->name(), detail::errno_text(err)));
		syncs_.push_back({local.get(), 0, 0});
		imported_.push_back(std::move(local));
	}

private:
	std::vector<drm_rbln_sync> syncs_;
	std::vector<detail::PooledSyncobj> imported_;	// given back when SUBMIT is done
};

Job Device::submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label)
{
	return submit(engine, chiplet, copies, label, std::span<const Job>());
}

Job Device::submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label, std::span<const Job> after)
{
	detail::check_dependency_count(*state_, after.size());
	if (!after.empty() && !state_->has_syncobjs())
		fail(EOPNOTSUPP, fmt::format("{}: a job cannot wait for other jobs here: {}; wait() for "
					     "them before submitting", name(), no_syncobjs(*state_)));
	InSyncs in;
	for (size_t i = 0; i < after.size(); i++) {
		if (!after[i].state_)
			fail(EINVAL, fmt::format("{}: dependency {} of {} is a moved-from Job", name(), i,
						 after.size()));
		in.add(*state_, *after[i].state_);
	}

	// A few copies (nearly every job) are described without allocating.
	std::array<drm_rbln_copy, 4> few;
	std::vector<drm_rbln_copy> many;
	if (copies.size() > few.size())
		many.resize(copies.size());
	const std::span<drm_rbln_copy> descs =
		many.empty() ? std::span(few).first(copies.size()) : std::span(many);
	for (size_t i = 0; i < copies.size(); i++) {
		const Copy &c = copies[i];
		descs[i] = {c.src.handle(), c.dst.handle(), c.src_offset, c.dst_offset, c.size};
	}
	std::string label_z(label.substr(0, DRM_RBLN_LABEL_MAX - 1));
	// Allocated first: once SUBMIT succeeded, nothing may fail.
	auto job = std::make_shared<detail::JobState>();
	std::optional<detail::PooledSyncobj> out;
	if (state_->has_syncobjs())
		out.emplace(*state_);

	drm_rbln_submit args{};
	args.engine = uint32_t(engine);
	args.chiplet = chiplet;
	args.copies = reinterpret_cast<uintptr_t>(descs.data());
	args.copy_count = uint32_t(descs.size());
	args.copy_size = sizeof(drm_rbln_copy);
	args.label = label.empty() ? 0 : reinterpret_cast<uintptr_t>(label_z.c_str());
	// A job that ends inside SUBMIT is reported there: its wait() needs no call.
	args.flags = state_->reports_end() ? DRM_RBLN_SUBMIT_REPORT_END : 0;
	args.in_syncs = reinterpret_cast<uintptr_t>(in.syncs().data());
	args.in_sync_count = uint32_t(in.syncs().size());
	args.out_sync.handle = out ? out->get() : 0;
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_SUBMIT, &args))
		fail(err, fmt::format("{}: submit of {} cop{} on chiplet {} {} refused: {}", name(),
				      descs.size(), descs.size() == 1 ? "y" : "ies", chiplet,
				      detail::engine_name(engine), submit_hint(err, *this, engine)));
	job->dev = state_;
	job->seqno = args.seqno;
	job->syncobj = out ? out->release() : 0;
	job->waits_for_jobs = !in.syncs().empty();
	job->ended = state_->reports_end() && args.ended;
	job->ended_status = job->ended ? args.status : 0;
	return Job(std::move(job), args.seqno, engine, chiplet);
}

} // namespace rbln
