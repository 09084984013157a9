// SPDX-License-Identifier: MIT
// One scrape's reading of an NPU, and where it comes from: the device's
// status ioctl for the changing figures, sysfs for the per-chiplet ones.
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
	std::vector<ChipletSample> chiplets;
	std::optional<PodRef> pod;
};

// Every usable NPU now; one that vanishes mid-scrape is left out.
std::vector<NpuSample> sample_npus();

} // namespace rbln::exporter
