// The in-process profiler.  Off, it costs one relaxed load per submit.  On,
// each job gets an id and a description at submit; SUBMIT asks the driver
// for its device times (DRM_RBLN_SUBMIT_TIMES, interface 14), which are
// taken from the driver now and then, when a device closes and when a file
// is written.  A Session is one run: jobs submitted while it is open are its
// own, written to rbln_{date}_{time}_N.pb when it ends; the whole recording
// goes to rbln_{date}_{time}.pb at exit (or when the library is unloaded).
// A forked child's names carry its pid too (rbln_{date}_{time}_pid{pid}).
//
// Recording a job is on the submit path, so it is kept to writing one
// fixed-size record into the submitting thread's own chunk (staging.h): no
// lock, no allocation, no lookup, no system call.  The recorder takes the
// records over now and then, under its lock; they become a Trace only when
// a file is written.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "../device_state.h"
#include "rbln/profile.hpp"
#include "rbln_drm.h"
#include "job_draft.h"
#include "recorder.h"
#include "seqno_table.h"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

std::atomic<bool> g_active{false};
std::atomic<bool> g_env_bad{false};
std::atomic<uint64_t> g_next_job_id{1};
constinit thread_local Stage t_stage{nullptr, kChunkJobs, nullptr, nullptr, 0, 0, nullptr};
// This process's pid, anew in a forked child (getpid() is a system call).
static std::atomic<uint32_t> g_pid{uint32_t(getpid())};
// Set once the recorder is destroyed: a device closing later has nothing to tell it.
static std::atomic<bool> g_gone{false};
// This thread is inside the recorder's lock, or about to be: a fork from a
// signal handler that interrupted it does not wait for the lock (fork_prepare).
constinit thread_local unsigned t_in_recorder = 0;
// This thread's forks under way (a signal handler's inside another's
// handlers), and which of them took the recorder's lock (bit = depth); the
// child inherits both.
constinit thread_local unsigned t_fork_depth = 0;
constinit thread_local unsigned t_fork_locked = 0;

// The recorder's lock, taken by every way into it (never the submit's fast
// path).  Apart from the recorder, and never destroyed: a thread that waited
// for it while exit destroyed the recorder takes it whole, and sees g_gone.
static constinit std::mutex g_recorder_mu;
static_assert(std::is_trivially_destructible_v<std::mutex>, "g_recorder_mu outlives exit");

class RecorderLock {
public:
	RecorderLock()
	{
		t_in_recorder++;
		g_recorder_mu.lock();
	}
	~RecorderLock()
	{
		g_recorder_mu.unlock();
		t_in_recorder--;
	}
	RecorderLock(const RecorderLock &) = delete;
	RecorderLock &operator=(const RecorderLock &) = delete;
};

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

// At most this many chunks (3 MiB) are made ahead when a run opens.  Made
// inside a run, at a submit, a chunk cost the bench's chain about 2% under
// TCG: the allocation (malloc sorting what a file's writing freed) and the
// first touch of its pages.
constexpr size_t kSpareChunksMax = 64;

// A driver's record of a job not recorded yet is kept this many drains.
constexpr unsigned kEarlyDrains = 16;

// Counters (a few ioctls) are read at most this often, at a submit.
constexpr uint64_t kSampleEveryNs = 10'000'000;

// A device this process recorded jobs of, while it is open.
struct DeviceLog {
	const rbln::detail::DeviceState *dev;
	SeqnoTable<JobRecord> waiting;	// records without times yet
	// JOB_TIMES records of jobs not taken over yet at a drain (their thread
	// had not published them), each tried at the next kEarlyDrains drains
	// (a thread pre-empted that long), then dropped (its job was not
	// recorded: no run was open any more).
	struct Early {
		drm_rbln_job_time rec;
		unsigned drains;	// tried at this many drains since it came
	};
	std::vector<Early> early;
	size_t drain_at = kDrainEvery;	// waiting.waiting() that has the times taken
	uint64_t last_sample_ns = 0;
};

// Its jobs are those kept with ids in [first_id, end_id): submitted while it
// was open (an id is taken as a submit starts), found in chunks from first_chunk.
struct Run {
	unsigned number;
	std::string dir;
	uint64_t first_id;
	size_t first_chunk;
	uint64_t end_id = UINT64_MAX;	// UINT64_MAX: still open
	bool open() const { return end_id == UINT64_MAX; }
};

