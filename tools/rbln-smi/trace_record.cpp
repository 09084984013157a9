// rbln-smi trace record.  An ftrace instance of its own (so that it neither
// sees nor disturbs anyone else's tracing) with the rbln events on and the
// CLOCK_MONOTONIC trace clock ("mono", the in-process profiler's clock); its
// ring read through libtracefs while recording, the events sorted by time at
// the end and turned into jobs: start and end from rbln_job_start/complete,
// dependencies from rbln_job_wait matched to the rbln_job_signal that last
// gave that syncobj (and point) its fence.  Counters from rbln-smi's own
// snapshot (sysfs), sampled as it records.  The ring's counts at the start
// and the end (per_cpu/cpuN/stats) tell what it lost: overwritten before a
// read came, when a burst outgrew it.
#include "trace_record.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <event-parse.h>
extern "C" {	// tracefs.h does not say it is C
#include <tracefs.h>
}

#include "rbln_drm.h"
#include "snapshot.hpp"

extern char **environ;

namespace rbln::smi {

namespace {

uint64_t clock_ns(clockid_t clock)
{
	timespec ts{};
	clock_gettime(clock, &ts);
	return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

enum class Kind { submit, start, complete, wait, signal };

// One tracepoint hit, as read from the ring.
struct Event {
	uint64_t ts = 0;
	Kind kind = Kind::submit;
	unsigned device = 0, chiplet = 0, engine = 0;
	uint64_t client = 0, seqno = 0, bytes = 0, sync = 0, point = 0;
	int status = 0;
	uint32_t pid = 0;
	std::string label, comm;
};

struct Reader {
	std::vector<Event> events;
};

uint64_t field(tep_event *event, tep_record *record, const char *name)
{
	unsigned long long v = 0;
	if (tep_get_field_val(nullptr, event, name, record, &v, 0))
		return 0;	// an older driver's event without it
	return v;
}

std::string text_field(tep_event *event, tep_record *record, const char *name)
{
	int len = 0;
	auto *raw = static_cast<const char *>(tep_get_field_raw(nullptr, event, name, record, &len, 0));
	return raw && len > 0 ? std::string(raw, strnlen(raw, size_t(len))) : std::string();
}

int on_event(tep_event *event, tep_record *record, int, void *data)
{
	static const std::map<std::string, Kind> kinds = {
		{"rbln_job_submit", Kind::submit}, {"rbln_job_start", Kind::start},
		{"rbln_job_complete", Kind::complete}, {"rbln_job_wait", Kind::wait},
		{"rbln_job_signal", Kind::signal},
	};
	auto kind = kinds.find(event->name);
	if (kind == kinds.end() || std::strcmp(event->system, "rbln"))
		return 0;
	Event e;
	e.ts = record->ts;
	e.kind = kind->second;
	e.device = unsigned(field(event, record, "device"));
	e.client = field(event, record, "client");
	e.seqno = field(event, record, "seqno");
	if (e.kind == Kind::wait || e.kind == Kind::signal) {
		e.sync = field(event, record, "sync");
		e.point = field(event, record, "point");
	} else {
		e.chiplet = unsigned(field(event, record, "chiplet"));
		e.engine = unsigned(field(event, record, "engine"));
		e.bytes = field(event, record, "bytes");
		e.status = int(int32_t(field(event, record, "status")));
		e.pid = uint32_t(field(event, record, "pid"));
		if (e.kind == Kind::submit) {
			e.label = text_field(event, record, "label");
			e.comm = text_field(event, record, "comm");
		}
	}
	static_cast<Reader *>(data)->events.push_back(std::move(e));
	return 0;
}

// The instance, its events and the parsed formats, undone in any case.
class Tracing {
public:
	explicit Tracing(unsigned buffer_kib)
	{
		errno = 0;
		const char *dir = tracefs_tracing_dir();
		if (!dir || access(dir, R_OK | W_OK | X_OK))
			deny(dir ? fmt::format("{}: {}", dir, std::strerror(errno ? errno : EACCES))
				 : std::string("tracefs is not mounted and only root may mount it"));
		const char *systems[] = {"rbln", nullptr};
		tep_ = tracefs_local_events_system(nullptr, systems);
		if (!tep_ || !tep_find_event_by_name(tep_, "rbln", "rbln_job_submit"))
			throw rbln::Error(rbln::Errc::driver_not_loaded, ENOENT,
					  fmt::format("trace record: no rbln events in {}/events/rbln: is "
						      "rbln.ko loaded? (modprobe rbln)", dir));
		has_syncs_ = tep_find_event_by_name(tep_, "rbln", "rbln_job_wait") &&
			     tep_find_event_by_name(tep_, "rbln", "rbln_job_signal");
		const std::string name = fmt::format("rbln-smi-{}", getpid());
		inst_ = tracefs_instance_create(name.c_str());
		if (!inst_)
			deny(fmt::format("cannot make the ftrace instance {}/instances/{}: {}", dir, name,
					 std::strerror(errno)));
		// Big enough for a burst between two reads (they come every 50 ms).
		if (tracefs_instance_set_buffer_size(inst_, buffer_kib, -1) < 0)
			throw rbln::Error(rbln::Errc::invalid_argument, errno,
					  fmt::format("trace record: the kernel cannot make a ring of {} KiB "
						      "per CPU: {} (a smaller --buffer-kib)", buffer_kib,
						      std::strerror(errno)));
		if (tracefs_instance_file_write(inst_, "trace_clock", "mono") < 0)
			throw rbln::Error(rbln::Errc::not_supported, errno,
					  "trace record: this kernel's ftrace has no mono clock");
		if (tracefs_event_enable(inst_, "rbln", nullptr))
			throw rbln::Error(rbln::Errc::system, errno,
					  fmt::format("trace record: cannot enable the rbln events: {}",
						      std::strerror(errno)));
		tracefs_trace_on(inst_);
	}
	~Tracing()
	{
		if (inst_) {
			tracefs_trace_off(inst_);
			tracefs_event_disable(inst_, "rbln", nullptr);
			tracefs_instance_destroy(inst_);
			tracefs_instance_free(inst_);
		}
		if (tep_)
			tep_free(tep_);
	}
	Tracing(const Tracing &) = delete;
	Tracing &operator=(const Tracing &) = delete;

	// What the ring holds now, read and removed from it.
	void read(Reader &r) { tracefs_iterate_raw_events(tep_, inst_, nullptr, 0, on_event, &r); }
	void off() { tracefs_trace_off(inst_); }
	// Each CPU's ring counts (per_cpu/cpuN/stats of the instance).
	std::vector<rbln::profile::TraceRingStats> ring_stats() const
	{
		std::vector<rbln::profile::TraceRingStats> out;
		const long cpus = sysconf(_SC_NPROCESSORS_CONF);
		for (long cpu = 0; cpu < cpus; cpu++) {
			const std::string file = fmt::format("per_cpu/cpu{}/stats", cpu);
			if (!tracefs_file_exists(inst_, file.c_str()))
				continue;	// not a possible CPU
			char *text = tracefs_instance_file_read(inst_, file.c_str(), nullptr);
			if (!text)
				continue;
			out.push_back(parse_ring_stats(unsigned(cpu), text));
			free(text);
		}
		return out;
	}
	bool has_syncs() const { return has_syncs_; }

private:
	[[noreturn]] static void deny(const std::string &why)
	{
		throw rbln::Error(rbln::Errc::permission, EACCES, trace_permission_text(why));
	}

	tep_handle *tep_ = nullptr;
	tracefs_instance *inst_ = nullptr;
	bool has_syncs_ = false;
};

pid_t spawn(const std::vector<std::string> &command)
{
	std::vector<char *> argv;
	for (const std::string &a : command)
		argv.push_back(const_cast<char *>(a.c_str()));
	argv.push_back(nullptr);
	pid_t pid = 0;
	if (int err = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ))
		throw rbln::Error(err == ENOENT ? rbln::Errc::not_found : rbln::Errc::system, err,
				  fmt::format("trace record: cannot run '{}': {}", command[0], std::strerror(err)));
	return pid;
}

// The devices as rbln-smi shows them, and their counters now.
void sample(rbln::profile::Trace &t)
{
	Snapshot snap;
	try {
		snap = take_snapshot({}, true);
	} catch (const rbln::Error &) {
		return;		// a device going away meanwhile: no sample this time
	}
	const uint64_t now = clock_ns(CLOCK_MONOTONIC);
	for (const DeviceSnapshot &d : snap.devices) {
		if (!std::ranges::count(t.devices, d.npu.index, &rbln::profile::TraceDevice::index))
			t.devices.push_back({d.npu.index, fmt::format("rbln{} {}", d.npu.index, d.npu.name),
					     std::max(1u, d.npu.chiplet_count)});
		for (const ChipletSnapshot &c : d.chiplets)
			t.memory_used.push_back({d.npu.index, c.index, now, double(c.memory_used)});
		t.utilization.push_back({d.npu.index, std::nullopt, now, double(d.utilization)});
	}
}

// The events, in time order, as jobs with their dependencies.
size_t build_jobs(std::vector<Event> &events, rbln::profile::Trace &t)
{
	std::ranges::stable_sort(events, {}, &Event::ts);
	std::map<std::tuple<unsigned, uint64_t, uint64_t>, size_t> jobs;	// (device, client, seqno)
	std::map<std::pair<uint64_t, uint64_t>, uint64_t> signalled;	// (sync, point) -> job id
	std::vector<bool> started;
	size_t deps = 0;
	for (const Event &e : events) {
		const auto key = std::tuple{e.device, e.client, e.seqno};
		if (e.kind == Kind::submit) {
			rbln::profile::TraceJob j;
			j.id = t.jobs.size() + 1;
			j.device = e.device;
			j.chiplet = e.chiplet;
			j.engine = e.engine;
			j.label = e.label;
			j.bytes = e.bytes;
			j.pid = e.pid;
			j.command = e.comm;
			j.seqno = e.seqno;
			j.submit_ns = j.start_ns = j.end_ns = e.ts;
			j.device_times = false;		// until its start and end are seen
			jobs[key] = t.jobs.size();
			t.jobs.push_back(std::move(j));
			started.push_back(false);
			continue;
		}
		auto it = jobs.find(key);
		if (it == jobs.end())
			continue;	// submitted before the recording began
		rbln::profile::TraceJob &j = t.jobs[it->second];
		switch (e.kind) {
		case Kind::start:
			j.start_ns = e.ts;	// the last start counts (a direct job turned back starts again)
			started[it->second] = true;
			break;
		case Kind::complete:
			if (!started[it->second])
				j.start_ns = e.ts;	// ended without running: a slice of no length
			j.end_ns = e.ts;
			j.status = e.status;
			j.timed_out = e.status == -ETIMEDOUT;
			j.device_times = true;
			break;
		case Kind::wait:
			if (auto from = signalled.find({e.sync, e.point}); from != signalled.end() &&
			    from->second != j.id && !std::ranges::count(j.after, from->second)) {
				j.after.push_back(from->second);
				deps++;
			}
			break;
		case Kind::signal:
			signalled[{e.sync, e.point}] = j.id;
			break;
		case Kind::submit:
			break;
		}
	}
	for (rbln::profile::TraceJob &j : t.jobs)
		if (!j.device_times) {
			// Still running when the recording ended: from its start (if seen) on.
			j.status = -EINPROGRESS;
			j.end_ns = std::max(j.start_ns, j.end_ns);
		}
	return deps;
}

} // namespace

std::string trace_permission_text(const std::string &why)
{
	return fmt::format("trace record reads the kernel's tracefs (/sys/kernel/tracing), which needs "
			   "root (CAP_SYS_ADMIN) ({}): run it as root, e.g. sudo rbln-smi trace record; "
			   "without privileges, RBLN_PROFILER=1 in a program's environment records that "
			   "program's own jobs", why);
}

rbln::profile::TraceRingStats parse_ring_stats(unsigned cpu, const std::string &text)
{
	rbln::profile::TraceRingStats s;
	s.cpu = cpu;
	const std::map<std::string, uint64_t rbln::profile::TraceRingStats::*> fields = {
		{"entries", &rbln::profile::TraceRingStats::entries},
		{"overrun", &rbln::profile::TraceRingStats::overrun},
		{"commit overrun", &rbln::profile::TraceRingStats::commit_overrun},
		{"dropped events", &rbln::profile::TraceRingStats::dropped_events},
		{"read events", &rbln::profile::TraceRingStats::read_events},
	};
	std::istringstream lines(text);
	for (std::string line; std::getline(lines, line);) {
		const auto colon = line.find(':');
		if (colon == std::string::npos)
			continue;
		auto f = fields.find(line.substr(0, colon));
		if (f != fields.end())
			s.*(f->second) = std::strtoull(line.c_str() + colon + 1, nullptr, 10);
	}
	return s;
}

std::string lost_events_text(const rbln::profile::TraceRings &rings)
{
	const uint64_t lost = rbln::profile::lost_events(rings);
	if (!lost)
		return {};
	std::vector<std::string> cpus;
	for (const auto &end : rings.end) {
		rbln::profile::TraceRings one{{}, {end}};
		if (auto s = std::ranges::find(rings.start, end.cpu, &rbln::profile::TraceRingStats::cpu);
		    s != rings.start.end())
			one.start = {*s};
		if (const uint64_t n = rbln::profile::lost_events(one))
			cpus.push_back(fmt::format("CPU {}: {}", end.cpu, n));
	}
	return fmt::format("{} event{} ({})", lost, lost == 1 ? "" : "s", fmt::join(cpus, ", "));
}

TraceRecording record_trace(const TraceRecordOptions &o, volatile const int *stop)
{
	TraceRecording out;
	Tracing tracing(o.buffer_kib);
	out.old_tracepoints = !tracing.has_syncs();
	out.rings.start = tracing.ring_stats();
	out.trace.realtime_ns = clock_ns(CLOCK_REALTIME);
	out.trace.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	sample(out.trace);
	if (!o.quiet)
		fmt::print(stderr, "rbln-smi trace: recording every process's jobs (rbln:rbln_job_*) {}...\n",
			   !o.command.empty() ? fmt::format("while '{}' runs", fmt::join(o.command, " "))
			   : o.duration_seconds ? fmt::format("for {} s (Ctrl-C stops it earlier)", *o.duration_seconds)
						: std::string("until Ctrl-C"));
	const auto until = o.duration_seconds
		? std::optional(std::chrono::steady_clock::now() + std::chrono::duration<double>(*o.duration_seconds))
		: std::nullopt;
	Reader reader;
	pid_t child = o.command.empty() ? 0 : spawn(o.command);
	auto last_sample = std::chrono::steady_clock::now();
	for (;;) {
		if (child) {
			int status = 0;
			pid_t done = waitpid(child, &status, WNOHANG);
			if (done == child) {
				out.command_status = status;
				break;
			}
		}
		if (*stop || (until && std::chrono::steady_clock::now() >= *until))
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		tracing.read(reader);
		if (std::chrono::steady_clock::now() - last_sample >= std::chrono::milliseconds(200)) {
			sample(out.trace);
			last_sample = std::chrono::steady_clock::now();
		}
	}
	sample(out.trace);
	tracing.off();
	tracing.read(reader);
	out.rings.end = tracing.ring_stats();
	if (child && !out.command_status && !o.quiet)
		fmt::print(stderr, "rbln-smi trace: stopped recording; '{}' (pid {}) goes on\n", o.command[0], child);
	out.dependencies = build_jobs(reader.events, out.trace);
	// Only the devices that ran something, and only as the events name them.
	std::erase_if(out.trace.devices, [&](const rbln::profile::TraceDevice &d) {
		return !std::ranges::count(out.trace.jobs, d.index, &rbln::profile::TraceJob::device);
	});
	// A device gone before it was sampled: its chiplets as far as its jobs show them.
	for (const rbln::profile::TraceJob &j : out.trace.jobs) {
		auto d = std::ranges::find(out.trace.devices, j.device, &rbln::profile::TraceDevice::index);
		if (d == out.trace.devices.end())
			out.trace.devices.push_back({j.device, fmt::format("rbln{}", j.device), j.chiplet + 1});
		else if (j.chiplet >= d->chiplets)
			d->chiplets = j.chiplet + 1;
	}
	std::erase_if(out.trace.memory_used, [&](const rbln::profile::TraceCounter &c) {
		return !std::ranges::count(out.trace.devices, c.device, &rbln::profile::TraceDevice::index);
	});
	std::erase_if(out.trace.utilization, [&](const rbln::profile::TraceCounter &c) {
		return !std::ranges::count(out.trace.devices, c.device, &rbln::profile::TraceDevice::index);
	});
	return out;
}

} // namespace rbln::smi
