// SPDX-License-Identifier: MIT
// The NPUs the device plugin offers: identity, family, NUMA node and health,
// and which Kubernetes resource each belongs to.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rbln::k8s {

inline constexpr const char *kResourceDomain = "rebellions.ai";

// How NPUs map to resources: one per product family (rebellions.ai/ATOM,
// rebellions.ai/REBEL) or all as rebellions.ai/npu.
enum class ResourceMode { family, single };

struct Npu {
	unsigned index;		// N of /dev/rblnN
	std::string uuid;	// the device ID the kubelet sees
	std::string sku;	// atom, atom-max, rebel100
	std::string pci_bus_id;
	int numa_node;		// -1: none
	bool healthy;
	std::string health_reason;	// why not healthy: "status FAULT, chiplet 2 lost"
	std::vector<std::string> nodes;	// /dev/rblnN and the accel/render node, those present
};

// "ATOM" or "REBEL" for a product key; nullopt for one not known.
std::optional<std::string> family_of(const std::string &sku);

// The resource names a mode serves ("rebellions.ai/ATOM", ...).
std::vector<std::string> resource_names(ResourceMode mode);
// The resource @npu is offered under.
std::string resource_of(const Npu &npu, ResourceMode mode);

// "family" or "npu"; throws std::invalid_argument naming the bad value.
ResourceMode parse_resource_mode(const std::string &value);

// The NPUs present now, in index order, from sysfs (no device opened):
// healthy unless their status is FAULT or a chiplet is lost.
std::vector<Npu> scan_npus();

} // namespace rbln::k8s
