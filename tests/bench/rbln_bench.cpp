// make bench: driver figures against baselines measured in the same run, in
// the same VM.  Prints a table and writes JSON (argv[1], default bench.json).
//
//   null ioctl        GET_PARAM round trip: the floor for any driver call
//   alloc+free        lazy 4 KiB buffer create + GEM close
//   submit+wait 4K    one 4 KiB Task DMA job, submitted and waited for
//   chain 3x4K        the Rebel100 chain: Neural DMA on chiplet 1 -> Task DMA to
//                     chiplet 0 -> External HDMA to the host, 4 KiB each, joined
//                     by syncobjs, waited for at the end (aim <= 10x)
//   chain (libdevmgr) the same chain through Device::submit(..., after), the
//                     last job's wait() at the end
//   chain (batch)     the same three jobs, still joined by syncobjs, in one
//                     SUBMIT_BATCH: raw, and through Device::submit_batch
//   profiling on/off  the libdevmgr chain with a profiler Session open (every job
//                     recorded, its device times kept by the driver) against the
//                     same chain without it, back to back each round (aim <= 1.05x);
//                     and with the driver's rbln tracepoints on (what rbln-smi
//                     trace record switches on) against off
//   DMA throughput    one copy of 4 KiB .. 64 MiB on Task DMA, vs the kernel copying the
//                     same bytes of the same buffers outside the job path (debugfs
//                     copy_bench)
//   breakdown         device times of a 1, 4 and 16 MiB job, run inside SUBMIT
//                     and scheduled (the simulator's debugfs no_direct): SUBMIT to
//                     the engine's start, on the engine, its end to WAIT's return
//   interrupt latency a scheduled job's completion upcall (the simulator's
//                     "interrupt", rbln_hw_job_done) to its fence signalled, and
//                     to the waiting task's return from WAIT, each against a null
//                     ioctl timed in the same round
//
// rbln_bench --instructions [JSON]: only the profiling and tracepoint rows, for
// a VM whose clock counts guest instructions (see count_instructions()).
//
// Targets (from the issue): large copies >= 0.9x the kernel's copy; small submit+wait
// <= 5 null-ioctl round trips; the chain's aim is 10.  Under qemu's TCG both
// sides are emulated, so only the ratios mean anything; each is the median of
// rounds that time both sides in alternating slices of a few ms (see against()).
#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rbln/devmgr.hpp"
#include "rbln/profile.hpp"
#include "rbln_drm.h"

using Clock = std::chrono::steady_clock;

