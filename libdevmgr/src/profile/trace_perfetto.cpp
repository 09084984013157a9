// A trace as Perfetto's protobuf (libdevmgr/proto/perfetto_trace.proto):
// track descriptors first (parents before children, ordered explicitly), a
// clock snapshot, then the slices and counters in time order, all on one
// packet sequence, timestamps in CLOCK_MONOTONIC; a recording from ftrace
// rings between their counts at its start and its end.
#include <algorithm>

#include "perfetto_trace.pb.h"
#include "trace_layout.h"

RBLN_CXX_ABI_BEGIN namespace profile {

namespace pb = rbln::trace;

namespace {

constexpr uint32_t kSequence = 1;

void annotate(pb::TrackEvent *ev, const char *name, uint64_t v)
{
	auto *a = ev->add_debug_annotations();
	a->set_name(name);
	a->set_uint_value(v);
}

void annotate(pb::TrackEvent *ev, const char *name, const std::string &v)
{
	auto *a = ev->add_debug_annotations();
	a->set_name(name);
	a->set_string_value(v);
}

// An event packet, to be sorted by time.
struct Timed {
	uint64_t ts;
	int order;		// at one instant: ends, begins, counters, ends of empty slices
	pb::TracePacket packet;
};

// The rings' counts at one end of the recording.
void ring_stats(pb::TracePacket *p, uint64_t ts, pb::FtraceStats::Phase phase,
		const std::vector<TraceRingStats> &cpus)
{
	p->set_timestamp(ts);
	p->set_timestamp_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
	auto *stats = p->mutable_ftrace_stats();
	stats->set_phase(phase);
	for (const TraceRingStats &c : cpus) {
		auto *s = stats->add_cpu_stats();
		s->set_cpu(c.cpu);
		s->set_entries(c.entries);
		s->set_overrun(c.overrun);
		s->set_commit_overrun(c.commit_overrun);
		s->set_dropped_events(c.dropped_events);
		s->set_read_events(c.read_events);
	}
}

std::string write(const Trace &trace, const TraceRings *rings)
{
	const detail::Layout lay = detail::layout(trace);
	pb::Trace out;
	auto packet = [&] {
		pb::TracePacket *p = out.add_packet();
		p->set_trusted_packet_sequence_id(kSequence);
		return p;
	};
	{
		auto *snap = packet()->mutable_clock_snapshot();
		auto *mono = snap->add_clocks();
		mono->set_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
		mono->set_timestamp(trace.monotonic_ns);
		auto *real = snap->add_clocks();
		real->set_clock_id(pb::BUILTIN_CLOCK_REALTIME);
		real->set_timestamp(trace.realtime_ns);
		snap->set_primary_trace_clock(pb::BUILTIN_CLOCK_MONOTONIC);
	}
	if (rings)
		ring_stats(packet(), trace.monotonic_ns, pb::FtraceStats::START_OF_TRACE, rings->start);
	for (const detail::Track &t : lay.tracks) {
		auto *d = packet()->mutable_track_descriptor();
		d->set_uuid(t.uuid);
		if (t.parent)
			d->set_parent_uuid(t.parent);
		d->set_name(t.name);
		d->set_sibling_order_rank(t.rank);
		if (t.group)
			d->set_child_ordering(pb::TrackDescriptor::EXPLICIT);
		if (t.counter == detail::Track::Counter::bytes)
			d->mutable_counter()->set_unit(pb::CounterDescriptor::UNIT_SIZE_BYTES);
		else if (t.counter == detail::Track::Counter::percent)
			d->mutable_counter()->set_unit_name("%");
	}

	std::vector<Timed> events;
	auto event = [&](uint64_t ts, int order, uint64_t track, pb::TrackEvent::Type type) {
		Timed &t = events.emplace_back(Timed{ts, order, {}});
		t.packet.set_timestamp(ts);
		t.packet.set_timestamp_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
		t.packet.set_trusted_packet_sequence_id(kSequence);
		pb::TrackEvent *ev = t.packet.mutable_track_event();
		ev->set_type(type);
		ev->set_track_uuid(track);
		return ev;
	};
	// The arrows: out of each dependency, into the job that waited for it.
	std::map<uint64_t, std::vector<uint64_t>> flows_out;
	for (const TraceJob &j : trace.jobs)
		for (uint64_t dep : j.after)
			flows_out[dep].push_back(detail::flow_id(dep, j.id));
	for (const TraceJob &j : trace.jobs) {
		auto track = lay.job_track.find(j.id);
		if (track == lay.job_track.end())
			continue;
		pb::TrackEvent *b = event(j.start_ns, 1, track->second, pb::TrackEvent::TYPE_SLICE_BEGIN);
		b->set_name(detail::slice_name(j));
		b->add_categories("rbln");
		annotate(b, "bytes", j.bytes);
		annotate(b, "pid", uint64_t(j.pid));
		annotate(b, "command", j.command);
		annotate(b, "seqno", j.seqno);
		annotate(b, "status", detail::job_status(j));
		annotate(b, "queued_ns", j.start_ns - std::min(j.start_ns, j.submit_ns));
		if (j.timed_out)
			annotate(b, "timed_out", std::string("yes"));
		if (const std::string note = detail::times_note(j); !note.empty())
			annotate(b, "times", note);
		for (uint64_t f : flows_out[j.id])
			b->add_flow_ids(f);
		for (uint64_t dep : j.after)
			b->add_terminating_flow_ids(detail::flow_id(dep, j.id));
		// A job that never ran is a slice of no length: its end after its begin.
		event(j.end_ns, j.end_ns == j.start_ns ? 3 : 0, track->second, pb::TrackEvent::TYPE_SLICE_END);
	}
	for (const detail::WorkloadSpan &w : lay.workloads) {
		pb::TrackEvent *b = event(w.start_ns, 1, w.track, pb::TrackEvent::TYPE_SLICE_BEGIN);
		b->set_name(w.name);
		event(w.end_ns, w.end_ns == w.start_ns ? 3 : 0, w.track, pb::TrackEvent::TYPE_SLICE_END);
	}
	for (const TraceCounter &c : trace.memory_used) {
		auto t = lay.memory_track.find({c.device, int(c.chiplet.value_or(0))});
		if (t != lay.memory_track.end())
			event(c.ts_ns, 2, t->second, pb::TrackEvent::TYPE_COUNTER)->set_counter_value(int64_t(c.value));
	}
	for (const TraceCounter &c : trace.utilization) {
		auto t = lay.utilization_track.find(c.device);
		if (t != lay.utilization_track.end())
			event(c.ts_ns, 2, t->second, pb::TrackEvent::TYPE_COUNTER)->set_double_counter_value(c.value);
	}
	std::ranges::stable_sort(events, [](const Timed &a, const Timed &b) {
		return a.ts != b.ts ? a.ts < b.ts : a.order < b.order;
	});
	const uint64_t last = events.empty() ? trace.monotonic_ns : events.back().ts;
	for (Timed &t : events)
		*out.add_packet() = std::move(t.packet);
	if (rings)
		ring_stats(packet(), last, pb::FtraceStats::END_OF_TRACE, rings->end);
	return out.SerializeAsString();
}

} // namespace

std::string to_perfetto(const Trace &trace)
{
	return write(trace, nullptr);
}

std::string to_perfetto(const Trace &trace, const TraceRings &rings)
{
	return write(trace, &rings);
}

} RBLN_CXX_ABI_END // namespace rbln::profile
