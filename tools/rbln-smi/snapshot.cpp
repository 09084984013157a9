#include "snapshot.hpp"

#include <algorithm>
#include <cerrno>
#include <optional>

#include <fmt/format.h>

namespace rbln::smi {

static DeviceSnapshot device_snapshot(const NpuInfo &npu, bool chiplets)
{
	NpuFigures f = npu_figures(npu);
	DeviceSnapshot s{npu, f.firmware_version, f.numa_node, f.status.temperature_mc / 1000,
			 f.status.power_w, fmt::format("P{}", f.status.pstate), f.status.utilization,
			 f.status.memory_used, f.status.memory_placed, {}, f.counters, npu_pci_link(npu)};
	if (chiplets)
		for (const auto &c : chiplet_figures(npu)) {
			ChipletSnapshot cs{c.index, c.memory.total, c.memory.used, c.memory.placed, {},
					   c.engine_resets, c.lost};
			for (const auto &e : c.engines)
				cs.engines.push_back({e.name, e.busy_ns});
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
						st.memory_used, st.memory_placed, {}, {}, dev.pci_link()});
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
	snap.driver_version = driver_version();
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
		try {
			snap.devices.push_back(device_snapshot(npu, chiplets));
		} catch (const Error &e) {
			if (e.code() != Errc::no_device)
				throw;
			snap.notes.push_back(e.what());	// removed since it was listed
			continue;
		}
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