namespace {

// @op against @base, in @rounds rounds of 10 slices: each slice times @base
// for 4 ms, then @op for 6 ms (at least one call each), and a round's figure
// is its two sums.  The speed of a TCG guest wanders with its host's load
// over tens of milliseconds; sides timed in slices that short, one after the
// other, see the same speed, where whole 60 ms sides did not (one run's
// profiled chain read 1.00x, the next 1.22x).  Kept: the medians of each
// side and of their ratio.
struct Figure {
	double ns;		// @op, ns per call
	double base_ns;		// @base, ns per call
	double ratio;		// ns / base_ns
	// A 95% confidence interval of that median (distribution-free, from the
	// rounds' ratios in order): whether an aim a few percent away is met.
	double ratio_lo, ratio_hi;
};

// Time spent in an operation and its calls, summed over slices.
struct Tally {
	double ns = 0;
	long calls = 0;
	// A template, not a std::function: no indirect call inside the timed loop.
	template <typename F>
	void time(F &&op, std::chrono::microseconds budget)
	{
		const auto start = Clock::now();
		auto now = start;
		do {
			op();
			calls++;
			now = Clock::now();
		} while (now - start < budget);
		ns += std::chrono::duration<double, std::nano>(now - start).count();
	}
	double per_call() const { return ns / double(calls); }
};

// Mean ns per call of @op, run for @budget after one call to warm up.
template <typename F>
double ns_per_op(F &&op, std::chrono::milliseconds budget)
{
	op();	// warm up: first touches, lazy placement
	Tally t;
	t.time(op, budget);
	return t.per_call();
}

constexpr int kSlices = 10;

double median(std::vector<double> v)
{
	std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
	return v[v.size() / 2];
}

Figure figure_of(const std::vector<double> &ns, const std::vector<double> &base_ns)
{
	std::vector<double> ratio;
	for (size_t r = 0; r < ns.size(); r++)
		ratio.push_back(ns[r] / base_ns[r]);
	// The median lies between the rounds ranked n/2 -+ 0.98 sqrt(n) (the
	// binomial's normal approximation) 95% of the time, whatever their spread.
	std::sort(ratio.begin(), ratio.end());
	const double n = double(ratio.size()), half = 0.98 * std::sqrt(n);
	const auto rank = [&](double k) { return ratio[size_t(std::clamp(k, 0.0, n - 1))]; };
	return {median(ns), median(base_ns), median(ratio), rank(std::floor(n / 2 - half)),
		rank(std::ceil(n / 2 + half))};
}

template <typename Op, typename Base>
Figure against(Op &&op, Base &&base, int rounds = 9)
{
	using std::chrono::microseconds;
	std::vector<double> ns, base_ns;
	for (int r = 0; r < rounds; r++) {
		op();	// warm up: first touches, lazy placement
		base();
		Tally o, b;
		for (int slice = 0; slice < kSlices; slice++) {
			b.time(base, microseconds(4000));
			o.time(op, microseconds(6000));
		}
		ns.push_back(o.per_call());
		base_ns.push_back(b.per_call());
	}
	return figure_of(ns, base_ns);
}

// @op with a switch off and on, in slices as in against(); each slice of
// "on" is switched on before it and off after it, untimed.  The two go
// first in turn, and each slice starts after a few untimed calls: a switch
// that does much (a profiler's file written) leaves the caches cold for the
// slice after it, which either side would otherwise pay for.
template <typename Op, typename On, typename Off>
Figure switched(Op &&op, On &&on, Off &&off, int rounds = 9)
{
	using std::chrono::microseconds;
	std::vector<double> off_ns, on_ns;
	auto timed = [&](Tally &t) {
		for (int i = 0; i < 16; i++)
			op();
		t.time(op, microseconds(6000));
	};
	for (int r = 0; r < rounds; r++) {
		Tally without, with;
		auto switched_on = [&] {
			on();
			timed(with);
			off();
		};
		for (int slice = 0; slice < kSlices; slice++) {
			if (slice % 2)
				switched_on();
			timed(without);
			if (!(slice % 2))
				switched_on();
		}
		off_ns.push_back(without.per_call());
		on_ns.push_back(with.per_call());
	}
	return figure_of(on_ns, off_ns);
}

// Writes @value to a tracefs file; false if it cannot (no tracefs, not root).
bool tracefs_write(const char *path, const char *value)
{
	std::ofstream f(path);
	return f && (f << value) && f.flush();
}

// Writes the figures (@json) to @path and says where; 1 (told) if it cannot.
int write_figures(const std::string &path, const std::string &json)
{
	std::ofstream f(path);
	f << json;
	f.close();
	if (f.fail()) {
		fmt::print(stderr, "rbln_bench: cannot write the figures to {}\n", path);
		return 1;
	}
	fmt::print("\nfigures written to {}\n", path);
	return 0;
}

double gib_per_s(uint64_t bytes, double ns)
{
	return double(bytes) / ns * 1e9 / double(1ull << 30);
}

// One job with syncobjs through the raw ioctl, asking to hear of an end
// inside SUBMIT (REPORT_END); returns it, with its seqno and status.
drm_rbln_submit submit_sync(int fd, uint32_t engine, uint32_t chiplet, const drm_rbln_copy &c,
			    uint32_t in, uint32_t out)
{
	drm_rbln_sync wait_for{in, 0, 0};
	drm_rbln_submit s{};
	s.engine = engine;
	s.chiplet = chiplet;
	s.copies = reinterpret_cast<uintptr_t>(&c);
	s.copy_count = 1;
	s.copy_size = sizeof(c);
	s.in_syncs = in ? reinterpret_cast<uintptr_t>(&wait_for) : 0;
	s.in_sync_count = in ? 1 : 0;
	s.out_sync.handle = out;
	s.flags = DRM_RBLN_SUBMIT_REPORT_END;
	if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s))
		throw std::runtime_error(fmt::format("chain submit: {}", std::strerror(errno)));
	return s;
}


// The device times of job @seqno of @fd (submitted with SUBMIT_TIMES, waited
// for), among the records its file has not read yet.
drm_rbln_job_time job_record(int fd, uint64_t seqno, const char *what)
{
	drm_rbln_job_time t[8]{};
	drm_rbln_job_times q{};
	q.entries = reinterpret_cast<uintptr_t>(t);
	q.count = 8;
	q.entry_size = sizeof(t[0]);
	if (ioctl(fd, DRM_IOCTL_RBLN_JOB_TIMES, &q))
		throw std::runtime_error(fmt::format("{}: job times: {}", what, std::strerror(errno)));
	for (uint32_t i = 0; i < q.count; i++)
		if (t[i].seqno == seqno)
			return t[i];
	throw std::runtime_error(fmt::format("{}: no record of job {}", what, seqno));
}

// Where a job's time goes, from its device times (SUBMIT_TIMES, interface
// 14): SUBMIT to the engine's start (the hand-off), on the engine (the copy),
// the end to WAIT's return (the waiter's wake-up), next to @copy_ns, the
// kernel's copy of the same bytes.  Medians of @rounds jobs, in ns, and the
// path they took (inside SUBMIT or scheduled): every round the same one.
struct Breakdown {
	double to_start = 0, on_engine = 0, to_return = 0, copy = 0;
	bool direct = false;
};

