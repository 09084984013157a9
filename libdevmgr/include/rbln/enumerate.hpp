// SPDX-License-Identifier: MIT
// Finding NPUs (libudev; works without a running udevd, e.g. in containers)
// and watching them come and go.
#pragma once

#include "abi_namespace.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grouping.hpp"

#pragma GCC visibility push(default)
RBLN_CXX_ABI_BEGIN

struct NpuInfo {
	unsigned index;			// N of /dev/rblnN, the NPU column of rbln-smi
	std::string node;		// /dev/accel/accelM or /dev/dri/renderDM, else /dev/rblnN
					// when only that is here (the one this process can open)
	std::string sysfs;		// the device's sysfs directory
	std::string name, sku, uuid, pci_bus_id, status;
	uint64_t memory_total;
	uint32_t chiplet_count;
	bool node_present;		// false when /dev has neither node (a container not given it)
};

// The NPUs usable here, ordered by PCI bus id (which is index order): those
// whose node exists in /dev.  In a container /sys shows every NPU of the host
// while /dev holds only the ones given to it; NPU numbers stay the host's
// (N of /dev/rblnN), so they match what rbln-smi shows on the host.
std::vector<NpuInfo> enumerate_npus();
// Every rbln NPU sysfs shows, node present or not (diagnostics).
std::vector<NpuInfo> enumerate_all_npus();

// The usable NPUs' device nodes straight from /sys/class, without libudev: a
// few system calls per NPU, for monitors that poll many devices; identity
// then comes from opening the node.  Unordered.
std::vector<std::string> list_npu_nodes();

// Whether rbln.ko is loaded (/sys/module/rbln): tells "no driver" from "no NPU".
bool driver_loaded();

// The NPU named by @spec: an index ("1"), a uuid or a PCI bus id
// ("0000:02:00.0").  Throws Errc::no_device naming what exists (as a
// handle of a removed NPU does), or Errc::driver_not_loaded.
NpuInfo find_npu(const std::string &spec);

// The logical devices of this process (RBLN_* variables applied to the NPUs
// found).  Never throws: configuration problems come back as warnings.
Plan logical_devices();
// Throws the configuration error logical_devices() turns into a warning.
void check_logical_devices();
// Its "Logical Device | Physical NPU IDs | Status" table, warnings after it.
std::string device_summary();
// Registers logical device @logical_id of this process's plan (all its NPUs
// or none); a configuration problem is thrown here in full.
Registration register_logical_device(unsigned logical_id);

struct NpuEvent {
	enum class Kind { added, removed, changed } kind;
	std::string sysfs;		// the NPU's device directory
	std::optional<unsigned> index;	// not readable once removed
	std::string status;		// RBLN_STATUS of a change, if any
};

// Add/remove/change events of rbln NPUs: udevd's, once its rules have run,
// when udevd runs; else the kernel's own uevents (minimal hosts, containers),
// so a long-lived process sees NPUs come and go either way.
class NpuMonitor {
public:
	NpuMonitor();
	// Whether events come from the kernel directly (no udevd running).
	bool from_kernel() const;
	~NpuMonitor();
	NpuMonitor(const NpuMonitor &) = delete;
	NpuMonitor &operator=(const NpuMonitor &) = delete;
	int fd() const;	// for poll()
	std::optional<NpuEvent> next(std::chrono::milliseconds timeout);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

RBLN_CXX_ABI_END // namespace rbln
#pragma GCC visibility pop
