// The profiler: every DMA job of this process recorded with its device times
// (interface 14) and written as a Perfetto trace, grouped device -> chiplet ->
// engine, with an arrow for every dependency.
//
//   RBLN_PROFILER=1 ./app                  # the whole process is run 0
//   { rbln::profile::Session run("out"); ... }   // one run: out/rbln_{date}_{time}_N.pb
//
// When the process exits (or the library is unloaded) rbln_{date}_{time}.pb
// holds the whole trace, in RBLN_PROFILER_DIR or the current directory.
// Files appear atomically: written under a temporary name, then renamed.  A
// forked child's names carry its pid as well (rbln_{date}_{time}_pid{pid}.pb,
// ..._pid{pid}_N.pb), and a child that has submitted no job since the fork
// writes none (they would copy its parent's).  Processes that start
// profiling in the same second and write to one directory share names:
// give each its own.
#pragma once

#include "abi_namespace.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(default)

RBLN_CXX_ABI_BEGIN namespace profile {

// A switch value as RBLN_PROFILER takes it: 1/ON/TRUE/YES (any case) is on,
// 0/OFF/FALSE/NO or empty off; anything else is nullopt.
std::optional<bool> parse_switch(std::string_view value);
// Whether RBLN_PROFILER switches profiling on; throws rbln::Error
// (invalid_argument) naming the bad value and the valid ones.
bool env_enabled();

// "i{instance}_{sequence}_W{workload}", and with @what "..._W{workload}_{what}":
// the prefix that gathers what every chiplet did for one workload.
std::string label(unsigned instance, unsigned sequence, unsigned workload, std::string_view what = {});

// A profiled region: one run, written to its own numbered file when it ends.
class Session {
public:
	// @output_dir: where its file goes (default RBLN_PROFILER_DIR, else ".").
	explicit Session(std::string output_dir = {});
	~Session();
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;
	// Ends the run now and returns the path of its file (empty if it recorded
	// nothing, or in a forked child that has submitted nothing since).
	std::string end();
	unsigned run() const { return run_; }

private:
	unsigned run_;
	bool ended_ = false;
};

// Marks a workload: the trace's Device Workload track gets the slice
// "i{instance}_{sequence}_Device Workload_{workload}" over the device times
// of the jobs whose label starts with label(instance, sequence, workload).
void workload(unsigned device, unsigned instance, unsigned sequence, unsigned workload);

// Writes what is recorded so far as the whole trace now; returns its path
// (empty if nothing was recorded, or in a forked child that has submitted
// nothing since).  Also done at exit.
std::string flush();

// ---- The trace model, shared by the in-process profiler and rbln-smi trace ----

struct TraceDevice {
	unsigned index = 0;
	std::string name;		// as rbln-smi shows it: "rbln1 RBLN-CR03"
	unsigned chiplets = 1;		// 1: an ATOM, no chiplet groups
};

struct TraceJob {
	uint64_t id = 0;		// unique in the trace; dependencies name it
	unsigned device = 0;		// TraceDevice::index
	unsigned chiplet = 0;
	unsigned engine = 0;		// enum drm_rbln_engine
	std::string label;
	uint64_t bytes = 0;
	uint32_t pid = 0;
	std::string command;
	uint64_t seqno = 0;
	int status = 0;			// 0 or a negative errno
	bool timed_out = false;
	// Start and end from the driver.  Without them, status says why: 0, the
	// driver gives none (before interface 14); -EINPROGRESS, its end was not
	// seen (still running when the trace was written, or its times were lost
	// or taken by another process on its device file).  Then end_ns is
	// start_ns: its start if one was seen (rbln-smi trace record), else its
	// submit.
	bool device_times = true;
	uint64_t submit_ns = 0, start_ns = 0, end_ns = 0;	// CLOCK_MONOTONIC
	std::vector<uint64_t> after;	// ids of the jobs it waited for
};

struct TraceCounter {
	unsigned device = 0;
	std::optional<unsigned> chiplet;	// memory per chiplet; none: the device's utilisation
	uint64_t ts_ns = 0;
	double value = 0;
};

struct TraceWorkload {
	unsigned device = 0, instance = 0, sequence = 0, workload = 0;
};

struct Trace {
	std::vector<TraceDevice> devices;
	std::vector<TraceJob> jobs;
	std::vector<TraceCounter> memory_used;	// bytes, per chiplet
	std::vector<TraceCounter> utilization;	// percent, per device
	std::vector<TraceWorkload> workloads;
	uint64_t realtime_ns = 0, monotonic_ns = 0;	// one instant on both clocks
};

// The kernel's ftrace ring of one CPU, as its per_cpu/cpuN/stats counts it.
struct TraceRingStats {
	unsigned cpu = 0;
	uint64_t entries = 0;		// events in the ring
	uint64_t overrun = 0;		// lost: overwritten before they were read
	uint64_t commit_overrun = 0;	// lost: the ring wrapped within a nested event
	uint64_t dropped_events = 0;	// lost: the ring was full (no-overwrite mode)
	uint64_t read_events = 0;	// read out of it
};

// The rings a system-wide recording (rbln-smi trace record) read the
// driver's events from, at its start and its end: what they lost in between
// the trace misses (jobs, or their start or end).
struct TraceRings {
	std::vector<TraceRingStats> start, end;
};
// The events @rings lost during the recording, on all CPUs.
uint64_t lost_events(const TraceRings &rings);

// The engine's track name ("Neural DMA", ...) and its rank in the seed's order.
std::string engine_track_name(unsigned engine);
// Perfetto's protobuf (perfetto_trace.proto) and Chrome's trace-event JSON.
std::string to_perfetto(const Trace &trace);
std::string to_chrome_json(const Trace &trace);
// The same, of a recording from the kernel's ftrace rings: their counts go
// along, so that a reader sees what was lost (Perfetto's FtraceStats packets
// at the start and the end, which its UI shows as data losses; in the JSON,
// otherData's ftrace_* strings).
std::string to_perfetto(const Trace &trace, const TraceRings &rings);
std::string to_chrome_json(const Trace &trace, const TraceRings &rings);
// Writes @bytes to @path atomically (a temporary name in the same directory,
// then rename); throws rbln::Error naming the path.
void write_file_atomically(const std::string &path, std::string_view bytes);
// "rbln_{YYYYMMDD}_{HHMMSS}" of the local time @realtime_ns.
std::string file_stem(uint64_t realtime_ns);

} RBLN_CXX_ABI_END // namespace rbln::profile

#pragma GCC visibility pop
