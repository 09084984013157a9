// The summary reads the file with the generated messages of the project's
// perfetto_trace.proto (libprotobuf), as Perfetto would read it.
#include "trace_summary.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "perfetto_trace.pb.h"
#include "rbln/devmgr.hpp"
#include "rbln/profile.hpp"

namespace rbln::smi {

namespace {

namespace pb = rbln::trace;

struct TrackStats {
	size_t slices = 0, failed = 0, untimed = 0, samples = 0;
	uint64_t bytes = 0;
};

// ", N what", or nothing when N is 0.
std::string count_text(size_t n, std::string_view what)
{
	return n ? fmt::format(", {} {}", n, what) : "";
}

std::string size_text(uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		return fmt::format("{:.1f} GiB", double(bytes) / double(1ull << 30));
	if (bytes >= (1ull << 20))
		return fmt::format("{:.1f} MiB", double(bytes) / double(1ull << 20));
	if (bytes >= 1024)
		return fmt::format("{:.1f} KiB", double(bytes) / 1024.0);
	return fmt::format("{} B", bytes);
}

} // namespace

std::string summarize_trace(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		throw rbln::Error(rbln::Errc::not_found, errno,
				  fmt::format("trace summary: cannot read {}: {}", path, std::strerror(errno)));
	pb::Trace trace;
	if (!trace.ParseFromIstream(&in))
		throw rbln::Error(rbln::Errc::invalid_argument, EINVAL,
				  fmt::format("trace summary: {} is not a Perfetto protobuf trace (a .pb "
					      "file of RBLN_PROFILER or rbln-smi trace record)", path));
	std::map<uint64_t, pb::TrackDescriptor> tracks;
	std::map<uint64_t, std::vector<uint64_t>> children;
	std::map<uint64_t, TrackStats> stats;
	std::set<uint64_t> flows_begun, flows_ended;
	uint64_t first = ~0ull, last = 0;
	rbln::profile::TraceRings rings;	// a recording from ftrace rings: their counts
	bool from_rings = false;
	for (const pb::TracePacket &p : trace.packet()) {
		if (p.has_ftrace_stats()) {
			from_rings = true;
			auto &at = p.ftrace_stats().phase() == pb::FtraceStats::START_OF_TRACE ? rings.start : rings.end;
			for (const pb::FtraceCpuStats &c : p.ftrace_stats().cpu_stats())
				at.push_back({unsigned(c.cpu()), c.entries(), c.overrun(), c.commit_overrun(),
					      c.dropped_events(), c.read_events()});
		}
		if (p.has_track_descriptor()) {
			const auto &d = p.track_descriptor();
			tracks[d.uuid()] = d;
			children[d.has_parent_uuid() ? d.parent_uuid() : 0].push_back(d.uuid());
		}
		if (!p.has_track_event())
			continue;
		const pb::TrackEvent &e = p.track_event();
		TrackStats &s = stats[e.track_uuid()];
		first = std::min(first, p.timestamp());
		last = std::max(last, p.timestamp());
		if (e.type() == pb::TrackEvent::TYPE_COUNTER) {
			s.samples++;
		} else if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
			s.slices++;
			bool untimed = false;	// a "times" argument says why it has none
			for (const auto &a : e.debug_annotations()) {
				if (a.name() == "bytes")
					s.bytes += a.uint_value();
				untimed |= a.name() == "times";
			}
			s.untimed += untimed;
			// Not a job whose end was not seen (a file written before
			// [NO DEVICE TIMES] named it [FAILED EINPROGRESS]).
			if (!untimed && (e.name().find(" [FAILED") != std::string::npos ||
					 e.name().find(" [TIMED OUT]") != std::string::npos))
				s.failed++;
			flows_begun.insert(e.flow_ids().begin(), e.flow_ids().end());
			flows_ended.insert(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
		}
	}
	size_t jobs = 0, engines = 0, workloads = 0, failed = 0, untimed = 0;
	for (const auto &[uuid, d] : tracks) {
		if (d.has_counter() || children.contains(uuid))
			continue;
		if (d.name() == "Device Workload") {
			workloads += stats[uuid].slices;
		} else if (stats[uuid].slices) {
			engines++;
			jobs += stats[uuid].slices;
			failed += stats[uuid].failed;
			untimed += stats[uuid].untimed;
		}
	}
	size_t flows = 0;
	for (uint64_t f : flows_begun)
		flows += flows_ended.contains(f);
	std::string out = fmt::format("{}: {} job slices on {} engine tracks, {} failed{}; {} workload "
				      "slices; {} flows (dependencies); {:.3f} ms\n",
				      path, jobs, engines, failed, count_text(untimed, "without device times"), workloads, flows,
				      first <= last ? double(last - first) / 1e6 : 0.0);
	if (from_rings) {
		const uint64_t lost = rbln::profile::lost_events(rings);
		out += lost ? fmt::format("INCOMPLETE: the kernel's ring lost {} event{} while it recorded: "
					  "jobs, or their start or end, are missing\n", lost, lost == 1 ? "" : "s")
			    : std::string("the kernel's ring lost no event while it recorded\n");
	}
	// The tree as Perfetto orders it: by sibling_order_rank under each group.
	auto print = [&](auto &&self, uint64_t parent, int depth) -> void {
		std::vector<uint64_t> kids = children[parent];
		std::ranges::stable_sort(kids, {}, [&](uint64_t u) { return tracks[u].sibling_order_rank(); });
		for (uint64_t u : kids) {
			const pb::TrackDescriptor &d = tracks[u];
			const TrackStats &s = stats[u];
			std::string line = fmt::format("{:{}}{}", "", 2 * depth, d.name());
			if (d.has_counter())
				line = fmt::format("{:<36} counter, {} samples", line, s.samples);
			else if (!children.contains(u))
				line = fmt::format("{:<36} {:>6} slices{}{}{}", line, s.slices,
						   s.bytes ? fmt::format(", {}", size_text(s.bytes)) : "",
						   count_text(s.failed, "failed"),
						   count_text(s.untimed, "without device times"));
			out += line + "\n";
			self(self, u, depth + 1);
		}
	};
	print(print, 0, 0);
	return out;
}

} // namespace rbln::smi
