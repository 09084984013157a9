// SPDX-License-Identifier: MIT
// One scrape's reading of an NPU, from sysfs: no device node is opened, so
// the exporter needs no access to the NPUs, is no client of theirs and never
// holds up a reset.  libdevmgr finds the NPUs and their static figures
// (rbln/enumerate.hpp, rbln/figures.hpp) when the set of devices changes;
// between such changes each figure is one pread of an attribute kept open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rbln::exporter {

struct EngineSample {
	std::string name;	// neural_dma, task_dma, ...
	uint64_t busy_ns;
};

struct ChipletSample {
	unsigned id;
	uint64_t memory_used, memory_total;
	std::vector<EngineSample> engines;
	unsigned engine_resets;
	bool lost;
};

// The pod a device is given to (kubelet pod-resources API).
struct PodRef {
	std::string pod, ns, container;
};

struct NpuSample {
	unsigned index;
	std::string uuid, name, driver_version, firmware_version, status;
	double temperature_c, power_w;
	unsigned utilization;
	uint64_t memory_used, memory_total;
	uint64_t faults, memory_errors, engine_resets;
	std::vector<ChipletSample> chiplets;
	std::optional<PodRef> pod;
	// Set when the figures could not be read: rbln_npu_up is 0 with this
	// reason, and only the identity above is known.
	std::optional<std::string> error;
};

// Every NPU sysfs shows now, ordered by index; one removed mid-scrape is
// left out, one that cannot be read is there with its error.
std::vector<NpuSample> sample_npus();

} // namespace rbln::exporter
