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

struct NpuFigures {
	std::string firmware_version;
	int numa_node;		// -1: none
	DeviceStatus status;	// the same figures Device::status() gives
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
};

// rbln.ko's version; "" when it is not loaded.
std::string driver_version();
// Throw Errc::no_device if the NPU was removed (before or while they read).
NpuFigures npu_figures(const NpuInfo &npu);
std::vector<ChipletFigures> chiplet_figures(const NpuInfo &npu);

} // namespace rbln
#pragma GCC visibility pop
