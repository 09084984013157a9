// rbln-smi trace record: every process's DMA jobs, system-wide, from the
// driver's tracepoints (rbln:rbln_job_*) through libtracefs, as the same
// trace the in-process profiler writes (rbln::profile::Trace).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rbln/profile.hpp"

namespace rbln::smi {

struct TraceRecordOptions {
	std::optional<double> duration_seconds;	// stop after this long
	std::vector<std::string> command;	// record while it runs
	bool quiet = false;			// no progress on stderr
	unsigned buffer_kib = 16384;		// the ftrace ring per CPU
};

struct TraceRecording {
	rbln::profile::Trace trace;
	std::optional<int> command_status;	// its wait status, when it ended
	size_t dependencies = 0;		// arrows found (waits on a syncobj a job signalled)
	bool old_tracepoints = false;		// a driver without rbln_job_wait/signal: no arrows
	rbln::profile::TraceRings rings;	// the rings' counts: what they lost the trace misses
};

// Records until the command exits, the duration passes or *stop is set (a
// signal).  Throws rbln::Error: permission without access to tracefs
// (root, CAP_SYS_ADMIN), driver_not_loaded without the rbln events,
// invalid_argument for a ring the kernel cannot make that big.
TraceRecording record_trace(const TraceRecordOptions &o, volatile const int *stop);

// The text of the permission error, for the tests of its wording.
std::string trace_permission_text(const std::string &why);
// A CPU's ring as its per_cpu/cpuN/stats file says ("entries: 5\noverrun: 0\n...").
rbln::profile::TraceRingStats parse_ring_stats(unsigned cpu, const std::string &text);
// What the rings lost, for stderr ("1234 events (CPU 0: 1200, CPU 1: 34)"), or "".
std::string lost_events_text(const rbln::profile::TraceRings &rings);

} // namespace rbln::smi