struct Recorder {
	bool env_on = false;
	std::string env_value;		// RBLN_PROFILER as set
	bool env_bad = false;
	std::string dir;		// RBLN_PROFILER_DIR, else "."
	bool dir_from_env = false;
	std::string stem;		// rbln_{date}_{time}, fixed at the first use; see name_by_pid_locked
	size_t stem_time_size = 0;	// of its rbln_{date}_{time}
	// A forked child's g_next_job_id at the fork (see idle_child_locked);
	// set, its names carry its pid (name_by_pid_locked).
	std::optional<uint64_t> fork_next_id;
	Trace trace;			// devices, counters and workloads; the jobs are below
	// Every thread's chunks: the records stay where their thread wrote them.
	std::vector<std::unique_ptr<Chunk>> chunks;
	// Chunks made when a run opens, as many as the last run took: a run
	// like the last one records its jobs with no allocation and no page fault.
	std::vector<std::unique_ptr<Chunk>> spare_chunks;
	std::vector<std::unique_ptr<LabelChunk>> label_chunks;
	std::vector<Stage *> stages;	// of the threads alive that staged jobs
	// Other threads' chunks as a fork started (fork_prepare), for the child,
	// which cannot read their stages: room for all is kept at registration.
	std::vector<Chunk *> fork_chunks;
	// The jobs of threads whose ThreadStage is gone (submitted from a later
	// thread_local destructor), each written under the lock.
	Stage late_stage{nullptr, kChunkJobs, nullptr, nullptr, 0, 0, nullptr};
	size_t kept_jobs = 0;		// records taken over and kept (a dropped one's id is 0)
	std::vector<uint64_t> afters;	// the dependencies of jobs with more than kInlineAfters
	// Staged jobs of a lower id were submitted as the last run ended: none is kept.
	uint64_t span_first_id = 0;
	std::vector<DeviceLog> logs;
	std::vector<drm_rbln_job_time> drain_buf;	// JOB_TIMES' records, any device's
	size_t last_log = 0;		// the log of the last job's device, most likely the next's
	std::vector<Run> runs;
	unsigned open_runs = 0;
	bool old_driver_warned = false;
	std::string command;

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
		if (env_on) {
			start_locked();
			open_run_locked(dir);
			g_active = true;
		}
		// Last: the handlers' recorder() finds it made (or waits for that).
		pthread_atfork(fork_prepare, fork_parent, fork_child);
	}
	~Recorder()
	{
		// Held until g_gone is set: a fork's handlers, or a thread waiting for
		// the lock, see it, or a whole recorder.
		RecorderLock lock;
		// Exit or unload: the open runs end, and the whole trace is written
		// (by a forked child, only if it recorded: idle_child_locked).
		try {
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
		// A thread still running may be writing its last record: its chunk stays.
		for (Stage *s : stages) {
			for (auto &c : chunks)
				if (c.get() == s->chunk)
					(void)c.release();
			for (auto &c : label_chunks)
				if (s->label_end == c->bytes + kLabelChunk)
					(void)c.release();
		}
	}

	static void fork_prepare() noexcept;
	static void fork_parent() noexcept;
	static void fork_child() noexcept;
	// @s is another thread's stage (the late stage is no thread's).
	bool other_threads(const Stage *s) const { return s != &t_stage && s != &late_stage; }

	void start_locked()
	{
		if (!stem.empty())
			return;
		trace.realtime_ns = realtime_ns();
		trace.monotonic_ns = monotonic_ns();
		// Room for the pid made first (a move keeps it): a forked child
		// names its files with no allocation.
		std::string named;
		named.reserve(kStemMax + kPidSuffixMax);
		named += file_stem(trace.realtime_ns);
		stem_time_size = named.size();
		stem = std::move(named);
		if (fork_next_id)
			name_by_pid_locked();
	}

	// A forked child's files are named by its pid as well
	// (rbln_{date}_{time}_pid{pid}), so that neither it nor its parent
	// overwrites the other's.  Its whole trace is written anew.  No
	// allocation: start_locked kept room.
	static constexpr size_t kStemMax = 32;		// file_stem()'s, room to spare
	static constexpr size_t kPidSuffixMax = 16;
	static_assert(kPidSuffixMax >= sizeof("_pid4294967295"));
	void name_by_pid_locked() noexcept
	{
		whole_written_jobs = 0;
		whole_path.clear();
		if (stem.empty())
			return;
		char suffix[kPidSuffixMax];
		const auto n = fmt::format_to_n(suffix, sizeof(suffix), "_pid{}",
						g_pid.load(std::memory_order_relaxed)).size;
		stem.resize(stem_time_size);
		stem.append(suffix, std::min(n, sizeof(suffix)));
	}

	unsigned open_run_locked(const std::string &run_dir)
	{
		// What was staged so far belongs to the runs open until now.
		take_all_locked();
		if (!open_runs)
			span_first_id = g_next_job_id.load(std::memory_order_relaxed);
		const unsigned number = unsigned(runs.size());
		// Its jobs: staged from now on, in a chunk a thread has now or a
		// later one.  Late jobs (all taken already) start a chunk of their own.
		late_stage.used = kChunkJobs;
		size_t first_chunk = chunks.size();
		for (const Stage *s : stages)
			if (s->chunk && s != &late_stage)
				first_chunk = std::min<size_t>(first_chunk, s->chunk->index);
		// The chunks taken while the last run was open, and one more.
		const size_t last_run_chunks = runs.empty() ? 0 : chunks.size() - runs.back().first_chunk;
		make_spare_chunks_locked(std::clamp<size_t>(last_run_chunks + 1, 2, kSpareChunksMax));
		runs.push_back({number, run_dir, g_next_job_id.load(std::memory_order_relaxed), first_chunk});
		open_runs++;
		update_active_locked();
		return number;
	}

	// @s's records published since the last time: the recorder's now.
	void take_locked(Stage &s)
	{
		if (s.chunk)
			take_chunk_locked(*s.chunk);
	}

	void take_chunk_locked(Chunk &c)
	{
		const uint64_t published = c.published.load(std::memory_order_acquire);
		// Past kChunkJobs only by a record a fork cut short (fork_child): not kept.
		const uint32_t end = std::min(uint32_t(published), kChunkJobs);
		const uint32_t flagged = uint32_t(published >> 32);
		// Locals, not members the stores below might alias: loaded once.
		const uint64_t first_id = open_runs ? span_first_id : UINT64_MAX;
		if (c.taken == end)
			return;
		// None flagged: all came with their times, and the first has the
		// lowest id; when it belongs to the runs open, so do all: kept as
		// they are, not looked at.
		if (flagged == c.flagged_taken && c.records[c.taken].id >= first_id) {
			kept_jobs += end - c.taken;
			c.taken = end;
			return;
		}
		DeviceLog *log = nullptr;	// the last record's: a thread's jobs go mostly to one device
		const rbln::detail::DeviceState *log_dev = nullptr;
		size_t kept = 0;
		for (uint32_t i = c.taken; i < end; i++) {
			JobRecord &j = c.records[i];
			if (j.id < first_id) [[unlikely]] {
				j.id = 0;	// dropped: submitted as the last session ended
				continue;
			}
			if (j.dev != log_dev) {
				log = &log_locked(*j.dev);	// may add to logs, moving them
				log_dev = j.dev;
			}
			take_record_locked(*log, j);
			kept++;
		}
		kept_jobs += kept;
		c.taken = end;
		c.flagged_taken = flagged;
	}

	void take_all_locked()
	{
		for (Stage *s : stages)
			take_locked(*s);
	}

	void take_record_locked(DeviceLog &log, JobRecord &j)
	{
		if (j.device_times)
			return;		// SUBMIT gave them (REPORT_TIMES): no record to wait for
		if (!j.old_driver) [[likely]] {
			log.waiting.add(j.seqno, &j);
			return;
		}
		if (!old_driver_warned) {
			old_driver_warned = true;
			const rbln::detail::DeviceState &dev = *j.dev;
			rbln::detail::warn(fmt::format("RBLN_PROFILER: rbln.ko {} implements interface {}; "
						       "device times need 14: jobs are recorded at their "
						       "submit, without them", dev.info.driver_version,
						       dev.uapi_version));
		}
	}

	void make_spare_chunks_locked(size_t n)
	{
		while (spare_chunks.size() < n) {
			auto c = std::make_unique_for_overwrite<Chunk>();
			// Written through now, not at a job's record: its pages
			// faulted in, and in the caches when the run starts.
			std::memset(static_cast<void *>(c->records), 0, sizeof(c->records));
			spare_chunks.push_back(std::move(c));
		}
	}

	// Room in @s for a record with a label of @label_size bytes: a chunk
	// (a spare, or a new one when none is left) for its first job or when
	// the last is full, registered on its first: its thread's end takes
	// what it staged; a fresh label chunk too when the label does not fit.
	void make_room_locked(Stage &s, size_t label_size);

	bool drain_due_locked() const
	{
		return std::ranges::any_of(logs, [](const DeviceLog &l) {
			return l.waiting.waiting() >= l.drain_at;
		});
	}

	DeviceLog &log_locked(const rbln::detail::DeviceState &dev)
	{
		if (last_log < logs.size() && logs[last_log].dev == &dev)
			return logs[last_log];
		auto it = std::ranges::find(logs, &dev, &DeviceLog::dev);
		if (it == logs.end()) {
			if (!std::ranges::count(trace.devices, dev.info.index, &TraceDevice::index))
				trace.devices.push_back({dev.info.index,
							 fmt::format("rbln{} {}", dev.info.index, dev.info.name),
							 std::max(1u, dev.info.chiplet_count)});
			DeviceLog log;
			log.dev = &dev;
			it = logs.insert(logs.end(), std::move(log));
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
		// The submit path takes the lock when the next is due; for an old
		// driver's jobs always (nothing to drain: each is taken at once).
		if (log.dev->uapi_version >= 14)
			log.dev->profile_sample_ns.store(clock_ns + kSampleEveryNs,
							 std::memory_order_relaxed);
		const uint64_t now = monotonic_ns();
		const rbln::detail::DeviceState &dev = *log.dev;
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
		const rbln::detail::DeviceState &dev = *log.dev;
		// Those that came before their job's record, first: it is here now.
		std::erase_if(log.early, [&](DeviceLog::Early &e) {
			if (JobRecord *j = log.waiting.take(e.rec.seqno)) {
				set_device_times(*j, e.rec);
				return true;
			}
			return ++e.drains >= kEarlyDrains;
		});
		// Room for a drain's worth and the jobs in flight: one JOB_TIMES a
		// drain, into a buffer kept from the last one (not made and zeroed anew).
		if (!log.waiting.empty() && drain_buf.empty())
			drain_buf.resize(kDrainEvery + DRM_RBLN_MAX_INFLIGHT);
		std::span<drm_rbln_job_time> recs(drain_buf.data(),
						  log.waiting.empty() ? 0 : drain_buf.size());
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
				// None: its thread is about to publish it, or it was
				// not recorded (no run was open any more).
				if (JobRecord *j = log.waiting.take(r.seqno))
					set_device_times(*j, r);
				else
					log.early.push_back({r, 0});
			}
			if (!args.pending || !args.count)
				break;
		}
		log.waiting.trim();
		// Jobs still running (at most the driver's DRM_RBLN_MAX_INFLIGHT) wait for the next time.
		log.drain_at = log.waiting.waiting() + kDrainEvery;
		sample_locked(log, coarse_monotonic_ns());
	}

	static void set_device_times(JobRecord &j, const drm_rbln_job_time &r)
	{
		detail::set_device_times(j, r.submit_ns, r.start_ns, r.end_ns, r.status, r.flags);
	}

	// Every job staged so far with its device times, those that have them.
	// Every thread's jobs taken, and the driver's times of every device's
	// (an idle child's are its parent's: left to it).
	void drain_all_locked()
	{
		take_all_locked();
		if (idle_child_locked())
			return;
		for (DeviceLog &log : logs)
			drain_locked(log);
	}

	// A record as the trace's job.
	TraceJob trace_job(const JobRecord &r, uint32_t pid) const
	{
		TraceJob j;
		j.id = r.id;
		j.device = r.device;
		j.chiplet = r.chiplet;
		j.engine = r.engine;
		if (r.label_size)
			j.label.assign(r.label, r.label_size);
		j.pid = pid;
		j.bytes = r.bytes;
		j.command = command;
		j.seqno = r.seqno;
		j.submit_ns = r.submit_ns;
		if (r.after_count <= kInlineAfters)
			j.after.assign(r.after, r.after + r.after_count);
		else
			j.after.assign(afters.begin() + ptrdiff_t(r.after[0]),
				       afters.begin() + ptrdiff_t(r.after[0] + r.after_count));
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
		const uint64_t first_id = run ? runs[*run].first_id : 1;
		const uint64_t end_id = run ? runs[*run].end_id : UINT64_MAX;
		std::set<uint64_t> ids;
		uint64_t lo = ~0ull, hi = 0;
		for (size_t c = run ? runs[*run].first_chunk : 0; c < chunks.size(); c++) {
			const Chunk &chunk = *chunks[c];
			for (uint32_t i = 0; i < chunk.taken; i++) {
				const JobRecord &r = chunk.records[i];
				if (r.id < first_id || r.id >= end_id)
					continue;	// another run's, or dropped (id 0)
				TraceJob j = trace_job(r, chunk.pid);
				ids.insert(j.id);
				lo = std::min(lo, j.submit_ns);
				hi = std::max(hi, j.end_ns);
				t.jobs.push_back(std::move(j));
			}
		}
		// An arrow only between jobs of this file.
		for (TraceJob &j : t.jobs)
			std::erase_if(j.after, [&](uint64_t d) { return !ids.contains(d); });
		auto within = [&](const TraceCounter &c) { return !run || (c.ts_ns >= lo && c.ts_ns <= hi); };
		std::ranges::copy_if(trace.memory_used, std::back_inserter(t.memory_used), within);
		std::ranges::copy_if(trace.utilization, std::back_inserter(t.utilization), within);
		return t;
	}

	// A forked child that has submitted no profiled job since the fork (a
	// refused one counts: its id was taken): its files would copy what its
	// parent had recorded, which the parent writes (a pre-forking server's
	// workers, say).  It writes none, and leaves the parent's device times
	// in the files they share (once it submits, each may take the other's).
	bool idle_child_locked() const
	{
		return fork_next_id == g_next_job_id.load(std::memory_order_relaxed);
	}

	// Writes run @run's file (nullopt: the whole trace) and returns its
	// path, or "" when it would hold no job (or this is an idle child).
	std::string write_locked(std::optional<unsigned> run)
	{
		if (idle_child_locked())
			return {};
		const Trace t = select_locked(run);
		if (t.jobs.empty())
			return {};
		const std::string path = run ? fmt::format("{}/{}_{}.pb", runs[*run].dir, stem, *run)
					     : fmt::format("{}/{}.pb", dir, stem);
		write_file_atomically(path, to_perfetto(t));
		return path;
	}

	std::string write_run_locked(Run &r)
	{
		drain_all_locked();
		r.end_id = g_next_job_id.load(std::memory_order_relaxed);
		open_runs--;
		update_active_locked();
		return write_locked(r.number);
	}

	bool all_ended_locked() const
	{
		return std::ranges::all_of(logs, [](const DeviceLog &l) { return l.waiting.empty(); });
	}

	std::string write_whole_locked()
	{
		if (stem.empty())
			return {};
		// Nothing new since flush() wrote it: exit leaves that file alone.
		if (whole_written_jobs && whole_written_jobs == kept_jobs && all_ended_locked())
			return whole_path;
		whole_path = write_locked(std::nullopt);
		whole_written_jobs = all_ended_locked() ? kept_jobs : 0;
		return whole_path;
	}
	size_t whole_written_jobs = 0;	// jobs in the whole file last written, all ended
	std::string whole_path;		// that file

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

