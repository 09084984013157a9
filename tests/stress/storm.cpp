// rbln-storm: many processes doing random valid and invalid things to every
// rbln device at once, for a given time, while a supervisor SIGKILLs them at
// random moments, a chaos process injects device faults and adds and removes
// devices, and (optionally) the kernel fails rbln's allocations.  Afterwards
// no client may be left open and every device's memory must be back to 0
// (looked at before the devices are reset), enough of the work must have
// succeeded, and no broken request may have been accepted.  Run as root
// inside the test VM (tests/stress/storm.sh); the kernel's checkers judge
// the rest.
//
// Exit status: 0 all of that held; 1 something did not (each a "storm:
// FAILED:" line); 2 usage or setup error.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rbln_drm.h"
#include "storm_chaos.h"
#include "storm_devices.h"
#include "storm_limits.h"
#include "storm_leftovers.h"
#include "storm_stats.h"
#include "storm_worker.h"

namespace storm {

Stats *g_stats;
Stats &stats() { return *g_stats; }

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
	unsigned seconds = 60;
	unsigned workers = 6;
	uint64_t seed = 0;
	unsigned fail_percent = 1;
	bool fail_allocations = true;
	bool chaos = true;
	std::string json;
};

// The NPUs that are not simulated (PCI backend), whose jobs must get done too.
unsigned count_pci_npus()
{
	unsigned n = 0;
	for (const auto &node : device_nodes()) {
		int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
		DeviceLimits lim;
		if (fd >= 0 && read_limits(fd, lim) && !lim.simulated)
			n++;
		if (fd >= 0)
			::close(fd);
	}
	return n;
}

pid_t spawn(const std::function<void()> &body)
{
	pid_t pid = ::fork();
	if (pid == 0) {
		body();
		::_exit(0);
	}
	return pid;
}

