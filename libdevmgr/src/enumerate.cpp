// NPUs through libudev: the accel or render nodes whose parent device is bound
// to the rbln driver.  libudev reads sysfs itself, so this works without a
// running udevd (containers); the node may then be missing from /dev.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include <dirent.h>
#include <libudev.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "device_state.h"
#include "rbln/enumerate.hpp"

RBLN_CXX_ABI_BEGIN

namespace {

template <typename T, T *(*Unref)(T *)>
struct UdevPtr {
	T *p;
	explicit UdevPtr(T *ptr) : p(ptr) {}
	UdevPtr(const UdevPtr &) = delete;
	~UdevPtr() { if (p) Unref(p); }
	T *get() const { return p; }
	explicit operator bool() const { return p; }
};
using Udev = UdevPtr<udev, udev_unref>;
using UdevDevice = UdevPtr<udev_device, udev_device_unref>;
using UdevEnumerate = UdevPtr<udev_enumerate, udev_enumerate_unref>;
using UdevMonitor = UdevPtr<udev_monitor, udev_monitor_unref>;

std::string attr(udev_device *dev, const char *name)
{
	const char *v = udev_device_get_sysattr_value(dev, name);
	return v ? v : "";
}

bool is_npu_node_name(const std::string &sysname)
{
	return sysname.starts_with("accel") || sysname.starts_with("renderD");
}

// The rbln parent of a node, or nullptr.  Owned by @node.
udev_device *rbln_parent(udev_device *node)
{
	const char *sysname = udev_device_get_sysname(node);
	if (!sysname || !is_npu_node_name(sysname))
		return nullptr;
	udev_device *parent = udev_device_get_parent(node);
	const char *driver = parent ? udev_device_get_driver(parent) : nullptr;
	return driver && std::string(driver) == "rbln" ? parent : nullptr;
}

// The node of @devnum a process can open here: its accel or render node,
// else /dev/rblnN (a container given only that one, as `docker run --device
// /dev/rbln1` does); each only if it is that device, not another one's
// number.  Empty if neither is here.
bool is_node_of(const std::string &path, dev_t devnum)
{
	struct stat st;
	return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == devnum;
}

std::string usable_node(const char *devnode, dev_t devnum, const std::string &index)
{
	for (const std::string &path : {std::string(devnode), "/dev/rbln" + index})
		if (is_node_of(path, devnum))
			return path;
	return {};
}

// /dev/rblnN of the node class directory @dir (/sys/class/accel/accel1) if it
// is that device; "".
std::string rblnN_node(const std::string &dir)
{
	std::ifstream dev_in(dir + "/dev"), index_in(dir + "/device/index");
	unsigned major = 0, minor = 0;
	char colon = 0;
	std::string index;
	if (!(dev_in >> major >> colon >> minor) || colon != ':' || !(index_in >> index))
		return {};
	std::string path = "/dev/rbln" + index;
	return is_node_of(path, makedev(major, minor)) ? path : std::string();
}

std::optional<NpuInfo> npu_of(udev_device *node)
{
	udev_device *parent = rbln_parent(node);
	const char *devnode = udev_device_get_devnode(node);
	if (!parent || !devnode)
		return std::nullopt;
	std::string index = attr(parent, "index");
	if (index.empty())
		return std::nullopt;
	NpuInfo npu{};
	npu.index = unsigned(std::stoul(index));
	std::string usable = usable_node(devnode, udev_device_get_devnum(node), index);
	npu.node_present = !usable.empty();
	npu.node = npu.node_present ? usable : devnode;
	npu.sysfs = udev_device_get_syspath(parent);
	npu.name = attr(parent, "name");
	npu.sku = attr(parent, "sku");
	npu.uuid = attr(parent, "uuid");
	npu.pci_bus_id = attr(parent, "pci_bus_id");
	npu.status = attr(parent, "status");
	npu.memory_total = std::stoull("0" + attr(parent, "memory_total"));
	npu.chiplet_count = unsigned(std::stoul("0" + attr(parent, "chiplet_count")));
	return npu;
}

} // namespace

std::vector<NpuInfo> enumerate_all_npus()
{
	std::vector<NpuInfo> out;
	Udev u(udev_new());
	if (!u)
		return out;
	UdevEnumerate e(udev_enumerate_new(u.get()));
	udev_enumerate_add_match_subsystem(e.get(), "accel");
	udev_enumerate_add_match_subsystem(e.get(), "drm");
	udev_enumerate_scan_devices(e.get());
	udev_list_entry *entry;
	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e.get())) {
		UdevDevice dev(udev_device_new_from_syspath(u.get(), udev_list_entry_get_name(entry)));
		if (dev)
			if (auto npu = npu_of(dev.get()))
				out.push_back(std::move(*npu));
	}
	std::sort(out.begin(), out.end(), [](const NpuInfo &a, const NpuInfo &b) {
		return a.pci_bus_id != b.pci_bus_id ? a.pci_bus_id < b.pci_bus_id : a.index < b.index;
	});
	return out;
}

