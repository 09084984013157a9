// The in-process profiler.  Off, it costs one relaxed load per submit.  On,
// each job gets an id and a description at submit; SUBMIT asks the driver
// for its device times (DRM_RBLN_SUBMIT_TIMES, interface 14), which are
// taken from the driver after waits, when a device closes and when a file is
// written.  A Session is one run: jobs submitted while it is open are its
// own, written to rbln_{date}_{time}_N.pb when it ends; the whole recording
// goes to rbln_{date}_{time}.pb at exit (or when the library is unloaded).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include "../device_state.h"
#include "rbln/profile.hpp"
#include "rbln_drm.h"
#include "recorder.h"

namespace rbln::profile::detail {

std::atomic<bool> g_active{false};
// Set once the recorder is destroyed: a device closing later has nothing to tell it.
static std::atomic<bool> g_gone{false};

uint64_t monotonic_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

static uint64_t realtime_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

namespace {

struct Run {
	unsigned number;
	std::string dir;
	bool open = true;
	uint64_t begin_ns = 0, end_ns = 0;
};

struct Recorder {
	std::mutex mu;
	bool env_on = false;
	std::string env_value;		// RBLN_PROFILER as set
	bool env_bad = false;
	std::string dir;		// RBLN_PROFILER_DIR, else "."
	bool dir_from_env = false;
	std::string stem;		// rbln_{date}_{time}, fixed at the first use
	Trace trace;
	std::vector<std::vector<unsigned>> job_runs;	// per job: the runs open at its submit
	std::map<std::pair<const void *, uint64_t>, size_t> waiting;	// (device, seqno) -> job
	std::set<rbln::detail::DeviceState *> devices;	// with jobs waiting for their times
	std::map<unsigned, uint64_t> last_sample_ns;	// device -> when its counters were read
	std::vector<Run> runs;
	std::atomic<uint64_t> next_id{1};
	bool old_driver_warned = false;
	std::string command;

	Recorder()
	{
		if (const char *v = std::getenv("RBLN_PROFILER")) {
			env_value = v;
			auto on = parse_switch(v);
			env_bad = !on;
			env_on = on.value_or(false);
			if (env_bad)
				g_active = true;	// so that the first submit tells it (check_environment)
		}
		if (const char *d = std::getenv("RBLN_PROFILER_DIR"); d && *d) {
			dir = d;
			dir_from_env = true;
		} else {
			dir = ".";
		}
		std::ifstream comm("/proc/self/comm");
		std::getline(comm, command);
		if (env_on) {
			start_locked();
			runs.push_back({0, dir, true, monotonic_ns()});
			g_active = true;
		}
	}
	~Recorder()
	{
		// Exit or unload: the open runs end, and the whole trace is written.
		try {
			std::lock_guard lock(mu);
			for (auto *dev : std::set(devices))
				drain_locked(*dev);
			for (Run &r : runs)
				if (r.open)
					write_run_locked(r);
			write_whole_locked();
		} catch (const std::exception &e) {
			rbln::detail::warn(fmt::format("RBLN_PROFILER: {}", e.what()));
		}
		g_active = false;
		g_gone = true;
	}

	void start_locked()
	{
		if (!stem.empty())
			return;
		trace.realtime_ns = realtime_ns();
		trace.monotonic_ns = monotonic_ns();
		stem = file_stem(trace.realtime_ns);
	}

	void sample_locked(rbln::detail::DeviceState &dev, uint64_t now)
	{
		uint64_t &last = last_sample_ns[dev.info.index];
		if (now - last < 10'000'000)	// at most every 10 ms: a few ioctls each
			return;
		last = now;
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

	void drain_locked(rbln::detail::DeviceState &dev)
	{
		if (dev.uapi_version < 14)
			return;
		std::vector<drm_rbln_job_time> recs(256);
		for (;;) {
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
				auto it = waiting.find({&dev, r.seqno});
				if (it == waiting.end())
					continue;
				TraceJob &j = trace.jobs[it->second];
				j.submit_ns = r.submit_ns;
				j.start_ns = r.start_ns;
				j.end_ns = r.end_ns;
				j.status = r.status;
				j.timed_out = r.flags & DRM_RBLN_JOB_TIME_TIMED_OUT;
				j.device_times = true;
				waiting.erase(it);
			}
			if (!args.pending || !args.count)
				break;
		}
		sample_locked(dev, monotonic_ns());
		bool any = std::ranges::any_of(waiting, [&](const auto &w) { return w.first.first == &dev; });
		if (!any)
			devices.erase(&dev);
	}

