// The in-process recorder behind RBLN_PROFILER and rbln::profile::Session:
// what submit.cpp and job.cpp tell it, and when it asks the driver for the
// device times of this process's jobs (DRM_IOCTL_RBLN_JOB_TIMES).
#pragma once

#include "rbln/abi_namespace.hpp"

#include <atomic>
#include <cstdint>

#include "../device_state.h"
#include "staging.h"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

// Profiling is on (the environment or a Session): one relaxed load, the
// whole cost of the profiler when it is off.
extern std::atomic<bool> g_active;
inline bool active() { return g_active.load(std::memory_order_relaxed); }
// RBLN_PROFILER has a bad value (set once, when the recorder is made).
extern std::atomic<bool> g_env_bad;
[[noreturn]] void fail_bad_environment();
// Throws rbln::Error for a bad RBLN_PROFILER, at a submit.  Inline,
// as next_job_id(): a profiled submit makes no call for either.
inline void check_environment()
{
	if (g_env_bad.load(std::memory_order_relaxed)) [[unlikely]]
		fail_bad_environment();
}

extern std::atomic<uint64_t> g_next_job_id;
// A job id for a job about to be submitted (never 0).
inline uint64_t next_job_id() { return g_next_job_id.fetch_add(1, std::memory_order_relaxed); }

// A driver's ring holds DRM_RBLN_JOB_TIMES_RING records: a device's times
// are taken once this many of its jobs wait for them, well before it fills.
// Every thread's staged jobs are taken over at least this often (by job id).
constexpr uint64_t kDrainEvery = 1024;
static_assert((kDrainEvery & (kDrainEvery - 1)) == 0, "a mask, not a division, per job");
// Whether job @id's record brings a drain: it goes through the lock.
inline bool drain_due_at(uint64_t id) { return !(id & (kDrainEvery - 1)); }
// Whether @r, recorded at @now (its end or its placeholder), goes through
// the lock for its own sake: dependencies past kInlineAfters, or its
// device's counters due.  An old driver's device stays due (its
// profile_sample_ns 0): the lock every time.
inline bool needs_lock(const JobRecord &r, uint64_t now)
{
	return r.after_count > kInlineAfters ||
	       now >= r.dev->profile_sample_ns.load(std::memory_order_relaxed);
}

// SUBMIT took the job of @draft (job_draft.h; its .label still the
// caller's): @done is SUBMIT's struct as it returned, with the job's device
// times when it ended inside SUBMIT (DRM_RBLN_SUBMIT_REPORT_TIMES), else
// the driver's come later: after about every 1024 jobs, when its device
// closes, and when a file is written.  @more_after: with more than
// kInlineAfters dependencies, all their ids.  The way of a draft that could
// not be finished in place (job_draft.h): mostly still copied into the
// thread's own chunk (staging.h), with no lock.  Not inline: taking three
// pointers, it finds the chunk with little to keep across that call.
void job_submitted(JobRecord &draft, const drm_rbln_submit &done, const uint64_t *more_after);

// @dev closes: what the driver still holds for it is taken first.
void device_closing(const rbln::detail::DeviceState &dev);

uint64_t monotonic_ns();
// CLOCK_MONOTONIC as of the last tick (no clock read: a few ns), for what
// needs no precision: a placeholder the driver's time replaces, a deadline.
uint64_t coarse_monotonic_ns();

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