std::vector<NpuInfo> enumerate_npus()
{
	auto npus = enumerate_all_npus();
	std::erase_if(npus, [](const NpuInfo &n) { return !n.node_present; });
	return npus;
}

std::vector<std::string> list_npu_nodes()
{
	std::vector<std::string> nodes;
	for (const auto &[cls, dev] : {std::pair{"accel", "/dev/accel/"}, std::pair{"drm", "/dev/dri/"}}) {
		const std::string dir = std::string("/sys/class/") + cls;
		DIR *d = ::opendir(dir.c_str());
		if (!d)
			continue;
		while (dirent *e = ::readdir(d)) {
			if (!is_npu_node_name(e->d_name))
				continue;
			char target[256];
			std::string link = dir + "/" + e->d_name + "/device/driver";
			ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			std::string driver = target;
			if (driver.substr(driver.rfind('/') + 1) != "rbln")
				continue;
			std::string node = dev + std::string(e->d_name);
			if (::access(node.c_str(), F_OK) != 0)	// given as /dev/rblnN only?
				node = rblnN_node(dir + "/" + e->d_name);
			if (!node.empty())
				nodes.push_back(node);
		}
		::closedir(d);
	}
	return nodes;
}

NpuInfo find_npu(const std::string &spec)
{
	auto npus = enumerate_npus();
	std::string lower = spec;
	std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
	for (const auto &npu : npus)
		if (std::to_string(npu.index) == spec || npu.uuid == lower || npu.pci_bus_id == lower)
			return npu;
	detail::fail_unless_driver_loaded(fmt::format("no NPU matches '{}'", spec));
	std::vector<std::string> known;
	for (const auto &npu : npus)
		known.push_back(fmt::format("{} ({}, {})", npu.index, npu.pci_bus_id, npu.uuid));
	// ENODEV: an NPU not here is Errc::no_device, as through a handle of a removed one.
	detail::fail(ENODEV, fmt::format("no NPU matches '{}' (an index, uuid or PCI bus id); this host "
					 "has: {}", spec, known.empty() ? std::string("no NPUs")
								     : fmt::format("{}", fmt::join(known, "; "))));
}

// Whether udevd runs: it listens on its control socket.  The file outlives it
// (`udevadm control --exit` leaves it), so ask the socket: a refused
// connection, or no file, means no udevd.  One who may not connect (not
// root) cannot tell, and takes the file as the answer.  Asked at most once a
// second, so that enumerating stays a few system calls.
static bool udevd_running()
{
	static std::mutex lock;
	static std::chrono::steady_clock::time_point asked;
	static bool running = true;
	std::lock_guard guard(lock);
	const auto now = std::chrono::steady_clock::now();
	if (asked != std::chrono::steady_clock::time_point() && now - asked < std::chrono::seconds(1))
		return running;
	asked = now;
	int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return running = ::access("/run/udev/control", F_OK) == 0;
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	std::strncpy(addr.sun_path, "/run/udev/control", sizeof(addr.sun_path) - 1);
	const bool refused = ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0 &&
			     (errno == ECONNREFUSED || errno == ENOENT);
	::close(fd);
	return running = !refused;
}

// The NPUs found: enumerated once per process, and again only after an NPU
// was added or removed (a monitor, polled without blocking), so that
// registering costs what the group needs, not a walk of every NPU of the
// host.  Where no monitor can be had, every call enumerates.  Kernel uevents
// (no udevd) do not reach a container in a network namespace of its own, and
// nothing says so, so then the list is also kept for one second at most.
static std::vector<NpuInfo> found_npus()
{
	constexpr auto kernel_events_bound = std::chrono::seconds(1);
	static std::mutex lock;
	static std::unique_ptr<NpuMonitor> monitor;
	static std::optional<std::vector<NpuInfo>> cached;
	static std::chrono::steady_clock::time_point cached_at;
	std::lock_guard guard(lock);
	// A monitor made while udevd ran hears nothing once it stopped (and the
	// reverse would hear events before udevd's rules ran): follow udevd.
	if (monitor && monitor->from_kernel() == udevd_running()) {
		monitor.reset();
		cached.reset();
	}
	if (!monitor) {
		try {
			monitor = std::make_unique<NpuMonitor>();	// listens before we look
		} catch (const Error &) {
		}
	}
	if (monitor)
		while (auto ev = monitor->next(std::chrono::milliseconds(0)))
			if (ev->kind != NpuEvent::Kind::changed)
				cached.reset();
	const auto now = std::chrono::steady_clock::now();
	if (cached && monitor->from_kernel() && now - cached_at > kernel_events_bound)
		cached.reset();
	if (cached)
		return *cached;
	auto npus = enumerate_npus();
	if (monitor) {
		cached = npus;
		cached_at = now;
	}
	return npus;
}

// What the RBLN_* plan is made from.
static std::vector<PhysicalNpu> physical_npus()
{
	std::vector<PhysicalNpu> host;
	for (const auto &npu : found_npus())
		host.push_back({npu.index, npu.uuid});
	return host;
}

