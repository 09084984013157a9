#include "storm_chaos.h"

#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rbln_drm.h"
#include "storm_devices.h"
#include "storm_stats.h"

namespace storm {
namespace {

constexpr const char *kSimBus = "/sys/bus/rbln_sim";
// The simulated NPUs' fault controls (a PCI NPU's directory has none of them).
constexpr const char *kFaultControl = "/sys/kernel/debug/rbln/rbln[0-9]*/fail_next_jobs";
constexpr uint64_t kInjectionBudget = 1000000000;	// "times" (an int): counts down as it fails

int write_file(const std::string &path, const std::string &value)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int err = ::write(fd, value.data(), value.size()) < 0 ? errno : 0;
	::close(fd);
	return err;
}

int reset_device(const std::string &node)
{
	int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	drm_rbln_reset r{};
	r.flags = DRM_RBLN_RESET_FORCE;
	int err = ::ioctl(fd, DRM_IOCTL_RBLN_RESET, &r) ? errno : 0;
	::close(fd);
	return err;
}

class Chaos {
public:
	explicit Chaos(uint64_t seed) : rng_(seed) {}

	void step()
	{
		auto controls = glob_paths(kFaultControl);
		std::string dir;	// the directory of one of them
		if (!controls.empty()) {
			dir = controls[below(controls.size())];
			dir.resize(dir.rfind('/'));
		}
		unsigned chiplet = static_cast<unsigned>(below(4));
		unsigned engine = static_cast<unsigned>(below(DRM_RBLN_ENGINE_COUNT));
		switch (below(7)) {
		case 0:
			fault(dir, "fail_next_jobs", std::to_string(1 + below(4)));
			break;
		case 1:	// an engine hangs for a while; its jobs time out meanwhile
			fault(dir, "hang", fmt::format("{} {} 1", chiplet, engine));
			pause(below(400));
			fault(dir, "hang", fmt::format("{} {} 0", chiplet, engine));
			break;
		case 2:
			fault(dir, "chiplet_down", fmt::format("{} 1", chiplet));
			pause(below(300));
			fault(dir, "chiplet_down", fmt::format("{} 0", chiplet));
			break;
		case 3: {	// FAULT until someone resets it
			fault(dir, "memory_error", std::to_string(chiplet));
			pause(below(300));
			auto nodes = device_nodes();
			if (!nodes.empty())
				stats().record(Op::Reset, reset_device(nodes[below(nodes.size())]));
			break;
		}
		case 4: case 5: {
			unsigned id = kChaosFirstId + static_cast<unsigned>(below(kChaosLastId - kChaosFirstId + 1));
			const char *sku = below(2) ? "rebel100" : "atom";
			stats().record(Op::DeviceAdd, write_file(fmt::format("{}/new_device", kSimBus),
								 fmt::format("{} {} 16", id, sku)));
			break;
		}
		default: {
			unsigned id = kChaosFirstId + static_cast<unsigned>(below(kChaosLastId - kChaosFirstId + 1));
			stats().record(Op::DeviceRemove,
				       write_file(fmt::format("{}/del_device", kSimBus), std::to_string(id)));
			break;
		}
		}
	}

private:
	uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
	static void pause(uint64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

	// Faults on a device that is being removed fail; that is part of the storm.
	static void fault(const std::string &dir, const char *file, const std::string &value)
	{
		if (!dir.empty())
			stats().record(Op::FaultInject, write_file(dir + "/" + file, value));
	}

	std::mt19937_64 rng_;
};

// Reads a number from a fault-injection attribute; 0 if it cannot.
uint64_t read_number(const std::string &path)
{
	std::ifstream in(path);
	uint64_t v = 0;
	in >> v;
	return v;
}

// Where rbln's code is: [start, end) of the module from /proc/modules.
bool module_range(uint64_t &start, uint64_t &end)
{
	std::ifstream in("/proc/modules");
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream words(line);
		std::string name, refs, users, state, addr;
		uint64_t size = 0;
		words >> name >> size >> refs >> users >> state >> addr;
		if (name != "rbln")
			continue;
		start = std::stoull(addr, nullptr, 16);
		end = start + size;
		return start != 0;
	}
	return false;
}

const char *const kInjectors[] = {"/sys/kernel/debug/failslab", "/sys/kernel/debug/fail_page_alloc"};

// The kernel's buddy allocator (6.12's gpu_buddy) frees a block that is still
// on its free tree when split_block() fails inside __alloc_range() (err_undo
// calls __gpu_buddy_free() on a free block): a use-after-free the storm found
// in the kernel, not in rbln, reachable only when a small GFP_KERNEL slab
// allocation fails.  Failures are not injected with split_block() on the
// stack.  Returns [start, end) of that function, or {0, 0}.
std::pair<uint64_t, uint64_t> buddy_split_block()
{
	std::ifstream in("/proc/kallsyms");
	std::string line;
	uint64_t start = 0, next = ~0ULL;
	std::vector<uint64_t> addrs;
	while (std::getline(in, line)) {
		std::istringstream words(line);
		std::string addr, type, name;
		words >> addr >> type >> name;
		uint64_t a = std::stoull(addr, nullptr, 16);
		if (name == "split_block" && (type == "t" || type == "T"))
			start = a;
		addrs.push_back(a);
	}
	if (!start)
		return {0, 0};
	for (uint64_t a : addrs)
		if (a > start && a < next)
			next = a;
	return {start, next == ~0ULL ? start + 1 : next};
}

}  // namespace