Breakdown breakdown(int fd, uint32_t src, uint32_t dst, uint64_t size,
		    const std::function<void()> &kernel_copy, int rounds = 31)
{
	std::vector<double> to_start, on_engine, to_return, copy;
	std::optional<bool> direct;
	auto now = [] {
		timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
	};
	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = now();
		kernel_copy();
		copy.push_back(double(now() - t0));
		const drm_rbln_copy c{src, dst, 0, 0, size};
		drm_rbln_submit s{};
		s.engine = DRM_RBLN_ENGINE_TASK_DMA;
		s.copies = reinterpret_cast<uintptr_t>(&c);
		s.copy_count = 1;
		s.copy_size = sizeof(c);
		s.flags = DRM_RBLN_SUBMIT_REPORT_END | DRM_RBLN_SUBMIT_TIMES;
		const uint64_t u0 = now();
		if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s))
			throw std::runtime_error(fmt::format("breakdown submit: {}", std::strerror(errno)));
		if (direct.value_or(s.ended) != bool(s.ended))
			throw std::runtime_error(fmt::format("breakdown: {}-byte jobs took both paths", size));
		direct = s.ended;
		drm_rbln_wait w{};
		w.seqno = s.seqno;
		w.timeout_ns = 10'000'000'000;
		if (!s.ended && (ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) || w.status))
			throw std::runtime_error("breakdown wait failed");
		const uint64_t u1 = now();
		const drm_rbln_job_time j = job_record(fd, s.seqno, "breakdown");
		to_start.push_back(double(j.start_ns - u0));
		on_engine.push_back(double(j.end_ns - j.start_ns));
		to_return.push_back(double(u1 - j.end_ns));
	}
	return {median(to_start), median(on_engine), median(to_return), median(copy), *direct};
}

// The completion upcall to what follows it, from data the driver already
// gives: the job's end_ns (SUBMIT_TIMES) is stamped inside rbln_hw_job_done(),
// the backend's report that the job is done (the simulator's engine work calls
// it as a device's interrupt thread would); its out syncobj's fence, which
// WAIT waits on (the scheduler's finished fence, signalled from the hardware
// fence's callback), carries the moment it was signalled (the sync_file's
// timestamp); and the task's own clock right after WAIT returns.  All three
// are CLOCK_MONOTONIC.  An 8 MiB job, scheduled (the caller turns the direct
// path off) so that it ends by the upcall, and long enough on the engine
// that the task is inside WAIT by then (rounds where it was not are left out
// of the WAIT figure).  Each round's latencies are also taken as a multiple
// of a null ioctl timed right before it; medians of @rounds.
struct IrqLatency {
	double to_signal = 0, to_signal_ratio = 0;	// upcall -> fence signalled
	double to_return = 0, to_return_ratio = 0;	// upcall -> WAIT returned
	int rounds = 0, waited = 0;			// rounds, those with the task in WAIT
};

IrqLatency interrupt_latency(int fd, uint32_t src, uint32_t dst,
			     const std::function<void()> &null_ioctl, int rounds = 31)
{
	auto now = [] {
		timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
	};
	drm_syncobj_create create{};
	if (ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &create))
		throw std::runtime_error(fmt::format("interrupt latency: syncobj: {}", std::strerror(errno)));
	std::vector<double> to_signal, signal_ratio, to_return, return_ratio;
	for (int r = 0; r < rounds; r++) {
		const double null_ns = ns_per_op(null_ioctl, std::chrono::milliseconds(40));
		const drm_rbln_copy c{src, dst, 0, 0, 8u << 20};
		drm_rbln_submit s{};
		s.engine = DRM_RBLN_ENGINE_TASK_DMA;
		s.copies = reinterpret_cast<uintptr_t>(&c);
		s.copy_count = 1;
		s.copy_size = sizeof(c);
		s.out_sync.handle = create.handle;
		s.flags = DRM_RBLN_SUBMIT_TIMES;
		if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s))
			throw std::runtime_error(fmt::format("interrupt latency: submit: {}", std::strerror(errno)));
		drm_rbln_wait w{};
		w.seqno = s.seqno;
		w.timeout_ns = 10'000'000'000;
		const uint64_t entered = now();
		if (ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) || w.status)
			throw std::runtime_error("interrupt latency: wait failed");
		const uint64_t returned = now();
		const drm_rbln_job_time job = job_record(fd, s.seqno, "interrupt latency");

		drm_syncobj_handle h{};
		h.handle = create.handle;
		h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
		if (ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
			throw std::runtime_error(fmt::format("interrupt latency: export: {}", std::strerror(errno)));
		sync_fence_info fence{};
		sync_file_info info{};
		info.num_fences = 1;
		info.sync_fence_info = reinterpret_cast<uintptr_t>(&fence);
		const int ret = ioctl(h.fd, SYNC_IOC_FILE_INFO, &info);
		close(h.fd);
		if (ret || info.num_fences != 1 || fence.status != 1)
			throw std::runtime_error("interrupt latency: the job's fence is not signalled after WAIT");

		to_signal.push_back(double(int64_t(fence.timestamp_ns - job.end_ns)));
		signal_ratio.push_back(to_signal.back() / null_ns);
		// Only a task already in WAIT when the upcall came is woken by it.
		if (job.end_ns > entered) {
			to_return.push_back(double(int64_t(returned - job.end_ns)));
			return_ratio.push_back(to_return.back() / null_ns);
		}
	}
	drm_syncobj_destroy destroy{create.handle, 0};
	ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &destroy);
	IrqLatency l;
	l.rounds = rounds;
	l.waited = int(to_return.size());
	l.to_signal = median(to_signal);
	l.to_signal_ratio = median(signal_ratio);
	if (!to_return.empty()) {
		l.to_return = median(to_return);
		l.to_return_ratio = median(return_ratio);
	}
	return l;
}

