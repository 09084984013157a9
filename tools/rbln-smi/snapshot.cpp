#include "snapshot.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace rbln::smi {

static std::string read_attr(const std::string &dir, const char *name)
{
	std::ifstream in(dir + "/" + name);
	std::string s;
	std::getline(in, s);
	return s;
}

static uint64_t read_u64(const std::string &dir, const char *name)
{
	std::string s = read_attr(dir, name);
	return s.empty() ? 0 : std::stoull(s, nullptr, 0);
}

static int64_t read_i64(const std::string &dir, const char *name)
{
	std::string s = read_attr(dir, name);
	return s.empty() ? 0 : std::stoll(s, nullptr, 0);
}

static DeviceSnapshot device_snapshot(const NpuInfo &npu, bool chiplets)
{
	const std::string &d = npu.sysfs;
	DeviceSnapshot s{npu, read_attr(d, "firmware_version"),
			 int(read_i64(d, "numa_node")),
			 int(read_i64(d, "temperature") / 1000), double(read_u64(d, "power_draw")) / 1e6,
			 read_attr(d, "pstate"), unsigned(read_u64(d, "utilization")),
			 read_u64(d, "memory_used"), read_u64(d, "memory_placed"), {}};
	if (chiplets)
		for (unsigned c = 0; c < npu.chiplet_count; c++) {
			std::string cd = fmt::format("{}/chiplet{}", d, c);
			ChipletSnapshot cs{c, read_u64(cd, "memory_total"), read_u64(cd, "memory_used"),
					   read_u64(cd, "memory_placed"), {},
					   unsigned(read_u64(cd, "engine_resets"))};
			std::istringstream engines(read_attr(cd, "engines"));
			for (std::string e; engines >> e;)
				cs.engines.push_back({e, read_u64(cd, (e + "_busy_ns").c_str())});
			s.chiplets.push_back(std::move(cs));
		}
	return s;
}

// The cheap path for the default view: one open per NPU, then identity,
// status and clients by ioctl.  nullopt if a node cannot be opened (the
// sysfs path still shows the device then).
static std::optional<Snapshot> snapshot_by_ioctl(const std::string &driver_version)
{
	Snapshot snap;
	snap.driver_version = driver_version;
	try {
		for (const auto &node : list_npu_nodes()) {
			auto dev = Device::open_path(node);
			const DeviceInfo &i = dev.info();
			DeviceStatus st = dev.status();
			NpuInfo npu{i.index, node, {}, i.name, {}, i.uuid, i.pci_bus_id, st.status,
				    i.memory_total, i.chiplet_count, true};
			snap.devices.push_back({npu, i.firmware_version, i.numa_node, st.temperature_mc / 1000,
						st.power_w, fmt::format("P{}", st.pstate), st.utilization,
						st.memory_used, st.memory_placed, {}});
			for (auto &c : dev.clients())
				if (!c.self)
					snap.contexts.push_back({i.index, c});
		}
	} catch (const Error &) {
		return std::nullopt;
	}
	std::sort(snap.devices.begin(), snap.devices.end(), [](const auto &a, const auto &b) {
		return a.npu.pci_bus_id < b.npu.pci_bus_id;
	});
	std::stable_sort(snap.contexts.begin(), snap.contexts.end(),
			 [](const auto &a, const auto &b) { return a.npu < b.npu; });
	return snap;
}

Snapshot take_snapshot(const std::vector<std::string> &ids, bool chiplets)
{
	Snapshot snap;
	snap.driver_version = read_attr("/sys/module/rbln", "version");
	if (snap.driver_version.empty())
		throw Error(Errc::driver_not_loaded, ENOENT,
			    "the rbln driver is not loaded (modprobe rbln; check dkms status and dmesg)");
	if (ids.empty() && !chiplets)
		if (auto fast = snapshot_by_ioctl(snap.driver_version))
			return *fast;

	std::vector<NpuInfo> npus;
	if (ids.empty()) {
		npus = enumerate_npus();
	} else {
		for (const auto &id : ids) {
			NpuInfo n = find_npu(id);
			if (std::none_of(npus.begin(), npus.end(), [&](auto &x) { return x.index == n.index; }))
				npus.push_back(n);
		}
	}

	for (const auto &npu : npus) {
		snap.devices.push_back(device_snapshot(npu, chiplets));
		try {
			for (auto &c : Device::open_path(npu.node).clients())
				if (!c.self)
					snap.contexts.push_back({npu.index, c});
		} catch (const Error &e) {
			snap.notes.push_back(fmt::format("processes of NPU {} not shown: {}", npu.index, e.what()));
		}
	}
	return snap;
}

} // namespace rbln::smi
