// Each thread's staging of the jobs it submits while profiling: a chunk of
// fixed-size records (and one of label bytes) it appends to with no lock,
// and that the recorder takes over (under its lock) when the chunk is full,
// when a drain or a Session's end needs every job, at flush(), when a device
// closes, and when the thread or the process ends.  A chunk belongs to the
// recorder from the start (records stay where they were written: nothing is
// copied), so a thread that exits leaves nothing dangling.
//
// One writer per chunk, its thread (the recorder's late stage, for jobs
// submitted after their thread's ThreadStage ended, is written under the
// recorder's lock); readers hold the recorder's lock and
// read only records before `published` (its release store makes each record
// whole before it counts).  A record taken over is the recorder's alone: its
// device times are written there while the thread goes on with later ones.
// Most records come with their device times (SUBMIT_REPORT_TIMES), in the
// order of their ids: the recorder looks at each new record only when some
// did not (see publish()).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "job_record.h"
#include "rbln/abi_namespace.hpp"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

// 512 records (48 KiB): a lock per 512 jobs of a thread, and a thread that
// submits a few jobs holds little.
constexpr uint32_t kChunkJobs = 512;
// Label bytes, as many as they take (none for a job without one).
constexpr size_t kLabelChunk = 16384;

struct Chunk {
	// Low half: records[0, n) are written.  High half: how many of them
	// the recorder must look at (publish(); in the same store as n).
	std::atomic<uint64_t> published{0};
	uint32_t taken = 0;		// records[0, taken) are the recorder's (its lock)
	uint32_t flagged_taken = 0;	// the high half when it took them
	uint32_t index = 0;		// in the recorder's list of chunks
	uint32_t pid = 0;		// its records' (a forked child starts a chunk of its own)
	// One more than kChunkJobs: a record that a signal handler's fork cut
	// short in the child (fork_child ends the chunk as its thread was
	// writing there) lands in the last, which is never taken.
	JobRecord records[kChunkJobs + 1];
};

class JobDraft;

struct LabelChunk {
	char bytes[kLabelChunk];
};

// A thread's place in its chunk.  Trivial, so that reaching it needs no
// guard or init call (the ThreadStage that hands it over at thread exit
// lives apart, in recorder.cpp).
struct Stage {
	Chunk *chunk;		// nullptr until the thread's first profiled job; changed under the lock
	uint32_t used;		// records written; kChunkJobs when full or none (writer only)
	char *label_next, *label_end;	// room in its label chunk (writer only)
	uint32_t flagged;	// records written to be looked at (writer only)
	uint64_t last_id;	// of the record written last (writer only)
	// The job whose record is being drafted in records[used], not yet
	// published (job_draft.h); moved out before any other is written there.
	JobDraft *drafter;
};

// The default (global-dynamic) TLS model, not initial-exec: in the shared
// library that is one __tls_get_addr call per job, but initial-exec would
// flag librbln_devmgr.so STATIC_TLS, and a runtime that dlopen()s it (Python's
// ctypes, say) could fail to load it once glibc's static TLS reserve is used.
extern constinit thread_local Stage t_stage;

// Whether @s has room for a record with a label of @label_size bytes.
inline bool has_room(const Stage &s, size_t label_size)
{
	return s.used < kChunkJobs && label_size <= size_t(s.label_end - s.label_next);
}

// Completes @r, the record in @s's next place, as SUBMIT returned its job
// (@done; @reported: with its device times), its label (@label, of
// r.label_size bytes) copied to @s's label chunk; @s has room for it.
[[gnu::always_inline]] inline void complete_record(Stage &s, JobRecord &r, const char *label,
						   const drm_rbln_submit &done, bool reported)
{
	r.seqno = done.seqno;
	if (reported)
		set_device_times(r, done.submit_ns, done.start_ns, done.end_ns, done.status,
				 done.time_flags);
	r.label = s.label_next;		// not the caller's, which goes with its Submission
	// No call for a job without a label (the bench's chain has none).
	if (r.label_size) {
		std::memcpy(s.label_next, label, r.label_size);
		s.label_next += r.label_size;
	}
}

// Writes @draft's job, as SUBMIT returned it, into @s (not yet published);
// it has room.
[[gnu::always_inline]] inline JobRecord &write_record(Stage &s, const JobRecord &draft,
						 const drm_rbln_submit &done, bool reported)
{
	JobRecord &r = s.chunk->records[s.used];
	r = draft;
	complete_record(s, r, draft.label, done, reported);
	return r;
}

// The record written last, job @id's, is the recorder's to take
// (@reported: with its device times).  It is flagged to be looked at when
// its times come later, or when its id is below the last one's (a job
// submitted while another of its thread was inside SUBMIT goes first):
// unflagged records need nothing, and the first has the lowest id.
inline void publish(Stage &s, uint64_t id, bool reported)
{
	s.flagged += !reported || id < s.last_id;
	s.last_id = id;
	s.chunk->published.store(uint64_t(s.flagged) << 32 | ++s.used, std::memory_order_release);
}

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
