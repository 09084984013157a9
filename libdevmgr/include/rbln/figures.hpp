// SPDX-License-Identifier: MIT
// What sysfs says of an NPU now, without opening it: a monitor outside group
// rbln (or one polling many NPUs) needs no sysfs layout of its own.
#pragma once

#include "abi_namespace.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "devmgr.hpp"
#include "enumerate.hpp"

#pragma GCC visibility push(default)
RBLN_CXX_ABI_BEGIN

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
// From sysfs (pci_link_speed_mts, pci_link_width); zeros from a driver without them.
PciLink npu_pci_link(const NpuInfo &npu);

// A process with an open file of an NPU (rbln-smi pmon).
struct ProcessUsage {
	unsigned npu;
	unsigned pid;			// a holder of the file (its creator where fdinfo is not readable)
	std::string command;
	uint64_t client_id;
	uint64_t device_memory;		// bytes placed for the file's buffers
	bool stale;			// its creator exited, the file lives on
	// Busy time of the file's jobs per engine (enum rbln_engine), from
	// fdinfo; unset where the kernel has no DRM fdinfo or it is not readable.
	std::optional<std::array<uint64_t, 4>> engine_busy_ns;
};
// The files of @npu and the processes holding them: as root every process,
// else this user's (the driver lists only those).  Opens the NPU, and leaves
// its own file out.
std::vector<ProcessUsage> process_usage(const NpuInfo &npu);

RBLN_CXX_ABI_END // namespace rbln
#pragma GCC visibility pop
