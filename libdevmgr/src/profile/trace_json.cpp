// A trace as Chrome's trace-event JSON, for tools that read only that: the
// same recording and layout as the Perfetto file (a process per device, a
// thread per engine track), written with nlohmann-json; what a recording's
// ftrace rings lost in otherData.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trace_layout.h"

RBLN_CXX_ABI_BEGIN namespace profile {

using nlohmann::json;

namespace {

json events_of(const Trace &trace)
{
	const detail::Layout lay = detail::layout(trace);
	std::map<uint64_t, const detail::Track *> tracks;
	for (const detail::Track &t : lay.tracks)
		tracks[t.uuid] = &t;
	// The full name of a track: its groups' names below the device.
	auto path = [&](uint64_t uuid) {
		std::string name;
		for (const detail::Track *t = tracks[uuid]; t && t->parent; t = tracks[t->parent])
			name = name.empty() ? t->name : t->name + " / " + name;
		return name;
	};
	auto us = [](uint64_t ns) { return double(ns) / 1000.0; };
	json events = json::array();
	for (const TraceDevice &d : trace.devices)
		events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", d.index},
				  {"args", {{"name", d.name}}}});
	for (const detail::Track &t : lay.tracks)
		if (t.parent && !t.group && t.counter == detail::Track::Counter::none)
			events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", (t.uuid >> 32) - 1},
					  {"tid", t.uuid & 0xffffffff}, {"args", {{"name", path(t.uuid)}}}});
	std::map<uint64_t, const TraceJob *> by_id;
	for (const TraceJob &j : trace.jobs)
		by_id[j.id] = &j;
	for (const TraceJob &j : trace.jobs) {
		auto track = lay.job_track.find(j.id);
		if (track == lay.job_track.end())
			continue;
		json args = {{"bytes", j.bytes}, {"pid", j.pid}, {"command", j.command},
			     {"seqno", j.seqno}, {"status", detail::job_status(j)},
			     {"queued_ns", j.start_ns - std::min(j.start_ns, j.submit_ns)}};
		if (j.timed_out)
			args["timed_out"] = "yes";
		if (const std::string note = detail::times_note(j); !note.empty())
			args["times"] = note;
		events.push_back({{"ph", "X"}, {"name", detail::slice_name(j)}, {"cat", "rbln"},
				  {"pid", j.device}, {"tid", track->second & 0xffffffff},
				  {"ts", us(j.start_ns)}, {"dur", us(j.end_ns - j.start_ns)}, {"args", args}});
		for (uint64_t dep : j.after) {
			auto from = by_id.find(dep);
			auto from_track = lay.job_track.find(dep);
			if (from == by_id.end() || from_track == lay.job_track.end())
				continue;
			const uint64_t id = detail::flow_id(dep, j.id);
			events.push_back({{"ph", "s"}, {"name", "after"}, {"cat", "rbln"}, {"id", id},
					  {"pid", from->second->device}, {"tid", from_track->second & 0xffffffff},
					  {"ts", us(from->second->start_ns)}});
			events.push_back({{"ph", "f"}, {"bp", "e"}, {"name", "after"}, {"cat", "rbln"},
					  {"id", id}, {"pid", j.device}, {"tid", track->second & 0xffffffff},
					  {"ts", us(j.start_ns)}});
		}
	}
	for (const detail::WorkloadSpan &w : lay.workloads)
		events.push_back({{"ph", "X"}, {"name", w.name}, {"cat", "workload"},
				  {"pid", (w.track >> 32) - 1}, {"tid", w.track & 0xffffffff},
				  {"ts", us(w.start_ns)}, {"dur", us(w.end_ns - w.start_ns)}});
	for (const TraceCounter &c : trace.memory_used)
		events.push_back({{"ph", "C"}, {"name", fmt::format("Memory used chiplet {}", c.chiplet.value_or(0))},
				  {"pid", c.device}, {"ts", us(c.ts_ns)}, {"args", {{"bytes", c.value}}}});
	for (const TraceCounter &c : trace.utilization)
		events.push_back({{"ph", "C"}, {"name", "Utilization"}, {"pid", c.device},
				  {"ts", us(c.ts_ns)}, {"args", {{"percent", c.value}}}});
	return events;
}

} // namespace

std::string to_chrome_json(const Trace &trace)
{
	return json{{"traceEvents", events_of(trace)}, {"displayTimeUnit", "ns"}}.dump() + "\n";
}

// The rings' losses go in otherData, the format's metadata (strings).
std::string to_chrome_json(const Trace &trace, const TraceRings &rings)
{
	const detail::RingLoss l = detail::ring_loss(rings);
	const json other = {{"ftrace_lost_events", std::to_string(lost_events(rings))},
			    {"ftrace_overrun", std::to_string(l.overrun)},
			    {"ftrace_commit_overrun", std::to_string(l.commit_overrun)},
			    {"ftrace_dropped_events", std::to_string(l.dropped_events)}};
	return json{{"traceEvents", events_of(trace)}, {"displayTimeUnit", "ns"}, {"otherData", other}}.dump() +
	       "\n";
}

} RBLN_CXX_ABI_END // namespace rbln::profile
