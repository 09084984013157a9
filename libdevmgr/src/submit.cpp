// Submitting jobs: copies, the jobs they wait for, and what a refusal means.
#include <algorithm>
#include <cerrno>
#include <optional>
#include <span>
#include <vector>

#include <unistd.h>

#include "job_state.h"
#include "profile/job_draft.h"
#include "rbln_drm.h"
#include "small_vector.h"

RBLN_CXX_ABI_BEGIN

static_assert(RBLN_SUBMIT_MAX_AFTER == DRM_RBLN_MAX_IN_SYNCS);
static_assert(RBLN_SUBMIT_MAX_BATCH == DRM_RBLN_MAX_BATCH);

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
		return fmt::format("this device handle has no room for more jobs in flight (at most {}, "
				   "failed ones counting until waited for); wait for some first",
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

// Throws unless the driver lets a job wait for other jobs (syncobjs).
static void need_syncobjs(const Device &dev, const detail::DeviceState &state)
{
	if (!state.has_syncobjs())
		fail(EOPNOTSUPP, fmt::format("{}: a job cannot wait for other jobs here: {}; wait() for "
					     "them before submitting", dev.name(), no_syncobjs(state)));
}

// The in_syncs of a job: its dependencies' syncobjs.  Those of another open
// file (another device, or this one opened again) travel as a sync_file into
// a syncobj of this file, held until SUBMIT has taken the fence.
// Nothing is allocated for a few dependencies (nearly every job waits for
// one or two), nor imported for those of another file that ended well.
class InSyncs {
public:
	std::span<const drm_rbln_sync> syncs() const { return syncs_.span(); }

	void add(const detail::DeviceState &dev, const detail::JobState &dep)
	{
		// Done and well: nothing to wait for.  One of this file is named
		// all the same (the driver drops its signalled fence at once): its
		// rbln_job_wait tracepoint shows the dependency to a system-wide
		// recorder (rbln-smi trace record).
		if (dep.ended && !dep.ended_status && !(dep.dev.get() == &dev && dep.syncobj))
			return;
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

	// A syncobj of this file that gets its fence before this job is submitted.
	void add_same_file(uint32_t syncobj) { syncs_.push_back({syncobj, 0, 0}); }

private:
	detail::SmallVector<drm_rbln_sync, 4> syncs_;
	std::vector<detail::PooledSyncobj> imported_;	// given back when SUBMIT is done
};

Job Device::submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label)
{
	return submit(engine, chiplet, copies, label, std::span<const Job>());
}

namespace detail {

// One job on its way in: its descriptors, the syncobjs it waits for and the
// one that gets its fence, and its shared state, all made before SUBMIT, so
// that nothing can fail once the job went in.  What args() points to lives
// as long as it does.  Moved only before SUBMIT, on its thread (a batch's
// array): its profiler's draft may be pointed to by the thread's stage.
class Submission {
public:
	Submission(const Device &dev, const std::shared_ptr<detail::DeviceState> &state,
		   Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label, std::span<const Job> after)
		: dev_(&dev), state_(&state), engine_(engine), chiplet_(chiplet),
		  label_(label.substr(0, DRM_RBLN_LABEL_MAX - 1)), descs_(copies.size()),
		  job_(std::make_shared<detail::JobState>())
	{
		detail::check_dependency_count(*state, after.size());
		if (!after.empty())
			need_syncobjs(dev, *state);
		for (size_t i = 0; i < after.size(); i++) {
			if (!after[i].state_)
				fail(EINVAL, fmt::format("{}: dependency {} of {} is a moved-from Job",
							 dev.name(), i, after.size()));
			in_.add(*state, *after[i].state_);
		}
		std::span<drm_rbln_copy> d = descs_.span();
		uint64_t bytes = 0;
		for (size_t i = 0; i < copies.size(); i++) {
			const Copy &c = copies[i];
			d[i] = {c.src.handle(), c.dst.handle(), c.src_offset, c.dst_offset, c.size};
			bytes += c.size;	// for the profiler: here, not in a loop of its own
		}
		if (state->has_syncobjs())
			out_.emplace(*state);
		if (profile::detail::active()) {
			profile::detail::check_environment();
			job_->profile_id = profile::detail::next_job_id();
			profile_.begin(*state, job_->profile_id, unsigned(engine), chiplet, label_.size(),
				       bytes);
			for (const Job &a : after)
				profile_.after(a.state_->profile_id);
		}
	}

	// Also waits for @earlier, a job of the same batch submitted before it.
	void after(const Submission &earlier)
	{
		need_syncobjs(*dev_, **state_);
		detail::check_dependency_count(**state_, in_.syncs().size() + 1);
		in_.add_same_file(earlier.out_->get());
		if (job_->profile_id)
			profile_.after(earlier.job_->profile_id);
	}

	drm_rbln_submit args() const
	{
		const detail::DeviceState &state = **state_;
		drm_rbln_submit a{};
		a.engine = uint32_t(engine_);
		a.chiplet = chiplet_;
		a.copies = reinterpret_cast<uintptr_t>(descs_.span().data());
		a.copy_count = uint32_t(descs_.size());
		a.copy_size = sizeof(drm_rbln_copy);
		a.label = label_.empty() ? 0 : reinterpret_cast<uintptr_t>(label_.c_str());
		// A job that ends inside SUBMIT is reported there: its wait() needs no call.
		a.flags = state.reports_end() ? DRM_RBLN_SUBMIT_REPORT_END : 0;
		if (job_->profile_id)
			a.flags |= state.profile_submit_flags;
		a.in_syncs = reinterpret_cast<uintptr_t>(in_.syncs().data());
		a.in_sync_count = uint32_t(in_.syncs().size());
		a.out_sync.handle = out_ ? out_->get() : 0;
		return a;
	}

	// @which: " (job K of the batch)", or empty.
	[[noreturn]] void refused(int err, std::string_view which = {}) const
	{
		// A full job table: ENOSPC since interface 13, EAGAIN (which drmIoctl
		// retries forever) before.  Busy either way, not out of memory.
		if (err == ENOSPC)
			err = EAGAIN;
		fail(err, fmt::format("{}: submit of {} cop{} on chiplet {} {}{} refused: {}",
				      dev_->name(), descs_.size(), descs_.size() == 1 ? "y" : "ies", chiplet_,
				      detail::engine_name(engine_), which,
				      submit_hint(err, *dev_, engine_)));
	}

	// The job SUBMIT took, as @done reports it, after the @parts of its
	// transfer (see JobState::parts).  Allocates nothing.
	Job job(const drm_rbln_submit &done, std::vector<Job> parts = {}) noexcept
	{
		const detail::DeviceState &state = **state_;
		job_->dev = *state_;
		job_->parts = std::move(parts);
		job_->seqno = done.seqno;
		job_->syncobj = out_ ? out_->release() : 0;
		job_->waits_for_jobs = !in_.syncs().empty();
		job_->ended = state.reports_end() && done.ended;
		job_->ended_status = job_->ended ? done.status : 0;
		if (job_->profile_id) {
			try {
				profile_.submitted(label_, done);
			} catch (...) {
				// The job went in; a profiler out of memory must not lose it.
			}
		}
		return Job(std::move(job_), done.seqno, engine_, chiplet_);
	}

private:
	const Device *dev_;
	const std::shared_ptr<detail::DeviceState> *state_;
	Engine engine_;
	uint32_t chiplet_;
	std::string label_;
	detail::SmallVector<drm_rbln_copy, 4> descs_;
	InSyncs in_;
	std::optional<detail::PooledSyncobj> out_;
	std::shared_ptr<detail::JobState> job_;
	profile::detail::JobDraft profile_;	// written only when profiling
};

} // namespace detail

// Whether @copies, @limit bytes at most in all, may go as one job.
static bool fits_one_job(std::span<const Copy> copies, uint64_t limit)
{
	uint64_t total = 0;
	for (const Copy &c : copies) {
		if (c.size > limit - total)
			return false;
		total += c.size;
	}
	return true;
}

// @copies as pieces of at most @limit bytes each, a copy cut where a piece
// fills up (a copy of size 0 goes as it is, for SUBMIT to refuse).
static std::vector<std::vector<Copy>> split_copies(std::span<const Copy> copies, uint64_t limit)
{
	std::vector<std::vector<Copy>> pieces(1);
	uint64_t room = limit;
	for (const Copy &c : copies) {
		if (!c.size)
			pieces.back().push_back(c);
		for (uint64_t done = 0, n; done < c.size; done += n, room -= n) {
			if (!room) {
				pieces.emplace_back();
				room = limit;
			}
			n = std::min(c.size - done, room);
			pieces.back().push_back({c.src, c.dst, c.src_offset + done, c.dst_offset + done, n});
		}
	}
	return pieces;
}

static Job submit_one(const Device &dev, const std::shared_ptr<detail::DeviceState> &state,
		      Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		      std::string_view label, std::span<const Job> after,
		      std::vector<Job> parts = {}, std::string_view which = {})
{
	detail::Submission one(dev, state, engine, chiplet, copies, label, after);
	drm_rbln_submit args = one.args();
	if (int err = state->ioctl(DRM_IOCTL_RBLN_SUBMIT, &args))
		one.refused(err, which);
	return one.job(args, std::move(parts));
}

// A transfer over the driver's job limit goes as several jobs on the engine,
// each after the one before (so that a failure carries on to the last, which
// other jobs may wait for), and the Job returned waits for them all.
Job Device::submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label, std::span<const Job> after)
{
	const uint64_t limit = state_->job_max_bytes();
	if (fits_one_job(copies, limit))
		return submit_one(*this, state_, engine, chiplet, copies, label, after);
	const std::vector<std::vector<Copy>> pieces = split_copies(copies, limit);
	auto which = [&](size_t k) {
		return fmt::format(" (part {} of {} of a transfer split at the driver's job limit of {})",
				   k + 1, pieces.size(), detail::bytes_text(limit));
	};
	std::vector<Job> parts;
	parts.reserve(pieces.size() - 1);	// no reallocation: the spans below stay valid
	for (size_t k = 0; k + 1 < pieces.size(); k++)
		parts.push_back(submit_one(*this, state_, engine, chiplet, pieces[k], label,
					   k ? std::span(&parts[k - 1], 1) : after, {}, which(k)));
	const size_t last = pieces.size() - 1;
	const Job prev = parts.back();		// parts moves into the last job
	return submit_one(*this, state_, engine, chiplet, pieces[last], label, std::span(&prev, 1),
			  std::move(parts), which(last));
}

