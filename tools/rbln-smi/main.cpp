// rbln-smi: the RBLN NPUs of this host, their processes, and actions on them.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <cstdio>
#include <set>

#include <sys/wait.h>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "diagnose.hpp"
#include "options.hpp"
#include "pmon.hpp"
#include "selftest.hpp"
#include "trace_record.hpp"
#include "trace_summary.hpp"
#include "triage.hpp"
#include "rbln/enumerate.hpp"
#include "rbln/events.hpp"
#include "snapshot.hpp"
#include "topo.hpp"
#include "views.hpp"

using namespace rbln::smi;

namespace {

volatile std::sig_atomic_t g_stop = 0;

int exit_code(const rbln::Error &e)
{
	return int(rbln::exit_code(e.code()));
}

// The interval between two samples, cut short by Ctrl-C or SIGTERM.
void wait_interval(double seconds)
{
	auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	while (!g_stop && std::chrono::steady_clock::now() < until)
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

int show(const Options &o)
{
	do {
		Snapshot snap = take_snapshot(o.ids, o.full || (o.json && !o.vendor_json));
		if (o.command == Command::query && o.csv)
			fmt::print("{}", render_csv(snap, o.query_fields, o.csv_format));
		else if (o.command == Command::query)
			fmt::print("{}", render_query_json(snap, o.query_fields));
		else if (o.vendor_json)
			fmt::print("{}", render_vendor_json(snap));
		else if (o.json)
			fmt::print("{}", render_json(snap));
		else if (o.loop_seconds)	// each table under the time it was read, as nvidia-smi -l
			fmt::print("{}\n{}", timestamp_text(snap.taken), render_table(snap, o.full));
		else
			fmt::print("{}", render_table(snap, o.full));
		std::fflush(stdout);
		if (snap.devices.empty() && !o.loop_seconds) {
			fmt::print(stderr, "rbln-smi: no NPU found (the driver is loaded but has no device)\n");
			return kNotFound;
		}
		if (!o.loop_seconds)
			break;
		wait_interval(*o.loop_seconds);
	} while (!g_stop);
	return kOk;
}

// -g: the plan, or the configuration error and exit 2, so scripts can check.
int groups()
{
	fmt::print("{}", rbln::device_summary());
	rbln::check_logical_devices();
	return kOk;
}

// Goes on past an NPU it cannot open or reclaim on, and exits with the
// first failure's code once every NPU was tried.
int reclaim(const Options &o)
{
	Snapshot snap = take_snapshot(o.ids, false);
	int reclaimed = 0, rc = kOk;
	std::vector<unsigned> checked;
	auto failed = [&](const rbln::Error &e) {
		fmt::print(stderr, "rbln-smi: {}\n", e.what());
		if (rc == kOk)
			rc = exit_code(e);
	};
	for (const auto &d : snap.devices) {
		std::optional<rbln::Device> dev;
		std::vector<rbln::ClientInfo> clients;
		try {
			dev.emplace(rbln::Device::open_path(d.npu.node));
			clients = dev->clients();
		} catch (const rbln::Error &e) {
			failed(e);
			continue;
		}
		checked.push_back(d.npu.index);
		for (const auto &c : clients) {
			if (!c.stale || c.revoked || c.self)
				continue;
			try {
				uint64_t freed = dev->reclaim(c.client_id);
				fmt::print("NPU {}: reclaimed client {} of exited PID {} ({}): {} MiB freed\n",
					   d.npu.index, c.client_id, c.creator_pid, c.creator_comm, freed >> 20);
				reclaimed++;
			} catch (const rbln::Error &e) {
				failed(e);
			}
		}
	}
	if (!reclaimed && !checked.empty())
		fmt::print("no stale clients on NPU {}\n", fmt::join(checked, ", "));
	return rc;
}

int diagnose(const Options &o)
{
	if (!o.diff.empty()) {
		nlohmann::json a, b;
		for (auto [path, out] : {std::pair{o.diff[0], &a}, std::pair{o.diff[1], &b}}) {
			std::ifstream in(path);
			if (!in) {
				fmt::print(stderr, "rbln-smi: cannot read {}\n", path);
				return kBadArgument;
			}
			try {
				*out = nlohmann::json::parse(in);
			} catch (const std::exception &e) {
				fmt::print(stderr, "rbln-smi: {} is not a diagnose --json report: {}\n", path, e.what());
				return kBadArgument;
			}
		}
		std::string diff = diagnose_diff(a, b);
		fmt::print("{}", diff.empty() ? "no differences\n" : diff);
		return kOk;
	}
	auto report = diagnose_report();
	fmt::print("{}", o.json ? report.dump(2) + "\n" : diagnose_text(report));
	return kOk;
}

int selftest(const Options &o)
{
	auto results = run_selftest(o.ids);
	// The first failure's code: 6 for an NPU another process holds.
	auto failed = std::ranges::find_if(results, [](const auto &r) { return !r.passed; });
	nlohmann::json j = nlohmann::json::array();
	for (const auto &r : results) {
		if (o.json)
			j.push_back({{"npu", r.npu}, {"name", r.name}, {"passed", r.passed}, {"detail", r.detail}});
		else
			fmt::print("NPU {} {}: {} ({})\n", r.npu, r.name, r.passed ? "PASS" : "FAIL", r.detail);
	}
	if (o.json)	// docs/rbln-smi-selftest.schema.json
		fmt::print("{}\n", nlohmann::json{{"schema_version", 1}, {"results", j}}.dump(2));
	else if (results.empty())
		fmt::print(stderr, "rbln-smi: no NPU to test{}\n",
			   rbln::driver_loaded() ? "" : ": the rbln driver is not loaded");
	if (results.empty())
		return rbln::driver_loaded() ? kNotFound : kNoDriver;
	return failed == results.end() ? kOk : int(failed->code);
}

int reset(const Options &o)
{
	for (const auto &id : o.ids) {
		auto npu = rbln::find_npu(id);
		unsigned revoked = rbln::Device::open_path(npu.node).reset(o.force);
		fmt::print("NPU {}: reset{}\n", npu.index,
			   revoked ? fmt::format(" ({} open file(s) revoked)", revoked) : std::string());
	}
	return kOk;
}

int dmon(const Options &o)
{
	for (unsigned i = 0; !g_stop && (!o.count || i < *o.count); i++) {
		if (i)
			wait_interval(o.delay_seconds);
		fmt::print("{}", render_dmon(take_snapshot(o.ids, false), i % 20 == 0,
					     {o.dmon_date, o.dmon_time}));
		std::fflush(stdout);
	}
	return kOk;
}

int pmon(const Options &o)
{
	PmonSampler sampler;
	for (unsigned i = 0; !g_stop && (!o.count || i < *o.count); i++) {
		if (i)
			wait_interval(o.delay_seconds);
		std::vector<rbln::ProcessUsage> usage;
		for (const auto &d : take_snapshot(o.ids, false).devices) {
			try {
				auto more = rbln::process_usage(d.npu);
				usage.insert(usage.end(), more.begin(), more.end());
			} catch (const rbln::Error &e) {
				if (e.code() != rbln::Errc::no_device)	// removed meanwhile: not shown
					throw;
			}
		}
		fmt::print("{}", render_pmon(sampler.sample(usage, std::chrono::steady_clock::now()),
					     i % 20 == 0));
		std::fflush(stdout);
	}
	return kOk;
}

int topo(const Options &o)
{
	if (!rbln::driver_loaded())
		throw rbln::Error(rbln::Errc::driver_not_loaded, ENOENT,
				  "the rbln driver is not loaded (modprobe rbln; check dkms status and dmesg)");
	auto npus = topo_npus(o.ids, !o.matrix);
	if (o.json)	// docs/rbln-smi-topo.schema.json
		fmt::print("{}\n", (o.matrix ? path_matrix_json(npus) : chiplet_links_json(npus)).dump(2));
	else
		fmt::print("{}", o.matrix ? render_path_matrix(npus) : render_chiplet_links(npus));
	return kOk;
}

int triage_command(const Options &o)
{
	TriageVerdict v = triage(o.message);
	if (o.json)
		fmt::print("{}\n", nlohmann::json{{"schema_version", 1}, {"layer", v.layer},	// docs/rbln-smi-triage.schema.json
						  {"check", v.check}, {"matched", v.matched}}.dump());
	else
		fmt::print("layer: {}\ncheck first: {}\n", v.layer, v.check);
	return kOk;
}

int events(const Options &o)
{
	rbln::EventListener listener;
	fmt::print(stderr, "rbln-smi: listening for rbln events (Ctrl-C to stop)\n");
	unsigned seen = 0;
	auto deadline = std::chrono::steady_clock::now() +
			std::chrono::seconds(o.timeout_seconds.value_or(0));
	while (!g_stop && (!o.count || seen < *o.count)) {
		if (o.timeout_seconds && std::chrono::steady_clock::now() >= deadline)
			break;
		auto ev = listener.next(std::chrono::milliseconds(200));
		if (!ev)
			continue;
		seen++;
		if (o.json) {
			// One JSON document per line: docs/rbln-smi-events.schema.json
			nlohmann::json j = {{"schema_version", 1}, {"event", rbln::to_string(ev->type)},
					    {"npu", ev->device}};
			if (ev->chiplet) j["chiplet"] = *ev->chiplet;
			if (ev->engine) j["engine"] = *ev->engine;
			if (ev->pid) j["pid"] = *ev->pid;
			if (ev->client) j["client_id"] = *ev->client;
			if (ev->bytes) j["bytes"] = *ev->bytes;
			fmt::print("{}\n", j.dump());
		} else {
			std::string extra;
			if (ev->chiplet) extra += fmt::format(" chiplet={}", *ev->chiplet);
			if (ev->engine) extra += fmt::format(" engine={}", *ev->engine);
			if (ev->client) extra += fmt::format(" client={}", *ev->client);
			if (ev->pid) extra += fmt::format(" pid={}", *ev->pid);
			if (ev->bytes) extra += fmt::format(" bytes={}", *ev->bytes);
			fmt::print("NPU {} {}{}\n", ev->device, rbln::to_string(ev->type), extra);
		}
		std::fflush(stdout);
	}
	return kOk;
}

// trace record: the recording, written as one file like the in-process
// profiler's, and a line saying what it holds and where it went; exit 8
// (incomplete) when the kernel's ring lost events, unless COMMAND failed (1).
int trace_record(const Options &o)
{
	TraceRecording r = record_trace({o.trace_duration, o.trace_command, false, o.trace_buffer_kib}, &g_stop);
	const bool json = o.trace_format == "json";
	const std::string path = !o.trace_output.empty() ? o.trace_output
		: rbln::profile::file_stem(r.trace.realtime_ns) + (json ? ".json" : ".pb");
	rbln::profile::write_file_atomically(path, json ? rbln::profile::to_chrome_json(r.trace, r.rings)
							: rbln::profile::to_perfetto(r.trace, r.rings));
	std::set<uint32_t> pids;
	for (const auto &j : r.trace.jobs)
		pids.insert(j.pid);
	fmt::print(stderr, "rbln-smi trace: {} job{} of {} process{} on {} NPU{}, {} dependencies; wrote {}{}\n",
		   r.trace.jobs.size(), r.trace.jobs.size() == 1 ? "" : "s", pids.size(), pids.size() == 1 ? "" : "es", r.trace.devices.size(),
		   r.trace.devices.size() == 1 ? "" : "s", r.dependencies, path,
		   json ? "" : " (open it at https://ui.perfetto.dev: Open trace file)");
	if (r.old_tracepoints)
		fmt::print(stderr, "rbln-smi trace: this rbln.ko has no rbln_job_wait/rbln_job_signal "
				   "tracepoints: the trace has no arrows (RBLN_PROFILER=1 draws them)\n");
	const std::string lost = lost_events_text(r.rings);
	if (!lost.empty())
		fmt::print(stderr, "rbln-smi trace: INCOMPLETE: the kernel's ring lost {} before they were "
				   "read, so the trace misses jobs or their start or end (the file says so in "
				   "{}); record again with a bigger ring than --buffer-kib {}\n",
			   lost, json ? "otherData.ftrace_lost_events" : "its ftrace_stats packets",
			   o.trace_buffer_kib);
	if (r.command_status && !(WIFEXITED(*r.command_status) && WEXITSTATUS(*r.command_status) == 0)) {
		fmt::print(stderr, "rbln-smi trace: '{}' {}\n", o.trace_command[0],
			   WIFEXITED(*r.command_status)
				   ? fmt::format("exited with status {}", WEXITSTATUS(*r.command_status))
				   : fmt::format("was killed by signal {}", WTERMSIG(*r.command_status)));
		return kError;
	}
	return lost.empty() ? kOk : kIncomplete;
}

} // namespace

int main(int argc, char **argv)
{
	std::signal(SIGINT, [](int) { g_stop = 1; });
	std::signal(SIGTERM, [](int) { g_stop = 1; });
	ParseResult parsed = parse_options(std::vector<std::string>(argv + 1, argv + argc));
	if (!parsed.options) {
		fmt::print(stderr, "rbln-smi: {}\n", parsed.error);
		return kBadArgument;
	}
	const Options &o = *parsed.options;
	try {
		switch (o.command) {
		case Command::help:
			fmt::print("{}", o.help);
			return kOk;
		case Command::version:
			fmt::print("rbln-smi {}\n", RBLN_SMI_VERSION);
			return kOk;
		case Command::groups:
			return groups();
		case Command::reclaim:
			return reclaim(o);
		case Command::events:
			return events(o);
		case Command::diagnose:
			return diagnose(o);
		case Command::triage:
			return triage_command(o);
		case Command::selftest:
			return selftest(o);
		case Command::reset:
			return reset(o);
		case Command::dmon:
			return dmon(o);
		case Command::pmon:
			return pmon(o);
		case Command::trace_record:
			return trace_record(o);
		case Command::trace_summary:
			fmt::print("{}", summarize_trace(o.trace_file));
			return kOk;
		case Command::topo:
			return topo(o);
		case Command::show:
		case Command::query:
			return show(o);
		}
	} catch (const rbln::Error &e) {
		fmt::print(stderr, "rbln-smi: {}\n", e.what());
		return exit_code(e);
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-smi: {}\n", e.what());
		return kError;
	}
	return kError;
}
