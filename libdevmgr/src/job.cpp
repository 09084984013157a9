// Jobs: waiting for them through their syncobj, polling them through a
// sync_file, and explaining their failures.
#include <algorithm>
#include <cerrno>
#include <exception>

#include "job_state.h"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN

using detail::fail;

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

[[noreturn]] static void fail_job(const detail::JobState &job, Engine engine, uint32_t chiplet,
				  int status)
{
	fail(-status, fmt::format("{}: job {} on chiplet {} {} failed: {}{}", job.dev->name(), job.seqno,
				  chiplet, detail::engine_name(engine), job_failure(status),
				  job.waits_for_jobs ? " (here, or in a job it waited for)" : ""));
}

// One job's own wait (not its parts'): false on timeout; throws its failure.
static bool wait_single(detail::JobState &job, uint64_t seqno, Engine engine, uint32_t chiplet,
			std::chrono::nanoseconds timeout)
{
	if (job.ended) {
		if (job.ended_status && !job.failure_reported.exchange(true))
			fail_job(job, engine, chiplet, job.ended_status);
		return true;
	}
	if (job.syncobj) {
		int err = detail::syncobj_wait(*job.dev, job.syncobj, timeout);
		if (err == ETIME)
			return false;
		if (err)
			fail(err, fmt::format("{}: cannot wait for job {}: {}", job.dev->name(), seqno,
					      detail::errno_text(err)));
		// It has ended: WAIT only fetches its status (a syncobj carries none),
		// and returns once its buffers were let go.
		timeout = std::chrono::nanoseconds(0);
	}
	drm_rbln_wait args{};
	args.seqno = seqno;
	args.timeout_ns = std::max<int64_t>(0, timeout.count());
	int err = job.dev->ioctl(DRM_IOCTL_RBLN_WAIT, &args);
	if (err == ETIME)
		return false;
	if (err)
		fail(err, fmt::format("{}: cannot wait for job {}: {}", job.dev->name(), seqno,
				      detail::errno_text(err)));
	if (args.status)
		fail_job(job, engine, chiplet, args.status);
	return true;
}

bool Job::wait_for(std::chrono::nanoseconds timeout) const
{
	if (state_->parts.empty())
		return wait_single(*state_, seqno_, engine_, chiplet_, timeout);
	// A transfer split into jobs: each waited for within the one timeout (a
	// failed part fails the later ones, whose failure is not told again), the
	// first failure thrown.
	const auto start = std::chrono::steady_clock::now();
	std::exception_ptr failure;
	auto ended = [&](const Job &j) {
		auto left = std::max(timeout - (std::chrono::steady_clock::now() - start),
				     std::chrono::steady_clock::duration::zero());
		try {
			return wait_single(*j.state_, j.seqno_, j.engine_, j.chiplet_, left);
		} catch (const Error &) {
			if (!failure)
				failure = std::current_exception();
			return true;
		}
	};
	bool all = std::all_of(state_->parts.begin(), state_->parts.end(), ended) && ended(*this);
	if (failure)
		std::rethrow_exception(failure);
	return all;
}

void Job::wait(std::chrono::nanoseconds timeout) const
{
	if (!wait_for(timeout))
		fail(ETIME, fmt::format("{}: job {} on chiplet {} {} still running after {} ms",
					state_->dev->name(), seqno_, chiplet_, detail::engine_name(engine_),
					std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
}

bool Job::done() const
{
	return wait_for(std::chrono::nanoseconds(0));
}

int Job::fd() const
{
	const detail::JobState &job = *state_;
	if (!job.syncobj)
		fail(EOPNOTSUPP, fmt::format("{}: job {} has no fence to poll: rbln.ko {} implements "
					     "interface {}; job fds need 10 or later (syncobjs)",
					     job.dev->name(), seqno_, job.dev->info.driver_version,
					     job.dev->uapi_version));
	int fd = detail::syncobj_export_sync_file(*job.dev, job.syncobj);
	if (fd < 0)
		fail(-fd, fmt::format("{}: cannot export job {} as a sync_file: {}", job.dev->name(),
				      seqno_, detail::errno_text(-fd)));
	return fd;
}

RBLN_CXX_ABI_END // namespace rbln