void Device::submit_batch(std::span<const JobSpec> specs, std::vector<Job> &jobs)
{
	const Device &dev = *this;
	const std::shared_ptr<detail::DeviceState> &state = state_;
	jobs.clear();
	if (specs.empty())
		return;
	if (specs.size() > RBLN_SUBMIT_MAX_BATCH)
		fail(EINVAL, fmt::format("{}: a batch holds at most {} jobs, not {}; submit the rest "
					 "in another", dev.name(), RBLN_SUBMIT_MAX_BATCH, specs.size()));
	std::vector<detail::Submission> subs;
	subs.reserve(specs.size());
	const uint64_t limit = state->job_max_bytes();
	for (size_t i = 0; i < specs.size(); i++) {
		const JobSpec &s = specs[i];
		if (!fits_one_job(s.copies, limit))
			fail(EINVAL, fmt::format("{}: job {} of the batch copies more than the {} one job "
						 "may here; submit() splits a transfer that large into "
						 "several jobs", dev.name(), i, detail::bytes_text(limit)));
		auto &sub = subs.emplace_back(dev, state, s.engine, s.chiplet, s.copies, s.label, s.after);
		for (uint32_t j : s.after_batch) {
			if (j >= i)
				fail(EINVAL, fmt::format("{}: job {} of the batch waits for job {}: a job "
							 "waits only for jobs before it in the batch",
							 dev.name(), i, j));
			sub.after(subs[j]);
		}
	}
	// SUBMIT_BATCH's elements.
	detail::SmallVector<drm_rbln_submit, 4> elements(subs.size());
	const std::span<drm_rbln_submit> args = elements.span();
	for (size_t k = 0; k < subs.size(); k++)
		args[k] = subs[k].args();
	jobs.reserve(subs.size());
	auto which = [&](size_t k) { return fmt::format(" (job {} of the batch)", k); };
	// Drivers before interface 12: one SUBMIT each, the same jobs in the same order.
	if (state->uapi_version < 12) {
		for (size_t k = 0; k < subs.size(); k++) {
			if (int err = state->ioctl(DRM_IOCTL_RBLN_SUBMIT, &args[k]))
				subs[k].refused(err, which(k));
			jobs.push_back(subs[k].job(args[k]));
		}
		return;
	}
	// The call fails only when nothing went in (a retry on EINTR is safe);
	// else .submitted jobs went in and .error says why the next one did not.
	// Interrupted halfway, the rest goes in with another call.
	for (size_t done = 0; done < subs.size();) {
		drm_rbln_submit_batch batch{};
		batch.submits = reinterpret_cast<uintptr_t>(args.data() + done);
		batch.count = uint32_t(args.size() - done);
		batch.submit_size = sizeof(drm_rbln_submit);
		if (int err = state->ioctl(DRM_IOCTL_RBLN_SUBMIT_BATCH, &batch))
			subs[done].refused(err, which(done));
		if (batch.submitted > batch.count || (batch.submitted == batch.count && batch.error))
			fail(EIO, fmt::format("{}: SUBMIT_BATCH reported {} of {} jobs submitted, error {}",
					      dev.name(), batch.submitted, batch.count, batch.error));
		for (size_t k = done; k < done + batch.submitted; k++)
			jobs.push_back(subs[k].job(args[k]));
		done += batch.submitted;
		if (done < subs.size() && batch.error != -EINTR)
			subs[done].refused(batch.error < 0 ? -batch.error : EIO, which(done));
	}
}

RBLN_CXX_ABI_END // namespace rbln