// The lock is held across a fork: the child, with no other thread to free
// it, finds the recorder as no thread was changing it.  None of it once the
// recorder is gone (exit, or dlclose() before glibc drops these handlers:
// g_gone is set under the lock), nor when the forking thread is in the
// recorder already (a signal handler's fork that interrupted it, or another
// fork's handlers): its parent goes on, and its child must exec or _exit, as
// its lock may stay held and its stages are the parent's.  A fork waits for
// a Session's end or a flush() writing its file in another thread.
void Recorder::fork_prepare() noexcept
{
	const unsigned depth = t_fork_depth++;
	if (g_gone || t_in_recorder || depth >= 32)
		return;
	Recorder &r = recorder();
	// Counted in first, as RecorderLock does: a signal handler's fork
	// between here and the unlock does not wait for this thread's own lock.
	t_in_recorder++;
	g_recorder_mu.lock();
	if (g_gone) {
		g_recorder_mu.unlock();
		t_in_recorder--;
		return;
	}
	t_fork_locked |= 1u << depth;
	// The other threads' chunks, read while those threads are there (no
	// allocation: make_room_locked kept room for every stage).
	r.fork_chunks.clear();
	for (Stage *s : r.stages)
		if (r.other_threads(s) && s->chunk)
			r.fork_chunks.push_back(s->chunk);
}

