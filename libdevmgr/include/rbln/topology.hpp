// SPDX-License-Identifier: MIT
// How NPUs connect, as the kernel shows it: the die-to-die links between an
// NPU's chiplets (chipletN/links, declared by the driver's backend), and the
// PCI path between two NPUs (the chain of PCI bridges sysfs puts each device
// under, and its NUMA node), for placing a group the way nvidia-smi's
// `topo -m` helps place GPUs.  Nothing here is assumed from the product.
#pragma once

#include "abi_namespace.hpp"

#include <string>
#include <vector>

#include "enumerate.hpp"

#pragma GCC visibility push(default)
RBLN_CXX_ABI_BEGIN

struct ChipletLink {
	unsigned peer;		// the chiplet at the other end
	std::string kind;	// as sysfs names it: "d2d" (die-to-die)
};

struct ChipletTopology {
	unsigned index;
	std::vector<ChipletLink> links;	// in peer order; none on a one-die part
	bool host_link;			// has External HDMA, the engine that reaches the host
};

// The chiplets of @npu and their links, from sysfs.  Throws Errc::no_device
// if the NPU was removed, Errc::not_supported if its driver publishes no
// links (rbln.ko before they were added) and Errc::internal for a links line
// that does not parse (naming the file and the text).
std::vector<ChipletTopology> chiplet_topology(const NpuInfo &npu);

// Where a device sits on PCI, from the real path of its sysfs directory
// (/sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0 ...).
struct PciPath {
	bool on_pci = false;		// false: no PCI device above it (a simulated NPU)
	std::string host_bridge;	// "pci0000:00"
	std::vector<std::string> bridges;	// PCI bridges from the root port down to the device
	std::string function;		// the device's own PCI function, "0000:01:00.0"
	int numa_node = -1;		// its numa_node attribute; -1 none
};

// @device_dir: any path to the device's sysfs directory (symlinks resolved).
PciPath pci_path(const std::string &device_dir);

// The relation of two NPUs' PCI paths, with nvidia-smi topo -m's names.
enum class PathRelation {
	self,		// X
	pix,		// PIX: one PCIe switch (at most one bridge on each side)
	pxb,		// PXB: several PCIe bridges, below the host bridge
	phb,		// PHB: through the host bridge (different root ports)
	node,		// NODE: across host bridges within one NUMA node
	sys,		// SYS: across NUMA nodes
	not_pci,	// SIM: one of them is not on PCI, so there is no path to compare
};

// Two paths to one PCI function are self; not_pci whenever one is off PCI,
// even for the same NPU (the caller knows an NPU is itself).
PathRelation path_relation(const PciPath &a, const PciPath &b);
// "X", "PIX", "PXB", "PHB", "NODE", "SYS", "SIM".
const char *relation_name(PathRelation r);
// The legend line of @r, as nvidia-smi words it.
const char *relation_meaning(PathRelation r);

RBLN_CXX_ABI_END // namespace rbln
#pragma GCC visibility pop
