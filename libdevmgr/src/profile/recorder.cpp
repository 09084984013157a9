// The in-process profiler.  Off, it costs one relaxed load per submit.  On,
// each job gets an id and a description at submit; SUBMIT asks the driver
// for its device times (DRM_RBLN_SUBMIT_TIMES, interface 14), which are
// taken from the driver now and then, when a device closes and when a file
// is written.  A Session is one run: jobs submitted while it is open are its
// own, written to rbln_{date}_{time}_N.pb when it ends; the whole recording
// goes to rbln_{date}_{time}.pb at exit (or when the library is unloaded).
//
// Recording a job is on the submit path, so it is kept to appending one
// fixed-size record (its label and dependencies to two shared arrays): no
// allocation of its own, no lookup, no system call.  The records become a
// Trace only when a file is written.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "../device_state.h"
#include "chunked_vector.h"
#include "rbln/profile.hpp"
#include "rbln_drm.h"
#include "recorder.h"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

std::atomic<bool> g_active{false};
std::atomic<bool> g_env_bad{false};
std::atomic<uint64_t> g_next_job_id{1};
// Set once the recorder is destroyed: a device closing later has nothing to tell it.
static std::atomic<bool> g_gone{false};

static uint64_t clock_ns(clockid_t clock)
{
	timespec ts{};
	clock_gettime(clock, &ts);
	return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
uint64_t coarse_monotonic_ns() { return clock_ns(CLOCK_MONOTONIC_COARSE); }
static uint64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

namespace {

// A driver's ring holds DRM_RBLN_JOB_TIMES_RING records: a device's times
// are taken once this many of its jobs wait for them, well before it fills.
constexpr size_t kDrainEvery = 1024;
// Counters (a few ioctls) are read at most this often, at a submit.
constexpr uint64_t kSampleEveryNs = 10'000'000;

// One job as its submit recorded it; a TraceJob once a file is written.
struct JobRecord {
	uint64_t id;
	uint64_t seqno;
	uint64_t bytes;
	uint64_t submit_ns, start_ns = 0, end_ns = 0;
	size_t label_at;		// in Recorder::labels
	size_t after_at;		// in Recorder::afters
	uint32_t label_size;
	uint32_t after_count;
	uint32_t pid;
	int32_t status = 0;
	uint32_t device;		// its TraceDevice::index
	uint8_t engine, chiplet;
	bool device_times = false;	// the driver's record of it came
	bool timed_out = false;
	bool old_driver = false;	// no device times to come (interface < 14)
};

// A device this process recorded jobs of, while it is open.
struct DeviceLog {
	rbln::detail::DeviceState *dev;
	std::vector<std::pair<uint64_t, size_t>> waiting;	// (seqno, record) without times yet
	size_t drain_at = kDrainEvery;	// waiting.size() that has the times taken
	uint64_t last_sample_ns = 0;
};

struct Run {
	unsigned number;
	std::string dir;
	size_t first_job;		// its jobs: records [first_job, end_job)
	size_t end_job = SIZE_MAX;	// SIZE_MAX: still open
	bool open() const { return end_job == SIZE_MAX; }
};

struct Recorder {
	std::mutex mu;
	bool env_on = false;
	std::string env_value;		// RBLN_PROFILER as set
	bool env_bad = false;
	std::string dir;		// RBLN_PROFILER_DIR, else "."
	bool dir_from_env = false;
	std::string stem;		// rbln_{date}_{time}, fixed at the first use
	Trace trace;			// devices, counters and workloads; the jobs are below
	ChunkedVector<JobRecord> jobs;	// appended per job: never moved
	std::string labels;		// every job's label, one after another
	std::vector<uint64_t> afters;	// every job's dependencies (their ids)
	std::vector<DeviceLog> logs;
	std::vector<drm_rbln_job_time> drain_buf;	// JOB_TIMES' records, any device's
	size_t last_log = 0;		// the log of the last job's device, most likely the next's
	std::vector<Run> runs;
	unsigned open_runs = 0;
	bool old_driver_warned = false;
	std::string command;
	uint32_t pid = uint32_t(getpid());	// anew in a forked child

	Recorder()
	{
		if (const char *v = std::getenv("RBLN_PROFILER")) {
			env_value = v;
			auto on = parse_switch(v);
			env_bad = !on;
			env_on = on.value_or(false);
			if (env_bad) {
				g_env_bad = true;
				g_active = true;	// so that the first submit tells it (check_environment)
			}
		}
		if (const char *d = std::getenv("RBLN_PROFILER_DIR"); d && *d) {
			dir = d;
			dir_from_env = true;
		} else {
			dir = ".";
		}
		std::ifstream comm("/proc/self/comm");
		std::getline(comm, command);
		pthread_atfork(nullptr, nullptr, [] { recorder_pid_changed(); });
		if (env_on) {
			start_locked();
			open_run_locked(dir);
			g_active = true;
		}
	}
	~Recorder()
	{
		// Exit or unload: the open runs end, and the whole trace is written.
		try {
			std::lock_guard lock(mu);
			drain_all_locked();
			for (Run &r : runs)
				if (r.open())
					write_run_locked(r);
			write_whole_locked();
		} catch (const std::exception &e) {
			rbln::detail::warn(fmt::format("RBLN_PROFILER: {}", e.what()));
		}
		g_active = false;
		g_gone = true;
	}

	static void recorder_pid_changed();

	void start_locked()
	{
		if (!stem.empty())
			return;
		trace.realtime_ns = realtime_ns();
		trace.monotonic_ns = monotonic_ns();
		stem = file_stem(trace.realtime_ns);
	}

	unsigned open_run_locked(const std::string &run_dir)
	{
		const unsigned number = unsigned(runs.size());
		runs.push_back({number, run_dir, jobs.size()});
		open_runs++;
		update_active_locked();
		return number;
	}

	DeviceLog &log_locked(rbln::detail::DeviceState &dev)
	{
		if (last_log < logs.size() && logs[last_log].dev == &dev)
			return logs[last_log];
		auto it = std::ranges::find(logs, &dev, &DeviceLog::dev);
		if (it == logs.end()) {
			if (!std::ranges::count(trace.devices, dev.info.index, &TraceDevice::index))
				trace.devices.push_back({dev.info.index,
							 fmt::format("rbln{} {}", dev.info.index, dev.info.name),
							 std::max(1u, dev.info.chiplet_count)});
			it = logs.insert(logs.end(), DeviceLog{&dev, {}});
		}
		last_log = size_t(it - logs.begin());
		return *it;
	}

	// @clock_ns: a recent CLOCK_MONOTONIC(_COARSE) reading, that tells
	// whether one is due; a sample taken has the precise time.  A submit
	// passes its job's placeholder: no clock read of its own per job.
	void sample_locked(DeviceLog &log, uint64_t clock_ns)
	{
		// Not a difference: a coarse reading may lag a precise one before it.
		if (clock_ns < log.last_sample_ns + kSampleEveryNs)
			return;
		log.last_sample_ns = clock_ns;
		const uint64_t now = monotonic_ns();
		rbln::detail::DeviceState &dev = *log.dev;
		for (unsigned c = 0; c < dev.info.chiplet_count; c++) {
			drm_rbln_get_param p{};
			p.param = DRM_RBLN_PARAM_MEMORY_USED;
			p.flags = DRM_RBLN_GET_PARAM_CHIPLET;
			p.chiplet = c;
			if (!dev.ioctl(DRM_IOCTL_RBLN_GET_PARAM, &p))
				trace.memory_used.push_back({dev.info.index, c, now, double(p.value)});
		}
		drm_rbln_device_status s{};
		if (!dev.ioctl(DRM_IOCTL_RBLN_DEVICE_STATUS, &s))
			trace.utilization.push_back({dev.info.index, std::nullopt, now, double(s.utilization)});
	}

	// The driver's records of @log's ended jobs, each given to its job.
	void drain_locked(DeviceLog &log)
	{
		rbln::detail::DeviceState &dev = *log.dev;
		// By seqno, to find a record's job; a job submitted by another thread
		// may have been recorded before one with a lower seqno.
		if (!std::ranges::is_sorted(log.waiting))
			std::ranges::sort(log.waiting);
		// Room for a drain's worth and the jobs in flight: one JOB_TIMES a
		// drain, into a buffer kept from the last one (not made and zeroed anew).
		if (!log.waiting.empty() && drain_buf.empty())
			drain_buf.resize(kDrainEvery + DRM_RBLN_MAX_INFLIGHT);
		std::span<drm_rbln_job_time> recs(drain_buf.data(),
						  log.waiting.empty() ? 0 : drain_buf.size());
		bool matched = false;
		size_t next = 0;	// records come about in submit order: the next one's job, likely
		while (!recs.empty()) {
			drm_rbln_job_times args{};
			args.entries = reinterpret_cast<uintptr_t>(recs.data());
			args.count = uint32_t(recs.size());
			args.entry_size = sizeof(drm_rbln_job_time);
			if (int err = dev.ioctl(DRM_IOCTL_RBLN_JOB_TIMES, &args)) {
				rbln::detail::warn(fmt::format("RBLN_PROFILER: {}: cannot read job times: {}",
							       dev.name(), rbln::detail::errno_text(err)));
				break;
			}
			if (args.lost)
				rbln::detail::warn(fmt::format("RBLN_PROFILER: {}: the driver dropped the times "
							       "of {} jobs (more than {} ended unread)",
							       dev.name(), args.lost, DRM_RBLN_JOB_TIMES_RING));
			for (uint32_t i = 0; i < args.count; i++) {
				const drm_rbln_job_time &r = recs[i];
				auto it = log.waiting.begin() + ptrdiff_t(next);
				if (next >= log.waiting.size() || it->first != r.seqno)
					it = std::ranges::lower_bound(log.waiting, uint64_t(r.seqno), {},
								      &std::pair<uint64_t, size_t>::first);
				if (it == log.waiting.end() || it->first != r.seqno || it->second == SIZE_MAX)
					continue;	// not recorded (no run was open any more)
				next = size_t(it - log.waiting.begin()) + 1;
				JobRecord &j = jobs[it->second];
				j.submit_ns = r.submit_ns;
				j.start_ns = r.start_ns;
				j.end_ns = r.end_ns;
				j.status = r.status;
				j.timed_out = r.flags & DRM_RBLN_JOB_TIME_TIMED_OUT;
				j.device_times = true;
				it->second = SIZE_MAX;
				matched = true;
			}
			if (!args.pending || !args.count)
				break;
		}
		if (matched)
			std::erase_if(log.waiting, [](const auto &w) { return w.second == SIZE_MAX; });
		// Jobs still running (at most the driver's DRM_RBLN_MAX_INFLIGHT) wait for the next time.
		log.drain_at = log.waiting.size() + kDrainEvery;
		sample_locked(log, coarse_monotonic_ns());
	}

	void drain_all_locked()
	{
		for (DeviceLog &log : logs)
			drain_locked(log);
	}

	// A record as the trace's job.
	TraceJob trace_job(const JobRecord &r) const
	{
		TraceJob j;
		j.id = r.id;
		j.device = r.device;
		j.chiplet = r.chiplet;
		j.engine = r.engine;
		j.label.assign(labels, r.label_at, r.label_size);
		j.bytes = r.bytes;
		j.pid = r.pid;
		j.command = command;
		j.seqno = r.seqno;
		j.submit_ns = r.submit_ns;
		j.after.assign(afters.begin() + ptrdiff_t(r.after_at),
			       afters.begin() + ptrdiff_t(r.after_at + r.after_count));
		if (r.device_times) {
			j.start_ns = r.start_ns;
			j.end_ns = r.end_ns;
			j.status = r.status;
			j.timed_out = r.timed_out;
		} else {
			// No device times: an old driver's (shown at its submit, and
			// saying so), or still running when the file was written.
			j.device_times = false;
			j.start_ns = j.end_ns = r.submit_ns;
			j.status = r.old_driver ? 0 : -EINPROGRESS;
		}
		return j;
	}

	// The jobs of @run (all: nullopt) as a trace of their own.
	Trace select_locked(std::optional<unsigned> run) const
	{
		Trace t;
		t.realtime_ns = trace.realtime_ns;
		t.monotonic_ns = trace.monotonic_ns;
		t.devices = trace.devices;
		t.workloads = trace.workloads;
		const size_t first = run ? runs[*run].first_job : 0;
		const size_t end = run ? std::min(runs[*run].end_job, jobs.size()) : jobs.size();
		std::set<uint64_t> ids;
		uint64_t lo = ~0ull, hi = 0;
		for (size_t i = first; i < end; i++) {
			TraceJob j = trace_job(jobs[i]);
			ids.insert(j.id);
			lo = std::min(lo, j.submit_ns);
			hi = std::max(hi, j.end_ns);
			t.jobs.push_back(std::move(j));
		}
		// An arrow only between jobs of this file.
		for (TraceJob &j : t.jobs)
			std::erase_if(j.after, [&](uint64_t d) { return !ids.contains(d); });
		auto within = [&](const TraceCounter &c) { return !run || (c.ts_ns >= lo && c.ts_ns <= hi); };
		std::ranges::copy_if(trace.memory_used, std::back_inserter(t.memory_used), within);
		std::ranges::copy_if(trace.utilization, std::back_inserter(t.utilization), within);
		return t;
	}

	std::string write_locked(const std::string &path, std::optional<unsigned> run)
	{
		const Trace t = select_locked(run);
		if (t.jobs.empty())
			return {};
		write_file_atomically(path, to_perfetto(t));
		return path;
	}

	std::string write_run_locked(Run &r)
	{
		drain_all_locked();
		r.end_job = jobs.size();
		open_runs--;
		update_active_locked();
		return write_locked(fmt::format("{}/{}_{}.pb", r.dir, stem, r.number), r.number);
	}

	bool all_ended_locked() const
	{
		return std::ranges::all_of(logs, [](const DeviceLog &l) { return l.waiting.empty(); });
	}

	std::string write_whole_locked()
	{
		if (stem.empty())
			return {};
		std::string path = fmt::format("{}/{}.pb", dir, stem);
		// Nothing new since flush() wrote it: exit leaves that file alone.
		if (whole_written_jobs && whole_written_jobs == jobs.size() && all_ended_locked())
			return path;
		path = write_locked(path, std::nullopt);
		whole_written_jobs = all_ended_locked() ? jobs.size() : 0;
		return path;
	}
	size_t whole_written_jobs = 0;	// jobs in the whole file last written, all ended

	void update_active_locked()
	{
		g_active = env_on || env_bad || open_runs;
	}
};

// Made at load (a bad RBLN_PROFILER is told at the first submit), destroyed
// at exit or unload, which writes the files.
Recorder &recorder()
{
	static Recorder r;
	return r;
}

// getpid() is a system call: asked once, and again in a forked child.
void Recorder::recorder_pid_changed()
{
	recorder().pid = uint32_t(getpid());
}

[[maybe_unused]] const bool g_loaded = (recorder(), true);

} // namespace

void fail_bad_environment()
{
	Recorder &r = recorder();
	rbln::detail::fail(EINVAL, fmt::format("RBLN_PROFILER={:?} is not a valid value: set 1, ON, "
					       "TRUE or YES (any case) to profile, or 0, OFF, "
					       "FALSE, NO or nothing not to", r.env_value));
}

void job_submitted(rbln::detail::DeviceState &dev, uint64_t id, uint64_t seqno, unsigned engine,
		   unsigned chiplet, std::string_view label, uint64_t bytes,
		   std::span<const uint64_t> after, uint64_t submit_ns)
{
	Recorder &r = recorder();
	std::lock_guard lock(r.mu);
	if (!r.open_runs)
		return;		// the last session ended meanwhile
	DeviceLog &log = r.log_locked(dev);
	JobRecord &j = r.jobs.emplace_back();
	j.id = id;
	j.seqno = seqno;
	j.bytes = bytes;
	j.submit_ns = submit_ns;
	// A job without a label or dependencies: no call that appends nothing.
	j.label_at = r.labels.size();
	j.label_size = uint32_t(label.size());
	if (!label.empty())
		r.labels.append(label);
	j.after_at = r.afters.size();
	j.after_count = uint32_t(after.size());
	if (!after.empty())
		r.afters.insert(r.afters.end(), after.begin(), after.end());
	j.pid = r.pid;
	j.device = dev.info.index;
	j.engine = uint8_t(engine);
	j.chiplet = uint8_t(chiplet);
	if (dev.uapi_version >= 14) {
		log.waiting.emplace_back(seqno, r.jobs.size() - 1);
		if (log.waiting.size() >= log.drain_at) {
			r.drain_locked(log);	// samples the counters too
			return;
		}
	} else {
		j.old_driver = true;
		if (!r.old_driver_warned) {
			r.old_driver_warned = true;
			rbln::detail::warn(fmt::format("RBLN_PROFILER: rbln.ko {} implements interface {}; "
						       "device times need 14: jobs are recorded at their "
						       "submit, without them", dev.info.driver_version,
						       dev.uapi_version));
		}
	}
	r.sample_locked(log, submit_ns);
}

void device_closing(rbln::detail::DeviceState &dev)
{
	if (g_gone)
		return;
	Recorder &r = recorder();
	std::lock_guard lock(r.mu);
	auto it = std::ranges::find(r.logs, &dev, &DeviceLog::dev);
	if (it == r.logs.end())
		return;
	// Its jobs still running stay without device times.
	r.drain_locked(*it);
	r.logs.erase(it);
	r.last_log = 0;
}

} RBLN_CXX_ABI_END // namespace rbln::profile::detail

