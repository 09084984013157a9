// Where each part of a trace goes: the tracks (device group, chiplet groups,
// engine tracks, Device Workload, counters), their uuids and order, the
// slices' names and the workloads' spans.  Shared by the Perfetto and JSON
// writers so that both show the same recording the same way.
#pragma once

#include "rbln/abi_namespace.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rbln/profile.hpp"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

struct Track {
	uint64_t uuid = 0, parent = 0;	// parent 0: top level
	std::string name;
	int rank = 0;			// among its siblings
	bool group = false;		// has children (ordered explicitly)
	enum class Counter { none, bytes, percent } counter = Counter::none;
};

// One span of a workload on the Device Workload track.
struct WorkloadSpan {
	uint64_t track = 0;
	std::string name;		// "i0_1_Device Workload_2"
	uint64_t start_ns = 0, end_ns = 0;
};

struct Layout {
	std::vector<Track> tracks;			// parents before children
	std::map<uint64_t, uint64_t> job_track;		// job id -> its engine track
	std::map<std::pair<unsigned, int>, uint64_t> memory_track;	// (device, chiplet) -> counter
	std::map<unsigned, uint64_t> utilization_track;	// device -> counter
	std::vector<WorkloadSpan> workloads;
};

Layout layout(const Trace &trace);
// The slice's name: its label (or engine and seqno), marked when it failed
// or its end was not seen.
std::string slice_name(const TraceJob &job);
// "ok", or the errno's name ("ETIMEDOUT").
std::string status_name(int status);
// The job's status argument: "unknown" without device times (TraceJob), else status_name.
std::string job_status(const TraceJob &job);
// Why a job has no device times (its "times" argument); "" when it has them.
// Both formats and rbln-smi trace summary count a job with this argument as
// one without device times.
std::string times_note(const TraceJob &job);
// What the rings lost during a recording, by kind, on all CPUs.
struct RingLoss {
	uint64_t overrun = 0, commit_overrun = 0, dropped_events = 0;
};
RingLoss ring_loss(const TraceRings &rings);
// The flow id of the arrow from job @from to job @to.
inline uint64_t flow_id(uint64_t from, uint64_t to) { return (from << 32) ^ to ^ 0x9e3779b97f4a7c15ull; }

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
