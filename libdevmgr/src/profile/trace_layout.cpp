// The track layout of a trace, as the seed's users read it: one group per
// device, under it Chiplet 0..3 (none on an ATOM), under each only the engine
// tracks that ran something, in the seed's order; a Device Workload track.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "trace_layout.h"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN namespace profile {

std::string engine_track_name(unsigned engine)
{
	switch (engine) {
	case DRM_RBLN_ENGINE_NEURAL_DMA:
		return "Neural DMA";
	case DRM_RBLN_ENGINE_TASK_DMA:
		return "Task DMA";
	case DRM_RBLN_ENGINE_EXTERNAL_HDMA:
		return "External HDMA";
	case DRM_RBLN_ENGINE_DEVICE_HDMA:
		return "Device HDMA";
	default:
		return fmt::format("Engine {}", engine);
	}
}

uint64_t lost_events(const TraceRings &rings)
{
	const detail::RingLoss l = detail::ring_loss(rings);
	return l.overrun + l.commit_overrun + l.dropped_events;
}

} RBLN_CXX_ABI_END // namespace rbln::profile

RBLN_CXX_ABI_BEGIN namespace profile::detail {

// Each CPU's counts at the end less those at the start (a CPU that came
// online meanwhile: from 0).
RingLoss ring_loss(const TraceRings &rings)
{
	RingLoss l;
	for (const TraceRingStats &end : rings.end) {
		auto s = std::ranges::find(rings.start, end.cpu, &TraceRingStats::cpu);
		const TraceRingStats start = s != rings.start.end() ? *s : TraceRingStats{};
		auto since = [](uint64_t now, uint64_t then) { return now - std::min(now, then); };
		l.overrun += since(end.overrun, start.overrun);
		l.commit_overrun += since(end.commit_overrun, start.commit_overrun);
		l.dropped_events += since(end.dropped_events, start.dropped_events);
	}
	return l;
}

// The seed's track order in a chiplet: Neural Engine Clusters, Neural DMA,
// Task DMA, External HDMA, Device HDMA, Device Sync, General Compute Engine.
static int engine_rank(unsigned engine)
{
	switch (engine) {
	case DRM_RBLN_ENGINE_NEURAL_DMA:
		return 1;
	case DRM_RBLN_ENGINE_TASK_DMA:
		return 2;
	case DRM_RBLN_ENGINE_EXTERNAL_HDMA:
		return 3;
	case DRM_RBLN_ENGINE_DEVICE_HDMA:
		return 4;
	default:
		return 10 + int(engine);
	}
}

static uint64_t device_uuid(unsigned device) { return uint64_t(device + 1) << 32; }
// The parent of a chiplet's tracks: its group, or the device on an ATOM.
static uint64_t chiplet_base(const TraceDevice &d, unsigned chiplet)
{
	return d.chiplets > 1 ? device_uuid(d.index) | uint64_t(chiplet + 1) << 16 : device_uuid(d.index);
}

std::string status_name(int status)
{
	if (!status)
		return "ok";
	const char *name = strerrorname_np(-status);
	return name ? name : fmt::format("error {}", status);
}

namespace {

// Without device times, as TraceJob says: from a driver that gives none, or
// its end not seen.
bool from_old_driver(const TraceJob &job) { return !job.device_times && !job.status; }
bool end_not_seen(const TraceJob &job) { return !job.device_times && job.status == -EINPROGRESS; }

} // namespace

std::string job_status(const TraceJob &job)
{
	return from_old_driver(job) || end_not_seen(job) ? "unknown" : status_name(job.status);
}

std::string times_note(const TraceJob &job)
{
	// An old driver's jobs are all so: each says why, none is renamed.
	if (from_old_driver(job))
		return "host: the driver gives no device times before interface 14";
	if (end_not_seen(job))
		return "none: its end was not seen (still running when the trace was written, or its "
		       "times were lost or taken by another process using its device file)";
	return "";
}

std::string slice_name(const TraceJob &job)
{
	std::string name = job.label.empty()
		? fmt::format("{} job {}", engine_track_name(job.engine), job.seqno) : job.label;
	// An old driver's jobs (status 0) keep their names.
	if (end_not_seen(job))
		name += " [NO DEVICE TIMES]";
	else if (job.timed_out)
		name += " [TIMED OUT]";
	else if (job.status)
		name += fmt::format(" [FAILED {}]", status_name(job.status));
	return name;
}

Layout layout(const Trace &trace)
{
	Layout out;
	std::set<std::tuple<unsigned, unsigned, unsigned>> ran;
	for (const TraceJob &j : trace.jobs)
		ran.insert({j.device, j.chiplet, j.engine});
	std::set<unsigned> with_memory, with_utilization;
	for (const TraceCounter &c : trace.memory_used)
		with_memory.insert(c.device);
	for (const TraceCounter &c : trace.utilization)
		with_utilization.insert(c.device);

	int device_rank = 0;
	for (const TraceDevice &d : trace.devices) {
		const uint64_t dev = device_uuid(d.index);
		out.tracks.push_back({dev, 0, d.name, device_rank++, true});
		out.tracks.push_back({dev | 0xfff0, dev, "Device Workload", 0});
		for (unsigned c = 0; c < d.chiplets; c++) {
			const uint64_t base = chiplet_base(d, c);
			if (d.chiplets > 1)
				out.tracks.push_back({base, dev, fmt::format("Chiplet {}", c), int(c) + 1, true});
			for (unsigned e = 0; e < DRM_RBLN_ENGINE_COUNT; e++)
				if (ran.contains({d.index, c, e}))
					out.tracks.push_back({base | (e + 1), base, engine_track_name(e),
							      engine_rank(e)});
			if (with_memory.contains(d.index)) {
				Track m{base | 0x100, base, "Memory used", 100};
				m.counter = Track::Counter::bytes;
				out.tracks.push_back(m);
				out.memory_track[{d.index, int(c)}] = m.uuid;
			}
		}
		if (with_utilization.contains(d.index)) {
			Track u{dev | 0xfff1, dev, "Utilization", 200};
			u.counter = Track::Counter::percent;
			out.tracks.push_back(u);
			out.utilization_track[d.index] = u.uuid;
		}
	}
	std::map<unsigned, const TraceDevice *> devices;
	for (const TraceDevice &d : trace.devices)
		devices[d.index] = &d;
	for (const TraceJob &j : trace.jobs)
		if (devices.contains(j.device))
			out.job_track[j.id] = chiplet_base(*devices[j.device], j.chiplet) | (j.engine + 1);

	// Workloads: those marked and those the labels name, each over its jobs'
	// device times; a job without them (only its submit or start known) counts
	// only in a workload none of whose jobs has them (an old driver's).
	std::set<std::tuple<unsigned, unsigned, unsigned, unsigned>> marked;
	for (const TraceWorkload &w : trace.workloads)
		marked.insert({w.device, w.instance, w.sequence, w.workload});
	// Not static: the exit's write (the recorder's destructor) may come after
	// a function's statics made since the library loaded are destroyed.
	const std::regex prefix(R"(^i(\d+)_(\d+)_W(\d+)(_|$))");
	struct Span {
		uint64_t start_ns, end_ns;
		bool device_times;
	};
	std::map<std::tuple<unsigned, unsigned, unsigned, unsigned>, Span> spans;
	for (const TraceJob &j : trace.jobs) {
		std::smatch m;
		if (!std::regex_search(j.label, m, prefix))
			continue;
		const auto key = std::tuple{j.device, unsigned(std::stoul(m[1])), unsigned(std::stoul(m[2])),
					    unsigned(std::stoul(m[3]))};
		marked.insert(key);
		const Span job{j.start_ns, j.end_ns, j.device_times};
		auto [it, fresh] = spans.try_emplace(key, job);
		Span &span = it->second;
		if (fresh || job.device_times > span.device_times)
			span = job;
		else if (job.device_times == span.device_times)
			span = {std::min(span.start_ns, job.start_ns), std::max(span.end_ns, job.end_ns),
				job.device_times};
	}
	for (const auto &key : marked) {
		const auto &[dev, inst, seq, wl] = key;
		if (!spans.contains(key) || !devices.contains(dev))
			continue;	// a marked workload without jobs has no span
		out.workloads.push_back({device_uuid(dev) | 0xfff0,
					 fmt::format("i{}_{}_Device Workload_{}", inst, seq, wl),
					 spans[key].start_ns, spans[key].end_ns});
	}
	std::ranges::sort(out.workloads, {}, &WorkloadSpan::start_ns);
	return out;
}

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