RBLN_CXX_ABI_BEGIN namespace profile {

using detail::recorder;

bool env_enabled()
{
	auto &r = recorder();	// made first: it is what sets g_env_bad
	detail::check_environment();
	return r.env_on;
}

Session::Session(std::string output_dir)
{
	auto &r = recorder();
	std::lock_guard lock(r.mu);
	r.start_locked();
	// The whole trace goes where the first run's file goes, unless RBLN_PROFILER_DIR says.
	if (!output_dir.empty() && r.runs.empty() && !r.dir_from_env)
		r.dir = output_dir;
	run_ = r.open_run_locked(output_dir.empty() ? r.dir : output_dir);
}

std::string Session::end()
{
	if (ended_)
		return {};
	ended_ = true;
	auto &r = recorder();
	std::lock_guard lock(r.mu);
	return r.write_run_locked(r.runs[run_]);
}

Session::~Session()
{
	try {
		end();
	} catch (const std::exception &e) {
		rbln::detail::warn(fmt::format("RBLN_PROFILER: run {}: {}", run_, e.what()));
	}
}

void workload(unsigned device, unsigned instance, unsigned sequence, unsigned wl)
{
	auto &r = recorder();
	std::lock_guard lock(r.mu);
	r.trace.workloads.push_back({device, instance, sequence, wl});
}

std::string flush()
{
	auto &r = recorder();
	std::lock_guard lock(r.mu);
	r.drain_all_locked();
	return r.write_whole_locked();
}
std::string file_stem(uint64_t realtime)
{
	const time_t secs = time_t(realtime / 1'000'000'000ull);
	tm local{};
	localtime_r(&secs, &local);
	char buf[32];
	strftime(buf, sizeof(buf), "rbln_%Y%m%d_%H%M%S", &local);
	return buf;
}

void write_file_atomically(const std::string &path, std::string_view bytes)
{
	const auto slash = path.rfind('/');
	const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
	const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
	// Hidden and named by the writer: never mistaken for the file, nor shared.
	const std::string tmp = fmt::format("{}/.{}.tmp-{}", dir, base, getpid());
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		rbln::detail::fail(errno, fmt::format("cannot write the trace {}: {} (set RBLN_PROFILER_DIR "
						      "to a writable directory)", tmp,
						      rbln::detail::errno_text(errno)));
	size_t done = 0;
	int err = 0;
	while (done < bytes.size()) {
		ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		done += size_t(n);
	}
	if (!err && ::fsync(fd))
		err = errno;
	::close(fd);
	if (!err && ::rename(tmp.c_str(), path.c_str()))
		err = errno;
	if (err) {
		::unlink(tmp.c_str());
		rbln::detail::fail(err, fmt::format("cannot write the trace {}: {}", path,
						    rbln::detail::errno_text(err)));
	}
}

} RBLN_CXX_ABI_END // namespace rbln::profile
