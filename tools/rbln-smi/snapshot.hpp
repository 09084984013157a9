// What rbln-smi shows, collected once per refresh through libdevmgr.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"
#include "rbln/figures.hpp"

namespace rbln::smi {

struct EngineSnapshot {
	std::string name;		// as in chipletN/engines: "neural_dma", ...
	uint64_t busy_ns;
};

struct ChipletSnapshot {
	unsigned index;
	uint64_t memory_total, memory_used, memory_placed;
	std::vector<EngineSnapshot> engines;	// the engines present
	unsigned engine_resets;
	bool lost;				// chipletN/status "lost"
};

struct DeviceSnapshot {
	NpuInfo npu;
	std::string firmware_version;
	int numa_node;
	int temperature_c;
	double power_w;
	std::string pstate;
	unsigned utilization;
	uint64_t memory_used, memory_placed;
	std::vector<ChipletSnapshot> chiplets;	// with -q or JSON
	NpuCounters counters;			// with -q or JSON (sysfs)
	PciLink link;				// 0: unknown (simulated NPUs)
};

struct ContextSnapshot {
	unsigned npu;
	ClientInfo client;
};

struct Snapshot {
	std::chrono::system_clock::time_point taken = std::chrono::system_clock::now();
	std::string driver_version;
	std::vector<DeviceSnapshot> devices;
	std::vector<ContextSnapshot> contexts;
	std::vector<std::string> notes;		// e.g. contexts not readable
};

// Throws rbln::Error: driver_not_loaded when the driver is not loaded,
// no_device for an -i entry that names no NPU.
Snapshot take_snapshot(const std::vector<std::string> &ids, bool chiplets);

} // namespace rbln::smi