// The Rebel100 chain's buffers: Neural DMA on chiplet 1 (n_src -> n_dst), Task
// DMA to chiplet 0 (-> gather), External HDMA to the host (-> host).
struct ChainBuffers {
	rbln::Buffer n_src, n_dst, gather, host;

	explicit ChainBuffers(rbln::Device &dev)
		: n_src(dev.allocate(4096, rbln::Placement::on_chiplet(1), rbln::AllocMode::eager)),
		  n_dst(dev.allocate(4096, rbln::Placement::on_chiplet(1), rbln::AllocMode::eager)),
		  gather(dev.allocate(4096, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager)),
		  host(dev.allocate_host(4096))
	{
	}

	// The chain once through libdevmgr: jobs joined by `after`, the last waited for.
	void through_libdevmgr(rbln::Device &dev) const
	{
		auto produced = dev.submit(rbln::Engine::neural_dma, 1, {{n_src, n_dst, 0, 0, 4096}});
		auto gathered = dev.submit(rbln::Engine::task_dma, 0, {{n_dst, gather, 0, 0, 4096}}, {},
					   {produced});
		dev.submit(rbln::Engine::external_hdma, 0, {{gather, host, 0, 0, 4096}}, {}, {gathered})
			.wait(std::chrono::seconds(10));
	}
};

// What switching a profiler on costs @chain, each figure against the same
// chain with the switch off: a Session open (every job recorded, its file
// written between slices, untimed), the same switch doing nothing (the
// control: the method's noise and bias when nothing differs), and the
// driver's rbln tracepoints on (the driver's side of rbln-smi trace record).
struct SwitchFigures {
	Figure profiled, control, traced;	// traced: zeros without tracefs (not root)
};

template <typename Chain>
SwitchFigures switch_figures(Chain &&chain, int rounds, int traced_rounds)
{
	SwitchFigures f;
	const std::string profile_dir = "/tmp/rbln-bench-profile";
	std::filesystem::create_directories(profile_dir);
	std::optional<rbln::profile::Session> session;
	f.profiled = switched(chain, [&] { session.emplace(profile_dir); },
		[&] {
			if (const std::string file = session->end(); !file.empty())
				std::remove(file.c_str());
			session.reset();
		}, rounds);
	f.control = switched(chain, [] {}, [] {}, rounds);
	const char *rbln_events = "/sys/kernel/tracing/events/rbln/enable";
	if (tracefs_write(rbln_events, "0"))
		f.traced = switched(chain, [&] { tracefs_write(rbln_events, "1"); },
				    [&] { tracefs_write(rbln_events, "0"); }, traced_rounds);
	return f;
}

// make bench's second VM, run with QEMU's -icount shift=0,sleep=off: the
// guest's clocks advance 1 ns for each instruction the guest executes (and
// jump to the next timer when it idles), so every "ns" of this run is guest
// instructions: the chain's, user and kernel, and whatever else the guest ran
// meanwhile (an interrupt, a kernel thread).  Its figures are the same from
// run to run on one host's build: what profiling adds in work, which TCG's
// wall time, moved a point or two by the host between runs, cannot resolve.
// Work, not time: under TCG an instruction's cost varies (memory, jumps).
int count_instructions(rbln::Device &dev, const std::string &json_path)
{
	if (!(dev.param(DRM_RBLN_PARAM_CAPABILITIES) & DRM_RBLN_CAP_SYNCOBJ))
		throw std::runtime_error("--instructions: the chain needs a driver with syncobjs");
	const ChainBuffers chain(dev);
	// A round differs from the next only by what else the guest ran in it
	// (an interrupt, a kernel thread): 21 rounds leave such rounds out of the
	// median's 95% interval.
	constexpr int kRounds = 21;
	const SwitchFigures f = switch_figures([&] { chain.through_libdevmgr(dev); }, kRounds, kRounds);
	fmt::print("{:<26} {:>12}   (guest instructions, QEMU icount; medians of {} rounds)\n",
		   "operation", "instr/op", kRounds);
	fmt::print("{:<26} {:>12.0f}   {:.4f}x the same chain not profiled ({:.0f}; aim <= 1.05x)\n",
		   "chain, RBLN_PROFILER on", f.profiled.ns, f.profiled.ratio, f.profiled.base_ns);
	fmt::print("{:<26} {:>12}   {:.4f}x to {:.4f}x: 95% interval of that median\n", "", "",
		   f.profiled.ratio_lo, f.profiled.ratio_hi);
	fmt::print("{:<26} {:>12.0f}   {:.4f}x the same chain (control: nothing switched)\n",
		   "chain, switch doing nothing", f.control.ns, f.control.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.4f}x the same chain, tracepoints off ({:.0f})\n",
		   "chain, rbln events on", f.traced.ns, f.traced.ratio, f.traced.base_ns);
	return write_figures(json_path, fmt::format(
		"{{\n  \"schema_version\": 1,\n  \"unit\": \"guest instructions (QEMU -icount shift=0)\",\n"
		"  \"device\": \"{}\",\n  \"driver_version\": \"{}\",\n"
		"  \"chain_3x4k_devmgr_profiled_instructions\": {:.1f},\n"
		"  \"chain_3x4k_devmgr_unprofiled_instructions\": {:.1f},\n"
		"  \"chain_3x4k_devmgr_profiled_vs_unprofiled\": {:.4f},\n"
		"  \"chain_3x4k_devmgr_profiled_vs_unprofiled_ci95\": [{:.4f}, {:.4f}],\n"
		"  \"chain_3x4k_devmgr_control_vs_itself\": {:.4f},\n"
		"  \"chain_3x4k_devmgr_tracepoints_on_instructions\": {:.1f},\n"
		"  \"chain_3x4k_devmgr_tracepoints_on_vs_off\": {:.4f}\n}}\n",
		dev.info().name, dev.info().driver_version, f.profiled.ns, f.profiled.base_ns,
		f.profiled.ratio, f.profiled.ratio_lo, f.profiled.ratio_hi, f.control.ratio, f.traced.ns,
		f.traced.ratio));
}

} // namespace