	// The jobs of @run (all: nullopt) as a trace of their own.
	Trace select_locked(std::optional<unsigned> run) const
	{
		Trace t;
		t.realtime_ns = trace.realtime_ns;
		t.monotonic_ns = trace.monotonic_ns;
		t.devices = trace.devices;
		t.workloads = trace.workloads;
		std::set<uint64_t> ids;
		uint64_t lo = ~0ull, hi = 0;
		for (size_t i = 0; i < trace.jobs.size(); i++) {
			if (run && !std::ranges::count(job_runs[i], *run))
				continue;
			TraceJob j = trace.jobs[i];
			if (!j.end_ns) {
				// Still running when the file was written: no times of its own.
				j.device_times = false;
				j.start_ns = j.end_ns = j.submit_ns;
				j.status = -EINPROGRESS;
			}
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
		for (auto *dev : std::set(devices))
			drain_locked(*dev);
		r.open = false;
		r.end_ns = monotonic_ns();
		update_active_locked();
		return write_locked(fmt::format("{}/{}_{}.pb", r.dir, stem, r.number), r.number);
	}

	std::string write_whole_locked()
	{
		if (stem.empty())
			return {};
		std::string path = fmt::format("{}/{}.pb", dir, stem);
		// Nothing new since flush() wrote it: exit leaves that file alone.
		if (whole_written_jobs && whole_written_jobs == trace.jobs.size() && waiting.empty())
			return path;
		path = write_locked(path, std::nullopt);
		whole_written_jobs = waiting.empty() ? trace.jobs.size() : 0;
		return path;
	}
	size_t whole_written_jobs = 0;	// jobs in the whole file last written, all ended

	void update_active_locked()
	{
		g_active = env_on || env_bad || std::ranges::any_of(runs, &Run::open);
	}
};

// Made at load (a bad RBLN_PROFILER is told at the first submit), destroyed
// at exit or unload, which writes the files.
Recorder &recorder()
{
	static Recorder r;
	return r;
}

[[maybe_unused]] const bool g_loaded = (recorder(), true);

} // namespace

void check_environment()
{
	Recorder &r = recorder();
	if (r.env_bad)
		rbln::detail::fail(EINVAL, fmt::format("RBLN_PROFILER={:?} is not a valid value: set 1, ON, "
						       "TRUE or YES (any case) to profile, or 0, OFF, "
						       "FALSE, NO or nothing not to", r.env_value));
}

uint64_t next_job_id()
{
	return recorder().next_id.fetch_add(1, std::memory_order_relaxed);
}

void job_submitted(rbln::detail::DeviceState &dev, uint64_t id, uint64_t seqno, unsigned engine,
		   unsigned chiplet, std::string_view label, uint64_t bytes,
		   const std::vector<uint64_t> &after, uint64_t submit_ns)
{
	Recorder &r = recorder();
	std::lock_guard lock(r.mu);
	std::vector<unsigned> open;
	for (const Run &run : r.runs)
		if (run.open)
			open.push_back(run.number);
	if (open.empty() && !r.env_on)
		return;		// the last session ended meanwhile
	if (!std::ranges::count(r.trace.devices, dev.info.index, &TraceDevice::index))
		r.trace.devices.push_back({dev.info.index, fmt::format("rbln{} {}", dev.info.index, dev.info.name),
					   std::max(1u, dev.info.chiplet_count)});
	TraceJob j;
	j.id = id;
	j.device = dev.info.index;
	j.chiplet = chiplet;
	j.engine = engine;
	j.label = label;
	j.bytes = bytes;
	j.pid = uint32_t(getpid());
	j.command = r.command;
	j.seqno = seqno;
	j.submit_ns = submit_ns;
	j.after = after;
	if (dev.uapi_version >= 14) {
		r.waiting[{&dev, seqno}] = r.trace.jobs.size();
		r.devices.insert(&dev);
	} else {
		// No device times: the job is shown at its submit, and says so.
		j.device_times = false;
		j.start_ns = j.end_ns = submit_ns;
		if (!r.old_driver_warned) {
			r.old_driver_warned = true;
			rbln::detail::warn(fmt::format("RBLN_PROFILER: rbln.ko {} implements interface {}; "
						       "device times need 14: jobs are recorded at their "
						       "submit, without them", dev.info.driver_version,
						       dev.uapi_version));
		}
	}
	r.trace.jobs.push_back(std::move(j));
	r.job_runs.push_back(std::move(open));
	// Every 1024 jobs the driver's ring (4096) is emptied; nothing is asked
	// at waits, so that profiling costs the waits nothing.
	if (r.trace.jobs.size() % 1024 == 0)
		r.drain_locked(dev);
	else
		r.sample_locked(dev, submit_ns);
}

void device_closing(rbln::detail::DeviceState &dev)
{
	if (g_gone)
		return;
	Recorder &r = recorder();
	std::lock_guard lock(r.mu);
	if (r.devices.contains(&dev))
		r.drain_locked(dev);
	std::erase_if(r.waiting, [&](const auto &w) { return w.first.first == &dev; });
	r.devices.erase(&dev);
}

} // namespace rbln::profile::detail

namespace rbln::profile {

using detail::recorder;

bool env_enabled()
{
	detail::check_environment();
	return recorder().env_on;
}

Session::Session(std::string output_dir)
{
	auto &r = recorder();
	std::lock_guard lock(r.mu);
	r.start_locked();
	run_ = unsigned(r.runs.size());
	// The whole trace goes where the first run's file goes, unless RBLN_PROFILER_DIR says.
	if (!output_dir.empty() && r.runs.empty() && !r.dir_from_env)
		r.dir = output_dir;
	r.runs.push_back({run_, output_dir.empty() ? r.dir : output_dir, true, detail::monotonic_ns()});
	r.update_active_locked();
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
	for (auto *dev : std::set(r.devices))
		r.drain_locked(*dev);
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

} // namespace rbln::profile
