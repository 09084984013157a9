// A simulated Rebel100 answered in the test process itself: its ioctls
// never reach a driver (this file's ioctl() stands in front of libc's for
// the fds it opened), so the profiler's recorder can be driven and measured
// on the host, jobs, JOB_TIMES and all.
#pragma once

#include <cstdint>
#include <functional>

#include "rbln/devmgr.hpp"

namespace fake_npu {

struct Options {
	uint32_t uapi_version = 0;	// 0: the library's own
	// JOB_TIMES hands out its records in reverse order of their ending:
	// the recorder must not rely on seqno order.
	bool reverse_times = false;
	// Jobs still in flight at SUBMIT's return (not .ended): their
	// SUBMIT_TIMES records are withheld until release_times().
	bool hold_times = false;
};

// A fake NPU opened as rbln::Device (a file of its own, seqnos from 1).
rbln::Device open(const Options &options = {});
// Every fake file's withheld records go to its JOB_TIMES ring.
void release_times();
// JOB_TIMES calls so far, any file.
uint64_t job_times_calls();
// @hook runs in each SUBMIT once it took its job, outside the fake's lock,
// on the submitting thread (what a test does while a job is in the driver);
// an empty one, none.
void on_submit(std::function<void()> hook);
// @hook runs in each JOB_TIMES once it answered, as on_submit()'s: on the
// thread that asked (the recorder's, inside its lock).
void on_job_times(std::function<void()> hook);

} // namespace fake_npu