int main(int argc, char **argv)
{
	// rbln_bench [--instructions] [JSON]
	const bool instructions = argc > 1 && std::string_view(argv[1]) == "--instructions";
	const int json_arg = 1 + instructions;
	for (int i = json_arg; i < argc; i++) {
		if (argv[i][0] == '-' || i > json_arg) {
			fmt::print(stderr, "rbln_bench: {:?} is not an argument it takes: "
				   "rbln_bench [--instructions] [JSON file]\n", argv[i]);
			return 2;
		}
	}
	const std::string json_path = argc > json_arg ? argv[json_arg] :
		instructions ? "bench-instructions.json" : "bench.json";
	auto dev = rbln::Device::open(0);
	fmt::print("rbln bench on {} ({}), driver {}\n\n", dev.name(), dev.info().name,
		   dev.info().driver_version);
	if (instructions)
		return count_instructions(dev, json_path);

	auto null_ioctl = [&] { dev.param(DRM_RBLN_PARAM_UAPI_VERSION); };
	const Figure alloc = against([&] { dev.allocate(4096); }, null_ioctl);

	auto a = dev.allocate(64ull << 20, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
	auto b = dev.allocate(64ull << 20, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
	auto copy = [&](uint64_t size) {
		dev.submit(rbln::Engine::task_dma, 0, {{a, b, 0, 0, size}}).wait();
	};
	const Figure submit = against([&] { copy(4096); }, null_ioctl);

	// The Rebel100 chain, stages joined only by syncobjs (drivers since interface 10).
	const bool syncobjs = dev.param(DRM_RBLN_PARAM_CAPABILITIES) & DRM_RBLN_CAP_SYNCOBJ;
	const int fd = dev.fd();
	const ChainBuffers bufs(dev);
	const rbln::Buffer &n_src = bufs.n_src, &n_dst = bufs.n_dst, &gather = bufs.gather,
			   &host = bufs.host;
	uint32_t sync[2] = {};
	for (uint32_t &h : sync) {
		if (!syncobjs)
			break;
		drm_syncobj_create c{};
		if (ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
			throw std::runtime_error("syncobj create failed");
		h = c.handle;
	}
	const Figure chain = !syncobjs ? Figure{} : against([&] {
		submit_sync(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 1, {n_src.handle(), n_dst.handle(), 0, 0, 4096},
			    0, sync[0]);
		submit_sync(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {n_dst.handle(), gather.handle(), 0, 0, 4096},
			    sync[0], sync[1]);
		// The chain's end: reported by the last SUBMIT when it ended inside
		// it, as libdevmgr does, or else waited for.
		const auto last = submit_sync(fd, DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0,
					      {gather.handle(), host.handle(), 0, 0, 4096}, sync[1], 0);
		drm_rbln_wait w{};
		w.seqno = last.seqno;
		w.timeout_ns = 10'000'000'000;
		if (last.ended ? last.status != 0 : ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) || w.status)
			throw std::runtime_error("chain wait failed");
	}, null_ioctl);

	// The same three jobs in one SUBMIT_BATCH (drivers since interface 12).
	const bool batches = dev.param(DRM_RBLN_PARAM_UAPI_VERSION) >= 12;
	const drm_rbln_copy chain_copies[] = {
		{n_src.handle(), n_dst.handle(), 0, 0, 4096},
		{n_dst.handle(), gather.handle(), 0, 0, 4096},
		{gather.handle(), host.handle(), 0, 0, 4096},
	};
	const drm_rbln_sync chain_waits[] = {{sync[0], 0, 0}, {sync[1], 0, 0}};
	auto chain_element = [&](uint32_t engine, uint32_t chiplet, int i) {
		drm_rbln_submit s{};
		s.engine = engine;
		s.chiplet = chiplet;
		s.copies = reinterpret_cast<uintptr_t>(&chain_copies[i]);
		s.copy_count = 1;
		s.copy_size = sizeof(drm_rbln_copy);
		s.in_syncs = i ? reinterpret_cast<uintptr_t>(&chain_waits[i - 1]) : 0;
		s.in_sync_count = i ? 1 : 0;
		s.out_sync.handle = i < 2 ? sync[i] : 0;
		s.flags = DRM_RBLN_SUBMIT_REPORT_END;
		return s;
	};
	const Figure chain_batch = !syncobjs || !batches ? Figure{} : against([&] {
		drm_rbln_submit jobs[] = {
			chain_element(DRM_RBLN_ENGINE_NEURAL_DMA, 1, 0),
			chain_element(DRM_RBLN_ENGINE_TASK_DMA, 0, 1),
			chain_element(DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0, 2),
		};
		drm_rbln_submit_batch b{};
		b.submits = reinterpret_cast<uintptr_t>(jobs);
		b.count = 3;
		b.submit_size = sizeof(drm_rbln_submit);
		if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT_BATCH, &b) || b.submitted != 3)
			throw std::runtime_error(fmt::format("chain batch: {}", std::strerror(
								 b.error ? -b.error : errno)));
		drm_rbln_wait w{};
		w.seqno = jobs[2].seqno;
		w.timeout_ns = 10'000'000'000;
		if (jobs[2].ended ? jobs[2].status != 0 : ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w) || w.status)
			throw std::runtime_error("chain batch wait failed");
	}, null_ioctl);

	// The same chain through the library: jobs joined by `after`.
	auto chain_lib_once = [&] { bufs.through_libdevmgr(dev); };
	const Figure chain_lib = !syncobjs ? Figure{} : against(chain_lib_once, null_ioctl);

	// And in one batch through the library, joined by their places in it.
	const rbln::Copy produce[] = {{n_src, n_dst, 0, 0, 4096}};
	const rbln::Copy move[] = {{n_dst, gather, 0, 0, 4096}};
	const rbln::Copy deliver[] = {{gather, host, 0, 0, 4096}};
	const uint32_t first[] = {0}, second[] = {1};
	const rbln::JobSpec chain_specs[] = {
		{rbln::Engine::neural_dma, 1, produce},
		{rbln::Engine::task_dma, 0, move, {}, {}, first},
		{rbln::Engine::external_hdma, 0, deliver, {}, {}, second},
	};
	std::vector<rbln::Job> chain_jobs;
	const Figure chain_lib_batch = !syncobjs ? Figure{} : against([&] {
		dev.submit_batch(chain_specs, chain_jobs);
		chain_jobs.back().wait(std::chrono::seconds(10));
	}, null_ioctl);

	// Profiling's cost.  More rounds than the rest: under TCG one round's
	// ratio strays up to 20% from the next, and the aim is 5%; 81 rounds bound
	// the median to about a percent either way (its 95% interval is printed
	// with it).  The tracepoints' row takes the default 9.
	constexpr int kProfiledRounds = 81, kTracedRounds = 9;
	const SwitchFigures sw = !syncobjs ? SwitchFigures{} :
		switch_figures(chain_lib_once, kProfiledRounds, kTracedRounds);
	const Figure &profiled = sw.profiled, &control = sw.control, &traced = sw.traced;

	const double null_ns = submit.base_ns;
	fmt::print("{:<26} {:>12}   (medians of 9 rounds, each against its own null ioctl)\n",
		   "operation", "ns/op");
	fmt::print("{:<26} {:>12.0f}\n", "null ioctl", null_ns);
	fmt::print("{:<26} {:>12.0f}   {:.1f}x null ioctl\n", "alloc+free 4 KiB", alloc.ns, alloc.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.1f}x null ioctl (target <= 5x)\n", "submit+wait 4 KiB",
		   submit.ns, submit.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.1f}x null ioctl (aim <= 10x)\n", "chain 3x4 KiB",
		   chain.ns, chain.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.1f}x null ioctl (aim <= 10x)\n",
		   "chain 3x4 KiB (libdevmgr)", chain_lib.ns, chain_lib.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.1f}x null ioctl (aim <= 10x)\n", "chain 3x4 KiB, one batch",
		   chain_batch.ns, chain_batch.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.1f}x null ioctl (aim <= 10x)\n", "  through libdevmgr",
		   chain_lib_batch.ns, chain_lib_batch.ratio);
	fmt::print("{:<26} {:>12.0f}   {:.3f}x the same chain not profiled ({:.0f} ns; aim <= 1.05x)\n",
		   "chain, RBLN_PROFILER on", profiled.ns, profiled.ratio, profiled.base_ns);
	fmt::print("{:<26} {:>12}   {:.3f}x to {:.3f}x: 95% interval of that median ({} rounds)\n", "", "",
		   profiled.ratio_lo, profiled.ratio_hi, kProfiledRounds);
	fmt::print("{:<26} {:>12.0f}   {:.3f}x the same chain (control: nothing switched; 1.000x ideally)\n",
		   "chain, switch doing nothing", control.ns, control.ratio);
	fmt::print("{:<26} {:>12}   {:.3f}x to {:.3f}x: 95% interval of that median\n", "", "",
		   control.ratio_lo, control.ratio_hi);
	fmt::print("{:<26} {:>12.0f}   {:.3f}x the same chain, tracepoints off ({:.0f} ns)\n\n",
		   "chain, rbln events on", traced.ns, traced.ratio, traced.base_ns);

	// The base: the same bytes copied by the kernel as an engine copies them,
	// outside the job path (the simulator's copy_bench), one write each.
	const std::string bench_file =
		fmt::format("/sys/kernel/debug/rbln/rbln{}/copy_bench", dev.info().index);
	const int kcopy = open(bench_file.c_str(), O_WRONLY | O_CLOEXEC);
	if (kcopy < 0)
		throw std::runtime_error(fmt::format("{}: {}", bench_file, std::strerror(errno)));
	auto kernel_write = [&](const std::string &command) {
		if (write(kcopy, command.data(), command.size()) != ssize_t(command.size()))
			throw std::runtime_error(fmt::format("{} {:?}: {}", bench_file, command,
							     std::strerror(errno)));
	};
	// The kernel copies the very buffers the jobs copy (exported to it once):
	// under TCG a copy's speed depends on where its pages lie.  One write,
	// whatever the size: a transfer over the job limit is copied whole.
	auto kernel_buffers = [&](const rbln::Buffer &src, const rbln::Buffer &dst) {
		const int s = src.export_fd(), d = dst.export_fd();
		kernel_write(fmt::format("buffers {} {}", s, d));
		close(s);	// copy_bench holds the buffers
		close(d);
	};
	auto kernel_copy = [&](uint64_t size) { kernel_write(std::to_string(size)); };
	fmt::print("{:>10} {:>14} {:>14} {:>8}\n", "size", "DMA GiB/s", "kernel GiB/s", "ratio");
	std::string rows;
	for (uint64_t size = 4096; size <= (64ull << 20); size *= 4) {
		// Both sides copy the same two buffers, of just this size, made for the row.
		auto src = dev.allocate(size, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		auto dst = dev.allocate(size, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		auto job_copy = [&] { dev.submit(rbln::Engine::task_dma, 0, {{src, dst, 0, 0, size}}).wait(); };
		kernel_buffers(src, dst);
		// The kernel's copy is the base: the ratio of times is its speed over DMA's.
		const Figure f = against(job_copy, [&] { kernel_copy(size); });
		const double dma = gib_per_s(size, f.ns), cpu = gib_per_s(size, f.base_ns);
		fmt::print("{:>10} {:>14.2f} {:>14.2f} {:>7.2f}x\n",
			   size >= (1 << 20) ? fmt::format("{} MiB", size >> 20) : fmt::format("{} KiB", size >> 10),
			   dma, cpu, 1 / f.ratio);
		rows += fmt::format("{}    {{\"bytes\": {}, \"dma_gib_s\": {:.4f}, \"kernel_copy_gib_s\": {:.4f}, "
				    "\"ratio\": {:.4f}}}", rows.empty() ? "" : ",\n", size, dma, cpu, 1 / f.ratio);
	}

	// The simulator's switch for scheduled jobs of any size (debugfs no_direct).
	const std::string no_direct_file =
		fmt::format("/sys/kernel/debug/rbln/rbln{}/no_direct", dev.info().index);
	auto scheduled_only = [&](bool on) {
		std::ofstream f(no_direct_file);
		if (!(f << (on ? "1" : "0")).flush())
			throw std::runtime_error(fmt::format("{}: cannot write it", no_direct_file));
	};

	// Where a job's time goes: an idle engine runs a job of up to 16 MiB
	// inside SUBMIT; a scheduled one is handed to the engine's scheduler and
	// the waiter is woken, each a context switch or two, against the copy
	// itself (the job's time on its engine).  Each size both ways; the path is
	// the one the jobs took.
	std::string direct_rows, scheduled_rows;
	if (dev.param(DRM_RBLN_PARAM_UAPI_VERSION) >= 14) {
		fmt::print("\n{:>10} {:>10} {:>12} {:>12} {:>12} {:>12}   (us, medians)\n", "size", "path",
			   "to start", "on engine", "to return", "kernel copy");
		kernel_buffers(a, b);
		for (uint64_t size : {uint64_t(1) << 20, uint64_t(4) << 20, uint64_t(16) << 20})
		for (bool scheduled : {false, true}) {
			scheduled_only(scheduled);
			const Breakdown bd = breakdown(fd, a.handle(), b.handle(), size,
						       [&] { kernel_copy(size); });
			scheduled_only(false);
			const bool direct = bd.direct;
			fmt::print("{:>10} {:>10} {:>12.0f} {:>12.0f} {:>12.0f} {:>12.0f}\n",
				   fmt::format("{} MiB", size >> 20), direct ? "in SUBMIT" : "scheduled",
				   bd.to_start / 1e3, bd.on_engine / 1e3, bd.to_return / 1e3, bd.copy / 1e3);
			std::string &rows = direct ? direct_rows : scheduled_rows;
			rows += fmt::format("{}    {{\"bytes\": {}, \"to_start_ns\": {:.0f}, \"on_engine_ns\": {:.0f}, "
					    "\"to_return_ns\": {:.0f}, \"kernel_copy_ns\": {:.0f}}}",
					    rows.empty() ? "" : ",\n", size, bd.to_start, bd.on_engine,
					    bd.to_return, bd.copy);
		}
	}

	// The completion upcall to the fence and to the waiter (interface 14's SUBMIT_TIMES).
	IrqLatency irq;
	if (syncobjs && dev.param(DRM_RBLN_PARAM_UAPI_VERSION) >= 14) {
		scheduled_only(true);
		irq = interrupt_latency(fd, a.handle(), b.handle(), null_ioctl);
		scheduled_only(false);
		fmt::print("\n{:<32} {:>10}   (a scheduled 8 MiB job; medians of {} rounds)\n",
			   "from the completion upcall to", "ns", irq.rounds);
		fmt::print("{:<32} {:>10.0f}   {:.2f}x null ioctl\n", "  its fence signalled",
			   irq.to_signal, irq.to_signal_ratio);
		fmt::print("{:<32} {:>10.0f}   {:.2f}x null ioctl ({} of {} rounds had the task in WAIT)\n",
			   "  the waiter back from WAIT", irq.to_return, irq.to_return_ratio, irq.waited,
			   irq.rounds);
	}

	close(kcopy);
	return write_figures(json_path, fmt::format(
		"{{\n  \"schema_version\": 3,\n  \"device\": \"{}\",\n  \"driver_version\": \"{}\",\n"
		"  \"null_ioctl_ns\": {:.1f},\n  \"alloc_free_4k_ns\": {:.1f},\n"
		"  \"submit_wait_4k_ns\": {:.1f},\n  \"submit_wait_4k_vs_null_ioctl\": {:.3f},\n"
		"  \"chain_3x4k_ns\": {:.1f},\n  \"chain_3x4k_vs_null_ioctl\": {:.3f},\n"
		"  \"chain_3x4k_devmgr_ns\": {:.1f},\n  \"chain_3x4k_devmgr_vs_null_ioctl\": {:.3f},\n"
		"  \"chain_3x4k_batch_ns\": {:.1f},\n  \"chain_3x4k_batch_vs_null_ioctl\": {:.3f},\n"
		"  \"chain_3x4k_devmgr_batch_ns\": {:.1f},\n"
		"  \"chain_3x4k_devmgr_batch_vs_null_ioctl\": {:.3f},\n"
		"  \"chain_3x4k_devmgr_profiled_ns\": {:.1f},\n"
		"  \"chain_3x4k_devmgr_unprofiled_ns\": {:.1f},\n"
		"  \"chain_3x4k_devmgr_profiled_vs_unprofiled\": {:.4f},\n"
		"  \"chain_3x4k_devmgr_profiled_vs_unprofiled_ci95\": [{:.4f}, {:.4f}],\n"
		"  \"chain_3x4k_devmgr_control_vs_itself\": {:.4f},\n"
		"  \"chain_3x4k_devmgr_control_vs_itself_ci95\": [{:.4f}, {:.4f}],\n"
		"  \"chain_3x4k_devmgr_tracepoints_on_vs_off\": {:.4f},\n"
		"  \"throughput\": [\n{}\n  ],\n  \"direct_job_breakdown\": [\n{}\n  ],\n"
		"  \"scheduled_job_breakdown\": [\n{}\n  ],\n"
		"  \"interrupt_to_fence_signalled_ns\": {:.1f},\n"
		"  \"interrupt_to_fence_signalled_vs_null_ioctl\": {:.3f},\n"
		"  \"interrupt_to_wait_return_ns\": {:.1f},\n"
		"  \"interrupt_to_wait_return_vs_null_ioctl\": {:.3f},\n"
		"  \"interrupt_latency_rounds\": {},\n  \"interrupt_latency_rounds_in_wait\": {}\n}}\n",
		dev.info().name, dev.info().driver_version, null_ns, alloc.ns, submit.ns, submit.ratio,
		chain.ns, chain.ratio, chain_lib.ns, chain_lib.ratio, chain_batch.ns, chain_batch.ratio,
		chain_lib_batch.ns, chain_lib_batch.ratio, profiled.ns, profiled.base_ns, profiled.ratio,
		profiled.ratio_lo, profiled.ratio_hi, control.ratio, control.ratio_lo, control.ratio_hi,
		traced.ratio, rows, direct_rows, scheduled_rows, irq.to_signal, irq.to_signal_ratio,
		irq.to_return, irq.to_return_ratio, irq.rounds, irq.waited));
}
