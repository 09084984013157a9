// The in-process recorder behind RBLN_PROFILER and rbln::profile::Session:
// what submit.cpp and job.cpp tell it, and when it asks the driver for the
// device times of this process's jobs (DRM_IOCTL_RBLN_JOB_TIMES).
#pragma once

#include "rbln/abi_namespace.hpp"

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

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

// job_submitted()'s way through the recorder's lock: the thread's first job
// or a full chunk, a drain or counters due, an old driver, many dependencies.
void record_job(const rbln::detail::DeviceState &dev, uint64_t id, uint64_t seqno, unsigned engine,
		unsigned chiplet, std::string_view label, uint64_t bytes,
		std::span<const uint64_t> after, uint64_t submit_ns, const drm_rbln_submit *reported);

// SUBMIT took job @id: its description, for the trace.  Its times came with
// its end (@reported: SUBMIT's args, DRM_RBLN_SUBMIT_REPORT_TIMES), or come
// from the driver later: after about every 1024 jobs, when its device
// closes, and when a file is written.  @submit_ns: its placeholder until
// then (with @reported, its end), which also tells whether counters are due
// (no clock read here).  Nearly always a
// record written into the thread's own chunk (staging.h): no lock, and no
// call but the one that finds the chunk (__tls_get_addr, in the .so).
// Always inline: a call passing nine arguments costs as much as the record.
[[gnu::always_inline]] inline void job_submitted(const rbln::detail::DeviceState &dev, uint64_t id,
						 uint64_t seqno, unsigned engine, unsigned chiplet,
						 std::string_view label, uint64_t bytes,
						 std::span<const uint64_t> after, uint64_t submit_ns,
						 const drm_rbln_submit *reported)
{
	// One __tls_get_addr (in the .so): GCC would compute the address again
	// for the write after the test of room, a second call; the empty asm
	// hides where the pointer came from, so it is kept in a register.
	Stage *sp = &t_stage;
	__asm__("" : "+r"(sp));
	Stage &s = *sp;
	// An old driver's device stays due (its profile_sample_ns 0): the lock every time.
	if (!has_room(s, label) || !(id & (kDrainEvery - 1)) || after.size() > kInlineAfters ||
	    submit_ns >= dev.profile_sample_ns.load(std::memory_order_relaxed)) [[unlikely]]
		return record_job(dev, id, seqno, engine, chiplet, label, bytes, after, submit_ns,
				  reported);
	write_record(s, dev, dev.info.index, id, seqno, engine, chiplet, label, bytes, after,
		     submit_ns, false, reported);
	s.chunk->published.store(++s.used, std::memory_order_release);
}
// @dev closes: what the driver still holds for it is taken first.
void device_closing(const rbln::detail::DeviceState &dev);

uint64_t monotonic_ns();
// CLOCK_MONOTONIC as of the last tick (no clock read: a few ns), for what
// needs no precision: a placeholder the driver's time replaces, a deadline.
uint64_t coarse_monotonic_ns();

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
