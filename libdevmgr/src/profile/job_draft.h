// A profiled job's record while its Submission is made: each field known
// before SUBMIT is written where it is found (its id, device, engine, size,
// dependencies), so that recording the job once SUBMIT took it is a copy of
// the draft and SUBMIT's times (recorder.h: job_submitted).  A job not
// profiled writes nothing into it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "../device_state.h"
#include "job_record.h"
#include "rbln/abi_namespace.hpp"
#include "recorder.h"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

class JobDraft {
public:
	// Left unwritten: a job not profiled pays for none of it.
	JobDraft() {}

	// Job @id, of @bytes, on @engine of @chiplet, labelled with @label_size bytes.
	void begin(const rbln::detail::DeviceState &dev, uint64_t id, unsigned engine,
		   unsigned chiplet, size_t label_size, uint64_t bytes)
	{
		rec_.id = id;
		rec_.bytes = bytes;
		rec_.dev = &dev;
		rec_.device = dev.info.index;
		rec_.engine = uint8_t(engine);
		rec_.chiplet = uint8_t(chiplet);
		rec_.label_size = uint8_t(label_size);
		rec_.after_count = 0;
		rec_.device_times = false;
		// Before interface 14 the driver gives no times: now is its
		// submit time.  Since, the driver's replace a placeholder.
		rec_.old_driver = dev.uapi_version < 14;
		rec_.submit_ns = rec_.old_driver ? monotonic_ns() : 0;
	}

	// It waits for the job of profile id @id (0: one not profiled).
	void after(uint64_t id)
	{
		if (!id)
			return;
		if (rec_.after_count < kInlineAfters) [[likely]]
			rec_.after[rec_.after_count++] = id;
		else
			after_more(id);
	}

	// SUBMIT took it (@done): the record goes to the recorder.
	void submitted(std::string_view label, const drm_rbln_submit &done)
	{
		rec_.label = label.data();
		job_submitted(rec_, done, more_after_.data());
	}

private:
	[[gnu::noinline]] void after_more(uint64_t id)
	{
		if (more_after_.empty())
			more_after_.assign(rec_.after, rec_.after + kInlineAfters);
		more_after_.push_back(id);
		rec_.after_count++;
	}

	JobRecord rec_;
	std::vector<uint64_t> more_after_;	// past kInlineAfters: every dependency
};

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