namespace detail {

std::map<unsigned, std::string> npu_nodes()
{
	std::map<unsigned, std::string> nodes;
	for (const auto &npu : found_npus())
		nodes.emplace(npu.index, npu.node);
	return nodes;
}

std::string npu_node(const std::map<unsigned, std::string> &nodes, unsigned index)
{
	auto it = nodes.find(index);
	// Not found here: opening /dev/rblnN then says why (no driver, no such NPU).
	return it != nodes.end() ? it->second : fmt::format("/dev/rbln{}", index);
}

} // namespace detail

Plan logical_devices()
{
	return plan_or_warning(physical_npus(), GroupingEnv::from_process());
}

void check_logical_devices()
{
	make_plan(physical_npus(), GroupingEnv::from_process());
}

std::string device_summary()
{
	Plan plan = logical_devices();
	std::string out = format_plan(plan);
	for (const auto &w : plan.warnings)
		out += "warning: " + w + "\n";
	return out;
}

Registration register_logical_device(unsigned logical_id)
{
	Plan plan = make_plan(physical_npus(), GroupingEnv::from_process());
	if (logical_id >= plan.devices.size())
		detail::fail(ENOENT, fmt::format("rbln:{} does not exist: this process has {} logical "
						 "device(s)", logical_id, plan.devices.size()));
	return Registration::acquire(logical_id, plan.devices[logical_id].npus);
}

struct NpuMonitor::Impl {
	Udev udev{udev_new()};
	// udevd rebroadcasts each uevent after its rules ran (the node then has its
	// group); without udevd nothing would come on that group, so take the kernel's.
	bool from_kernel = !udevd_running();
	UdevMonitor mon{udev ? udev_monitor_new_from_netlink(udev.get(), from_kernel ? "kernel" : "udev")
			     : nullptr};
	std::map<std::string, NpuInfo> nodes;	// node syspath -> NPU, to name removals
};

NpuMonitor::NpuMonitor() : impl_(std::make_unique<Impl>())
{
	if (!impl_->mon || udev_monitor_enable_receiving(impl_->mon.get()) < 0)
		detail::fail(EIO, "cannot listen to udev events (is this a container without the "
				  "host's netlink namespace?)");
	// Listen first, then look: no NPU can slip between the two.
	UdevEnumerate e(udev_enumerate_new(impl_->udev.get()));
	udev_enumerate_add_match_subsystem(e.get(), "accel");
	udev_enumerate_add_match_subsystem(e.get(), "drm");
	udev_enumerate_scan_devices(e.get());
	udev_list_entry *entry;
	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e.get())) {
		UdevDevice dev(udev_device_new_from_syspath(impl_->udev.get(),
							    udev_list_entry_get_name(entry)));
		if (dev)
			if (auto npu = npu_of(dev.get()))
				impl_->nodes[udev_device_get_syspath(dev.get())] = *npu;
	}
}

NpuMonitor::~NpuMonitor() = default;

bool NpuMonitor::from_kernel() const
{
	return impl_->from_kernel;
}

int NpuMonitor::fd() const
{
	return udev_monitor_get_fd(impl_->mon.get());
}

std::optional<NpuEvent> NpuMonitor::next(std::chrono::milliseconds timeout)
{
	auto deadline = std::chrono::steady_clock::now() + timeout;
	while (true) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		pollfd p{fd(), POLLIN, 0};
		// Past the deadline it still looks once, so a zero timeout drains what is queued.
		if (::poll(&p, 1, int(std::max<long>(0, left.count()))) <= 0)
			return std::nullopt;
		UdevDevice dev(udev_monitor_receive_device(impl_->mon.get()));
		if (!dev)
			continue;
		const std::string action = udev_device_get_action(dev.get()) ?: "";
		const std::string syspath = udev_device_get_syspath(dev.get());

		if (action == "add") {
			if (auto npu = npu_of(dev.get())) {
				impl_->nodes[syspath] = *npu;
				return NpuEvent{NpuEvent::Kind::added, npu->sysfs, npu->index, npu->status};
			}
		} else if (action == "remove") {
			auto it = impl_->nodes.find(syspath);
			if (it != impl_->nodes.end()) {
				NpuEvent ev{NpuEvent::Kind::removed, it->second.sysfs, it->second.index, {}};
				impl_->nodes.erase(it);
				return ev;
			}
		} else if (action == "change") {
			const char *driver = udev_device_get_driver(dev.get());
			const char *status = udev_device_get_property_value(dev.get(), "RBLN_STATUS");
			if (driver && std::string(driver) == "rbln" && status) {
				std::string index = attr(dev.get(), "index");
				return NpuEvent{NpuEvent::Kind::changed, syspath,
						index.empty() ? std::nullopt : std::optional<unsigned>(std::stoul(index)),
						status};
			}
		}
	}
}

RBLN_CXX_ABI_END // namespace rbln
