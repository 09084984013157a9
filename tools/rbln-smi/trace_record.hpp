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
};

struct TraceRecording {
	rbln::profile::Trace trace;
	std::optional<int> command_status;	// its wait status, when it ended
	size_t dependencies = 0;		// arrows found (waits on a syncobj a job signalled)
	bool old_tracepoints = false;		// a driver without rbln_job_wait/signal: no arrows
};

// Records until the command exits, the duration passes or *stop is set (a
// signal).  Throws rbln::Error: permission without access to tracefs
// (root, CAP_SYS_ADMIN), driver_not_loaded without the rbln events.
TraceRecording record_trace(const TraceRecordOptions &o, volatile const int *stop);

// The text of the permission error, for the tests of its wording.
std::string trace_permission_text(const std::string &why);

} // namespace rbln::smi