// Whether this fork's prepare took the lock: then the caller unlocks (fork_unlock).
static bool fork_done() noexcept
{
	const unsigned depth = --t_fork_depth;
	const bool locked = depth < 32 && t_fork_locked >> depth & 1;
	if (locked)
		t_fork_locked &= ~(1u << depth);
	return locked;
}

// The lock fork_prepare took, given back; the thread is counted out after.
static void fork_unlock() noexcept
{
	g_recorder_mu.unlock();
	t_in_recorder--;
}

void Recorder::fork_parent() noexcept
{
	if (!fork_done())
		return;
	recorder().fork_chunks.clear();
	fork_unlock();
}

// getpid() is a system call: asked once, and again in a forked child.
void Recorder::fork_child() noexcept
{
	g_pid.store(uint32_t(getpid()), std::memory_order_relaxed);
	// A fork inside SUBMIT (from a signal handler, say): the job's draft
	// leaves the parent's chunk too.
	if (t_stage.drafter)
		t_stage.drafter->move_home();
	// The child's next job starts a chunk of its own, with its pid.
	t_stage.used = kChunkJobs;
	if (!fork_done())
		return;
	Recorder &r = recorder();
	// The parent's other threads are not the child's: their stages, in their
	// stacks, which glibc gives to the child's threads or unmaps, are left
	// unread (a handler that ran before this one may have started threads).
	// What they staged is the parent's as of the fork, as what was taken and
	// what this thread staged: the child's too, taken from their chunks
	// (which stay the recorder's; their drafts are never published here).
	for (Chunk *c : r.fork_chunks) {
		try {
			r.take_chunk_locked(*c);
		} catch (...) {
			// Out of memory: those records are not kept; the child goes on.
		}
	}
	r.fork_chunks.clear();
	std::erase_if(r.stages, [&](const Stage *s) { return r.other_threads(s); });
	r.fork_next_id = g_next_job_id.load(std::memory_order_relaxed);
	r.name_by_pid_locked();
	fork_unlock();
}

