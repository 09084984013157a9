// What the copies of one rbln::Job share: its device and syncobj, and the
// result SUBMIT reported if the job ended inside it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "device_state.h"

namespace rbln::detail {

struct JobState {
	std::shared_ptr<DeviceState> dev;
	uint64_t seqno = 0;		// for messages about it as a dependency
	uint32_t syncobj = 0;		// holds the job's fence; 0 on drivers without syncobjs
	bool waits_for_jobs = false;	// submitted with dependencies: a failure may be theirs
	bool ended = false;		// ended inside SUBMIT (REPORT_END): nothing left to ask
	int ended_status = 0;		// then its result: 0 or a negative errno
	uint64_t profile_id = 0;	// its id in the profiler's trace; 0: not profiled
	std::atomic<bool> failure_reported{false};	// a wait threw ended_status: once
	// The jobs before this one of a transfer split at the driver's job limit
	// (Device::submit); waiting for it waits for them and reports their failure.
	std::vector<Job> parts;

	JobState() = default;
	JobState(const JobState &) = delete;
	JobState &operator=(const JobState &) = delete;
	~JobState()
	{
		if (syncobj)
			dev->syncobjs.give_back(*dev, syncobj);
	}
};

// Throws Errc::invalid_argument unless a job of @dev may wait for @count jobs.
void check_dependency_count(const DeviceState &dev, size_t count);

} // namespace rbln::detail
