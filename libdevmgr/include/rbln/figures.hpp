// SPDX-License-Identifier: MIT
// What sysfs says of an NPU now, without opening it: a monitor outside group
// rbln (or one polling many NPUs) needs no sysfs layout of its own.
#pragma once

#include <string>
#include <vector>

#include "devmgr.hpp"
#include "enumerate.hpp"

#pragma GCC visibility push(default)
namespace rbln {

// Monotonic since the device appeared (docs/sysfs.md); 0 from a driver
// without the attribute.
struct NpuCounters {
	uint64_t faults;	// times the status became FAULT
	uint64_t memory_errors;	// uncorrectable ones
	uint64_t engine_resets;	// jobs timed out on a hung engine (TDR)
};

struct NpuFigures {
	std::string firmware_version;
	int numa_node;		// -1: none
	DeviceStatus status;	// the same figures Device::status() gives
	NpuCounters counters;
};

struct EngineFigures {
	Engine engine;
	std::string name;	// "neural_dma", ...
	uint64_t busy_ns;	// time the engine spent running jobs
};

struct ChipletFigures {
	unsigned index;
	MemoryUsage memory;
	std::vector<EngineFigures> engines;	// the engines present
	unsigned engine_resets;			// after hung jobs, over its engines
	bool lost;				// reported gone by the hardware (status "lost")
};

// rbln.ko's version; "" when it is not loaded.
std::string driver_version();
// Throw Errc::no_device if the NPU was removed (before or while they read).
NpuFigures npu_figures(const NpuInfo &npu);
std::vector<ChipletFigures> chiplet_figures(const NpuInfo &npu);

} // namespace rbln
#pragma GCC visibility pop