// Set when the thread's ThreadStage is destroyed (trivial, as t_stage: still
// there for a thread_local destructor that runs after it).
constinit thread_local bool t_stage_ended = false;

// Takes over what its thread staged when the thread ends (t_stage itself is
// trivial, so that the submit path reaches it without a guard).  Jobs the
// thread submits after that (from a later thread_local destructor) go to
// the recorder's late_stage.
struct ThreadStage {
	bool registered = false;
	~ThreadStage()
	{
		t_stage_ended = true;
		if (!registered || g_gone)
			return;
		Recorder &r = recorder();
		RecorderLock lock;
		if (g_gone)
			return;		// exit's destructors ran while it waited
		r.take_locked(t_stage);
		std::erase(r.stages, &t_stage);
		t_stage = {nullptr, kChunkJobs, nullptr, nullptr, 0, 0, nullptr};
	}
};
thread_local ThreadStage t_stage_owner;

void Recorder::make_room_locked(Stage &s, size_t label_size)
{
	if (label_size > size_t(s.label_end - s.label_next)) {
		label_chunks.push_back(std::make_unique_for_overwrite<LabelChunk>());
		s.label_next = label_chunks.back()->bytes;
		s.label_end = s.label_next + kLabelChunk;
	}
	if (s.used < kChunkJobs)
		return;
	take_locked(s);
	if (!s.chunk) {
		fork_chunks.reserve(stages.size() + 1);
		stages.push_back(&s);
		if (&s == &t_stage)
			t_stage_owner.registered = true;
	}
	if (spare_chunks.empty()) {
		chunks.push_back(std::make_unique_for_overwrite<Chunk>());
	} else {
		chunks.push_back(std::move(spare_chunks.back()));
		spare_chunks.pop_back();
	}
	s.chunk = chunks.back().get();
	s.chunk->index = uint32_t(chunks.size() - 1);
	s.chunk->pid = g_pid.load(std::memory_order_relaxed);
	s.used = 0;
	s.flagged = 0;
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

// job_submitted()'s way through the recorder's lock: the thread's first job
// or a full chunk, a drain or counters due, an old driver, many dependencies.
[[gnu::noinline]] static void record_job(const JobRecord &draft, const drm_rbln_submit &done,
					 bool reported, const uint64_t *more_after, uint64_t now)
{
	if (g_gone)
		return;		// exit's destructors ran: a job submitted after them is not kept
	Recorder &r = recorder();
	RecorderLock lock;
	if (g_gone || !r.open_runs)
		return;		// exit's destructors, or the last session's end, came meanwhile
	// A thread whose ThreadStage is gone: its own stage would be registered
	// again, and read after the thread ended.  In a forked child the late
	// stage's next job starts a chunk of the child's.
	Stage &s = t_stage_ended ? r.late_stage : t_stage;
	if (&s == &r.late_stage && s.chunk && s.chunk->pid != g_pid.load(std::memory_order_relaxed))
		s.used = kChunkJobs;
	if (!has_room(s, draft.label_size))
		r.make_room_locked(s, draft.label_size);
	JobRecord &j = write_record(s, draft, done, reported);
	if (j.after_count > kInlineAfters) {
		j.after[0] = r.afters.size();
		r.afters.insert(r.afters.end(), more_after, more_after + j.after_count);
	}
	publish(s, draft.id, reported);
	// Here anyway: this thread's jobs become the recorder's, and every
	// thread's when a drain is due (by job id: all threads' jobs count).
	r.take_locked(s);
	if (drain_due_at(draft.id) || r.drain_due_locked()) {
		r.take_all_locked();
		for (DeviceLog &log : r.logs)
			if (log.waiting.waiting() >= log.drain_at)
				r.drain_locked(log);	// samples the counters too
	}
	r.sample_locked(r.log_locked(*draft.dev), now);
}

// @draft's job into the thread's chunk; @now: its end or its placeholder,
// which also tells whether counters are due.
[[gnu::always_inline]] static inline void record(JobRecord &draft, const drm_rbln_submit &done,
						 bool reported, const uint64_t *more_after,
						 uint64_t now)
{
	// The empty asm hides where the pointer came from: GCC would otherwise
	// call __tls_get_addr (in the .so) again for the write after the stores.
	Stage *sp = &t_stage;
	__asm__("" : "+r"(sp));
	Stage &s = *sp;
	// Another job of this thread drafted in the next place (a batch's first):
	// its draft moves out, and this record goes first.
	if (s.drafter) [[unlikely]]
		s.drafter->move_home();
	if (!has_room(s, draft.label_size) || drain_due_at(draft.id) || needs_lock(draft, now))
		[[unlikely]]
		return record_job(draft, done, reported, more_after, now);
	write_record(s, draft, done, reported);
	publish(s, draft.id, reported);
}

// A job whose times come later, from the driver's ring (or never, from a
// driver before 14): a placeholder until then, read from no precise clock.
[[gnu::noinline]] static void record_untimed(JobRecord &draft, const drm_rbln_submit &done,
					     const uint64_t *more_after)
{
	if (!draft.old_driver)
		draft.submit_ns = coarse_monotonic_ns();
	record(draft, done, false, more_after, draft.submit_ns);
}

void job_submitted(JobRecord &draft, const drm_rbln_submit &done, const uint64_t *more_after)
{
	// Its times came with its end: REPORT_TIMES (set only for a driver that has it).
	if (!done.ended || !(done.flags & DRM_RBLN_SUBMIT_REPORT_TIMES))
		return record_untimed(draft, done, more_after);
	record(draft, done, true, more_after, done.end_ns);
}

void device_closing(const rbln::detail::DeviceState &dev)
{
	if (g_gone)
		return;
	Recorder &r = recorder();
	RecorderLock lock;
	if (g_gone)
		return;
	// Its jobs staged by any thread first.
	r.take_all_locked();
	auto it = std::ranges::find(r.logs, &dev, &DeviceLog::dev);
	if (it == r.logs.end())
		return;
	// Its jobs still running stay without device times (an idle child's
	// are its parent's, in the file they share: left to it).
	if (!r.idle_child_locked())
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
	detail::RecorderLock lock;
	if (detail::g_gone) {
		// Made as exit's destructors ran: a run that records nothing.
		run_ = 0;
		ended_ = true;
		return;
	}
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
	detail::RecorderLock lock;
	if (detail::g_gone)
		return {};	// exit wrote it
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
	detail::RecorderLock lock;
	if (detail::g_gone)
		return;
	r.trace.workloads.push_back({device, instance, sequence, wl});
}

std::string flush()
{
	auto &r = recorder();
	detail::RecorderLock lock;
	if (detail::g_gone)
		return {};
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