// Reaps every child, including the workers' orphans (this process is their
// subreaper), waiting at most @limit for them.
bool reap_all(std::chrono::seconds limit)
{
	auto until = Clock::now() + limit;
	while (Clock::now() < until) {
		pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
		if (pid < 0 && errno == ECHILD)
			return true;
		if (pid <= 0)
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	return false;
}

// What the storm must have got done, so that a driver that refuses or fails
// the work does not pass: of each kind, at least this share of the tries
// (and at least one) succeeded.  Kills, revocations, injected faults and
// allocation failures keep the shares below 100%.  Of the jobs on PCI NPUs,
// those cancelled (ECANCELED: their file revoked by one of the storm's
// RESETs or RECLAIMs, a few a second, or a job they waited for failed) are
// left out: how many a revocation finds depends on how long jobs last
// against how fast the guest runs, and edu's chunks take 200 ms of host time
// whatever the guest's speed, so under a loaded host that alone took the
// share to about half.  Every other failure counts, and job_end still
// counts every job's, a PCI NPU's too.
struct Minimum {
	Op op;
	unsigned percent;
	const char *what;
	bool pci_only = false;		// only when the storm began with PCI NPUs
	bool without_cancelled = false;	// ECANCELED left out (above)
};
constexpr Minimum kMinimums[] = {
	{Op::Submit, 50, "valid SUBMITs went in"},
	{Op::JobEnd, 50, "jobs a WAIT saw end ended well"},
	{Op::Chain, 50, "chains of syncobjs (a batch of jobs each waiting for the one before) ended well"},
	{Op::HugeJob, 50, "jobs of exactly the job byte limit went in"},
	{Op::TimelineChain, 50, "pairs of jobs joined by a timeline point ended well"},
	{Op::PciJobEnd, 50, "jobs on PCI NPUs a WAIT saw end ended well", true, true},
};

std::string errno_name(unsigned e)
{
	const char *name = e ? ::strerrorname_np(static_cast<int>(e)) : "other";
	return name ? name : std::to_string(e);
}

// What an operation's failures were: {"ECANCELED": 20, "EIO": 3}.
nlohmann::json failures_of(const Stats &s, Op op)
{
	nlohmann::json by_errno = nlohmann::json::object();
	for (unsigned e = 0; e < kMaxErrno; e++)
		if (s.failed_with(op, e))
			by_errno[errno_name(e)] = s.failed_with(op, e);
	return by_errno;
}

// ... as text, most first: "ECANCELED 20, EIO 3".
std::string failures_text(const nlohmann::json &by_errno)
{
	std::vector<std::pair<uint64_t, std::string>> seen;
	for (const auto &[name, n] : by_errno.items())
		seen.emplace_back(n.get<uint64_t>(), name);
	std::sort(seen.begin(), seen.end(), std::greater<>());
	std::string text;
	for (const auto &[n, name] : seen)
		text += fmt::format("{}{} {}", text.empty() ? "" : ", ", name, n);
	return text.empty() ? "none" : text;
}

std::vector<std::string> shortfalls(const Stats &s, unsigned pci_npus)
{
	std::vector<std::string> short_of;
	for (const Minimum &m : kMinimums) {
		if (m.pci_only && !pci_npus)
			continue;
		uint64_t ok = s.ok_of(m.op), cancelled = m.without_cancelled ? s.failed_with(m.op, ECANCELED) : 0;
		uint64_t counted = s.total_of(m.op) - cancelled;
		if (!ok || ok * 100 < counted * m.percent)
			short_of.push_back(fmt::format("too few {}: {} of {}{} ({} needs at least {}% and 1; failed with: {})",
						       m.what, ok, counted,
						       m.without_cancelled ? fmt::format(", besides {} cancelled", cancelled) : "",
						       kOpNames[static_cast<unsigned>(m.op)], m.percent,
						       failures_text(failures_of(s, m.op))));
	}
	if (!s.kills)
		short_of.push_back("no worker was killed");
	return short_of;
}

nlohmann::json report(const Stats &s, std::pair<uint64_t, uint64_t> injected)
{
	nlohmann::json ops = nlohmann::json::object(), errs = nlohmann::json::object();
	for (unsigned i = 0; i < static_cast<unsigned>(Op::Count); i++)
		if (s.total[i])
			ops[std::string(kOpNames[i])] = {{"ok", s.ok[i].load()},
							 {"total", s.total[i].load()},
							 {"failed", failures_of(s, static_cast<Op>(i))}};
	for (unsigned e = 0; e < kMaxErrno; e++)
		if (s.errnos[e])
			errs[errno_name(e)] = s.errnos[e].load();
	return {{"operations", ops},
		{"errnos", errs},
		{"workers_started", s.workers_started.load()},
		{"kills", s.kills.load()},
		{"sigbus", s.sigbus.load()},
		{"accepted_broken", s.accepted_broken.load()},
		{"allocations_failed", {{"slab", injected.first}, {"pages", injected.second}}}};
}

void print(const nlohmann::json &r)
{
	fmt::print("storm: {:<18} {:>10} {:>10}  {}\n", "operation", "ok", "total", "failed with");
	for (const auto &[name, v] : r["operations"].items())
		fmt::print("storm: {:<18} {:>10} {:>10}  {}\n", name, v["ok"].get<uint64_t>(),
			   v["total"].get<uint64_t>(), failures_text(v["failed"]));
	fmt::print("storm: workers started {}, killed {}, SIGBUS on revoked mappings {}\n",
		   r["workers_started"].get<uint64_t>(), r["kills"].get<uint64_t>(), r["sigbus"].get<uint64_t>());
	fmt::print("storm: allocations failed by injection: slab {}, pages {}\n",
		   r["allocations_failed"]["slab"].get<uint64_t>(), r["allocations_failed"]["pages"].get<uint64_t>());
	std::string errs;
	for (const auto &[name, n] : r["errnos"].items())
		errs += fmt::format(" {} {}", name, n.get<uint64_t>());
	fmt::print("storm: errnos:{}\n", errs.empty() ? " none" : errs);
}

int run(const Options &o)
{
	void *shared = ::mmap(nullptr, sizeof(Stats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		fmt::print(stderr, "storm: mmap: {}\n", std::strerror(errno));
		return 2;
	}
	g_stats = new (shared) Stats{};
	::prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (device_nodes().empty()) {
		fmt::print(stderr, "storm: no /dev/rbln* device (is rbln loaded and udevd running?)\n");
		return 2;
	}
	const unsigned pci_npus = count_pci_npus();
	if (o.fail_allocations) {
		std::string err = enable_allocation_failures(o.fail_percent);
		if (!err.empty()) {
			fmt::print(stderr, "storm: allocation-failure injection: {}\n", err);
			return 2;
		}
	}

	std::mt19937_64 rng(o.seed);
	auto deadline = Clock::now() + std::chrono::seconds(o.seconds);
	fmt::print("storm: {} workers for {} s, seed {}, chaos {}, allocation failures {}, {} NPUs ({} PCI)\n",
		   o.workers, o.seconds, o.seed, o.chaos ? "on" : "off",
		   o.fail_allocations ? fmt::format("{}%", o.fail_percent) : "off", device_nodes().size(), pci_npus);
	auto start_worker = [&] {
		WorkerOptions w{rng(), deadline, o.fail_allocations};
		stats().workers_started++;
		return spawn([w] { run_worker(w); });
	};
	std::vector<pid_t> workers;
	for (unsigned i = 0; i < o.workers; i++)
		workers.push_back(start_worker());
	pid_t chaos = o.chaos ? spawn([&, seed = rng()] { run_chaos(seed, deadline); }) : -1;

	unsigned next_progress = 10;
	while (Clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 450));
		size_t i = rng() % workers.size();
		if (::kill(workers[i], SIGKILL) == 0)
			stats().kills++;
		::waitpid(workers[i], nullptr, 0);
		workers[i] = start_worker();
		while (::waitpid(-1, nullptr, WNOHANG) > 0)	// orphans that finished
			;
		auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now()).count();
		if (o.seconds - left >= next_progress) {
			fmt::print("storm: {} s left, {} kills so far\n", left, stats().kills.load());
			std::fflush(stdout);
			next_progress += 10;
		}
	}
	for (pid_t w : workers)
		::kill(w, SIGKILL);
	(void)chaos;
	bool reaped = reap_all(std::chrono::seconds(60));
	auto injected = o.fail_allocations ? disable_allocation_failures() : std::pair<uint64_t, uint64_t>{};

	int rc = 0;
	if (!reaped) {
		fmt::print("storm: FAILED: processes of the storm still alive 60 s after the end (stuck in the kernel?)\n");
		rc = 1;
	}
	const std::vector<std::string> left = leftovers();
	for (const auto &l : left) {
		fmt::print("storm: FAILED: {}\n", l);
		rc = 1;
	}
	std::string settle = settle_devices();
	if (!settle.empty()) {
		fmt::print("storm: FAILED: settling the devices: {}\n", settle);
		rc = 1;
	}
	nlohmann::json r = report(stats(), injected);
	r["leftovers"] = left;
	print(r);
	if (!o.json.empty())
		std::ofstream(o.json) << r.dump(2) << '\n';
	for (const auto &s : shortfalls(stats(), pci_npus)) {
		fmt::print("storm: FAILED: {}\n", s);
		rc = 1;
	}
	if (stats().accepted_broken) {
		fmt::print("storm: FAILED: the driver accepted {} broken requests (the first ones named above)\n",
			   stats().accepted_broken.load());
		rc = 1;
	}
	fmt::print("storm: {}\n", rc ? "FAILED"
				      : "no client or memory left behind, the work got done, every broken request refused");
	return rc;
}

}  // namespace
}  // namespace storm