void run_chaos(uint64_t seed, std::chrono::steady_clock::time_point deadline)
{
	Chaos chaos(seed);
	std::mt19937_64 rng(seed + 1);
	while (std::chrono::steady_clock::now() < deadline) {
		chaos.step();
		std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 200));
	}
	::_exit(0);
}

std::string settle_devices()
{
	std::string problems;
	for (unsigned id = kChaosFirstId; id <= kChaosLastId; id++) {
		int err = write_file(fmt::format("{}/del_device", kSimBus), std::to_string(id));
		if (err && err != ENODEV && err != ENOENT)
			problems += fmt::format("del_device {}: {}; ", id, std::strerror(err));
	}
	for (const auto &node : device_nodes()) {
		// udev may not have dropped the link of a device just removed.
		int err = reset_device(node);
		if (err && err != ENOENT && err != ENODEV)
			problems += fmt::format("RESET of {}: {}; ", node, std::strerror(err));
	}
	return problems;
}

std::string enable_allocation_failures(unsigned percent)
{
	uint64_t start = 0, end = 0;
	if (!module_range(start, end))
		return "rbln is not loaded (no address range in /proc/modules)";
	auto [reject_start, reject_end] = buddy_split_block();
	for (const char *dir : kInjectors) {
		std::string d = dir;
		if (::access(d.c_str(), F_OK))
			return fmt::format("{} is missing: the kernel needs CONFIG_FAULT_INJECTION_DEBUG_FS, "
					   "CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC (use --no-fail-allocations)", d);
		const std::pair<const char *, std::string> settings[] = {
			{"task-filter", "Y"},
			{"ignore-gfp-wait", "N"},
			{"require-start", std::to_string(start)},
			{"require-end", std::to_string(end)},
			{"reject-start", std::to_string(reject_start)},
			{"reject-end", std::to_string(reject_end)},
			{"stacktrace-depth", "32"},
			{"verbose", "0"},
			{"interval", "1"},
			{"space", "0"},
			{"times", std::to_string(kInjectionBudget)},
			{"probability", std::to_string(percent)},
		};
		for (const auto &[name, value] : settings) {
			int err = write_file(d + "/" + name, value);
			if (err && !(std::string(name) == "ignore-gfp-wait" && err == ENOENT))
				return fmt::format("{}/{}: {}", d, name, std::strerror(err));
		}
		(void)write_file(d + "/ignore-gfp-highmem", "N");
		(void)write_file(d + "/min-order", "0");
	}
	return {};
}

std::pair<uint64_t, uint64_t> disable_allocation_failures()
{
	uint64_t failed[2] = {0, 0};
	for (unsigned i = 0; i < 2; i++) {
		std::string d = kInjectors[i];
		if (write_file(d + "/probability", "0"))
			continue;
		failed[i] = kInjectionBudget - read_number(d + "/times");
	}
	return {failed[0], failed[1]};
}

}  // namespace storm
