// A profiled job's record while its Submission is made: each field known
// before SUBMIT is written where it is found (its id, device, engine, size,
// dependencies).  Where it can, the draft is written in its thread's next
// place in its chunk, so that once SUBMIT took the job only SUBMIT's own
// fields are added there and the record published: no copy, and no call
// (under TCG a job's record costs what its instructions and stores do).
// Else, and when its record must go the long way after all (its times come
// later, counters or a drain are due, many dependencies, or another record
// of the thread goes first), the draft is kept here and copied by the
// recorder (recorder.h: job_submitted).  A job not profiled writes nothing
// into it.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "../device_state.h"
#include "job_record.h"
#include "rbln/abi_namespace.hpp"
#include "recorder.h"
#include "staging.h"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

class JobDraft {
public:
	// Left unwritten: a job not profiled pays for none of it.
	JobDraft() {}
	// A Submission is moved only into a batch's array, before SUBMIT.
	JobDraft(JobDraft &&o) noexcept
		: rec_(o.stage_ ? o.rec_ : &home_), stage_(std::exchange(o.stage_, nullptr)),
		  home_(o.home_), more_after_(std::move(o.more_after_))
	{
		if (stage_)
			stage_->drafter = this;
	}
	JobDraft &operator=(JobDraft &&) = delete;
	// Not submitted after all: its place is the next job's.
	~JobDraft()
	{
		if (stage_) [[unlikely]]
			stage_->drafter = nullptr;
	}

	// Job @id, of @bytes, on @engine of @chiplet, labelled with @label_size bytes.
	void begin(const rbln::detail::DeviceState &dev, uint64_t id, unsigned engine,
		   unsigned chiplet, size_t label_size, uint64_t bytes)
	{
		// One __tls_get_addr (in the .so): the empty asm keeps GCC from
		// computing the address again for the stores below.
		Stage *s = &t_stage;
		__asm__("" : "+r"(s));
		JobRecord *r = &home_;
		// In place unless another draft is there (a batch's later jobs), the
		// chunk is full (or none yet), or a drain is due with this one.
		if (!s->drafter && has_room(*s, label_size) && !drain_due_at(id)) [[likely]] {
			r = &s->chunk->records[s->used];
			s->drafter = this;
			stage_ = s;
		}
		rec_ = r;
		r->id = id;
		r->bytes = bytes;
		r->dev = &dev;
		r->device = dev.info.index;
		r->engine = uint8_t(engine);
		r->chiplet = uint8_t(chiplet);
		r->label_size = uint8_t(label_size);
		r->after_count = 0;
		r->device_times = false;
		// Before interface 14 the driver gives no times: now is its
		// submit time.  Since, the driver's replace a placeholder.
		r->old_driver = dev.uapi_version < 14;
		r->submit_ns = r->old_driver ? monotonic_ns() : 0;
	}

	// It waits for the job of profile id @id (0: one not profiled).
	void after(uint64_t id)
	{
		if (!id)
			return;
		if (rec_->after_count < kInlineAfters) [[likely]]
			rec_->after[rec_->after_count++] = id;
		else
			after_more(id);
	}

	// SUBMIT took it (@done): its record is finished in place and published
	// when its times came with it and nothing is due, else it goes to the
	// recorder.
	void submitted(std::string_view label, const drm_rbln_submit &done)
	{
		JobRecord &r = *rec_;
		// Room and the drain were seen to at begin().
		if (stage_ && done.ended && done.flags & DRM_RBLN_SUBMIT_REPORT_TIMES &&
		    !needs_lock(r, done.end_ns)) [[likely]] {
			Stage &s = *std::exchange(stage_, nullptr);
			s.drafter = nullptr;
			complete_record(s, r, label.data(), done, true);
			publish(s, r.id, true);
			return;
		}
		move_home();
		home_.label = label.data();
		job_submitted(home_, done, more_after_.data());
	}

	// Out of its thread's next place, into its own: another record is
	// written there first, or its own goes the long way.
	void move_home()
	{
		if (!stage_)
			return;
		home_ = *rec_;
		rec_ = &home_;
		std::exchange(stage_, nullptr)->drafter = nullptr;
	}

private:
	[[gnu::noinline]] void after_more(uint64_t id)
	{
		if (more_after_.empty())
			more_after_.assign(rec_->after, rec_->after + kInlineAfters);
		more_after_.push_back(id);
		rec_->after_count++;
	}

	JobRecord *rec_;		// the draft: in its thread's chunk, or home_
	Stage *stage_ = nullptr;	// the thread's, while the draft is in its chunk
	JobRecord home_;
	std::vector<uint64_t> more_after_;	// past kInlineAfters: every dependency
};

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