int main(int argc, char **argv)
{
	storm::Options o;
	o.seed = std::random_device{}();
	CLI::App app{"rbln-storm: random ioctls from many processes, kills, device faults and hotplug "
		     "against rbln.ko; checks that no client or memory is left behind, that enough work "
		     "succeeded and that every broken request was refused.  Run as root in a "
		     "test VM: it resets devices and injects faults."};
	app.add_option("-t,--seconds", o.seconds, "how long the storm lasts")->check(CLI::Range(1u, 86400u));
	app.add_option("-w,--workers", o.workers, "worker processes at any time")->check(CLI::Range(1u, 256u));
	app.add_option("-s,--seed", o.seed, "random seed (printed; reuse it to replay the mix)");
	app.add_option("--fail-percent", o.fail_percent,
		       "percent of rbln's allocations to fail (failslab, fail_page_alloc)")
		->check(CLI::Range(1u, 100u));
	app.add_flag("!--no-fail-allocations", o.fail_allocations, "no allocation-failure injection");
	app.add_flag("!--no-chaos", o.chaos, "no device faults and no hotplug");
	app.add_option("--json", o.json, "also write the report to this file");
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		return app.exit(e) ? 2 : 0;	// --help is 0, any usage error 2
	}
	return storm::run(o);
}
