// One job as its submit recorded it: fixed size, its first dependencies
// inline and its label in its thread's label chunk, so that recording it is
// a few stores with no allocation and no shared array (see staging.h).  96
// bytes: every job is kept until exit, and each new page of them is a page
// fault (dear in a TCG guest).  It becomes a TraceJob only when a file is
// written.
#pragma once

#include <cstdint>

#include "rbln/abi_namespace.hpp"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN namespace detail {
struct DeviceState;
} RBLN_CXX_ABI_END

RBLN_CXX_ABI_BEGIN namespace profile::detail {

// Nearly every job waits for none, one or two; more go to the recorder's
// shared array (under its lock), and after[0] says where.
constexpr uint32_t kInlineAfters = 2;

// No default member initialisers: a chunk of them comes uninitialised, each
// written field by field when its job is recorded.
struct JobRecord {
	uint64_t id;
	uint64_t seqno;
	uint64_t bytes;
	uint64_t submit_ns;
	uint64_t start_ns, end_ns;	// with device_times only, as status and timed_out
	// Its open file, until the recorder has taken the record (which finds
	// the file's table by it); not used after, as the file may close.
	const rbln::detail::DeviceState *dev;
	const char *label;		// label_size bytes (no NUL) in a label chunk
	uint64_t after[kInlineAfters];	// more than kInlineAfters: after[0] indexes Recorder::afters
	uint32_t device;		// its TraceDevice::index
	int32_t status;
	uint8_t after_count;		// at most DRM_RBLN_MAX_IN_SYNCS
	uint8_t engine, chiplet;
	uint8_t label_size;		// below DRM_RBLN_LABEL_MAX
	bool device_times;		// the driver's record of it came
	bool timed_out;
	bool old_driver;		// no device times to come (interface < 14)
};
static_assert(DRM_RBLN_MAX_IN_SYNCS <= UINT8_MAX && DRM_RBLN_LABEL_MAX <= UINT8_MAX);
static_assert(sizeof(JobRecord) == 96);

// @j's device times, from the driver's JOB_TIMES record or SUBMIT's report
// (@flags: DRM_RBLN_JOB_TIME_*).
inline void set_device_times(JobRecord &j, uint64_t submit_ns, uint64_t start_ns, uint64_t end_ns,
			     int32_t status, uint32_t flags)
{
	j.submit_ns = submit_ns;
	j.start_ns = start_ns;
	j.end_ns = end_ns;
	j.status = status;
	j.timed_out = flags & DRM_RBLN_JOB_TIME_TIMED_OUT;
	j.device_times = true;
}

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
